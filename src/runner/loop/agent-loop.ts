// The agent loop: check the limits, ask the model for a turn, run its tool calls through the pipeline, end
// the turn by sending the results back; until the model stops or a limit agent-ci enforces is reached (turns,
// cost, wall clock, denials). Shortly before a limit the model is told to wrap up. One conversation's state
// is a `LoopState`; what the whole run shares (money, denials, wall clock, cancel) is its `RunBudget`, so a
// subagent is the same loop with another state. It never throws for the model's mistakes; it throws only
// for faults that end the run (the API after its retries, the sandbox gone, a cancel).
import type Anthropic from "@anthropic-ai/sdk";
import type { Compaction, ExitReason } from "../../report/index.js";
import type {
  AssistantTurn,
  ContentBlockParam,
  MessageParam,
  StreamedSoFar,
  TurnRequest,
  TurnUsage,
} from "../model/driver.js";
import { isContextEditRejection, isContextOverflow, type ContextManager } from "./context-window.js";
import { ModelApiError } from "../model/driver.js";
import { apiUsage } from "./events.js";
import { ToolPipeline, type ToolCallRecord } from "./pipeline.js";
import { MAIN_AGENT, type RunBudget, type Spender } from "./run-budget.js";
import type { RunServices } from "./services.js";
import { NOTHING_STREAMED, TurnTicker } from "./turn-ticker.js";
import {
  STRUCTURED_OUTPUT_TOOL,
  type StructuredOutcome,
  type StructuredOutputSpec,
} from "../model/structured-output.js";

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

export interface LoopResult {
  exit: LoopExit;
  /** Why, in a sentence, when the loop stopped for something other than the model finishing. */
  detail?: string;
  turns: TurnRecord[];
  calls: ToolCallRecord[];
  /** This conversation's own tokens and cost (the run's, all loops together, are in its `RunBudget`). */
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

/**
 * What a loop works with: the run's services it uses (every loop of a run has the same budget, sandbox and
 * event stream; a subagent's loop may have a driver of its own) and its own pipeline (another model, fewer
 * tools).
 */
export type LoopServices = Pick<
  RunServices,
  "driver" | "sandbox" | "events" | "budget" | "runId" | "runStart" | "progress" | "turnTicks"
> & {
  pipeline: ToolPipeline;
  /** The first turn, asked before the loop started (while the sandbox opened): used when its request is this one. */
  askedAhead?: AskedAhead;
};

/** A turn asked before the loop started: its answer, when the loop's request is the one it was asked with. */
export interface AskedAhead {
  /** Once: the turn in flight, or undefined (the request differs; it was dropped). */
  take(request: TurnRequest): TakenTurn | undefined;
}

/** A turn asked ahead, as the loop takes it: its answer, when it was asked, and when its answer came. */
export interface TakenTurn {
  answer: Promise<AssistantTurn>;
  /** performance.now() when it was asked. */
  started: number;
  /** performance.now() when the answer (or failure) came: read once the answer has come. */
  ended: () => number;
  /** What its stream has brought so far. */
  streamed: () => StreamedSoFar;
}

/** What starts a conversation. */
export interface Conversation {
  /** Whom its model calls are charged to, and the Task call it answers (default: the main loop). */
  spender?: Spender;
  system: string;
  prompt: string;
  /** Text blocks sent before `prompt` in the first user message (project memory, the git snapshot). */
  preamble?: readonly string[];
  /** A conversation restored from an earlier run's record, `prompt` already in its last user message: sent instead of `prompt` alone. */
  restored?: MessageParam[];
  tools: Anthropic.Tool[];
  maxTurns: number;
  maxTokens: number;
  /** Its cancel (default: the run's); a subagent's can also be stopped alone. */
  signal?: AbortSignal;
  /** Keeps the conversation inside the context window (absent: nothing is cleared). */
  context?: ContextManager;
  /** The conversation must end with an object valid against this schema (its tool is in `tools`). */
  structuredOutput?: StructuredOutputSpec;
}

/**
 * One conversation's own state: a subagent is the same loop with another one, sharing with the others only
 * the services and the run's budget.
 */
export interface LoopState extends Readonly<
  Required<Pick<Conversation, "spender" | "system" | "tools" | "maxTurns">>
> {
  readonly messages: MessageParam[];
  readonly signal: AbortSignal;
  readonly context?: ContextManager;
  readonly structuredOutput?: StructuredOutputSpec;
  /** The turn being asked: it moves on once the model has answered, never back. */
  turn: number;
  /** `max_tokens` of the next request: doubled, up to a ceiling, after a tool call was cut. */
  maxTokens: number;
  /** The model was told to finish (it is told once). */
  wrapUpSent: boolean;
  /** One compaction-and-retry per overflow: a second one in a row ends the loop. */
  overflowRetried: boolean;
  /** One correction round: the first missing or invalid object is answered with why; the second ends the loop. */
  structuredMisses: number;
  /** Its turns and calls, filled as it goes: a caller still holds them when the loop throws. */
  readonly result: LoopResult;
}

const ZERO: TurnUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 0,
};
const MAX_TOKENS_CEILING = 64_000;

export function addUsage(a: TurnUsage, b: TurnUsage): TurnUsage {
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

/** The first user message: the prompt, after the preamble's blocks when there are any. */
function firstUserContent({ preamble, prompt }: Conversation): string | ContentBlockParam[] {
  if (!preamble?.length) return prompt;
  return [...preamble, prompt].map((text): ContentBlockParam => ({ type: "text", text }));
}

/** The messages a conversation starts with: the restored ones, or the first user message. */
function firstMessages(conversation: Conversation): MessageParam[] {
  return conversation.restored ?? [{ role: "user", content: firstUserContent(conversation) }];
}

/**
 * The request the loop's first turn sends for a fresh conversation (no compaction before it): what a turn
 * asked ahead is asked with. The loop uses that answer only when its own request is the same.
 */
export function firstTurnRequest(conversation: Conversation): Omit<TurnRequest, "signal"> {
  const contextEdits = conversation.context?.contextEdits();
  return {
    system: conversation.system,
    messages: firstMessages(conversation),
    tools: conversation.tools,
    maxTokens: conversation.maxTokens,
    ...(contextEdits ? { contextEdits } : {}),
  };
}

/** A conversation's state before its first turn; `result` (default: a fresh one) is filled as it goes. */
export function newLoopState(
  conversation: Conversation,
  budget: RunBudget,
  result: LoopResult = newLoopResult(),
): LoopState {
  const { structuredOutput: spec } = conversation;
  if (spec) result.structured = { schema: spec.name, valid: false, attempts: 0, errors: [] };
  return {
    spender: conversation.spender ?? MAIN_AGENT,
    system: conversation.system,
    tools: conversation.tools,
    maxTurns: conversation.maxTurns,
    messages: firstMessages(conversation),
    signal: conversation.signal ?? budget.signal,
    context: conversation.context,
    structuredOutput: spec,
    turn: 0,
    maxTokens: conversation.maxTokens,
    wrapUpSent: false,
    overflowRetried: false,
    structuredMisses: 0,
    result,
  };
}

/**
 * Runs the conversation in `state` to its end and returns its result (`state.result`, filled as it goes,
 * so that a caller still holds every turn and call when the loop throws: the API failed, the sandbox is
 * gone, a cancel).
 */
export async function runAgentLoop(services: LoopServices, state: LoopState): Promise<LoopResult> {
  for (;;) {
    if (checkLimits(services.budget, state)) return state.result;
    const answer = await askModel(services, state);
    if (answer === "retry") continue; // the same turn again: the model did not answer it
    if (answer === "ended") return state.result;
    const calls = await runTools(services, state, answer);
    if (calls && endTurn(services, state, answer, calls)) return state.result;
    state.turn += 1;
  }
}

/** Ends the loop with `exit`; returns true (the loop is over) for the steps to return. */
function stop(state: LoopState, exit: LoopExit, detail: string): true {
  state.result.exit = exit;
  state.result.detail = detail;
  return true;
}

/** Step 1: true when a limit ends the loop; shortly before one, the model is told to finish (once). */
function checkLimits(budget: RunBudget, state: LoopState): boolean {
  const { turn, maxTurns } = state;
  if (state.signal.aborted) return stop(state, "cancelled", "cancelled");
  if (turn >= maxTurns) return stop(state, "max_turns", `reached the limit of ${maxTurns} turns`);
  const reached = budget.reached();
  if (reached) return stop(state, reached.exit, reached.detail);
  const nearLimit = turn === maxTurns - 1 || budget.nearlySpent();
  if (nearLimit && !state.wrapUpSent && turn > 0) {
    state.wrapUpSent = true;
    const finish = state.structuredOutput
      ? `call ${STRUCTURED_OUTPUT_TOOL} with your result`
      : "summarise what you did";
    appendToLastUser(
      state.messages,
      `<system-reminder>agent-ci: this run is about to reach its limit (turns, budget or time). Finish now: make no new changes you cannot complete in this turn, and ${finish}.</system-reminder>`,
    );
  }
  return false;
}

/**
 * Step 2: asks the model for the state's turn. "retry": it did not answer and the same turn is asked again,
 * uncounted (a gateway refused the context-edit beta; the conversation overflowed and was made smaller).
 * "ended": it overflowed again. Otherwise its answer, counted, charged and recorded.
 */
async function askModel(
  services: LoopServices,
  state: LoopState,
): Promise<AssistantTurn | "retry" | "ended"> {
  const { context, result } = state;
  compact(state, false);
  const contextEdits = context?.contextEdits();
  const request: TurnRequest = {
    system: state.system,
    messages: state.messages,
    tools: state.tools,
    signal: state.signal,
    maxTokens: state.maxTokens,
    ...(contextEdits ? { contextEdits } : {}),
  };
  const ahead = services.askedAhead?.take(request);
  const started = ahead?.started ?? performance.now();
  // A turn asked ahead took the model's time until its answer came, not until the loop took it.
  const ended = () => ahead?.ended() ?? performance.now();
  let streamed = NOTHING_STREAMED;
  const ticker = tickTurn(services, state, started, () => ahead?.streamed() ?? streamed);
  const asked = ticker ? { ...request, onStream: (sofar: StreamedSoFar) => (streamed = sofar) } : request;
  let assistant: AssistantTurn;
  try {
    assistant = await (ahead?.answer ?? services.driver.nextTurn(asked));
  } catch (e) {
    if (!(e instanceof ModelApiError && e.kind === "invalid_request")) throw e;
    result.apiMs += ended() - started;
    if (context?.usesApiEdits && isContextEditRejection(e.message)) {
      // A gateway without the beta: the same turn again, without it, for the rest of the run.
      context.fallBack(e.message);
      result.contextFallback = context.fallbackReason;
      return "retry";
    }
    if (!isContextOverflow(e.message)) throw e;
    return overflowed(state, e.message) ? "ended" : "retry";
  } finally {
    ticker?.stop();
  }
  recordTurn(services, state, assistant, started, ended());
  return assistant;
}

/**
 * Tells the turn's wait every interval while it is under way, and its end when it was told (nothing for a
 * turn shorter than the interval); undefined when nobody listens.
 */
function tickTurn(
  services: LoopServices,
  state: LoopState,
  started: number,
  streamed: () => StreamedSoFar,
): { stop(): void } | undefined {
  const ticks = services.turnTicks;
  if (!ticks) return undefined;
  const { turn, spender, signal } = state;
  const owner =
    spender.parentToolUseId === null
      ? {}
      : { agent: spender.agent, parentToolUseId: spender.parentToolUseId };
  const ticker = new TurnTicker({
    everyMs: ticks.everyMs,
    started,
    signal,
    streamed,
    tell: (tick) => ticks.tell({ kind: "turn_waiting", turn, ...tick, ...owner }),
  });
  return {
    stop: () => {
      if (!ticker.stop()) return;
      try {
        ticks.tell({ kind: "turn_ended", turn, ...owner });
      } catch {
        // a listener's failure is not the turn's
      }
    },
  };
}

/** Counts an answered turn: its time, tokens and cost (charged to the run's budget), and its record. */
function recordTurn(
  services: LoopServices,
  state: LoopState,
  assistant: AssistantTurn,
  started: number,
  ended: number,
): void {
  const { result, turn } = state;
  for (const edit of assistant.contextEdits ?? []) {
    const made = state.context?.recordApiEdit(turn, edit);
    if (made) result.compactions.push(made);
  }
  if (assistant.stopReason !== "model_context_window_exceeded") state.overflowRetried = false;
  const durationMs = ended - started;
  result.apiMs += durationMs;
  const cost = services.driver.costOf(assistant);
  result.usage = addUsage(result.usage, assistant.usage);
  result.costUsd += cost;
  services.budget.charge(state.spender, cost, assistant.usage);
  const text = textOf(assistant.content);
  if (text) result.finalText = text;
  result.turns.push({
    index: turn,
    stopReason: assistant.stopReason,
    usage: assistant.usage,
    attempts: assistant.attempts,
    startOffsetMs: Math.round(started - services.runStart),
    durationMs: Math.round(durationMs),
    text: text || undefined,
    costUsd: cost,
  });
  if (assistant.truncatedToolUse) {
    result.warnings.push(
      `turn ${turn}: max_tokens cut a tool call (${(assistant.truncatedToolNames ?? []).join(", ")}); it was not run`,
    );
    state.maxTokens = Math.min(MAX_TOKENS_CEILING, state.maxTokens * 2);
  }
}

/** A turn's tool calls, once run. */
interface TurnCalls {
  uses: Anthropic.ToolUseBlockParam[];
  /** The pipeline's records, then StructuredOutput's. */
  records: ToolCallRecord[];
  structured?: StructuredAnswer;
  /** Takes the turn's content back out of the conversation. */
  takeBack: () => void;
}

/**
 * Step 3: puts the answer into the conversation and runs its tool calls through the pipeline (StructuredOutput
 * is answered here: it touches nothing in the sandbox). Undefined when a cut left nothing to put in: the
 * next turn asks again, with more room.
 */
async function runTools(
  services: LoopServices,
  state: LoopState,
  assistant: AssistantTurn,
): Promise<TurnCalls | undefined> {
  if (assistant.truncatedToolUse && !assistant.content.length) return undefined;
  const { messages, turn, structuredOutput: spec } = state;
  // A repeated tool_use id is answered once (M9), and dropped from the message sent back: the API refuses
  // a conversation whose assistant message repeats an id.
  const content = withoutRepeatedToolUses(assistant.content, state.result.warnings, turn);
  const takeBack = appendAssistant(messages, content);
  if (content.some((block) => block.type === "compaction")) dropCompacted(messages);
  services.events.emit({
    type: "assistant",
    session_id: services.runId,
    parent_tool_use_id: state.spender.parentToolUseId,
    message: {
      id: messageId(services, state),
      type: "message",
      role: "assistant",
      model: assistant.model,
      content,
      stop_reason: assistant.stopReason,
      usage: apiUsage(assistant.usage),
    },
  });
  const uses = content.filter((b): b is Anthropic.ToolUseBlockParam => b.type === "tool_use");
  const outputUses = spec ? uses.filter((u) => u.name === STRUCTURED_OUTPUT_TOOL) : [];
  const toolUses = spec ? uses.filter((u) => u.name !== STRUCTURED_OUTPUT_TOOL) : uses;
  const records = await callTools(services, state, assistant, toolUses);
  if (!spec || !uses.length) return { uses, records, takeBack };
  const startOffsetMs = Math.round(performance.now() - services.runStart);
  const structured = answerStructured(spec, outputUses, turn, records.length, startOffsetMs);
  if (state.result.structured) state.result.structured.attempts += outputUses.length;
  return { uses, records: [...records, ...structured.records], structured, takeBack };
}

/** The pipeline's records of the turn's calls; when the run ends inside them, each is recorded as interrupted. */
async function callTools(
  services: LoopServices,
  state: LoopState,
  assistant: AssistantTurn,
  toolUses: Anthropic.ToolUseBlockParam[],
): Promise<ToolCallRecord[]> {
  const { turn, signal } = state;
  const turnStarted = performance.now();
  try {
    await services.driver.beforeTools?.(services.sandbox);
    if (!toolUses.length) return [];
    const calls = toolUses.map((u) => ({
      id: u.id,
      name: u.name,
      input: u.input,
      inputError: assistant.invalidToolInputs?.[u.id],
    }));
    return await services.pipeline.runTurn(turn, calls, signal);
  } catch (e) {
    // The run ends inside this turn (cancel, wall clock, the sandbox gone). Its calls still get an
    // outcome in the record and the event stream, so no tool_use is left without a tool_result.
    const why = signal.aborted
      ? String((signal.reason as Error)?.message ?? signal.reason ?? "cancelled")
      : ((e as Error)?.message ?? String(e));
    const interrupted = toolUses.map((u, index) =>
      interruptedRecord(
        turn,
        index,
        u,
        why,
        Math.round(turnStarted - services.runStart),
        services.pipeline.callerFacts(u.name),
      ),
    );
    state.result.calls.push(...interrupted);
    if (interrupted.length) emitToolResults(services, state, ToolPipeline.toolResults(interrupted));
    throw e;
  }
}

/** Step 4: sends the calls' results back; true when the loop is over. */
function endTurn(
  services: LoopServices,
  state: LoopState,
  assistant: AssistantTurn,
  calls: TurnCalls,
): boolean {
  if (!calls.uses.length) return endTurnWithoutCalls(state, assistant, calls.takeBack);
  const { result } = state;
  for (const record of calls.records) {
    services.progress?.(
      `${record.isError ? "✗" : "✓"} ${record.tool} ${record.title ?? ""}`.trimEnd(),
      record,
    );
    if (record.decision?.behavior === "deny") services.budget.deny();
  }
  result.calls.push(...calls.records);
  const toolResults = ToolPipeline.userContent(calls.records);
  state.messages.push({ role: "user", content: toolResults });
  emitToolResults(services, state, toolResults);

  const { structured } = calls;
  if (structured?.accepted && result.structured) {
    result.structured = { ...result.structured, valid: true, errors: [], value: structured.accepted };
    return true;
  }
  if (structured?.errors && structuredMiss(state, structured.errors)) return true;
  const denied = services.budget.deniedTooOften();
  return denied ? stop(state, denied.exit, denied.detail) : false;
}

/** A turn that called no tool: the model finished (true), or is asked to go on. */
function endTurnWithoutCalls(state: LoopState, assistant: AssistantTurn, takeBack: () => void): boolean {
  const { messages, result } = state;
  const { stopReason } = assistant;
  // Paused after a compaction: the answer continues from the summary in the next request.
  if (stopReason === "compaction") return false;
  if (assistant.truncatedToolUse || stopReason === "max_tokens" || stopReason === "pause_turn") {
    appendUser(
      messages,
      "Continue. Your last message was cut off; if you were calling a tool, call it again with a smaller input.",
    );
    return false;
  }
  if (stopReason === "refusal") result.warnings.push("the model refused to continue (stop_reason: refusal)");
  if (stopReason === "model_context_window_exceeded") {
    // The cut-off answer is not kept: the next turn asks again with a smaller conversation.
    takeBack();
    return overflowed(state, "stop_reason: model_context_window_exceeded");
  }
  if (!state.structuredOutput) return true;
  if (structuredMiss(state, [`the agent stopped without calling ${STRUCTURED_OUTPUT_TOOL}`])) return true;
  appendUser(
    messages,
    `<system-reminder>agent-ci: this run must end with a call to ${STRUCTURED_OUTPUT_TOOL} whose input matches its schema. Call it now with your result.</system-reminder>`,
  );
  return false;
}

/** Makes the conversation smaller before a turn, or after it overflowed; true when it did. */
function compact(state: LoopState, overflow: boolean): boolean {
  const { context, turn } = state;
  const request = { system: state.system, tools: state.tools, messages: state.messages };
  const made = overflow ? context?.afterOverflow(turn, request) : context?.beforeTurn(turn, request);
  if (made) state.result.compactions.push(made);
  return made !== undefined;
}

/** The conversation overflowed: true (the loop is over) unless it could be made smaller for the first time. */
function overflowed(state: LoopState, why: string): boolean {
  if (!state.overflowRetried && compact(state, true)) {
    state.overflowRetried = true;
    return false;
  }
  const how = state.context?.enabled
    ? "even after clearing old tool results"
    : "and compaction is off (--no-compaction)";
  return stop(
    state,
    "context_window",
    `the conversation no longer fits in the model's context window (${why}), ${how}`,
  );
}

/** A missing or invalid structured object: true (the loop is over) on the second. */
function structuredMiss(state: LoopState, why: string[]): boolean {
  state.structuredMisses += 1;
  if (state.result.structured) state.result.structured.errors = why;
  if (state.structuredMisses < 2) return false;
  return stop(
    state,
    "schema_invalid",
    `the run ended without a valid ${STRUCTURED_OUTPUT_TOOL} object: ${why.join("; ")}`,
  );
}

function emitToolResults(
  services: LoopServices,
  state: LoopState,
  content: Array<Anthropic.ToolResultBlockParam | Anthropic.TextBlockParam>,
): void {
  services.events.emit({
    type: "user",
    session_id: services.runId,
    parent_tool_use_id: state.spender.parentToolUseId,
    message: { role: "user", content },
  });
}

/** The assistant message's id in the event stream: unique per turn across all the run's conversations. */
function messageId(services: LoopServices, state: LoopState): string {
  const { parentToolUseId } = state.spender;
  const conversation = parentToolUseId === null ? "" : `${parentToolUseId}_`;
  return `msg_${services.runId}_${conversation}${state.turn}`;
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

/** A turn's StructuredOutput calls answered: the object accepted, or why none was. */
interface StructuredAnswer {
  records: ToolCallRecord[];
  accepted?: Record<string, unknown>;
  errors?: string[];
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
): StructuredAnswer {
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
  caller: Partial<ToolCallRecord> = {},
): ToolCallRecord {
  const { errorKind, ...rest } = answer;
  return {
    ...caller,
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
  caller: Partial<ToolCallRecord>,
): ToolCallRecord {
  const content = `The run ended before this call finished (${why}); its result is unknown.`;
  return loopRecord(
    turn,
    index,
    use,
    startOffsetMs,
    { content, isError: true, errorKind: "interrupted", title: `interrupted: ${why}` },
    caller,
  );
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
