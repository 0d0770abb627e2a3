// The Action's `attempts` input: two scripted attempts on the real engine, each with its own record in the
// run's folder; the outputs, the patch and report.json are the chosen attempt's, and report.json lists both.
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import {
  actionRunner,
  calcWorkspace,
  FIX_SCRIPT,
  recordingUploader,
  runStep,
  scriptFile,
} from "../support/action-harness.js";
import { githubEnv, runnerFiles } from "../support/github-env.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";

// Assembled at run time: no token-shaped literal in the repository.
const TOKEN = ["ghs", "attemptsInput".padEnd(36, "0")].join("_");
let fake: FakeGitHub;

beforeEach(async () => {
  fake = await startFakeGitHub({
    token: TOKEN,
    permissions: { octocat: "write" },
    issues: [{ number: 12, title: "add() returns the wrong sum", body: "b", user: { login: "octocat" } }],
  });
});
afterEach(async () => {
  await fake.close();
});

const action = actionRunner(() => ({ fixture: "issues-opened", apiUrl: fake.url }));

describe("the attempts input", () => {
  it("makes that many attempts and reports the chosen one", async () => {
    const result = await action({
      workspace: calcWorkspace(),
      inputs: {
        github_token: TOKEN,
        script: scriptFile(FIX_SCRIPT),
        permission_mode: "acceptEdits",
        attempts: "2",
        comment: "false",
      },
    });
    expect(result.failed).toBeUndefined();
    expect(result.outputs).toMatchObject({ exit_reason: "completed", outcome: "changes" });
    const reportPath = result.outputs.report_path ?? "";
    const report = parseReport(fs.readFileSync(reportPath, "utf8"));
    const dir = path.dirname(reportPath);
    expect(report.attempts?.map((a) => [a.attempt, a.dir, a.exitReason])).toEqual([
      [1, "attempt-1", "completed"],
      [2, "attempt-2", "completed"],
    ]);
    expect(report.chosen).toMatchObject({ attempt: 1, verified: false });
    expect(fs.readFileSync(result.outputs.patch_path ?? "", "utf8")).toBe(
      fs.readFileSync(path.join(dir, "attempt-1", "patch.diff"), "utf8"),
    );
    expect(fs.existsSync(path.join(dir, "trigger.json"))).toBe(true);
    expect(result.stdout).toContain("agent-ci: 2 attempts, at most");
    // The job summary (and the comment, made the same way) has the attempts table.
    expect(result.summary).toContain("**Chosen from 2 attempts**: attempt 1");
  });

  it("a matrix: each job's artifact named by its attempt, then the choose action picks one for publish", async () => {
    const workspace = calcWorkspace();
    const scripts = {
      1: scriptFile([[{ name: "Glob", input: { pattern: "**/*.js" } }]], "Looked around."),
      2: scriptFile(FIX_SCRIPT),
    };
    const downloaded = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-matrix-"));
    for (const attempt of [1, 2] as const) {
      const uploader = recordingUploader();
      const job = await action({
        workspace,
        inputs: {
          github_token: TOKEN,
          script: scripts[attempt],
          permission_mode: "acceptEdits",
          comment: "false",
          artifact_name: "agent-ci",
          attempt: String(attempt),
        },
        artifacts: uploader,
      });
      expect(job.failed).toBeUndefined();
      const name = uploader.uploads[0]?.name ?? "";
      expect(name).toBe(`agent-ci-attempt-${attempt}`);
      // What actions/download-artifact with a pattern makes: one folder per artifact.
      fs.cpSync(uploader.dir, path.join(downloaded, name), { recursive: true });
    }

    const chosen = path.join(downloaded, "..", `${path.basename(downloaded)}-chosen`);
    const files = runnerFiles();
    const choose = await runStep({
      action: "choose",
      inputs: { artifacts_path: downloaded, out_path: chosen },
      env: githubEnv({ fixture: "issues-opened", apiUrl: fake.url, workspace, files }),
    });
    expect(choose.exitCode, choose.log).toBe(0);
    expect(fs.readFileSync(files.output, "utf8")).toMatch(/^attempt<<\S+\n2\n/m);
    expect(choose.outputs.attempt).toBe("2");
    const report = parseReport(fs.readFileSync(path.join(chosen, "report.json"), "utf8"));
    expect(report.chosen).toMatchObject({ attempt: 2, verified: false });
    expect(report.attempts?.map((a) => [a.attempt, a.dir, a.changedLines > 0])).toEqual([
      [1, "agent-ci-attempt-1", false],
      [2, "agent-ci-attempt-2", true],
    ]);
    expect(fs.readFileSync(path.join(chosen, "patch.diff"), "utf8")).toBe(
      fs.readFileSync(path.join(downloaded, "agent-ci-attempt-2", "patch.diff"), "utf8"),
    );
    // What publish reads besides the report and the patch.
    expect(fs.existsSync(path.join(chosen, "trigger.json"))).toBe(true);
  });
});
