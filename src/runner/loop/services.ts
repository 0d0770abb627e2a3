// The run's services: what the main loop and every subagent run with — the sandbox, the permission gate, the
// hooks, the budget, the model's driver, the event stream the record is read from — built once for the run
// (run/run-services.ts builds it) and handed to each conversation, so that a subagent is wired as the main loop is.
import type { PermissionMode } from "../../policy/schema.js";
import type { Sandbox } from "../../sandbox/sandbox.js";
import type { RunState } from "../../tools/state.js";
import type { ContextManager } from "./context-window.js";
import type { EventSink } from "./events.js";
import type { PermissionGate, SavedOutputs, ToolCallRecord, ToolHooks } from "./pipeline.js";
import type { Driver } from "../model/driver.js";
import type { RunBudget } from "./run-budget.js";
import type { TurnProgress } from "./turn-ticker.js";

/** What the main loop and every subagent run with, built once. */
export interface RunServices {
  runId: string;
  /** performance.now() at the run's start: the record's offsets count from it. */
  runStart: number;
  /** Where tool outputs too large for the model are kept, and the redactor they pass. */
  outputs?: SavedOutputs;
  /** The run's event stream (events.jsonl, stream-json). */
  events: EventSink;
  sandbox: Sandbox;
  /** The main conversation's state; each subagent's is made from it. */
  state: RunState;
  /** The run's mode; its permission gate, and the same policy held to a narrower mode (a subagent's). */
  mode: PermissionMode;
  gate: PermissionGate;
  gateIn: (mode: PermissionMode) => PermissionGate;
  hooks?: ToolHooks;
  /** The run's one budget: every conversation's model calls are charged to it. */
  budget: RunBudget;
  driver: Driver;
  /** The model the run calls ("script" for a scripted run), the output limit of a turn, the run's turn limit. */
  model: string;
  maxTokens: number;
  maxTurns: number;
  /** A fresh context manager for each conversation. */
  context: () => ContextManager | undefined;
  /** The run's network setting and allowed domains, as a system prompt states them. */
  network: string;
  allowedDomains: readonly string[];
  /** A progress line per tool call (a TTY, the Action's progress comment). */
  progress?: (line: string, call?: ToolCallRecord) => void;
  /**
   * A model turn still under way, told every `everyMs` (TURN_TICK_MS in a run), and its end (the log's line,
   * the Action's progress comment); absent when nobody listens.
   */
  turnTicks?: { everyMs: number; tell: (progress: TurnProgress) => void };
}
