// Several attempts at one task, one answer (`--attempts N`, docs/attempts.md): N ordinary runs (the run's own,
// which `runAgent` gives the attempts capability's `around` as `one`, each with its own capabilities) of
// the same task from the same base, each in its own sandbox with its own record under <out>/attempt-k/, at most
// K at a time; the choice (attempt-choice.ts) picks one, and the output folder's patch.diff and report files
// are the chosen attempt's, with every attempt's row and the choice added to report.json (write-chosen.ts).
//
// One budget: --max-budget-usd (and --max-turns, when given) is a pool the attempts draw from. An attempt's
// share is what is left of the pool when it starts, split evenly among the attempts starting beside it
// (sequentially: all that is left). What an attempt did not spend goes back to the pool when it ends. An
// attempt that would start with nothing left does not start, and the run ends `budget` with the best attempt
// so far as its result.
//
// One clock: --timeout is the wall-clock limit of the whole run, not of each attempt. An attempt's limit is
// what is left of it when the attempt starts; once it is reached, the attempts not started do not start and the
// run ends `timeout`, with the best attempt so far as its result.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULTS } from "../../../sandbox/container/spec.js";
import { newRunId } from "../../../sandbox/docker-sandbox.js";
import { ConfigError } from "../../../errors.js";
import type { RunConfig } from "../../config.js";
import type { RunIO } from "../../run/run-context.js";
import { endedBeforeAnyContainer, makeOutDir, type RunOutcome } from "../../run/outcome.js";
import type { AroundGiven } from "../capability.js";
import { factsOf, writeChosen, type Finished } from "./write-chosen.js";

/** The subfolder of the output folder that holds attempt k's record. */
export const attemptDir = (k: number) => `attempt-${k}`;

/** How many sandboxes with the run's limits fit this machine's CPUs and memory at once (at least 1, at most N). */
export function defaultParallel(
  config: Pick<RunConfig, "cpus" | "memory">,
  attempts: number,
  machine = { cpus: os.availableParallelism(), memoryBytes: os.totalmem() },
): { parallel: number; why: string } {
  const cpus = config.cpus ?? DEFAULTS.nanoCpus / 1e9;
  const memory = config.memory ?? DEFAULTS.memoryBytes;
  const byCpu = Math.floor(machine.cpus / cpus);
  const byMemory = Math.floor(machine.memoryBytes / memory);
  const parallel = Math.max(1, Math.min(attempts, byCpu, byMemory));
  const gib = (bytes: number) => `${Math.round((bytes / 1024 ** 3) * 10) / 10} GiB`;
  return {
    parallel,
    why: `${machine.cpus} CPUs and ${gib(machine.memoryBytes)} here, ${cpus} CPUs and ${gib(memory)} per sandbox`,
  };
}

/** A limit the attempts share; undefined total: no limit, each attempt gets `perAttempt`. */
class Pool {
  private spent = 0;
  private reserved = 0;
  constructor(
    readonly total: number | undefined,
    private readonly whole: boolean,
  ) {}

  /** The share of an attempt starting beside `slots - 1` others; 0 when the pool is spent. */
  take(slots: number): number | undefined {
    if (this.total === undefined) return undefined;
    const left = this.total - this.spent - this.reserved;
    const share = this.whole ? Math.floor(left / slots) : left / slots;
    if (share <= (this.whole ? 0 : 1e-9)) return 0;
    this.reserved += share;
    return share;
  }

  settle(share: number | undefined, used: number): void {
    if (share === undefined) return;
    this.reserved -= share;
    this.spent += used;
  }

  get exhausted(): boolean {
    return this.total !== undefined && this.total - this.spent <= (this.whole ? 0 : 1e-9);
  }
}

/** Attempt k's lines on stderr, named; its machine output (stream-json) is not printed: the runs interleave. */
function attemptIo(io: RunIO, k: number): RunIO {
  return {
    stdout: () => undefined,
    stderr: (line) => io.stderr(`[attempt ${k}] ${line}`),
    progress: io.progress,
    onSecret: io.onSecret,
    setupCacheStore: io.setupCacheStore,
  };
}

/** The attempts run and one chosen: the whole run's outcome (the attempts capability's run, attempts.ts). */
export async function runAttempts(config: RunConfig, given: AroundGiven): Promise<RunOutcome> {
  const { io, cancel } = given;
  const hints = readHints(config.attemptPrompts);
  const n = config.attempts;
  const auto = defaultParallel(config, n);
  const parallel = Math.min(n, config.parallel ?? auto.parallel);
  const outDir = makeOutDir(config, newRunId());
  io.stderr(
    `agent-ci: ${n} attempts, at most ${parallel} at a time (${config.parallel ? "--parallel" : auto.why})${config.maxBudgetUsd ? `; one budget of $${config.maxBudgetUsd} for all` : ""}${config.turnsPool ? `; ${config.maxTurns} turns for all` : ""}`,
  );
  const attempts = new AttemptRunner(config, hints, given, outDir, Date.now() + config.timeoutMs);
  const onCancel = () => attempts.endOthers("the run was cancelled");
  cancel.addEventListener("abort", onCancel, { once: true });
  await attempts.schedule(n, parallel, cancel);
  cancel.removeEventListener("abort", onCancel);
  const finished = attempts.finished.sort((a, b) => a.k - b.k);
  if (attempts.ended === "config") {
    const failed = finished.find((f) => f.outcome.exitReason === "config_error");
    if (failed) return { ...failed.outcome, outDir };
  }
  const budgetSpent = attempts.ended === "budget" || attempts.money.exhausted || attempts.turns.exhausted;
  const timedOut = attempts.ended === "timeout" || finished.some((f) => f.outcome.exitReason === "timeout");
  return writeChosen({
    verified: Boolean(config.verify),
    secrets: given.secrets,
    outDir,
    n,
    finished,
    budgetSpent,
    timedOut,
    cancelled: cancel.aborted,
    io,
  });
}

/** --attempt-prompts' file: line k is attempt k's hint. */
function readHints(file: string | undefined): string[] {
  if (!file) return [];
  try {
    return fs.readFileSync(file, "utf8").split("\n");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ConfigError(
      `--attempt-prompts ${file}: ${code === "ENOENT" ? "no such file" : (e as Error).message}`,
    );
  }
}

/** The attempts of one run: started in order as slots free, each with its share of the one budget. */
class AttemptRunner {
  readonly finished: Finished[] = [];
  readonly money: Pool;
  readonly turns: Pool;
  /** Why no further attempt starts (a pass with --stop-at-first-pass, the budget, the clock, a configuration error). */
  ended: "pass" | "budget" | "timeout" | "config" | undefined;
  private readonly controllers = new Map<number, AbortController>();

  constructor(
    private readonly config: RunConfig,
    /** Line k is appended to attempt k's prompt as its own paragraph (--attempt-prompts). */
    private readonly hints: readonly string[],
    private readonly given: AroundGiven,
    private readonly outDir: string,
    /** The run's wall-clock limit (--timeout), shared by the attempts. */
    private readonly deadline: number,
  ) {
    this.money = new Pool(config.maxBudgetUsd, false);
    this.turns = new Pool(config.turnsPool ? config.maxTurns : undefined, true);
  }

  endOthers(why: string): void {
    for (const [k, c] of this.controllers) {
      this.given.io.stderr(`agent-ci: cancelling attempt ${k}: ${why}`);
      c.abort(new Error(why));
    }
  }

  /** At most `parallel` at a time, in order; a slot that frees starts the next. */
  async schedule(n: number, parallel: number, cancel: AbortSignal): Promise<void> {
    let next = 1;
    const running = new Set<Promise<void>>();
    while (next <= n || running.size) {
      while (next <= n && running.size < parallel && !this.ended && !cancel.aborted) {
        if (Date.now() >= this.deadline) {
          this.given.io.stderr(
            `agent-ci: the run's time (--timeout) is up; attempt ${next} and later do not start`,
          );
          this.ended = "timeout";
          break;
        }
        const slots = Math.min(parallel - running.size, n - next + 1);
        const budgetUsd = this.money.take(slots);
        const maxTurns = this.turns.take(slots);
        if (budgetUsd === 0 || maxTurns === 0) {
          this.money.settle(budgetUsd || undefined, 0);
          this.turns.settle(maxTurns || undefined, 0);
          if (running.size) break; // what the running ones leave may let it start
          this.given.io.stderr(`agent-ci: the budget is spent; attempt ${next} and later do not start`);
          this.ended = "budget";
          break;
        }
        const started = this.runOne(next++, budgetUsd, maxTurns).finally(() => running.delete(started));
        running.add(started);
      }
      if (!running.size) break;
      await Promise.race(running);
    }
  }

  private async runOne(k: number, budgetUsd?: number, maxTurns?: number): Promise<void> {
    const { config } = this;
    const { io, one } = this.given;
    const controller = new AbortController();
    this.controllers.set(k, controller);
    const hint = this.hints[k - 1]?.trim();
    const attemptConfig: RunConfig = {
      ...config,
      out: path.join(this.outDir, attemptDir(k)),
      prompt: hint ? (config.prompt ? `${config.prompt}\n\n${hint}` : hint) : config.prompt,
      ...(budgetUsd !== undefined ? { maxBudgetUsd: budgetUsd } : {}),
      ...(maxTurns !== undefined ? { maxTurns } : {}),
      timeoutMs: Math.max(1, Math.ceil(this.deadline - Date.now())),
      attempts: 1,
    };
    const shares = [
      budgetUsd !== undefined ? `$${budgetUsd.toFixed(4)}` : "",
      maxTurns !== undefined ? `${maxTurns} turns` : "",
    ].filter(Boolean);
    io.stderr(`agent-ci: attempt ${k} starts${shares.length ? ` with ${shares.join(" and ")}` : ""}`);
    const outcome = await one(attemptConfig, attemptIo(io, k), controller.signal);
    this.controllers.delete(k);
    const facts = factsOf(k, outcome.report);
    this.money.settle(budgetUsd, outcome.report?.costUsd ?? 0);
    this.turns.settle(maxTurns, facts.turns);
    this.finished.push({ k, dir: attemptDir(k), outcome, facts, budgetUsd, maxTurns });
    io.stderr(
      `agent-ci: attempt ${k} ended ${outcome.exitReason}: verify ${facts.verify}, ${facts.changedLines} changed lines, ${facts.deniedCalls} denied, $${(outcome.report?.costUsd ?? 0).toFixed(4)}`,
    );
    if (endedBeforeAnyContainer(outcome)) {
      // The same configuration fails every attempt the same way.
      this.ended ??= "config";
      this.endOthers("a configuration error ends every attempt");
    }
    const passed = config.verify
      ? facts.verify === "passed"
      : outcome.exitReason === "completed" && facts.changedLines > 0;
    if (passed && config.stopAtFirstPass && !this.ended) {
      this.ended = "pass";
      this.endOthers(`attempt ${k} passed`);
    }
  }
}
