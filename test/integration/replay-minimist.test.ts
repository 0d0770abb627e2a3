// A real JavaScript library replayed through the CLI with a real bug fix: minimist's published package
// (it ships its tests, run with tape), its devDependencies installed on the host as a workflow's
// `npm install` step would, a bug injected that its own tests catch, and a scripted agent that runs the
// tests in the sandbox (network none), finds the bug, fixes it and runs them again. The patch must make the
// tests pass on a pristine checkout. The npm registry is needed: without it the test fails, saying so.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { scriptFile } from "../support/action-harness.js";
import { applyToCopy } from "../support/workspace.js";
import { tempOut } from "../support/run-io.js";

const CLI = path.resolve("bin/agent-ci.js");
const PACKAGE = "minimist@1.2.8";
/** The registry fetch and a full devDependency install (hundreds of packages) on a cold npm cache. */
const TIMEOUT_MS = 10 * 60_000;
const GOOD = "if ((/^0x[0-9a-f]+$/i).test(x)) { return true; }";
/** A typo in a character class: hexadecimal numbers past 7 are parsed as strings (test/num.js catches it). */
const BAD = "if ((/^0x[0-7]+$/i).test(x)) { return true; }";
const TESTS = "node_modules/.bin/tape 'test/**/*.js'";

function npm(args: string[], cwd: string): string {
  try {
    return execFileSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: TIMEOUT_MS - 60_000,
    });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(
      `npm ${args.join(" ")} failed; this test needs the npm registry (${PACKAGE} and its devDependencies): ${(err.stderr || err.message).trim().slice(-600)}`,
      { cause: e },
    );
  }
}

/** minimist's source as published, as a git checkout with the bug committed and devDependencies installed. */
function buggyCheckout(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-minimist-"));
  const tarball =
    npm(["pack", PACKAGE, "--silent", "--pack-destination", root], root).trim().split("\n").pop() ?? "";
  execFileSync("tar", ["-x", "-z", "-f", path.join(root, tarball), "-C", root]);
  const dir = path.join(root, "package");
  expect(fs.existsSync(path.join(dir, "test/num.js")), "the published package ships its tests").toBe(true);
  const index = fs.readFileSync(path.join(dir, "index.js"), "utf8");
  expect(index).toContain(GOOD);
  fs.writeFileSync(path.join(dir, "index.js"), index.replace(GOOD, BAD));
  fs.writeFileSync(path.join(dir, ".gitignore"), "node_modules/\n.nyc_output/\ncoverage/\n");
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, stdio: "pipe" });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-qm", "minimist 1.2.8 with a bug");
  npm(["install", "--ignore-scripts"], dir);
  expect(fs.existsSync(path.join(dir, "node_modules/.bin/tape"))).toBe(true);
  return dir;
}

const FIX = [
  [{ name: "Bash", input: { command: TESTS, description: "Run the tests" } }],
  [{ name: "Grep", input: { pattern: "0x\\[", output_mode: "content", "-n": true } }],
  [{ name: "Read", input: { file_path: "/workspace/index.js", offset: 1, limit: 30 } }],
  [{ name: "Edit", input: { file_path: "/workspace/index.js", old_string: BAD, new_string: GOOD } }],
  [{ name: "Bash", input: { command: TESTS, description: "Run the tests again" } }],
];

describe("a real library replayed through the CLI", () => {
  it(
    `${PACKAGE}: its tape tests fail, the scripted fix makes them pass in the sandbox, and the patch passes on a pristine checkout`,
    () => {
      const dir = buggyCheckout();
      const out = tempOut();
      const args = [
        "run",
        "--workspace",
        dir,
        "--script",
        scriptFile(FIX),
        "--mode",
        "acceptEdits",
        "--allow",
        "Bash(node_modules/.bin/tape:*)",
        "--include-ignored",
        "node_modules",
        "--network",
        "none",
        "--out",
        out,
      ];
      const res = spawnSync("node", [CLI, ...args], {
        encoding: "utf8",
        env: { ...process.env, ANTHROPIC_API_KEY: "" },
        timeout: TIMEOUT_MS / 2,
      });
      expect(res.status, res.stderr).toBe(0);
      const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
      expect(report.hardening?.networkMode).toBe("none");
      const [before, grep, , edit, after] = report.toolCalls;
      expect(before?.isError).toBe(true);
      expect(before?.exitCode).toBe(1);
      expect(grep?.resultPreview).toContain("index.js:15:");
      expect(edit?.isError).toBe(false);
      expect(after?.isError, after?.resultPreview).toBe(false);
      expect(after?.exitCode).toBe(0);
      expect(report.patch.files.map((f) => f.path)).toEqual(["index.js"]);

      // The patch on a pristine checkout of the buggy commit (its node_modules as installed): the tests pass.
      const patch = fs.readFileSync(path.join(out, "patch.diff"));
      const pristine = applyToCopy(dir, patch);
      const run = spawnSync("sh", ["-c", TESTS], { cwd: pristine, encoding: "utf8" });
      expect(run.status, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toMatch(/# pass\s+\d+/);
      expect(run.stdout).not.toMatch(/# fail/);
    },
    TIMEOUT_MS,
  );
});
