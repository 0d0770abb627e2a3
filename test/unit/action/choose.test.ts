// The choose Action: the matrix jobs' downloaded artifacts in, the chosen run's folder out (with every attempt
// in its report), its outputs set; choose/action.yml declares what the code reads and sets.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parse } from "yaml";
import { CHOOSE_INPUT_DEFAULTS, CHOOSE_OUTPUT_NAMES, run, runFolders } from "../../../src/action/choose.js";
import { parseReport, type RunReport } from "../../../src/report/index.js";
import { smallFixReport, verifyFailedReport } from "../report/support/report-builders.js";
import { ACTION_ENTRIES } from "../../../scripts/bundles.mjs";

const root = path.resolve(import.meta.dirname, "../../..");

function artifact(dir: string, name: string, report: RunReport, patch: string) {
  const folder = path.join(dir, name);
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, "report.json"), JSON.stringify(report));
  fs.writeFileSync(path.join(folder, "patch.diff"), patch);
  fs.writeFileSync(path.join(folder, "trigger.json"), JSON.stringify({ name }));
}

/** Runs the action with these inputs; its outputs as the runner's output file has them. */
async function choose(inputs: Record<string, string>) {
  const outputFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-choose-out-")), "output");
  fs.writeFileSync(outputFile, "");
  vi.stubEnv("GITHUB_OUTPUT", outputFile);
  for (const [name, value] of Object.entries(inputs)) vi.stubEnv(`INPUT_${name.toUpperCase()}`, value);
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  await run();
  const printed = stdout.mock.calls.map((c) => String(c[0])).join("");
  stdout.mockRestore();
  const failed = process.exitCode === 1;
  process.exitCode = 0;
  const outputs: Record<string, string> = {};
  for (const m of fs.readFileSync(outputFile, "utf8").matchAll(/^(\w+)<<(\S+)\n([\s\S]*?)\n\2$/gm))
    outputs[m[1] ?? ""] = m[3] ?? "";
  return { outputs, printed, failed };
}

afterEach(() => {
  process.exitCode = 0;
});

describe("the choose action", () => {
  it("chooses the run that passed verify among the downloaded artifacts and writes its folder", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-choose-"));
    const passed = { ...smallFixReport(), runId: "run-passed" };
    artifact(dir, "agent-ci-attempt-10", verifyFailedReport(), "failing\n");
    artifact(dir, "agent-ci-attempt-2", passed, "passing\n");
    fs.mkdirSync(path.join(dir, "not-a-run"));
    expect(runFolders(dir).map((f) => path.basename(f))).toEqual([
      "agent-ci-attempt-2",
      "agent-ci-attempt-10",
    ]);

    const out = path.join(dir, "chosen");
    const { outputs, failed } = await choose({ artifacts_path: dir, out_path: out });
    expect(failed).toBe(false);
    expect(outputs).toEqual({
      artifact_path: out,
      attempt: "2",
      reason: "attempt 2 passed verify: the only one that did",
      has_changes: "true",
    });
    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    expect(report.runId).toBe("run-passed");
    expect(report.attempts?.map((a) => [a.attempt, a.dir, a.started, a.verify])).toEqual([
      [1, undefined, false, "not_run"],
      [2, "agent-ci-attempt-2", true, "passed"],
      ...Array.from({ length: 7 }, (_, i) => [i + 3, undefined, false, "not_run"]),
      [10, "agent-ci-attempt-10", true, "failed"],
    ]);
    expect(fs.readFileSync(path.join(out, "patch.diff"), "utf8")).toBe("passing\n");
    expect(JSON.parse(fs.readFileSync(path.join(out, "trigger.json"), "utf8"))).toEqual({
      name: "agent-ci-attempt-2",
    });
  });

  it("fails the step saying what to do when the folder holds no runs", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-choose-empty-"));
    const { failed, printed } = await choose({ artifacts_path: dir, out_path: path.join(dir, "out") });
    expect(failed).toBe(true);
    expect(printed).toMatch(
      /::error::agent-ci choose: artifacts_path .*: no run folders .*actions\/download-artifact/,
    );
  });

  it("choose/action.yml declares the inputs and outputs the code reads and sets, and runs the bundle the build makes", () => {
    const action = parse(fs.readFileSync(path.join(root, "choose/action.yml"), "utf8")) as {
      inputs: Record<string, { default?: string }>;
      outputs: Record<string, unknown>;
      runs: { main: string };
    };
    expect(Object.keys(action.inputs)).toEqual(Object.keys(CHOOSE_INPUT_DEFAULTS));
    for (const [name, value] of Object.entries(CHOOSE_INPUT_DEFAULTS))
      expect(String(action.inputs[name]?.default ?? ""), name).toBe(value);
    expect(Object.keys(action.outputs)).toEqual([...CHOOSE_OUTPUT_NAMES]);
    expect(action.runs.main).toBe("../dist/choose.js");
    expect(ACTION_ENTRIES.choose).toBe("src/choose.ts");
  });
});
