// The run's progress as a caller sees it: the sandbox is ready, a tool call was made and ended, a model turn is
// still under way (every 30 s), verify started, the results are being published. Derived from the event stream
// (the one record of what happened) plus what has no event of its own: a call's end (its decision and duration,
// from the loop's record), a long turn's wait (loop/turn-ticker.ts), verify, and the Action's publishing after
// the run. `--progress json` prints each as one JSON line (ProgressLine); the
// Action's thread comment shows them (src/action/progress-comment.ts).
import { formatInt } from "../report/format.js";
import type { StreamEvent } from "./loop/events.js";
import type { ToolCallRecord } from "./loop/pipeline.js";
import type { TurnProgress } from "./loop/turn-ticker.js";

/** A call's end as progress (and, without `kind`, as a `--progress json` line). */
interface ToolDone {
  kind: "tool_done";
  id: string;
  tool: string;
  title?: string;
  decision?: "allow" | "deny";
  /** How long the call took. */
  ms: number;
  error: boolean;
  /** A subagent's call: its agent type. */
  agent?: string;
}

export type RunProgress =
  | { kind: "sandbox_ready"; runId: string }
  /** The model asked for a call (from the assistant event). */
  | { kind: "tool_call"; tool: string }
  /** A call ended: after its decision, its hooks and its run. */
  | ToolDone
  /** A model turn still under way, every interval (turn-ticker.ts); its end, when it was told. */
  | TurnProgress
  | { kind: "verifying" }
  /** Told by the Action after the run, while it uploads the artifact and writes the summary and comment. */
  | { kind: "publishing" };

/** What one event says about progress (nothing for most). */
export function progressOf(event: StreamEvent): RunProgress[] {
  if (event.type === "system" && event.subtype === "init")
    return [{ kind: "sandbox_ready", runId: event.session_id }];
  if (event.type === "assistant")
    return event.message.content.flatMap((block) =>
      block.type === "tool_use" ? [{ kind: "tool_call" as const, tool: block.name }] : [],
    );
  return [];
}

/** The EventSink listener that tells `onProgress`, or undefined when nobody listens. */
export function progressListener(
  onProgress: ((progress: RunProgress) => void) | undefined,
): ((event: StreamEvent) => void) | undefined {
  if (!onProgress) return undefined;
  return (event) => {
    for (const progress of progressOf(event)) onProgress(progress);
  };
}

/** A call's end as progress, its title redacted as the text line is. */
export function toolDone(record: ToolCallRecord, redact: (text: string) => string): RunProgress {
  return {
    kind: "tool_done",
    id: record.id,
    tool: record.tool,
    ...(record.title ? { title: redact(record.title) } : {}),
    ...(record.decision ? { decision: record.decision.behavior } : {}),
    ms: Math.round(record.durationMs),
    error: record.isError,
    ...(record.agent ? { agent: record.agent } : {}),
  };
}

/**
 * The loop's per-call callback: the text line when lines are printed (a terminal, a CI log), the call's end
 * for whoever listens to progress; undefined when neither is wanted.
 */
export function callProgress(
  log: ((line: string) => void) | undefined,
  onProgress: ((progress: RunProgress) => void) | undefined,
  redact: (text: string) => string,
): ((line: string, call?: ToolCallRecord) => void) | undefined {
  if (!log && !onProgress) return undefined;
  return (line, call) => {
    log?.(line);
    if (call) onProgress?.(toolDone(call, redact));
  };
}

/** A turn still under way in words (the log's line, the Action's comment), the agent's name as `name` spells it. */
export function turnWaitingText(
  waiting: Extract<TurnProgress, { kind: "turn_waiting" }>,
  name: (agent: string) => string = (agent) => agent,
): string {
  const whose = waiting.agent ? ` of the ${name(waiting.agent)} subagent` : "";
  return `turn ${waiting.turn}${whose} still under way after ${waiting.seconds} s, ~${formatInt(waiting.outputTokens)} output tokens so far`;
}

/**
 * The loop's long-turn callback: the text line when lines are printed (a terminal, a CI log), the progress for
 * whoever listens (the Action's comment, `--progress json`); undefined when neither is wanted.
 */
export function turnProgress(
  log: ((line: string) => void) | undefined,
  onProgress: ((progress: RunProgress) => void) | undefined,
): ((progress: TurnProgress) => void) | undefined {
  if (!log && !onProgress) return undefined;
  return (progress) => {
    if (progress.kind === "turn_waiting") log?.(`model: ${turnWaitingText(progress)}`);
    onProgress?.(progress);
  };
}

/**
 * One line of `agent-ci run --progress json` on stderr: a phase the run passed, a tool call that ended, or a
 * message that would have been a plain line (a warning, a note). `at_ms` counts from the command's start.
 */
export type ProgressLine =
  | { type: "phase"; phase: "sandbox_ready" | "verifying" | "publishing"; run_id?: string; at_ms: number }
  | ({ type: "tool"; at_ms: number } & Omit<ToolDone, "kind">)
  | {
      type: "turn_waiting";
      turn: number;
      /** A subagent's turn: its agent type. */
      agent?: string;
      seconds: number;
      output_tokens: number;
      at_ms: number;
    }
  | { type: "log"; message: string; at_ms: number }
  | {
      type: "result";
      exit_reason: string;
      exit_code: number;
      report_path?: string;
      /** Why the run failed, when it did. */
      error?: string;
      at_ms: number;
    };

/**
 * The JSON line for a progress report (undefined for a call the model asked for: its end is the line; and for
 * a long turn's end: its answer's calls are the lines).
 */
export function progressLine(progress: RunProgress, atMs: number): ProgressLine | undefined {
  const at_ms = Math.round(atMs);
  switch (progress.kind) {
    case "tool_call":
    case "turn_ended":
      return undefined;
    case "turn_waiting": {
      const { turn, agent, seconds, outputTokens } = progress;
      return {
        type: "turn_waiting",
        turn,
        ...(agent ? { agent } : {}),
        seconds,
        output_tokens: outputTokens,
        at_ms,
      };
    }
    case "sandbox_ready":
      return { type: "phase", phase: "sandbox_ready", run_id: progress.runId, at_ms };
    case "tool_done": {
      const { kind: _kind, ...call } = progress;
      return { type: "tool", ...call, at_ms };
    }
    default:
      return { type: "phase", phase: progress.kind, at_ms };
  }
}

/** `--progress json`: every line the run would print on stderr, as a ProgressLine. */
export function jsonProgress(write: (text: string) => void, start: number = performance.now()) {
  const at = () => performance.now() - start;
  const put = (line: ProgressLine) => write(`${JSON.stringify(line)}\n`);
  return {
    log: (message: string) => put({ type: "log", message, at_ms: Math.round(at()) }),
    onProgress: (progress: RunProgress) => {
      const line = progressLine(progress, at());
      if (line) put(line);
    },
    result: (fields: Omit<Extract<ProgressLine, { type: "result" }>, "type" | "at_ms">) =>
      put({ type: "result", ...fields, at_ms: Math.round(at()) }),
  };
}
