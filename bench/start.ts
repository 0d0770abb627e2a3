// Start-up: how long the `agent-ci` command takes to answer `--version` and `--help`, each next to Node
// starting with nothing to load (`node -e 0`, the floor), alternately; and how soon after its process is spawned
// a scripted one-call run records its start (report.json's `startedAt`), next to the same floor, and that run's
// wall time with each of its phases. The command is this repository's bin/agent-ci.js on the bundle in dist/,
// as a user runs it.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CLI_NODE, paired, summarize, type Row } from "./stats.js";

const REPS = 20;
const RUN_REPS = 5;
const SECTION = "Start-up";
/** The goals a user waits on: a command that answers at once, a run that starts recording at once. */
export const START_GOAL_MS = 150;
export const STARTED_AT_GOAL_MS = 250;
/** A one-call run on a one-file repository, started and stopped (issue: "a run that starts and stops in one second"). */
export const ONE_CALL_RUN_GOAL_MS = 1000;

interface OneCallReport {
  startedAt: string;
  phases?: Array<{ name: string; startOffsetMs: number; durationMs: number }>;
}

/**
 * The parts of several `agent-ci run`s, from each one's report.json: the time before its `startedAt`, each
 * phase's duration (in the order the phases first appeared) and what follows the last one (the record written,
 * the exit); and each run's wall time.
 */
export class RunParts {
  readonly startedAfter: number[] = [];
  readonly walls: number[] = [];
  private readonly phases = new Map<string, number[]>();
  private readonly afterPhases: number[] = [];

  /** One run whose output folder is `out`, spawned and ended at these epoch milliseconds. */
  add(out: string, spawned: number, ended: number): void {
    const report = JSON.parse(fs.readFileSync(path.join(out, "report.json"), "utf8")) as OneCallReport;
    const started = Date.parse(report.startedAt) - spawned;
    const wall = ended - spawned;
    this.startedAfter.push(started);
    this.walls.push(wall);
    let end = 0;
    for (const p of report.phases ?? []) {
      this.phases.set(p.name, [...(this.phases.get(p.name) ?? []), p.durationMs]);
      end = Math.max(end, p.startOffsetMs + p.durationMs);
    }
    this.afterPhases.push(wall - started - end);
  }

  /** The rows of the parts, each `· name`, agent-ci's column alone. */
  rows(section: string): Row[] {
    const row = (measurement: string, ms: number[]): Row => ({
      section,
      measurement,
      unit: "ms",
      agentCi: summarize(ms),
      native: null,
    });
    return [
      row("· before `startedAt` (process start, configuration)", this.startedAfter),
      ...[...this.phases].map(([name, ms]) => row(`· ${name}`, ms)),
      row("· after the last phase (the record written, the process's exit)", this.afterPhases),
    ];
  }
}

/** Runs `node <args>` (CLI_NODE) to its end; rejects on a non-zero exit, with its stderr. */
export function node(args: readonly string[], cwd: string, env?: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI_NODE, args, {
      cwd,
      stdio: ["ignore", "ignore", "pipe"],
      env: env ? { ...process.env, ...env } : process.env,
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`node ${args.join(" ")} exited ${code}: ${stderr}`)),
    );
  });
}

/** A one-file repository and a script of one call on it (its Read of `a.txt`). */
export function oneCallRun(dir: string): { workspace: string; script: string } {
  const workspace = path.join(dir, "repo");
  fs.mkdirSync(workspace);
  fs.writeFileSync(path.join(workspace, "a.txt"), "one line\n");
  const git = (...args: string[]) => execFileSync("git", args, { cwd: workspace, stdio: "ignore" });
  git("init", "-q");
  git("add", "-A");
  git("-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "init");
  const script = path.join(dir, "one-call.script.json");
  fs.writeFileSync(
    script,
    JSON.stringify({ turns: [[{ name: "Read", input: { file_path: "/workspace/a.txt" } }]], final: "done" }),
  );
  return { workspace, script };
}

export async function benchStartUp(repoRoot: string, log: (line: string) => void): Promise<Row[]> {
  const bin = path.join(repoRoot, "bin/agent-ci.js");
  const floor = () => node(["-e", "0"], repoRoot);
  const rows: Row[] = [];
  for (const flag of ["--version", "--help"]) {
    log(`start-up: agent-ci ${flag} × ${REPS}, next to node -e 0`);
    const { a, b } = await paired(REPS, 2, () => node([bin, flag], repoRoot), floor);
    rows.push({
      section: SECTION,
      measurement: `CLI start: \`agent-ci ${flag}\` (process spawned to exit) vs \`node -e 0\``,
      unit: "ms",
      agentCi: summarize(a),
      native: summarize(b),
      note: `goal ≤ ${START_GOAL_MS} ms`,
    });
  }

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-bench-start-"));
  try {
    const { workspace, script } = oneCallRun(dir);
    log(`start-up: a scripted one-call run × ${RUN_REPS}: its startedAt after the process was spawned`);
    const runs = new RunParts();
    const floors: number[] = [];
    for (let i = 0; i < RUN_REPS; i++) {
      const out = path.join(dir, `out-${i}`);
      const spawned = Date.now();
      await node(
        [bin, "run", "--workspace", workspace, "--script", script, "--out", out, "--quiet"],
        workspace,
      );
      runs.add(out, spawned, Date.now());
      const t0 = performance.now();
      await floor();
      floors.push(performance.now() - t0);
    }
    rows.push({
      section: SECTION,
      measurement: "a run's `startedAt` after its process was spawned (scripted, one call) vs `node -e 0`",
      unit: "ms",
      agentCi: summarize(runs.startedAfter),
      native: summarize(floors),
      note: `goal ≤ ${STARTED_AT_GOAL_MS} ms; report.json's startedAt has millisecond resolution`,
    });
    rows.push(
      {
        section: SECTION,
        measurement:
          "a one-call run on a one-file repository, wall (process spawned to exit, scripted) vs `node -e 0`",
        unit: "ms",
        agentCi: summarize(runs.walls),
        native: summarize(floors),
        note: `goal ≤ ${ONE_CALL_RUN_GOAL_MS} ms; its parts below (report.json's phases; they may overlap)`,
      },
      ...runs.rows(SECTION),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
