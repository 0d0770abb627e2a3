// The agent loop: ask the driver for a turn, run its tool calls through the pipeline, send the results
// back, until the model stops or a limit agent-ci enforces is reached (turns, cost, wall clock, denials).
// Shortly before a limit the model is told to wrap up. It never throws for the model's mistakes; it
// throws only for faults that end the run (the API after its retries, the sandbox gone, a cancel).
import type Anthropic from "@anthropic-ai/sdk";
import type { Compaction, ExitReason } from "../report/index.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import type { RunState } from "../tools/state.js";
import type { AssistantTurn, ContentBlockParam, Driver, MessageParam, TurnUsage } from "./driver.js";
import { isContextEditRejection, isContextOverflow, type ContextManager } from "./context.js";
import { ModelApiError } from "./driver.js";
import { apiUsage, type EventSink } from "./events.js";
import { ToolPipeline, type ToolCallRecord } from "./pipeline.js";
import {
  STRUCTURED_OUTPUT_TOOL,
  type StructuredOutcome,
  type StructuredOutputSpec,
} from "./structured-output.js";

/** The exit reasons the loop itself decides (the others come from faults the runner classifies). */
export type LoopExit = Extract<
  ExitReason,
  | "completed"
  | "max_turns"
  | "budget"
  | "timeout"
  | "context_window"
  | "max_denials"
  | "cancelled"
  | "schema_invalid"
>;

export interface TurnRecord {
  index: number;
  stopReason: string | null;
  usage: TurnUsage;
  attempts: number;
  startOffsetMs: number;
  durationMs: number;
  text?: string;
  costUsd: number;
}

export interface LoopLimits {
  maxTurns: number;
  maxBudgetUsd?: number;
  /** Epoch ms when the run's wall clock runs out. */
  deadline: number;
  maxDenials: number;
}

export interface LoopResult {
  exit: LoopExit;
  /** Why, in a sentence, when the loop stopped for something other than the model finishing. */
  detail?: string;
  turns: TurnRecord[];
  calls: ToolCallRecord[];
  usage: TurnUsage;
  costUsd: number;
  finalText: string;
  apiMs: number;
  warnings: string[];
  /** Each time the conversation was made smaller, in order. */
  compactions: Compaction[];
  /** Why the run went over from the API's context edits to agent-ci's own clearing, if it did. */
  contextFallback?: string;
  /** With a structured-output schema: what the model returned through StructuredOutput. */
  structured?: StructuredOutcome;
}

export interface LoopOptions {
  driver: Driver;
  pipeline: ToolPipeline;
  sandbox: Sandbox;
  state: RunState;
  system: string;
  prompt: string;
  tools: Anthropic.Tool[];
  limits: LoopLimits;
  model: string;
  maxTokens: number;
  events: EventSink;
  runId: string;
  runStart: number;
  signal: AbortSignal;
  progress?: (line: string) => void;
  /** Keeps the conversation inside the context window (absent: nothing is cleared). */
  context?: ContextManager;
  /** The run must end with an object valid against this schema (its tool is in `tools`). */
  structuredOutput?: StructuredOutputSpec;
}

const ZERO: TurnUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 0,
};
const MAX_TOKENS_CEILING = 64_000;
const WRAP_UP_TIME_FRACTION = 0.1;

function addUsage(a: TurnUsage, b: TurnUsage): TurnUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
  };
}

const textOf = (content: ContentBlockParam[]) =>
  content
    .filter((b): b is Anthropic.TextBlockParam => b.type === "text")
    .map((b) => b.text)
    .join("\n");

export function newLoopResult(): LoopResult {
  return {
    exit: "completed",
    turns: [],
    calls: [],
    usage: ZERO,
    costUsd: 0,
    finalText: "",
    apiMs: 0,
    warnings: [],
    compactions: [],
  };
}

/**
 * Runs the loop. `result` (default: a fresh one) is filled as the run goes, so that a caller still holds
 * every turn and call when the loop throws (the API failed, the sandbox is gone, a cancel).
 */
export async function runAgentLoop(
  options: LoopOptions,
  result: LoopResult = newLoopResult(),
): Promise<LoopResult> {
  const { driver, pipeline, limits, events, signal } = options;
  const messages: MessageParam[] = [{ role: "user", content: options.prompt }];
  const totalTime = limits.deadline - Date.now();
  let maxTokens = options.maxTokens;
  let denials = 0;
  let wrapUpSent = false;
  // One compaction-and-retry per overflow: a second one in a row ends the run.
  let overflowRetried = false;
  const context = options.context;
  const spec = options.structuredOutput;
  if (spec) result.structured = { schema: spec.name, valid: false, attempts: 0, errors: [] };
  // One correction round: the first missing or invalid object is answered with why; the second ends the run.
  let structuredMisses = 0;
  const structuredMiss = (why: string[]): LoopResult | undefined => {
    structuredMisses += 1;
    if (result.structured) result.structured.errors = why;
    if (structuredMisses < 2) return undefined;
    return stop(
      "schema_invalid",
      `the run ended without a valid ${STRUCTURED_OUTPUT_TOOL} object: ${why.join("; ")}`,
    );
  };
  const request = () => ({ system: options.system, tools: options.tools, messages });
  const compact = (turn: number, overflow: boolean): boolean => {
    const made = overflow ? context?.afterOverflow(turn, request()) : context?.beforeTurn(turn, request());
    if (made) result.compactions.push(made);
    return made !== undefined;
  };
  const overflowed = (turn: number, why: string): LoopResult | undefined => {
    if (!overflowRetried && compact(turn, true)) {
      overflowRetried = true;
      return undefined;
    }
    const how = context?.enabled
      ? "even after clearing old tool results"
      : "and compaction is off (--no-compaction)";
    return stop(
      "context_window",
      `the conversation no longer fits in the model's context window (${why}), ${how}`,
    );
  };

  const stop = (exit: LoopExit, detail: string) => {
    result.exit = exit;
    result.detail = detail;
    return result;
  };

  for (let turn = 0; ; turn++) {
    if (signal.aborted) return stop("cancelled", "cancelled");
    if (turn >= limits.maxTurns) return stop("max_turns", `reached the limit of ${limits.maxTurns} turns`);
    if (limits.maxBudgetUsd !== undefined && result.costUsd >= limits.maxBudgetUsd) {
      return stop("budget", `spent $${result.costUsd.toFixed(4)} of the $${limits.maxBudgetUsd} budget`);
    }
    if (Date.now() >= limits.deadline) return stop("timeout", "the run's wall-clock limit was reached");

    // Shortly before a limit, tell the model to finish (once).
    const nearLimit =
      turn === limits.maxTurns - 1 ||
      (limits.maxBudgetUsd !== undefined && result.costUsd >= limits.maxBudgetUsd * 0.9) ||
      limits.deadline - Date.now() < totalTime * WRAP_UP_TIME_FRACTION;
    if (nearLimit && !wrapUpSent && turn > 0) {
      wrapUpSent = true;
      const finish = spec ? `call ${STRUCTURED_OUTPUT_TOOL} with your result` : "summarise what you did";
      appendToLastUser(
        messages,
        `<system-reminder>agent-ci: this run is about to reach its limit (turns, budget or time). Finish now: make no new changes you cannot complete in this turn, and ${finish}.</system-reminder>`,
      );
    }

    compact(turn, false);
    const started = performance.now();
    let assistant: AssistantTurn;
    try {
      const contextEdits = context?.contextEdits();
      assistant = await driver.nextTurn({
        system: options.system,
        messages,
        tools: options.tools,
        signal,
        maxTokens,
        ...(contextEdits ? { contextEdits } : {}),
      });
    } catch (e) {
      if (!(e instanceof ModelApiError && e.kind === "invalid_request")) throw e;
      result.apiMs += performance.now() - started;
      if (context?.usesApiEdits && isContextEditRejection(e.message)) {
        // A gateway without the beta: the same turn again, without it, for the rest of the run.
        context.fallBack(e.message);
        result.contextFallback = context.fallbackReason;
        turn -= 1;
        continue;
      }
      if (!isContextOverflow(e.message)) throw e;
      const ended = overflowed(turn, e.message);
      if (ended) return ended;
      turn -= 1; // the same turn, asked again with the smaller conversation
      continue;
    }
    for (const edit of assistant.contextEdits ?? []) {
      const made = context?.recordApiEdit(turn, edit);
      if (made) result.compactions.push(made);
    }
    if (assistant.stopReason !== "model_context_window_exceeded") overflowRetried = false;
    const durationMs = performance.now() - started;
    result.apiMs += durationMs;
    const cost = driver.costOf(assistant);
    result.usage = addUsage(result.usage, assistant.usage);
    result.costUsd += cost;
    const text = textOf(assistant.content);
    if (text) result.finalText = text;
    result.turns.push({
      index: turn,
      stopReason: assistant.stopReason,
      usage: assistant.usage,
      attempts: assistant.attempts,
      startOffsetMs: Math.round(started - options.runStart),
      durationMs: Math.round(durationMs),
      text: text || undefined,
      costUsd: cost,
    });

    if (assistant.truncatedToolUse) {
      result.warnings.push(
        `turn ${turn}: max_tokens cut a tool call (${(assistant.truncatedToolNames ?? []).join(", ")}); it was not run`,
      );
      maxTokens = Math.min(MAX_TOKENS_CEILING, maxTokens * 2);
      if (!assistant.content.length) continue; // ask again, with more room
    }
    // A repeated tool_use id is answered once (M9), and dropped from the message sent back: the API refuses
    // a conversation whose assistant message repeats an id.
    const content = withoutRepeatedToolUses(assistant.content, result.warnings, turn);
    const takeBack = appendAssistant(messages, content);
    if (content.some((block) => block.type === "compaction")) dropCompacted(messages);
    events.emit({
      type: "assistant",
      session_id: options.runId,
      parent_tool_use_id: null,
      message: {
        id: `msg_${options.runId}_${turn}`,
        type: "message",
        role: "assistant",
        model: assistant.model,
        content,
        stop_reason: assistant.stopReason,
        usage: apiUsage(assistant.usage),
      },
    });

    const uses = content.filter((b): b is Anthropic.ToolUseBlockParam => b.type === "tool_use");
    // StructuredOutput is answered here, not by the pipeline: it touches nothing in the sandbox.
    const outputUses = spec ? uses.filter((u) => u.name === STRUCTURED_OUTPUT_TOOL) : [];
    const toolUses = spec ? uses.filter((u) => u.name !== STRUCTURED_OUTPUT_TOOL) : uses;
    const turnStarted = performance.now();
    let records: ToolCallRecord[];
    try {
      await driver.beforeTools?.(options.sandbox);
      records = toolUses.length
        ? await pipeline.runTurn(
            turn,
            toolUses.map((u) => ({
              id: u.id,
              name: u.name,
              input: u.input,
              inputError: assistant.invalidToolInputs?.[u.id],
            })),
            signal,
          )
        : [];
    } catch (e) {
      // The run ends inside this turn (cancel, wall clock, the sandbox gone). Its calls still get an
      // outcome in the record and the event stream, so no tool_use is left without a tool_result.
      const why = signal.aborted
        ? String((signal.reason as Error)?.message ?? signal.reason ?? "cancelled")
        : ((e as Error)?.message ?? String(e));
      const interrupted = toolUses.map((u, index) =>
        interruptedRecord(turn, index, u, why, Math.round(turnStarted - options.runStart)),
      );
      result.calls.push(...interrupted);
      if (interrupted.length) {
        events.emit({
          type: "user",
          session_id: options.runId,
          parent_tool_use_id: null,
          message: { role: "user", content: ToolPipeline.toolResults(interrupted) },
        });
      }
      throw e;
    }

    if (!uses.length) {
      // Paused after a compaction: the answer continues from the summary in the next request.
      if (assistant.stopReason === "compaction") continue;
      if (
        assistant.truncatedToolUse ||
        assistant.stopReason === "max_tokens" ||
        assistant.stopReason === "pause_turn"
      ) {
        appendUser(
          messages,
          "Continue. Your last message was cut off; if you were calling a tool, call it again with a smaller input.",
        );
        continue;
      }
      if (assistant.stopReason === "refusal")
        result.warnings.push("the model refused to continue (stop_reason: refusal)");
      if (assistant.stopReason === "model_context_window_exceeded") {
        // The cut-off answer is not kept: the turn is asked again with a smaller conversation.
        takeBack();
        const ended = overflowed(turn, "stop_reason: model_context_window_exceeded");
        if (ended) return ended;
        continue;
      }
      if (spec) {
        const ended = structuredMiss([`the agent stopped without calling ${STRUCTURED_OUTPUT_TOOL}`]);
        if (ended) return ended;
        appendUser(
          messages,
          `<system-reminder>agent-ci: this run must end with a call to ${STRUCTURED_OUTPUT_TOOL} whose input matches its schema. Call it now with your result.</system-reminder>`,
        );
        continue;
      }
      return result;
    }
    const structured = spec
      ? answerStructured(
          spec,
          outputUses,
          turn,
          records.length,
          Math.round(performance.now() - options.runStart),
        )
      : undefined;
    if (structured) {
      records = [...records, ...structured.records];
      if (result.structured) result.structured.attempts += outputUses.length;
    }

    for (const record of records) {
      options.progress?.(`${record.isError ? "✗" : "✓"} ${record.tool} ${record.title ?? ""}`.trimEnd());
      if (record.decision?.behavior === "deny") denials += 1;
    }
    result.calls.push(...records);
    const toolResults = ToolPipeline.userContent(records);
    messages.push({ role: "user", content: toolResults });
    events.emit({
      type: "user",
      session_id: options.runId,
      parent_tool_use_id: null,
      message: { role: "user", content: toolResults },
    });

    if (structured?.accepted && result.structured) {
      result.structured = { ...result.structured, valid: true, errors: [], value: structured.accepted };
      return result;
    }
    if (structured?.errors) {
      const ended = structuredMiss(structured.errors);
      if (ended) return ended;
    }
    if (denials >= limits.maxDenials) {
      return stop(
        "max_denials",
        `${denials} tool calls were denied by the permission policy; stopping (limit ${limits.maxDenials})`,
      );
    }
  }
}

/**
 * Adds a turn's content; a turn that continues an assistant message (after a paused compaction) joins it.
 * Returns what takes the content back out.
 */
function appendAssistant(messages: MessageParam[], content: ContentBlockParam[]): () => void {
  if (!content.length) return () => {};
  const last = messages.at(-1);
  if (last?.role === "assistant" && Array.isArray(last.content)) {
    const before = last.content;
    last.content = [...before, ...content];
    return () => {
      last.content = before;
    };
  }
  messages.push({ role: "assistant", content });
  return () => {
    messages.pop();
  };
}

/**
 * After the API compacted the conversation: the messages the summary stands for are not sent again (the API
 * would drop them anyway). The first user message stays, so the conversation still opens with the user.
 */
function dropCompacted(messages: MessageParam[]): void {
  const last = messages.length - 1;
  if (last > 1) messages.splice(1, last - 1);
}

/**
 * Answers a turn's StructuredOutput calls: the first valid object is accepted; an invalid one gets the
 * validator's messages as an error result, so the model can correct it.
 */
function answerStructured(
  spec: StructuredOutputSpec,
  uses: Anthropic.ToolUseBlockParam[],
  turn: number,
  firstIndex: number,
  startOffsetMs: number,
): { records: ToolCallRecord[]; accepted?: Record<string, unknown>; errors?: string[] } {
  let accepted: Record<string, unknown> | undefined;
  let errors: string[] | undefined;
  const records = uses.map((use, i): ToolCallRecord => {
    const check = accepted ? undefined : spec.check(use.input);
    let content: string;
    if (check?.valid) {
      accepted = check.value;
      content = "Structured output accepted. The run is complete.";
    } else if (check) {
      errors = check.errors;
      content = `The object does not match the schema:\n${check.errors.map((e) => `- ${e}`).join("\n")}\nCall ${STRUCTURED_OUTPUT_TOOL} again with a corrected object.`;
    } else {
      content = "Ignored: an earlier StructuredOutput call in this turn was accepted.";
    }
    return loopRecord(turn, firstIndex + i, use, startOffsetMs, {
      content,
      isError: !check?.valid,
      errorKind: check && !check.valid ? "invalid_input" : undefined,
      title: check?.valid ? "accepted" : check ? `invalid: ${check.errors[0]}` : "ignored",
    });
  });
  return { records, accepted, errors: accepted ? undefined : errors };
}

/** The record of a call the loop answered itself (the pipeline never ran it). */
function loopRecord(
  turn: number,
  index: number,
  use: Anthropic.ToolUseBlockParam,
  startOffsetMs: number,
  answer: Pick<ToolCallRecord, "isError" | "errorKind" | "title"> & { content: string },
): ToolCallRecord {
  const { errorKind, ...rest } = answer;
  return {
    id: use.id,
    turn,
    index,
    tool: use.name,
    input: use.input,
    stage: "call",
    startOffsetMs,
    durationMs: 0,
    resultChars: answer.content.length,
    truncated: false,
    ...(errorKind ? { errorKind } : {}),
    ...rest,
  };
}

/** The outcome of a call the run did not let finish: an error, its result unknown. */
function interruptedRecord(
  turn: number,
  index: number,
  use: Anthropic.ToolUseBlockParam,
  why: string,
  startOffsetMs: number,
): ToolCallRecord {
  const content = `The run ended before this call finished (${why}); its result is unknown.`;
  return loopRecord(turn, index, use, startOffsetMs, {
    content,
    isError: true,
    errorKind: "interrupted",
    title: `interrupted: ${why}`,
  });
}

/** The content with every tool_use block whose id was already used removed (noted in the warnings). */
function withoutRepeatedToolUses(
  content: ContentBlockParam[],
  warnings: string[],
  turn: number,
): ContentBlockParam[] {
  const seen = new Set<string>();
  return content.filter((block) => {
    if (block.type !== "tool_use") return true;
    if (!seen.has(block.id)) {
      seen.add(block.id);
      return true;
    }
    warnings.push(`turn ${turn}: duplicate tool_use id ${block.id} ignored`);
    return false;
  });
}

function appendUser(messages: MessageParam[], text: string): void {
  const last = messages[messages.length - 1];
  if (last?.role === "user") return appendToLastUser(messages, text);
  messages.push({ role: "user", content: text });
}

function appendToLastUser(messages: MessageParam[], text: string): void {
  const last = messages[messages.length - 1];
  if (!last || last.role !== "user") {
    messages.push({ role: "user", content: text });
    return;
  }
  last.content =
    typeof last.content === "string"
      ? `${last.content}\n\n${text}`
      : [...last.content, { type: "text", text }];
}
