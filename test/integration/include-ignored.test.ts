// Dependencies installed on the host before the run (git-ignored node_modules, as after `npm ci` in a
// workflow) reach the sandbox with --include-ignored / include_ignored, and the project's own `npm test`
// passes there with no network. Without the option the report names what was left out and how to take
// it. What a Read deny rule covers and registry credentials stay out whatever is included.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseReport, type RunReport } from "../../src/report/index.js";
import { runAction, scriptFile } from "../support/action-harness.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { makeWorkspace } from "../support/workspace.js";
import { tempOut } from "../support/run-io.js";

const CLI = path.resolve("bin/agent-ci.js");
/** Each run starts a container (and the Action's its own); on a loaded machine that takes a while. */
const RUN_TIMEOUT_MS = 180_000;
/** Assembled at run time, so that no token-shaped literal is committed. */
const NPM_TOKEN = ["npm", "_", "Zq7".repeat(12)].join("");

/** A package installed from a local tarball with the host's npm (no registry needed). */
function depTarball(): string {
  const src = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-dep-"));
  fs.writeFileSync(
    path.join(src, "package.json"),
    JSON.stringify({ name: "left-pad-lite", version: "1.0.0", main: "index.js" }),
  );
  fs.writeFileSync(path.join(src, "index.js"), "module.exports = (s, n) => String(s).padStart(n, ' ');\n");
  const name =
    execFileSync("npm", ["pack", "--silent", "--pack-destination", src], { cwd: src, encoding: "utf8" })
      .trim()
      .split("\n")
      .pop() ?? "";
  return path.join(src, name);
}

/** A Node project whose node_modules is git-ignored and installed on the host, as `npm ci` leaves it. */
function nodeProject(): string {
  const dir = makeWorkspace(
    {
      ".gitignore": "node_modules/\n.env\n.npmrc\n*.log\n",
      "package.json": JSON.stringify(
        { name: "app", version: "1.0.0", private: true, scripts: { test: "node test.js" } },
        null,
        2,
      ),
      "test.js":
        "const pad = require('left-pad-lite');\nif (pad('7', 3) !== '  7') throw new Error('pad broke');\nconsole.log('tests ok');\n",
    },
    { git: true },
  );
  execFileSync(
    "npm",
    ["install", "--offline", "--no-audit", "--no-fund", "--no-save", "--loglevel=error", depTarball()],
    { cwd: dir, stdio: "pipe" },
  );
  expect(fs.existsSync(path.join(dir, "node_modules/left-pad-lite/index.js"))).toBe(true);
  fs.writeFileSync(path.join(dir, ".env"), "API_SECRET=kept-out\n");
  fs.writeFileSync(
    path.join(dir, ".npmrc"),
    `registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n`,
  );
  fs.writeFileSync(path.join(dir, "debug.log"), "noise\n");
  return dir;
}

const SCRIPT = [
  [{ name: "Bash", input: { command: "npm test" } }],
  [{ name: "Bash", input: { command: "cat .npmrc; ls -a" } }],
];

function cliRun(workspace: string, extra: string[]): { report: RunReport; markdown: string } {
  const out = tempOut();
  const args = [
    "run",
    "--workspace",
    workspace,
    "--script",
    scriptFile(SCRIPT),
    "--mode",
    "bypassPermissions",
    "--deny",
    "Read(./.env)",
    "--network",
    "none",
    "--out",
    out,
    ...extra,
  ];
  const res = spawnSync("node", [CLI, ...args], {
    encoding: "utf8",
    env: { ...process.env, ANTHROPIC_API_KEY: "" },
    timeout: RUN_TIMEOUT_MS - 10_000,
  });
  expect(res.status, res.stderr).toBe(0);
  return {
    report: parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8")),
    markdown: fs.readFileSync(path.join(out, "report.md"), "utf8"),
  };
}

function npmTest(report: RunReport) {
  return report.toolCalls[0]!;
}

describe("dependencies installed on the host, through the CLI", () => {
  it(
    "--include-ignored (all): npm test passes with no network; .env stays out, .npmrc loses its token",
    () => {
      const { report } = cliRun(nodeProject(), ["--include-ignored"]);
      expect(report.hardening?.networkMode).toBe("none");
      expect(npmTest(report).isError).toBe(false);
      expect(npmTest(report).resultPreview).toContain("tests ok");
      const look = report.toolCalls[1]!.resultPreview;
      expect(look).toContain("registry=https://registry.npmjs.org/");
      expect(look).not.toContain("_authToken");
      expect(look).not.toMatch(/^\.env$/m);
      expect(look).toContain("debug.log");
      expect(report.workspace.skipped.map((s) => s.path)).toContain(".env");
      expect(report.workspace.credentialFilesHeldBack?.map((h) => [h.path, h.removed])).toEqual([
        [".npmrc", ["//registry.npmjs.org/:_authToken"]],
      ]);
      expect(report.workspace.ignoredLeftOut).toBeUndefined();
    },
    RUN_TIMEOUT_MS,
  );

  it(
    "--include-ignored node_modules: only the dependencies come in, and the rest is reported as left out",
    () => {
      const { report, markdown } = cliRun(nodeProject(), ["--include-ignored", "node_modules"]);
      expect(npmTest(report).isError).toBe(false);
      expect(npmTest(report).resultPreview).toContain("tests ok");
      expect(report.toolCalls[1]!.resultPreview).not.toContain("debug.log");
      const left = report.workspace.ignoredLeftOut?.paths.map((p) => p.path).sort();
      expect(left).toEqual([".env", ".npmrc", "debug.log"]);
      expect(markdown).toContain("Left out, ignored by git");
    },
    RUN_TIMEOUT_MS,
  );

  it(
    "without the option: npm test cannot find the module, and the report says node_modules was left out and how to take it",
    () => {
      const { report, markdown } = cliRun(nodeProject(), []);
      expect(npmTest(report).isError).toBe(true);
      expect(npmTest(report).resultPreview).toMatch(/Cannot find module 'left-pad-lite'/);
      const left = report.workspace.ignoredLeftOut;
      expect(left?.paths[0]).toEqual({ path: "node_modules/", files: expect.any(Number) });
      expect(left!.paths[0]!.files).toBeGreaterThanOrEqual(2);
      expect(left!.files).toBe(left!.paths.reduce((n, p) => n + p.files, 0));
      // Markdown escapes the underscore; the suggestion names the directory, not the loose files.
      const text = markdown.replaceAll("\\_", "_");
      expect(text).toContain("<code>node_modules/</code> (");
      expect(text).toContain("<code>--include-ignored node_modules</code> (CLI)");
      expect(text).toContain("<code>include_ignored: node_modules</code> (Action)");
    },
    RUN_TIMEOUT_MS,
  );
});

describe("dependencies installed on the host, through the Action", () => {
  const TOKEN = "ghs_includeIgnoredTest0123456789abcdefAB";
  let fake: FakeGitHub;
  beforeEach(async () => {
    fake = await startFakeGitHub({ token: TOKEN, permissions: { octocat: "write" } });
  });
  afterEach(async () => {
    await fake.close();
  });

  it(
    "include_ignored: node_modules — npm test passes in the sandbox (network none)",
    async () => {
      const workspace = nodeProject();
      const result = await runAction({
        fixture: "workflow-dispatch",
        apiUrl: fake.url,
        workspace,
        inputs: {
          github_token: TOKEN,
          script: scriptFile([[{ name: "Bash", input: { command: "npm test" } }]]),
          prompt: "Run the tests.",
          permission_mode: "bypassPermissions",
          include_ignored: "node_modules",
          comment: "false",
          upload_artifact: "false",
        },
      });
      expect(result.failed).toBeUndefined();
      const report = parseReport(fs.readFileSync(result.outputs.report_path ?? "", "utf8"));
      expect(report.hardening?.networkMode).toBe("none");
      expect(npmTest(report).isError).toBe(false);
      expect(npmTest(report).resultPreview).toContain("tests ok");
    },
    RUN_TIMEOUT_MS,
  );
});
