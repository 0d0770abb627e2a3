// Shared by the engine tests: scripted runs through runAgent, and the containers a run left on an engine.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { parseReport, type RunReport } from "../../src/report/index.js";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { runAgent, type RunOutcome } from "../../src/runner/run.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { quietIo, tempOut } from "../support/run-io.js";

export const EXAMPLE = path.resolve("examples/buggy-calc");

export interface ScriptCall {
  name: string;
  input: Record<string, unknown>;
}

/** Writes a ScriptDriver file (`{turns, final}`) to a temp dir and returns its path. */
export function scriptFile(turns: ScriptCall[][], final = "done"): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-script-")), "script.json");
  fs.writeFileSync(file, JSON.stringify({ turns, final }));
  return file;
}

export interface ScriptedRun {
  outcome: RunOutcome;
  report: RunReport | undefined;
  /** events.jsonl as written: every tool result in full, as the model would have seen it. */
  events: string;
  patch: string;
  /** The run's stdout lines (json / stream-json output). */
  lines: string[];
  logs: string[];
}

/** One run through runAgent, as the CLI makes it (config parsed from the same input shape). */
export async function runScripted(input: Partial<RunConfigInput>): Promise<ScriptedRun> {
  const lines: string[] = [];
  const logs: string[] = [];
  const out = tempOut();
  const config = parseRunConfig({
    workspace: EXAMPLE,
    out,
    mode: "bypassPermissions",
    ...input,
  } as RunConfigInput);
  const outcome = await runAgent(
    config,
    quietIo({ stdout: (l) => lines.push(l), stderr: (l) => logs.push(l) }),
  );
  const read = (name: string) =>
    fs.existsSync(path.join(outcome.outDir, name))
      ? fs.readFileSync(path.join(outcome.outDir, name), "utf8")
      : "";
  const json = read("report.json");
  return {
    outcome,
    report: json ? parseReport(json) : undefined,
    events: read("events.jsonl"),
    patch: fs.existsSync(outcome.patchPath) ? fs.readFileSync(outcome.patchPath, "utf8") : "",
    lines,
    logs,
  };
}

/** Containers on `docker` carrying agent-ci's run label, for one run or for any. */
export async function labelled(docker: Docker, runId?: string): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({
    all: true,
    filters: { label: [runId ? `${LABEL_RUN}=${runId}` : LABEL_RUN] },
  });
}
