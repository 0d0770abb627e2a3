// What every stage of one run shares (its identity, where it writes, how it logs and redacts, what the
// loop and the tools' services fill as it goes), and how the agent phase left things for the run's end.
import type { RunProgress } from "../progress.js";
import type { Redactor, RunPhaseName } from "../../report/index.js";
import type { StartRecord } from "../../sandbox/phase-clock.js";
import type { DockerSandbox } from "../../sandbox/docker-sandbox.js";
import type { RunState } from "../../tools/state.js";
import type { LoopResult } from "../loop/agent-loop.js";
import type { RunConfig } from "../config.js";
import type { EventSink } from "../loop/events.js";
import type { PreparedPolicy } from "./policy-setup.js";
import type { RunToolSet } from "../loop/tool-set.js";
import type { RunFailure, RunInstructions, TimedPhase } from "../record/index.js";
import type { ReviewTarget } from "../../review/review-task.js";
import type { LoopState } from "../loop/agent-loop.js";
import type { RunResume } from "../resume/resume.js";
import type { FirstTurnRecord } from "./first-turn.js";
import type { SnapshotStore } from "../../sandbox/setup/store.js";

export interface RunIO {
  /** One line of machine output (json / stream-json). */
  stdout(line: string): void;
  /** Progress and messages for people. */
  stderr(line: string): void;
  /** Print a progress line per tool call (a TTY). */
  progress: boolean;
  /** Told as the run passes a phase or makes a tool call (the Action's progress comment). */
  onProgress?: (progress: RunProgress) => void;
  /** How often a model turn still under way is told, as a line and as progress (default TURN_TICK_MS, 30 s). */
  turnTickMs?: number;
  /**
   * Told each secret the run knows, to mask it: those of its configuration before it prints anything, then each
   * credential it obtains on the host while it runs (an exchanged access token).
   */
  onSecret?: (value: string) => void;
  /** Where setup snapshots travel beyond the engine (the Action on a runner: the Actions cache). */
  setupCacheStore?: SnapshotStore;
}

/**
 * What every stage of one run shares: its identity, where it writes, and how it logs and redacts. Made once before
 * any stage (new-context.ts) and never changed: what the stages learn goes into their results (AgentPhase).
 * `events`, `state`, `loop` and `phases` are the run's accumulators: readonly fields holding objects the loop, the
 * tools and `timed` fill as the run goes, so that a run ended by an error (or by the watchdog, inside blocked code)
 * keeps everything done so far. What a capability keeps for the run lives in its own part of the run
 * (capabilities/), not here.
 */
export interface RunContext {
  /** The configuration as given (the run goes on with AgentPhase's `config`). */
  readonly config: RunConfig;
  readonly io: RunIO;
  readonly runId: string;
  readonly outDir: string;
  readonly patchPath: string;
  readonly startedAt: Date;
  readonly runStart: number;
  readonly redactor: Redactor;
  readonly log: (line: string) => void;
  readonly events: EventSink;
  readonly state: RunState;
  /** Filled by the loop as it goes: a run that ends by an error keeps every turn and call made so far. */
  readonly loop: LoopResult;
  /** Every known secret: the run's own and those its capabilities' configuration holds (MCP servers' values). */
  readonly secrets: readonly string[];
  /** The run's own phases after the sandbox's start (calls, patch, verify, teardown), as they end. */
  readonly phases: TimedPhase[];
}

/** Runs `step` as the run's phase `name`, recording its time whether it succeeds or throws. */
export async function timed<T>(ctx: RunContext, name: RunPhaseName, step: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await step();
  } finally {
    ctx.phases.push({ name, start, end: performance.now() });
  }
}

/**
 * How the agent phase left things, for finishRun: each stage's result, the phase before it and what the stage
 * made, a new object never changed once made (PhaseSoFar keeps the newest). `start` and `firstTurn` are records
 * their makers fill as they go (a start that fails keeps its steps; a first turn asked ahead says later whether
 * the loop took it).
 */
export interface AgentPhase {
  /** The configuration the run goes on with: a resume's checkout as its workspace, its prompt's slash command expanded. */
  readonly config: RunConfig;
  /** What the sandbox's start made and timed, complete or not: the record of a start that failed. */
  readonly start: StartRecord;
  /** With --resume: the run it continues (once its record was read and its base checked out). */
  readonly resume?: RunResume;
  /** The run's skills and slash commands, and the command its prompt started with. */
  readonly instructions?: RunInstructions;
  readonly policy?: PreparedPolicy;
  /** Review mode: what is reviewed (known before the sandbox starts). */
  readonly review?: ReviewTarget;
  /** Whether the first model turn was asked while the sandbox opened (first-turn.ts). */
  readonly firstTurn?: FirstTurnRecord;
  readonly sandbox?: DockerSandbox;
  readonly tools?: RunToolSet;
  /** The main conversation, for its record (conversation.jsonl). */
  readonly conversation?: LoopState;
  readonly failure?: RunFailure;
}

/**
 * The newest phase the agent phase reached. A stage adds each thing it makes (a resume's checkout, the sandbox,
 * the conversation) here before its next step that can fail, so whatever ends the run (an error
 * at any stage, the watchdog inside blocked code) records and tears down everything made so far.
 */
export class PhaseSoFar {
  private phase: AgentPhase;

  constructor(first: AgentPhase) {
    this.phase = first;
  }

  get current(): AgentPhase {
    return this.phase;
  }

  /** The phase with what a stage made: a new object, the one before it unchanged. */
  add(made: Partial<AgentPhase>): AgentPhase {
    this.phase = { ...this.phase, ...made };
    return this.phase;
  }
}
