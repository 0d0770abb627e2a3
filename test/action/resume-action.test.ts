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
import {
  publishPullRequest,
  PublishRefusedError,
  type PublishPrOptions,
} from "../../src/publish/pull-request.js";
import { runBranch } from "../../src/publish/pull-text.js";
import { parseReport, summarizePatch } from "../../src/report/index.js";
import { CONVERSATION_FILE } from "../../src/runner/resume/resume.js";
import { actionRunner, recordingUploader, scriptFile } from "../support/action-harness.js";
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

const action = actionRunner(() => ({ apiUrl: github.url }));

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
      const earlier = await action({
        fixture: "workflow-dispatch",
        workspace,
        inputs: {
          github_token: TOKEN,
          anthropic_api_key: KEY,
          prompt: "Fix add() in src/calc.js.",
          permission_mode: "acceptEdits",
          artifact_name: "agent-ci-{run_id}",
        },
        env: { ANTHROPIC_BASE_URL: first.url },
        artifacts: firstArtifact,
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
      const resumed = await action({
        fixture: "issue-comment-pr",
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
      const fresh = await action({
        fixture: "issue-comment-pr",
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

  it(
    "B17 on a fork's pull request resume_from is never checked against the head's history: a fork commit with agent-ci's trailer and the record's tree resumes nothing",
    { timeout: 300_000 },
    async () => {
      // An earlier run's record, as its artifact.
      const artifact = recordingUploader();
      const earlier = await action({
        fixture: "workflow-dispatch",
        workspace,
        inputs: {
          github_token: TOKEN,
          anthropic_api_key: "",
          script: scriptFile(
            [
              [{ name: "Read", input: { file_path: FILE } }],
              [{ name: "Edit", input: { file_path: FILE, old_string: "a - b", new_string: "a + b" } }],
            ],
            "Fixed add().",
          ),
          // workflow_dispatch starts a run only with a task (src/action/triggers.ts).
          prompt: "Fix add().",
          permission_mode: "acceptEdits",
          artifact_name: "agent-ci-{run_id}",
        },
        artifacts: artifact,
      });
      expect(earlier.failed).toBeUndefined();
      const id = parseReport(fs.readFileSync(earlier.outputs.report_path ?? "", "utf8")).runId;

      // The fork's head: the record's base with its patch, committed by the fork's author with agent-ci's
      // trailer — what the binding looks for in the checkout's history, and finds there.
      const head = await checkout(base);
      git(head, "apply", path.join(artifact.dir, "patch.diff"));
      git(head, "commit", "-qam", `Tidy up\n\nagent-ci run ${id}`);
      const forkGitHub = await startFakeGitHub({
        token: TOKEN,
        permissions: { octocat: "write" },
        issues: [{ number: 34, title: "Tidy up", body: "b", user: { login: "mallory" }, pull_request: true }],
        pulls: [
          {
            number: 34,
            title: "Tidy up",
            body: "",
            user: { login: "mallory" },
            head: { ref: "main", sha: git(head, "rev-parse", "HEAD"), repo: "mallory/widgets" },
            base: { ref: "main", sha: base, repo: "acme/widgets" },
            diff: "",
          },
        ],
      });
      try {
        const result = await action({
          apiUrl: forkGitHub.url,
          fixture: "issue-comment-pr",
          workspace: head,
          inputs: {
            github_token: TOKEN,
            anthropic_api_key: "",
            script: scriptFile([[{ name: "Read", input: { file_path: FILE } }]], "Read it."),
            permission_mode: "acceptEdits",
            resume_from: artifact.dir,
            upload_artifact: "false",
          },
        });
        expect(result.failed).toBeUndefined();
        const report = parseReport(fs.readFileSync(result.outputs.report_path ?? "", "utf8"));
        expect(report.resumedFrom).toBeUndefined();
        expect(result.stdout).toMatch(
          /::warning::resume_from is not used on a pull request from a fork \(mallory\/widgets\)/,
        );
        expect(forkGitHub.comments.find((c) => c.issue_number === 34)?.body).toContain(
          "so this run started fresh, without the earlier conversation",
        );
      } finally {
        await forkGitHub.close();
      }
    },
  );

  it(
    "B1 a forged artifact resumes under the workflow's own policy, the difference reported; one that does not give the published commit, or of a run never published, is refused before any container; publish refuses a resumed base that is not where the branch's agent-ci commits start, nothing pushed",
    { timeout: 400_000 },
    async () => {
      const first = await model([
        fake.toolUse("Read", { file_path: FILE }),
        fake.toolUse("Edit", { file_path: FILE, old_string: "a - b", new_string: "a + b" }),
        fake.text("Fixed add()."),
      ]);
      const artifact = recordingUploader();
      const earlier = await action({
        fixture: "workflow-dispatch",
        workspace,
        inputs: {
          github_token: TOKEN,
          anthropic_api_key: KEY,
          prompt: "Fix add() in src/calc.js.",
          permission_mode: "acceptEdits",
          artifact_name: "agent-ci-{run_id}",
        },
        env: { ANTHROPIC_BASE_URL: first.url },
        artifacts: artifact,
      });
      expect(earlier.failed).toBeUndefined();
      const firstId = parseReport(fs.readFileSync(earlier.outputs.report_path ?? "", "utf8")).runId;
      const branch = runBranch(firstId);
      const pull = github.pulls.get(34);
      if (pull) pull.head.ref = branch;
      const published = await publishPullRequest(
        options(artifact.dir, await checkout(base), { pullNumber: 34 }),
      );
      expect(published).toMatchObject({ branch, pushed: true });

      /** The artifact as a fork's workflow run could have uploaded it under the same name, changed by `change`. */
      const forge = (change: (dir: string, report: Record<string, unknown>) => void) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-forged-"));
        fs.cpSync(artifact.dir, dir, { recursive: true });
        const file = path.join(dir, "report.json");
        const report = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
        change(dir, report);
        fs.writeFileSync(file, JSON.stringify(report));
        return dir;
      };
      const resume = async (record: string, url: string) =>
        action({
          fixture: "issue-comment-pr",
          workspace: await checkout(branch),
          inputs: {
            github_token: TOKEN,
            anthropic_api_key: KEY,
            permission_mode: "acceptEdits",
            resume_from: record,
            upload_artifact: "false",
          },
          env: { ANTHROPIC_BASE_URL: url },
        });

      // Widened rules and mode: the workflow's own policy decides, and the step's log and the report say how
      // the record's differs.
      const widened = forge((_dir, report) => {
        report.policy = {
          mode: "bypassPermissions",
          rules: [{ text: "Bash(*)", behavior: "allow", source: "command line" }],
          ignored: [],
        };
      });
      const second = await model([
        fake.toolUse("Bash", { command: "touch /workspace/forged" }),
        fake.text("Tried."),
      ]);
      const resumed = await resume(widened, second.url);
      expect(resumed.outputs.exit_reason).toBe("completed");
      const outDir = path.dirname(resumed.outputs.report_path ?? "");
      const report = parseReport(fs.readFileSync(path.join(outDir, "report.json"), "utf8"));
      expect(report.policy.mode).toBe("acceptEdits");
      expect(report.policy.rules.map((r) => r.text)).not.toContain("Bash(*)");
      expect(report.toolCalls.find((c) => c.tool === "Bash")?.decision?.behavior).toBe("deny");
      expect(report.resumedFrom).toMatchObject({ runId: firstId, publishedCommit: published.commitSha });
      expect(report.resumedFrom?.earlierPolicy?.mode).toBe("bypassPermissions");
      expect(resumed.stdout).toContain("mode bypassPermissions → acceptEdits; removed allow Bash(*)");

      // A patch changed after the run, and a record of a run agent-ci never published: refused, nothing started.
      const tampered = forge((dir, json) => {
        const file = path.join(dir, "patch.diff");
        const patch = fs.readFileSync(file, "utf8").replace("+  return a + b;", "+  return a + b + 1;");
        fs.writeFileSync(file, patch);
        json.patch = { ...(json.patch as object), ...summarizePatch(patch) };
      });
      const unpublished = forge((_dir, json) => {
        json.runId = "20261127-forged";
      });
      const silent = await model([]);
      for (const [name, record, message] of [
        ["tampered", tampered, `the record does not match what agent-ci publish pushed for run ${firstId}`],
        [
          "unpublished",
          unpublished,
          `no commit reachable from HEAD .* ends with "agent-ci run 20261127-forged"`,
        ],
      ] as const) {
        const refused = await resume(record, silent.url);
        expect(refused.outputs.exit_reason, name).toBe("config_error");
        expect(refused.failed, name).toMatch(new RegExp(message));
        const written = parseReport(fs.readFileSync(refused.outputs.report_path ?? "", "utf8"));
        expect(written.image, name).toBeUndefined();
      }
      expect(silent.messagesRequests()).toEqual([]);

      // Publish: the resumed run's report naming another commit of the repository as its base (one that adds a
      // workflow, which patch.diff would never show): refused, the branch where it was.
      const side = await checkout(base);
      fs.mkdirSync(path.join(side, ".github/workflows"), { recursive: true });
      fs.writeFileSync(path.join(side, ".github/workflows/evil.yml"), "on: push\n");
      git(side, "add", ".github");
      git(side, "commit", "-q", "-m", "a fork's commit");
      const evil = git(side, "rev-parse", "HEAD");
      git(side, "push", "-q", bare(), `${evil}:refs/heads/side`);
      const rebased = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-rebased-"));
      fs.cpSync(outDir, rebased, { recursive: true });
      const reportFile = path.join(rebased, "report.json");
      const json = JSON.parse(fs.readFileSync(reportFile, "utf8")) as { workspace: Record<string, unknown> };
      json.workspace.baseCommit = evil;
      fs.writeFileSync(reportFile, JSON.stringify(json));
      const refusal = await publishPullRequest(options(rebased, await checkout(branch))).catch(
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(PublishRefusedError);
      expect((refusal as Error).message).toContain(`${branch}'s agent-ci commits start at ${base}`);
      expect(git(bare(), "rev-parse", `refs/heads/${branch}`)).toBe(published.commitSha);
    },
  );
});
