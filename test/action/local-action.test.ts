// The Action under @github/local-action, the way a user debugs an action: `npx local-action run . src/action/main.ts
// .env` with an env file holding the inputs and GITHUB_EVENT_PATH pointing at a recorded payload, for each
// event type. local-action stubs @actions/core, @actions/github and @actions/artifact (its artifact stub
// writes a zip locally), runs main.ts's `run()` through tsx, and prints the outputs. A failed step still
// exits 0 there, so the assertions read its output. The GitHub API is the fake; the Docker engine is real.
// Bypasses the harness on purpose: it checks the Action under @github/local-action (src/ through tsx), the
// tool a user debugs with.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { CALC_AFTER, calcWorkspace, FIX_SCRIPT, scriptFile } from "../support/action-harness.js";
import { fake as turn, startFakeAnthropic } from "../support/fake-anthropic.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { githubEnv, runnerFiles } from "../support/github-env.js";
import { shownText } from "../support/runner-log.js";

const root = path.resolve(import.meta.dirname, "../..");
const TOKEN = "ghs_localActionToken0123456789abcdefABCD";
let fake: FakeGitHub;

beforeAll(async () => {
  fake = await startFakeGitHub({
    token: TOKEN,
    permissions: { octocat: "write" },
    issues: [
      { number: 12, title: "add() returns the wrong sum", body: "b", user: { login: "octocat" } },
      { number: 34, title: "Speed up multiply()", body: "b", user: { login: "octocat" }, pull_request: true },
    ],
    pulls: [
      {
        number: 34,
        title: "Speed up multiply()",
        body: "b",
        user: { login: "octocat" },
        head: { ref: "fast-multiply", sha: "1".repeat(40), repo: "acme/widgets" },
        base: { ref: "main", sha: "2".repeat(40), repo: "acme/widgets" },
        diff: "diff --git a/x b/x\n",
      },
    ],
  });
});
afterAll(async () => {
  await fake.close();
});

interface LocalRun {
  code: number | null;
  stdout: string;
  outputs: Record<string, string>;
  summary: string;
  artifacts: string[];
}

/** Writes the env file and runs `npx local-action run . src/action/main.ts <env file>` from the repository root. */
async function localAction(
  fixture: string,
  inputs: Record<string, string>,
  extraEnv: Record<string, string> = {},
  event: { workspace?: string; payload?: Record<string, unknown> } = {},
): Promise<LocalRun> {
  const files = runnerFiles();
  const artifactDir = path.join(files.dir, "artifacts");
  fs.mkdirSync(artifactDir);
  const workspace = event.workspace ?? calcWorkspace();
  const env: Record<string, string> = {
    ...githubEnv({ fixture, apiUrl: fake.url, workspace, files, payload: event.payload }),
    ACTIONS_STEP_DEBUG: "false",
    LOCAL_ACTION_ARTIFACT_PATH: artifactDir,
    LOCAL_ACTION_WORKSPACE: workspace,
    ...extraEnv,
    ...Object.fromEntries(Object.entries(inputs).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, v])),
  };
  const envFile = path.join(files.dir, ".env");
  fs.writeFileSync(
    envFile,
    Object.entries(env)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join("\n") + "\n",
  );
  const childEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME ?? os.homedir(),
    NODE_PACKAGE_MANAGER: "npm",
    ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
  };
  const child = spawn(
    path.join(root, "node_modules/.bin/local-action"),
    ["run", ".", "src/action/main.ts", envFile],
    { cwd: root, env: childEnv, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stdout += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const outputs = Object.fromEntries(
    [...stdout.matchAll(/^::set-output name=([a-z_]+)::(.*)$/gm)].map((m) => [m[1] ?? "", m[2] ?? ""]),
  );
  return {
    code,
    stdout,
    outputs,
    summary: fs.readFileSync(files.summary, "utf8"),
    artifacts: fs.readdirSync(artifactDir),
  };
}

const ran = [
  "issues-opened",
  "issues-labeled",
  "issues-assigned",
  "issue-comment-issue",
  "issue-comment-pr",
  "pull-request-opened",
  "pull-request-review-comment",
  "workflow-dispatch",
  "schedule",
];
const skipped = ["pull-request-target-fork", "workflow-run-fork"];

describe("npx local-action run . src/action/main.ts .env", () => {
  it.each(ran)(
    "%s: runs green, sets the outputs, writes the summary and the artifact",
    { timeout: 120_000 },
    async (fixture) => {
      const result = await localAction(fixture, {
        github_token: TOKEN,
        script: scriptFile(FIX_SCRIPT),
        permission_mode: "acceptEdits",
        prompt: "Fix add().",
      });
      expect(result.code).toBe(0);
      expect(result.stdout).not.toContain("::error::");
      expect(result.outputs).toMatchObject({
        skipped: "false",
        exit_reason: "completed",
        outcome: "changes",
        has_changes: "true",
        changed_files: "1",
        artifact_id: "1",
      });
      expect(result.stdout).toMatch(/Action Outputs[\s\S]*'exit_reason'[\s\S]*'completed'/);
      expect(result.summary).toContain("agent-ci: Changes ready");
      expect(result.artifacts).toEqual(["agent-ci.zip"]);
    },
  );

  it.each(skipped)("%s: skipped with the reason logged", { timeout: 120_000 }, async (fixture) => {
    const result = await localAction(
      fixture,
      { github_token: TOKEN, script: scriptFile(FIX_SCRIPT), prompt: "Fix add()." },
      { GITHUB_ACTOR: "mallory" },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain("::error::");
    expect(result.outputs.skipped).toBe("true");
    expect(result.stdout).toContain("fork");
    expect(result.artifacts).toEqual([]);
  });

  it("runs the real SDK against the fake Messages API", { timeout: 120_000 }, async () => {
    const apiKey = "sk-ant-api03-localActionKey0123456789abcdefghijkl";
    const anthropic = await startFakeAnthropic({
      apiKey,
      turns: [
        turn.toolUse("Read", { file_path: "/workspace/src/calc.js" }),
        turn.toolUse("Edit", {
          file_path: "/workspace/src/calc.js",
          old_string: "a - b",
          new_string: "a + b",
        }),
        turn.text("Fixed add()."),
      ],
    });
    try {
      const result = await localAction(
        "issues-opened",
        { github_token: TOKEN, anthropic_api_key: apiKey, permission_mode: "acceptEdits" },
        { ANTHROPIC_BASE_URL: anthropic.url },
      );
      expect(result.stdout).not.toContain("::error::");
      expect(result.outputs).toMatchObject({ exit_reason: "completed", has_changes: "true", turns: "3" });
      expect(anthropic.messagesRequests()).toHaveLength(3);
      // What the runner shows: agent-ci masks the key itself (its own ::add-mask::, which the runner reads).
      expect(shownText(result.stdout)).not.toContain(apiKey);
    } finally {
      await anthropic.close();
    }
  });

  it(
    "task: review posts one review with inline comments (the review example's inputs)",
    { timeout: 120_000 },
    async () => {
      const workspace = calcWorkspace();
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
          cwd: workspace,
          encoding: "utf8",
        }).trim();
      const base = git("rev-parse", "HEAD");
      fs.writeFileSync(path.join(workspace, "src/calc.js"), CALC_AFTER);
      git("commit", "-qam", "fix add");
      const head = git("rev-parse", "HEAD");
      const pull = fake.pulls.get(34);
      if (!pull) throw new Error("the fake has no PR 34");
      // PR 34 gets this workspace's commits for this test only.
      fake.pulls.set(34, {
        ...pull,
        base: { ...pull.base, sha: base },
        head: { ...pull.head, sha: head },
        diff: git("diff", `${base}...${head}`),
      });
      onTestFinished(() => void fake.pulls.set(34, pull));
      const payload = JSON.parse(
        fs.readFileSync(path.join(root, "test/fixtures/events/pull-request-opened.json"), "utf8"),
      ) as {
        pull_request: { base: { sha: string }; head: { sha: string } };
      };
      payload.pull_request.base.sha = base;
      payload.pull_request.head.sha = head;
      const findings = [{ path: "src/calc.js", line: 3, severity: "minor", body: "Add a test for add()." }];
      const result = await localAction(
        "pull-request-opened",
        {
          github_token: TOKEN,
          task: "review",
          script: scriptFile([[{ name: "StructuredOutput", input: { summary: "Fixes add().", findings } }]]),
          fail_on: "config_error,engine_error,api_error,schema_invalid",
        },
        {},
        { workspace, payload: payload as unknown as Record<string, unknown> },
      );
      expect(result.stdout).not.toContain("::error::");
      const review = fake.reviews.at(-1);
      expect(review?.comments.map((c) => [c.path, c.line])).toEqual([["src/calc.js", 3]]);
      expect(result.outputs).toMatchObject({
        exit_reason: "completed",
        has_changes: "false",
        findings: "1",
        review_id: String(review?.id),
      });
    },
  );

  it(
    "a failed step exits 1, as @actions/core's setFailed makes it; the failure is in its output",
    { timeout: 120_000 },
    async () => {
      const result = await localAction("workflow-dispatch", {
        github_token: TOKEN,
        script: scriptFile(FIX_SCRIPT),
        max_turns: "0",
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(
        /::error::agent-ci: ActionInputError: max_turns: expected a positive whole number/,
      );
    },
  );
});
