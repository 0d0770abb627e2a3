// Cloud credential files a workflow's auth step left in the workspace never reach the sandbox (RELIABILITY
// B5): google-github-actions/auth's `gha-creds-*.json` at any depth, and the files the credential
// variables of the runner's environment name. They are untracked and the pull request's `.gitignore` does
// not list them, so without the hold-back the copy-in would take them; the agent's Glob, Read and Bash see
// none of them, the report lists them and the log says so.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { scriptFile } from "../support/action-harness.js";
import { makeWorkspace, writeFiles } from "../support/workspace.js";
import { tempOut } from "../support/run-io.js";

const CLI = path.resolve("bin/agent-ci.js");
const RUN_TIMEOUT_MS = 180_000;
/** What each credentials file holds, assembled at run time so that no key-shaped literal is committed. */
const MARKER = ["cred", "marker", "Qx7".repeat(8)].join("-");

const SCRIPT = [
  [{ name: "Glob", input: { pattern: "**/*" } }],
  [{ name: "Read", input: { file_path: "/workspace/gha-creds-abc.json" } }],
  [{ name: "Read", input: { file_path: "/workspace/ci/aws/credentials" } }],
  [
    {
      name: "Bash",
      input: { command: "find . -path ./.git -prune -o -print; grep -rl cred-marker . || true" },
    },
  ],
];

describe("cloud credential files in the workspace, through the CLI", () => {
  it(
    "B5 gha-creds-*.json (at any depth) and the file AWS_SHARED_CREDENTIALS_FILE names stay out of the sandbox, and the report lists them",
    () => {
      const workspace = makeWorkspace(
        { ".gitignore": "node_modules/\n", "src/app.js": "console.log('app');\n" },
        { git: true },
      );
      const key = JSON.stringify({ type: "external_account", token: MARKER });
      writeFiles(workspace, {
        "gha-creds-abc.json": key,
        "deploy/gha-creds-0123.json": key,
        "ci/aws/credentials": `[default]\naws_secret_access_key = ${MARKER}\n`,
        "notes.txt": "an untracked file that is copied\n",
      });
      const out = tempOut();
      const res = spawnSync(
        "node",
        [
          CLI,
          "run",
          "--workspace",
          workspace,
          "--script",
          scriptFile(SCRIPT),
          "--mode",
          "bypassPermissions",
          "--network",
          "none",
          "--out",
          out,
        ],
        {
          encoding: "utf8",
          env: {
            ...process.env,
            ANTHROPIC_API_KEY: "",
            AWS_SHARED_CREDENTIALS_FILE: path.join(workspace, "ci/aws/credentials"),
          },
          timeout: RUN_TIMEOUT_MS - 10_000,
        },
      );
      expect(res.status, res.stderr).toBe(0);
      const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
      const [glob, readGha, readAws, bash] = report.toolCalls;
      expect(glob!.resultPreview).toContain("notes.txt");
      expect(glob!.resultPreview).not.toContain("gha-creds");
      expect(glob!.resultPreview).not.toContain("credentials");
      expect(readGha!.isError).toBe(true);
      expect(readAws!.isError).toBe(true);
      expect(bash!.resultPreview).toContain("./notes.txt");
      expect(bash!.resultPreview).not.toContain("gha-creds");
      expect(bash!.resultPreview).not.toContain("ci/aws/credentials");
      expect(bash!.resultPreview).not.toContain(MARKER);
      expect(fs.readFileSync(path.join(out, "report.json"), "utf8")).not.toContain(MARKER);

      const held = report.workspace.credentialFilesHeldBack ?? [];
      expect(held.map((h) => h.path).sort()).toEqual([
        "ci/aws/credentials",
        "deploy/gha-creds-0123.json",
        "gha-creds-abc.json",
      ]);
      expect(held.find((h) => h.path === "ci/aws/credentials")?.reason).toContain(
        "AWS_SHARED_CREDENTIALS_FILE",
      );
      expect(res.stderr).toMatch(/held back from the sandbox: gha-creds-abc\.json/);
      expect(res.stderr).toMatch(
        /held back from the sandbox: ci\/aws\/credentials \(.*AWS_SHARED_CREDENTIALS_FILE/,
      );
      expect(fs.readFileSync(path.join(out, "report.md"), "utf8")).toMatch(
        /held back <code>gha-creds-abc\.json/,
      );
    },
    RUN_TIMEOUT_MS,
  );
});
