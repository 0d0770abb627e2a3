// Batch (`agent-ci batch`, docs/fleet.md): nine tasks K at a time on one engine next to the same nine one at a
// time, through the agent-ci command as a user runs it, alternately. Each task is the buggy-calc example's fix
// played by a fake Messages API on loopback (the tests, a Read, the Edit, the tests again, the answer), in its
// own sandbox, with its own output folder and record. Twice: with the model's turns answered at once (what the
// engine and the host's CPUs allow), and with each turn answered after TURN_MS (a stand-in for a model's own
// time, during which a sandbox waits and the others work). Each batch must exit 0, write nine records with
// nine run ids, and leave no container of its own behind.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDockerClient } from "../src/sandbox/engine/docker-client.js";
import { LABEL_PID } from "../src/sandbox/engine/engine.js";
import { fake, startFakeAnthropic, type RecordedMessagesRequest } from "../test/support/fake-anthropic.js";
import { CLI_NODE, summarize, type Row } from "./stats.js";

const TASKS = 9;
const PARALLEL = 3;
const REPS = 2;
/** A model turn's time in the second pair of rows: the short end of a real model's turn with a tool call. */
const TURN_MS = 3000;
const SECTION = `Batch: ${TASKS} scripted tasks, \`--parallel ${PARALLEL}\` (agent-ci column) next to one at a time (native column)`;
/** The fake Messages API's key, assembled at run time. */
const BENCH_KEY = ["sk", "ant", "api03", "batch", String(process.pid)].join("-");
const CALC = "/workspace/src/calc.js";

/** The fix's turns, in order; a request's place in it is how many tool results its conversation holds. */
const FIX = [
  () => fake.toolUse("Bash", { command: "npm test" }),
  () => fake.toolUse("Read", { file_path: CALC }),
  () =>
    fake.toolUse("Edit", {
      file_path: CALC,
      old_string: "  // BUG: divides by one less than the count\n  return sum / (values.length - 1);",
      new_string: "  return sum / values.length;",
    }),
  () => fake.toolUse("Bash", { command: "npm test" }),
  () => fake.text("Fixed average(): it divided by one less than the count."),
];

function fixTurn(request: RecordedMessagesRequest, delayMs: number) {
  const results = request.body.messages.filter(
    (m) => Array.isArray(m.content) && m.content.some((b) => b.type === "tool_result"),
  ).length;
  const turn = (FIX[Math.min(results, FIX.length - 1)] ?? FIX[0]!)();
  return delayMs ? { ...turn, delayMs } : turn;
}

interface BatchRun {
  wallMs: number;
}

/** One `agent-ci batch` to its exit, and what it must leave: nine records, no container. */
async function runBatchCommand(
  bin: string,
  tasksFile: string,
  outDir: string,
  parallel: number,
  apiUrl: string,
): Promise<BatchRun> {
  const args = [
    bin,
    "batch",
    tasksFile,
    "--parallel",
    String(parallel),
    "--batch-out",
    outDir,
    "--mode",
    "acceptEdits",
    "--allow",
    "Bash(npm test:*)",
  ];
  const t0 = performance.now();
  const child = spawn(CLI_NODE, args, {
    env: { ...process.env, ANTHROPIC_API_KEY: BENCH_KEY, ANTHROPIC_BASE_URL: apiUrl },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const wallMs = performance.now() - t0;
  if (code !== 0)
    throw new Error(`agent-ci batch --parallel ${parallel} exited ${code}: ${output.slice(-3000)}`);
  const records = fs
    .readdirSync(outDir)
    .map((f) => path.join(outDir, f, "report.json"))
    .filter((f) => fs.existsSync(f))
    .map((f) => JSON.parse(fs.readFileSync(f, "utf8")) as { runId: string; exitReason: string });
  const ids = new Set(records.map((r) => r.runId));
  if (records.length !== TASKS || ids.size !== TASKS || records.some((r) => r.exitReason !== "completed"))
    throw new Error(
      `agent-ci batch --parallel ${parallel} wrote ${records.length} records (${ids.size} run ids), not ${TASKS} completed ones`,
    );
  const left = await createDockerClient().listContainers({
    all: true,
    filters: { label: [`${LABEL_PID}=${child.pid}`] },
  });
  if (left.length)
    throw new Error(`agent-ci batch --parallel ${parallel} left ${left.length} container(s) behind`);
  return { wallMs };
}

/** REPS alternated pairs of batches (one at a time, then K at a time) with turns after `delayMs`. */
async function pairs(
  bin: string,
  tasksFile: string,
  dir: string,
  delayMs: number,
  log: (line: string) => void,
): Promise<{ serial: number[]; parallel: number[] }> {
  const api = await startFakeAnthropic({ apiKey: BENCH_KEY, handler: (r) => fixTurn(r, delayMs) });
  const serial: number[] = [];
  const parallel: number[] = [];
  try {
    for (let i = 0; i < REPS; i++) {
      const one = await runBatchCommand(
        bin,
        tasksFile,
        path.join(dir, `d${delayMs}-serial-${i}`),
        1,
        api.url,
      );
      serial.push(one.wallMs);
      const k = await runBatchCommand(
        bin,
        tasksFile,
        path.join(dir, `d${delayMs}-par-${i}`),
        PARALLEL,
        api.url,
      );
      parallel.push(k.wallMs);
      log(
        `batch (turns after ${delayMs} ms): round ${i + 1}: one at a time ${(one.wallMs / 1000).toFixed(1)} s, ${PARALLEL} at a time ${(k.wallMs / 1000).toFixed(1)} s (${(k.wallMs / one.wallMs).toFixed(2)}×)`,
      );
    }
  } finally {
    await api.close();
  }
  return { serial, parallel };
}

export async function benchBatch(repoRoot: string, log: (line: string) => void): Promise<Row[]> {
  const bin = path.join(repoRoot, "bin/agent-ci.js");
  const example = path.join(repoRoot, "examples/buggy-calc");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-bench-batch-"));
  const tasksFile = path.join(dir, "tasks.jsonl");
  const lines = Array.from({ length: TASKS }, (_, i) =>
    JSON.stringify({ id: `t${i + 1}`, workspace: example, prompt: "Fix average() in src/calc.js." }),
  );
  fs.writeFileSync(tasksFile, `${lines.join("\n")}\n`);
  try {
    log(`batch: ${TASKS} tasks one at a time and ${PARALLEL} at a time, × ${REPS}, turns at once`);
    const now = await pairs(bin, tasksFile, dir, 0, log);
    log(`batch: the same with each model turn after ${TURN_MS} ms`);
    const slow = await pairs(bin, tasksFile, dir, TURN_MS, log);
    const checked = `each batch exited 0 with ${TASKS} completed records (${TASKS} run ids) and left no container`;
    return [
      {
        section: SECTION,
        measurement: `wall time, spawn to exit: \`agent-ci batch --parallel ${PARALLEL}\` vs \`--parallel 1\`, model turns answered at once`,
        unit: "ms",
        agentCi: summarize(now.parallel),
        native: summarize(now.serial),
        note: `${os.availableParallelism()} CPUs here; ${checked}`,
      },
      {
        section: SECTION,
        measurement: `the same, each of a task's 5 model turns answered after ${TURN_MS / 1000} s`,
        unit: "ms",
        agentCi: summarize(slow.parallel),
        native: summarize(slow.serial),
        note: checked,
      },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
