// action.yml is the Action's contract: a node24 JavaScript action running dist/index.js, every input and
// output documented with a default, the same names and defaults as the code (inputs.ts, outputs.ts), and a
// table in docs/configuration.md generated from it and kept in sync (scripts/action-docs.mjs).
// Bypasses the harness: it reads action.yml and the docs as files; no step runs.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { INPUT_DEFAULTS, INPUT_NAMES } from "../../src/action/inputs.js";
import { OUTPUT_NAMES } from "../../src/action/outputs.js";

const root = path.resolve(import.meta.dirname, "../..");
interface ActionYaml {
  runs: { using: string; main: string };
  inputs: Record<string, { description?: string; default?: unknown; required?: boolean }>;
  outputs: Record<string, { description?: string }>;
}
const action = parse(fs.readFileSync(path.join(root, "action.yml"), "utf8")) as ActionYaml;

describe("action.yml", () => {
  it("is a node24 JavaScript action running the bundled dist/index.js", () => {
    expect(action.runs).toEqual({ using: "node24", main: "dist/index.js" });
  });

  it("lists exactly the inputs the code reads, in the same order, each with a description and the code's default", () => {
    expect(Object.keys(action.inputs)).toEqual(INPUT_NAMES);
    for (const name of INPUT_NAMES) {
      const spec = action.inputs[name];
      expect(spec?.description, name).toBeTruthy();
      expect(spec && "default" in spec, `${name} has a default`).toBe(true);
      expect(String(spec?.default), name).toBe(INPUT_DEFAULTS[name]);
      expect(spec?.required, name).not.toBe(true);
    }
  });

  it("has the inputs issue 7 asks for, in snake_case", () => {
    const asked = [
      "prompt",
      "prompt_file",
      "anthropic_api_key",
      "model",
      "permission_mode",
      "allowed_tools",
      "disallowed_tools",
      "settings",
      "image",
      "network",
      "setup",
      "max_turns",
      "max_budget_usd",
      "timeout_minutes",
      "verify",
      "github_token",
      "trigger_phrase",
      "comment",
      "upload_artifact",
      "artifact_name",
      "fail_on",
    ];
    expect(INPUT_NAMES).toEqual(expect.arrayContaining(asked));
    for (const name of INPUT_NAMES) expect(name).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  it("lists exactly the outputs the code sets, each with a description", () => {
    expect(Object.keys(action.outputs)).toEqual([...OUTPUT_NAMES]);
    const asked = [
      "exit_reason",
      "patch_path",
      "report_path",
      "changed_files",
      "has_changes",
      "cost_usd",
      "input_tokens",
      "output_tokens",
      "turns",
      "tool_calls",
      "denials",
      "artifact_id",
      "verify_exit_code",
      "final_message",
      "run_id",
    ];
    expect(OUTPUT_NAMES).toEqual(expect.arrayContaining(asked));
    for (const name of OUTPUT_NAMES) expect(action.outputs[name]?.description, name).toBeTruthy();
  });
});

describe("docs/configuration.md inputs/outputs table", () => {
  it("is generated from action.yml and up to date (run node scripts/action-docs.mjs)", () => {
    const check = spawnSync(process.execPath, [path.join(root, "scripts/action-docs.mjs"), "--check"], {
      cwd: root,
      encoding: "utf8",
    });
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
    const readme = fs.readFileSync(path.join(root, "docs", "configuration.md"), "utf8");
    for (const name of [...INPUT_NAMES, ...OUTPUT_NAMES])
      expect(readme).toMatch(new RegExp(`\\| \`${name}\` +\\|`));
  });

  it("--check fails when action.yml changes, and a rewrite keeps the text around the markers", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-docs-"));
    const actionFile = path.join(dir, "action.yml");
    const readmeFile = path.join(dir, "README.md");
    fs.writeFileSync(
      actionFile,
      fs
        .readFileSync(path.join(root, "action.yml"), "utf8")
        .replace("Stop after this many model turns.", "Stop after N turns."),
    );
    const section =
      fs
        .readFileSync(path.join(root, "docs", "configuration.md"), "utf8")
        .match(/<!-- action-docs:start -->[\s\S]*<!-- action-docs:end -->/)?.[0] ?? "";
    fs.writeFileSync(readmeFile, `# Title\n\nBefore.\n\n${section}\n\nAfter.\n`);
    const script = path.join(root, "scripts/action-docs.mjs");
    const check = spawnSync(
      process.execPath,
      [script, "--check", "--action", actionFile, "--readme", readmeFile],
      { encoding: "utf8" },
    );
    expect(check.status).toBe(1);
    expect(check.stderr).toContain("out of date");
    execFileSync(process.execPath, [script, "--action", actionFile, "--readme", readmeFile]);
    const updated = fs.readFileSync(readmeFile, "utf8");
    expect(updated).toContain("Stop after N turns.");
    expect(updated.startsWith("# Title\n\nBefore.\n\n<!-- action-docs:start -->")).toBe(true);
    expect(updated.endsWith("<!-- action-docs:end -->\n\nAfter.\n")).toBe(true);
  });
});
