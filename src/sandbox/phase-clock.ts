// The timing of a sandbox's start: its steps (the run's phases up to the tool calls), each timed as it runs,
// kept in a record the caller holds so that a start that fails still has them on record.
import type { RunPhaseName } from "../report/index.js";
import type { SandboxParts } from "./assemble.js";
import type { SetupCacheRecord } from "./setup/phase.js";

/** The assembly's steps, in the order they run: the run's phases (report.json) up to its tool calls. */
export type StartPhase = Exclude<RunPhaseName, "calls" | "patch" | "verify" | "teardown">;

/** One step of the assembly: when it began (since the assembly began) and how long it took. */
export interface PhaseTiming {
  phase: StartPhase;
  startMs: number;
  durationMs: number;
}

/** The start's figures as the report and the benchmark read them, counted from the container's creation. */
export interface StartTimings {
  createMs: number;
  startMs: number;
  copyMs: number;
  baselineMs: number;
  readyMs: number;
}

export function startTimings(phases: readonly PhaseTiming[]): StartTimings {
  const ms = (phase: StartPhase) => phases.find((p) => p.phase === phase)?.durationMs ?? 0;
  const first = phases.find((p) => p.phase === "container");
  const last = phases.at(-1);
  return {
    createMs: ms("container"),
    startMs: ms("start"),
    copyMs: ms("copy-in"),
    baselineMs: ms("baseline"),
    readyMs: first && last ? last.startMs + last.durationMs - first.startMs : 0,
  };
}

/**
 * What the start has made so far, filled as it goes: the caller passes one in and reads it on every way out,
 * so that a start that fails (a setup command's exit, say) still has its steps' timings and, once the sandbox
 * was built, what it was made of (its image, hardening read back, copy-in and egress ledger) on record.
 */
export interface StartRecord {
  /**
   * performance.now() when the start began (its engine step, which a run begins ahead of the assembly): the
   * steps' startMs count from it.
   */
  origin?: number;
  phases: PhaseTiming[];
  /** The sandbox's parts, once built; the steps after it (baseline, setup) may still fail. */
  parts?: SandboxParts;
  /** What the setup cache did, once the run's key was made (filled on through the setup). */
  setupCache?: SetupCacheRecord;
  /**
   * The snapshot's save to the store beyond the engine, under way while the agent works; it fills
   * `setupCache.store` and never rejects. The run waits for it before its record is written.
   */
  setupCacheStoring?: Promise<void>;
}

/** Runs the steps one after the other, recording each one's timing (a failed one's too). */
export class PhaseClock {
  readonly phases: PhaseTiming[];
  private readonly origin: number;

  /** A clock on `record`: its steps count from the record's origin, set by the first clock on it. */
  constructor(record: StartRecord) {
    this.origin = record.origin ??= performance.now();
    this.phases = record.phases;
  }

  async run<T>(phase: StartPhase, step: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await step();
    } finally {
      this.phases.push({ phase, startMs: start - this.origin, durationMs: performance.now() - start });
    }
  }
}
