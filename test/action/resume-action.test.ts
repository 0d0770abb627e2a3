// The Action continuing its own pull request: a run's artifact (named by its run id, conversation.jsonl in it)
// is published onto an agent-ci PR branch; a comment with the trigger phrase on that PR, with the artifact
// downloaded to resume_from, resumes the run (the real SDK against the fake Messages API, the real engine),
// and publish puts the resumed run's commit on top of the earlier one on the same branch (a local bare remote
// over git http-backend, the fake GitHub API). Without the artifact the run starts fresh and its comment
// says so.
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publishPullRequest, runBranch, type PublishPrOptions } from "../../src/publish/pull-request.js";
import { parseReport } from "../../src/report/index.js";
import { CONVERSATION_FILE } from "../../src/runner/resume.js";
import { recordingUploader, runAction, scriptFile } from "../support/action-harness.js";
import {
  fake,
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeAnthropicOptions,
} from "../support/fake-anthropic.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { addBareRepo, startGitRemote, type GitRemote } from "../support/git-remote.js";
import { publishOptions } from "../support/publish-fixture.js";
import { makeWorkspace } from "../support/workspace.js";

const TOKEN = ["ghs", "resumeActionToken0123456789abcdefAB"].join("_");
const KEY = ["sk-ant-api03", "ACTIONresume".repeat(4), "xyzAA"].join("-");
const CALC =
  "export function add(a, b) {\n  return a - b;\n}\n\nexport function mul(a, b) {\n  return a / b;\n}\n";
const FILE = "/workspace/src/calc.js";

let github: FakeGitHub;
let remote: GitRemote;
let workspace: string;
let base: string;
const models: FakeAnthropic[] = [];

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    cwd,
    encoding: "utf8",
    stdio: "pipe",
  }).trim();
const bare = () => remote.repoDir("acme", "widgets");

beforeAll(async () => {
  workspace = makeWorkspace({ "src/calc.js": CALC, "package.json": '{"name":"calc"}\n' }, { git: true });
  base = git(workspace, "rev-parse", "HEAD");
  remote = await startGitRemote({ token: TOKEN });
  addBareRepo(remote, "acme", "widgets", workspace);
  github = await startFakeGitHub({
    token: TOKEN,
    permissions: { octocat: "write" },
    issues: [
      { number: 34, title: "agent-ci: fix add", body: "b", user: { login: "octocat" }, pull_request: true },
    ],
    pulls: [
      {
        number: 34,
        title: "agent-ci: fix add",
        body: "",
        user: { login: "github-actions[bot]", type: "Bot" },
        // The branch is named once the first run's id is known.
        head: { ref: "", sha: base, repo: "acme/widgets" },
        base: { ref: "main", sha: base, repo: "acme/widgets" },
        diff: "",
      },
    ],
  });
}, 120_000);
afterAll(async () => {
  await Promise.all(models.splice(0).map((m) => m.close()));
  await github?.close();
  await remote?.close();
});

async function model(turns: FakeAnthropicOptions["turns"]): Promise<FakeAnthropic> {
  const server = await startFakeAnthropic({ apiKey: KEY, turns });
  models.push(server);
  return server;
}

/** A full clone of the remote at `ref` (the PR head, as actions/checkout with fetch-depth: 0 makes it). */
async function checkout(ref: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-checkout-"));
  const header = `http.${remote.url}/.extraheader=AUTHORIZATION: basic ${Buffer.from(`x-access-token:${TOKEN}`).toString("base64")}`;
  await promisify(execFile)("git", ["-c", header, "clone", "-q", remote.repoUrl("acme", "widgets"), dir], {
    env: { ...process.env, GIT_TERMINAL_PROMPT: "0" },
  });
  git(dir, "checkout", "-q", ref);
  return dir;
}

function options(outDir: string, repoDir: string, extra: Partial<PublishPrOptions> = {}): PublishPrOptions {
  return publishOptions({ remote, githubUrl: github.url, token: TOKEN }, outDir, repoDir, extra);
}

describe("resume_from: the Action continues its own pull request", () => {
  it(
    "resumes the PR's run from its artifact and publishes onto the same branch; without the artifact it starts fresh and says so",
    { timeout: 300_000 },
    async () => {
      // The first run: a manual dispatch, its artifact named by its run id.
      const first = await model([
        fake.toolUse("Read", { file_path: FILE }),
        fake.toolUse("Edit", { file_path: FILE, old_string: "a - b", new_string: "a + b" }),
        fake.text("Fixed add()."),
      ]);
      const firstArtifact = recordingUploader();
      const earlier = await runAction({
        fixture: "workflow-dispatch",
        apiUrl: github.url,
        workspace,
        inputs: {
          github_token: TOKEN,
          anthropic_api_key: KEY,
          prompt: "Fix add() in src/calc.js.",
          permission_mode: "acceptEdits",
          artifact_name: "agent-ci-{run_id}",
        },
        env: { ANTHROPIC_BASE_URL: first.url },
        deps: { artifact: () => firstArtifact },
      });
      expect(earlier.failed).toBeUndefined();
      const firstId = parseReport(fs.readFileSync(earlier.outputs.report_path ?? "", "utf8")).runId;
      expect(firstArtifact.uploads[0]?.name).toBe(`agent-ci-${firstId}`);
      expect(fs.existsSync(path.join(firstArtifact.dir, CONVERSATION_FILE))).toBe(true);

      // Published as agent-ci's pull request #34, on agent-ci/run-<id>.
      const branch = runBranch(firstId);
      const pull = github.pulls.get(34);
      if (pull) pull.head.ref = branch;
      const published = await publishPullRequest(
        options(firstArtifact.dir, await checkout(base), { pullNumber: 34 }),
      );
      expect(published).toMatchObject({ branch, pushed: true });
      const firstCommit = published.commitSha;

      // A reviewer's comment on #34; the workflow downloaded the artifact to resume_from.
      const second = await model([
        fake.toolUse("Edit", { file_path: FILE, old_string: "a / b", new_string: "a * b" }),
        fake.text("Fixed mul() too."),
      ]);
      const resumed = await runAction({
        fixture: "issue-comment-pr",
        apiUrl: github.url,
        workspace: await checkout(branch),
        inputs: {
          github_token: TOKEN,
          anthropic_api_key: KEY,
          permission_mode: "acceptEdits",
          resume_from: firstArtifact.dir,
          upload_artifact: "false",
        },
        env: { ANTHROPIC_BASE_URL: second.url },
      });
      expect(resumed.failed).toBeUndefined();
      expect(resumed.outputs.exit_reason).toBe("completed");
      const outDir = path.dirname(resumed.outputs.report_path ?? "");
      const report = parseReport(fs.readFileSync(path.join(outDir, "report.json"), "utf8"));
      expect(report.resumedFrom).toMatchObject({ runId: firstId, baseCommit: base });
      const sent = JSON.stringify(second.messagesRequests()[0]?.body.messages);
      expect(sent).toContain("Fix add() in src/calc.js.");
      expect(sent).toContain("the multiply test fails, please fix it");
      const comment = github.comments.find((c) => c.issue_number === 34);
      expect(comment?.body).toContain(firstId);

      // Publish: the same branch, the new commit on top of the earlier one, the whole change in its tree.
      const again = await publishPullRequest(options(outDir, await checkout(branch)));
      expect(again).toMatchObject({ action: "updated", pullNumber: 34, branch, pushed: true });
      expect(git(bare(), "rev-parse", `refs/heads/${branch}`)).toBe(again.commitSha);
      expect(git(bare(), "rev-parse", `${again.commitSha}^`)).toBe(firstCommit);
      expect(git(bare(), "show", `${again.commitSha}:src/calc.js`)).toBe(
        CALC.replace("a - b", "a + b").replace("a / b", "a * b").trimEnd(),
      );

      // The artifact is gone (expired, or the workflow found none): a fresh run, and the comment says so.
      const fresh = await runAction({
        fixture: "issue-comment-pr",
        apiUrl: github.url,
        workspace: await checkout(branch),
        inputs: {
          github_token: TOKEN,
          anthropic_api_key: "",
          script: scriptFile([[{ name: "Read", input: { file_path: FILE } }]], "Read it."),
          permission_mode: "acceptEdits",
          resume_from: path.join(os.tmpdir(), "agent-ci-no-artifact-here"),
          upload_artifact: "false",
        },
      });
      expect(fresh.failed).toBeUndefined();
      const freshReport = parseReport(fs.readFileSync(fresh.outputs.report_path ?? "", "utf8"));
      expect(freshReport.resumedFrom).toBeUndefined();
      expect(fresh.stdout).toMatch(/::warning::resume_from named no earlier run's record/);
      const updated = github.comments.find((c) => c.issue_number === 34);
      expect(updated?.body).toContain("so this run started fresh, without the earlier conversation");
    },
  );
});
