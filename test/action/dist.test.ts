// dist/ is committed and is what action.yml runs. (1) A rebuild into a temp folder must produce exactly the
// committed files, byte for byte (the Actions' chunks and source maps too): otherwise "run npm run build". The
// build is the test run's own (global-setup.ts), which every Action test runs through the harness. The
// sizes of those files are held by test/unit/bundle-sizes.test.ts, which reads dist/ as committed: with this test
// passing, they are a fresh build's. (2) The bundled dist/index.js runs as the
// Action in a child process, as the runner starts it (node, env only; action-harness.ts): dockerode and its
// optional native
// pieces bundle and work (the build leaves the .node add-ons out), the helper and wasm files are found, a
// scripted run on the real engine produces the patch and the outputs, and the comment reaches the fake API.
// (3) The choose Action runs from its chunks as the runner starts it, and writes the chosen run's folder.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { calcWorkspace, FIX_SCRIPT, runAction, runStep, scriptFile } from "../support/action-harness.js";
import { actionRoot } from "../support/action-dist.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { githubEnv, runnerFiles } from "../support/github-env.js";
import { parseReport } from "../../src/report/index.js";
import { smallFixReport, verifyFailedReport } from "../unit/report/support/report-builders.js";

const root = path.resolve(import.meta.dirname, "../..");
const dist = path.join(root, "dist");

function listFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => fs.statSync(path.join(dir, f)).isFile())
    .sort();
}

describe("dist/", () => {
  it("is up to date with src/ (run npm run build)", () => {
    // The test run's build of src/ (global-setup.ts), the one the Action tests run.
    const out = path.join(actionRoot(), "dist");
    const built = listFiles(out);
    expect(built).toEqual(
      expect.arrayContaining([
        "index.js",
        "index.js.map",
        "publish.js",
        "choose.js",
        "cli.js",
        "web-tree-sitter.wasm",
        "tree-sitter-bash.wasm",
        "THIRD_PARTY_NOTICES",
      ]),
    );
    const stale = built.filter(
      (file) =>
        !fs.existsSync(path.join(dist, file)) ||
        !fs.readFileSync(path.join(dist, file)).equals(fs.readFileSync(path.join(out, file))),
    );
    // The bundles drop license comments; the licenses of what they carry travel in THIRD_PARTY_NOTICES.
    const notices = fs.readFileSync(path.join(out, "THIRD_PARTY_NOTICES"), "utf8");
    for (const bundled of ["dockerode@", "@anthropic-ai/sdk@", "zod@", "@modelcontextprotocol/sdk@"])
      expect(notices).toContain(`\n${bundled}`);
    const extra = fs.existsSync(dist) ? listFiles(dist).filter((file) => !built.includes(file)) : [];
    expect(stale, "dist/ differs from a fresh build: run npm run build and commit dist/").toEqual([]);
    expect(
      extra,
      "dist/ has files a build does not make: delete them (or run rm -rf dist && npm run build)",
    ).toEqual([]);
  });

  it("is committed, not ignored", () => {
    const ignored = (() => {
      try {
        return (
          execFileSync("git", ["check-ignore", "-q", "dist/index.js"], { cwd: root, stdio: "pipe" }) !==
          undefined
        );
      } catch {
        return false;
      }
    })();
    expect(ignored, ".gitignore must not ignore dist/").toBe(false);
  });
});

describe("node dist/index.js", () => {
  let fake: FakeGitHub;
  const TOKEN = "ghs_distTestToken0123456789abcdefABCDEFG";
  beforeEach(async () => {
    fake = await startFakeGitHub({
      token: TOKEN,
      permissions: { octocat: "write" },
      issues: [{ number: 12, title: "t", body: "b", user: { login: "octocat" } }],
    });
  });
  afterEach(async () => {
    await fake.close();
  });

  it("runs the Action from the bundle: dockerode, the helper and the wasm files work from dist/", async () => {
    // The harness runs dist/index.js as the runner does: node, env only, every input at its default.
    const result = await runAction({
      fixture: "issues-opened",
      apiUrl: fake.url,
      workspace: calcWorkspace(),
      token: TOKEN,
      inputs: { script: scriptFile(FIX_SCRIPT), permission_mode: "acceptEdits" },
    });
    expect(result.stderr).toBe("");
    expect(result.exitCode, result.log).toBe(0);
    expect(result.log).not.toContain("::error::");
    expect(result.outputs).toMatchObject({
      exit_reason: "completed",
      has_changes: "true",
      changed_files: "1",
    });
    expect(fs.readFileSync(result.outputs.patch_path ?? "", "utf8")).toContain("+  return a + b;");
    expect(result.stdout).toContain("::warning title=agent-ci denied Bash::");
    expect(result.summary).toContain("agent-ci: Changes ready");
    expect(fake.comments).toHaveLength(1);
    // The artifact, through the runner's artifact service.
    expect(result.outputs.artifact_id).toMatch(/^\d+$/);
    expect(result.artifacts.uploads.map((u) => u.name)).toEqual(["agent-ci"]);
  });
});

describe("node dist/choose.js", () => {
  it("runs the choose Action from its chunks: the attempt that passed verify, its folder and report written", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-dist-choose-"));
    const attempts = path.join(dir, "artifacts");
    for (const [name, report, patch] of [
      ["agent-ci-attempt-1", verifyFailedReport(), "failing\n"],
      ["agent-ci-attempt-2", { ...smallFixReport(), runId: "run-passed" }, "passing\n"],
    ] as const) {
      fs.mkdirSync(path.join(attempts, name), { recursive: true });
      fs.writeFileSync(path.join(attempts, name, "report.json"), JSON.stringify(report));
      fs.writeFileSync(path.join(attempts, name, "patch.diff"), patch);
    }
    const out = path.join(dir, "chosen");
    const files = runnerFiles();
    const ran = await runStep({
      action: "choose",
      inputs: { artifacts_path: attempts, out_path: out },
      env: githubEnv({ fixture: "issues-opened", apiUrl: "http://127.0.0.1:9", workspace: dir, files }),
    });
    expect(ran.log).not.toContain("::error::");
    expect(ran.outputs).toEqual({
      artifact_path: out,
      attempt: "2",
      reason: "attempt 2 passed verify: the only one that did",
      has_changes: "true",
    });
    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    expect([report.runId, report.chosen?.attempt, report.attempts?.length]).toEqual(["run-passed", 2, 2]);
    expect(fs.readFileSync(path.join(out, "patch.diff"), "utf8")).toBe("passing\n");
    expect(fs.readFileSync(path.join(out, "report.html"), "utf8")).toContain("run-passed");
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
