// `agent-ci batch tasks.jsonl --parallel K`: a file of tasks, one JSON object a line whose keys are the run
// command's options by their flag names ({"workspace": "repo-a", "prompt": "…"}), run K at a time on the
// engine, each as `agent-ci run` runs it (the CLI hands its own run function in: this room never imports the
// runner), one output folder and record each, and a table at the end. The command line's run options apply to
// every task (a task's own value wins where a flag takes one value). A spending cap stops new starts once the
// batch's spend so far, plus what the runs in flight may still spend, would pass it.
import path from "node:path";

export interface BatchRunResult {
  exitCode: number;
  runId?: string;
  exitReason?: string;
  costUsd?: number;
  outDir?: string;
  error?: string;
}

export interface BatchTask {
  index: number;
  /** The task's `id`, or its line number. */
  name: string;
  argv: string[];
}

export interface BatchRecord extends BatchRunResult {
  task: BatchTask;
  /** "capped": not started because of the cap. */
  status: "ran" | "capped";
  ms: number;
}

const FLAG = /^[A-Za-z][A-Za-z0-9-]{0,60}$/;
const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** A task's options as the run command's argv: `--flag value`, repeated for a list, bare for true. */
export function taskArgv(task: Record<string, unknown>, where: string): string[] {
  const argv: string[] = [];
  for (const [key, value] of Object.entries(task)) {
    if (key === "id") continue;
    if (!FLAG.test(key))
      throw new Error(`${where}: "${key.slice(0, 80)}" is not a flag name of agent-ci run`);
    const flag = `--${kebab(key)}`;
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      if (v === true) argv.push(flag);
      else if (v === false) argv.push(`--no-${kebab(key)}`);
      else if (typeof v === "string" || typeof v === "number") argv.push(flag, String(v));
      else throw new Error(`${where}: ${flag} takes a string, a number, true or a list of them`);
    }
  }
  return argv;
}

export function batchTasks(
  lines: ReadonlyArray<Record<string, unknown>>,
  common: readonly string[],
  file: string,
  outParent: string,
): BatchTask[] {
  return lines.map((line, index) => {
    const name = typeof line.id === "string" && line.id ? line.id : String(index + 1);
    const own = taskArgv(line, `${file} task ${name}`);
    const out = own.includes("--out")
      ? []
      : [
          "--out",
          path.join(
            outParent,
            `${String(index + 1).padStart(3, "0")}-${name.replace(/[^A-Za-z0-9._-]/g, "-")}`,
          ),
        ];
    return { index, name, argv: [...common, ...out, ...own] };
  });
}

export interface BatchOptions {
  parallel: number;
  run: (task: BatchTask) => Promise<BatchRunResult>;
  /** A cap on the batch's spend, and what one run may spend (held while it runs). */
  maxUsd?: number;
  perRunUsd?: number;
  /**
   * Asked before each start, one at a time (a start is decided before the next is asked): the reason the task
   * may not start (the ledger's caps), or undefined. `spentUsd` is what the batch's finished runs cost, `running`
   * how many of its runs are in flight.
   */
  mayStart?: (own: { spentUsd: number; running: number }) => Promise<string | undefined>;
  now?: () => number;
  onDone?: (record: BatchRecord) => void;
}

/** Runs the tasks, `parallel` at a time, in file order; one record each, in file order. */
export async function runBatch(tasks: readonly BatchTask[], options: BatchOptions): Promise<BatchRecord[]> {
  const now = options.now ?? Date.now;
  const records: BatchRecord[] = new Array<BatchRecord>(tasks.length);
  let next = 0;
  let spent = 0;
  let running = 0;
  // Starts are decided one at a time: a decision sees every start decided before it.
  let decided: Promise<unknown> = Promise.resolve();
  const admit = (): Promise<string | undefined> => {
    const decision = decided.then(async () => {
      const held = (running + 1) * (options.perRunUsd ?? 0);
      const refusal =
        options.maxUsd !== undefined && spent + held > options.maxUsd + 1e-9
          ? `the batch's cap of $${options.maxUsd.toFixed(2)} would be passed`
          : await options.mayStart?.({ spentUsd: spent, running });
      if (refusal === undefined) running += 1;
      return refusal;
    });
    decided = decision.catch(() => undefined);
    return decision;
  };
  const worker = async () => {
    for (;;) {
      const task = tasks[next];
      if (!task) return;
      next += 1;
      const refusal = await admit();
      if (refusal !== undefined) {
        records[task.index] = { task, status: "capped", exitCode: 5, ms: 0, error: refusal };
        options.onDone?.(records[task.index] as BatchRecord);
        continue;
      }
      const start = now();
      const result = await options
        .run(task)
        .catch((e: Error): BatchRunResult => ({ exitCode: 1, error: e.message }));
      running -= 1;
      spent += result.costUsd ?? 0;
      records[task.index] = { ...result, task, status: "ran", ms: now() - start };
      options.onDone?.(records[task.index] as BatchRecord);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.parallel, tasks.length)) }, worker));
  return records;
}

/** The table at the end: one row a task, then the totals. */
export function batchTable(records: readonly BatchRecord[]): string {
  const rows = records.map((r) => [
    r.task.name.slice(0, 40),
    r.status === "capped" ? "not started (cap)" : (r.exitReason ?? "error"),
    String(r.exitCode),
    `$${(r.costUsd ?? 0).toFixed(4)}`,
    `${(r.ms / 1000).toFixed(1)}s`,
    r.outDir ?? r.error?.slice(0, 80) ?? "",
  ]);
  const head = ["task", "exit reason", "exit", "cost", "time", "output"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  const ok = records.filter((r) => r.status === "ran" && r.exitCode === 0).length;
  const cost = records.reduce((sum, r) => sum + (r.costUsd ?? 0), 0);
  return [
    line(head),
    ...rows.map(line),
    `${records.length} task(s): ${ok} completed, ${records.length - ok} not; cost $${cost.toFixed(4)}`,
  ].join("\n");
}
