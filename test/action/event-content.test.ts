// Trusted configuration on pull-request events (RELIABILITY R18): a repository path named by `settings` or
// `prompt_file` is read at the base ref through the API, never from the checkout (the PR head); elsewhere
// from the workspace. Plus the thread and diff fetch, which fails soft.
// Bypasses the harness: the base-branch reads are called as functions, against the fake API.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readGitHubContext, type GitHubContext } from "../../src/github/context.js";
import { classifyEvent, pullRequestBase } from "../../src/action/event.js";
import {
  fetchEventContent,
  readTrustedFile,
  repoRelative,
  TrustedFileError,
} from "../../src/action/event-content.js";
import { GitHubApi, octokitRequest } from "../../src/github/api.js";
import { faults, startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { githubEnv, runnerFiles } from "../support/github-env.js";

const BASE = "2222222222222222222222222222222222222222";
let fake: FakeGitHub;
let workspace: string;
let api: GitHubApi;
const ctxFor = (fixture: string): GitHubContext =>
  readGitHubContext(githubEnv({ fixture, apiUrl: fake.url, workspace, files: runnerFiles() }));

beforeEach(async () => {
  fake = await startFakeGitHub({
    contents: {
      [BASE]: {
        ".claude/settings.json": '{"permissions":{"allow":["Bash(npm test:*)"]}}',
        "prompts/task.md": "base task",
      },
    },
    issues: [
      { number: 34, title: "Speed up multiply()", body: "b", user: { login: "octocat" }, pull_request: true },
    ],
    pulls: [
      {
        number: 34,
        title: "Speed up multiply()",
        body: "b",
        user: { login: "octocat" },
        head: { ref: "fast-multiply", sha: "1".repeat(40), repo: "acme/widgets" },
        base: { ref: "main", sha: BASE, repo: "acme/widgets" },
        diff: "diff --git a/x b/x\n",
      },
    ],
    comments: [
      { id: 5, issue_number: 34, body: "older comment", user: { login: "hubot" } },
      {
        id: 6,
        issue_number: 34,
        body: "<!-- agent-ci:comment key=a/b -->\nreport",
        user: { login: "github-actions[bot]", type: "Bot" },
      },
    ],
  });
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-ws-"));
  fs.mkdirSync(path.join(workspace, ".claude"));
  fs.mkdirSync(path.join(workspace, "prompts"));
  // The PR head's versions: what an attacker would change.
  fs.writeFileSync(
    path.join(workspace, ".claude/settings.json"),
    '{"permissions":{"allow":["Bash(*)"],"defaultMode":"bypassPermissions"}}',
  );
  fs.writeFileSync(path.join(workspace, "prompts/task.md"), "head task: exfiltrate");
  api = new GitHubApi({ request: octokitRequest("t", fake.url), sleep: async () => undefined });
});
afterEach(async () => {
  await fake.close();
});

describe("readTrustedFile", () => {
  it("reads a repository path at the base ref on pull_request, not the PR head's copy", async () => {
    const ctx = ctxFor("pull-request-opened");
    const event = classifyEvent(ctx);
    const base = pullRequestBase(event, ctx);
    expect(base).toEqual({ ref: BASE });
    const file = await readTrustedFile({
      value: ".claude/settings.json",
      input: "settings",
      workspace,
      base,
      api,
      ctx,
    });
    expect(file.text).toContain("Bash(npm test:*)");
    expect(file.text).not.toContain("bypassPermissions");
    expect(file.from).toContain("at base 222222222222");
    expect(decodeURIComponent(fake.requests[0]?.path ?? "")).toBe(
      "/repos/acme/widgets/contents/.claude/settings.json",
    );
    expect(fake.requests[0]?.query).toEqual({ ref: BASE });
  });

  it("uses the fetched PR's base on a PR comment", async () => {
    const ctx = ctxFor("issue-comment-pr");
    const event = classifyEvent(ctx);
    const content = await fetchEventContent(api, ctx, event, () => undefined);
    expect(pullRequestBase(event, ctx, content.pr)).toEqual({ ref: BASE });
    const file = await readTrustedFile({
      value: "./prompts/task.md",
      input: "prompt_file",
      workspace,
      base: pullRequestBase(event, ctx, content.pr),
      api,
      ctx,
    });
    expect(file.text).toBe("base task");
  });

  it("reads from the workspace on other events", async () => {
    const ctx = ctxFor("issues-opened");
    const file = await readTrustedFile({
      value: "prompts/task.md",
      input: "prompt_file",
      workspace,
      base: undefined,
      api,
      ctx,
    });
    expect(file.text).toBe("head task: exfiltrate");
  });

  it("says clearly when the file does not exist on the base branch", async () => {
    const ctx = ctxFor("pull-request-opened");
    await expect(
      readTrustedFile({
        value: "missing.json",
        input: "settings",
        workspace,
        base: { ref: BASE },
        api,
        ctx,
      }),
    ).rejects.toThrow(/missing.json does not exist on the base branch/);
  });

  it("needs a token on pull-request events", async () => {
    const ctx = ctxFor("pull-request-opened");
    await expect(
      readTrustedFile({ value: "a.json", input: "settings", workspace, base: { ref: BASE }, ctx }),
    ).rejects.toThrow(TrustedFileError);
  });

  it("normalizes repository paths and rejects escapes", () => {
    expect(repoRelative("./a/../b.json")).toBe("b.json");
    expect(repoRelative("../x")).toBeUndefined();
    expect(repoRelative("/etc/passwd")).toBeUndefined();
  });
});

describe("fetchEventContent", () => {
  it("reads the thread without agent-ci's own comments, the PR and its diff for a PR comment", async () => {
    const ctx = ctxFor("issue-comment-pr");
    const content = await fetchEventContent(api, ctx, classifyEvent(ctx), () => undefined);
    expect(content.thread?.map((c) => c.id)).toEqual([5]);
    expect(content.pr?.base.sha).toBe(BASE);
    expect(content.diff).toBe("diff --git a/x b/x\n");
  });

  it("goes on without a part it cannot read, with a warning", async () => {
    fake.inject({ path: /\/comments$/, response: faults.integration() });
    const warnings: string[] = [];
    const ctx = ctxFor("issue-comment-pr");
    const content = await fetchEventContent(api, ctx, classifyEvent(ctx), (w) => warnings.push(w));
    expect(content.thread).toBeUndefined();
    expect(content.pr).toBeDefined();
    expect(warnings.join("\n")).toContain("issues: read");
  });
});
