// The choose Action (choose/action.yml, `uses: OWNER/agent-ci/choose@v1`): after a matrix of ordinary runs of
// one task (each job's artifact named …attempt-k), it takes the downloaded artifacts, applies the choice of
// `run --attempts` (runner/capabilities/attempts/attempt-choice.ts) and writes the chosen run's folder, with the
// attempts table in its report, for the publish Action. It runs no model and needs no token.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as core from "@actions/core";
import { REPORT_FILE_NAMES } from "../report/index.js";
import { chooseFromFolders } from "../runner/capabilities/attempts/write-chosen.js";
import { coreIO } from "./io.js";

/** Every input with its default, in choose/action.yml order. */
export const CHOOSE_INPUT_DEFAULTS = { artifacts_path: "", out_path: "" } as const;
export const CHOOSE_OUTPUT_NAMES = ["artifact_path", "attempt", "reason", "has_changes"] as const;

/** The run folders in `root` (each with a report.json), in attempt order. */
export function runFolders(root: string): string[] {
  const names = fs
    .readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(root, d.name, REPORT_FILE_NAMES.json)))
    .map((d) => d.name)
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  return names.map((name) => path.join(root, name));
}

export async function run(): Promise<void> {
  const io = coreIO();
  try {
    const root = core.getInput("artifacts_path").trim();
    if (!root)
      throw new Error("artifacts_path: the folder the attempts' artifacts were downloaded to is required");
    const out =
      core.getInput("out_path").trim() ||
      path.join(process.env.RUNNER_TEMP ?? os.tmpdir(), "agent-ci-chosen");
    const folders = fs.existsSync(root) ? runFolders(root) : [];
    if (folders.length === 0)
      throw new Error(
        `artifacts_path ${root}: no run folders (with report.json) in it; download the attempts' artifacts there with actions/download-artifact and a pattern (one folder per artifact)`,
      );
    const outcome = await chooseFromFolders(folders, out, {
      stdout: (line) => io.info(line),
      stderr: (line) => io.info(line),
      progress: false,
    });
    const chosen = outcome.report?.chosen;
    core.setOutput("artifact_path", out);
    core.setOutput("attempt", chosen ? String(chosen.attempt) : "");
    core.setOutput("reason", chosen?.reason ?? "");
    core.setOutput("has_changes", String(outcome.report?.patch.empty === false));
    if (!chosen) io.setFailed(`agent-ci choose: ${outcome.error ?? "no attempt to choose"}`);
  } catch (error) {
    io.setFailed(`agent-ci choose: ${(error as Error).message}`);
  }
}
