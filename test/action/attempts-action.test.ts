// The Action's `attempts` input: two scripted attempts on the real engine, each with its own record in the
// run's folder; the outputs, the patch and report.json are the chosen attempt's, and report.json lists both.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { calcWorkspace, FIX_SCRIPT, runAction, scriptFile } from "../support/action-harness.js";
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

describe("the attempts input", () => {
  it("makes that many attempts and reports the chosen one", async () => {
    const result = await runAction({
      fixture: "issues-opened",
      apiUrl: fake.url,
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
  });
});
