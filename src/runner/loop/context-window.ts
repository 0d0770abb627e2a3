// Keeping a long run inside the model's context window. Where the model supports it (pricing.ts's table), the
// API does it: each request carries a `context_management` edit — server-side compaction (`compact_20260112`)
// or the clearing of old tool results (`clear_tool_uses_20250919`) — triggered at `compactAt`, and each edit
// the API reports having applied is recorded. A gateway that refuses the beta (a 400 naming it) switches the
// run to agent-ci's own clearing for the rest of the run, which is also what a model without API support
// gets: before each request agent-ci estimates the prompt (its own count, from the text it sends) and, once it
// reaches `compactAt`, replaces the oldest tool results with a short placeholder until the prompt is well
// below it again — the newest few stay whole. The full output of every call stays in the report and in
// tool-outputs/. Each clearing or compaction, by either side, is a `compact_boundary` event and a mark on the
// report's timeline, with the tokens before and after.
import type Anthropic from "@anthropic-ai/sdk";
import type { Compaction } from "../../report/index.js";
import type { AppliedContextEdit, ContextEdits, MessageParam } from "../model/driver.js";
import type { EventSink } from "./events.js";
import { API_CONTEXT_EDIT_BETAS, normalizeModelId, type ApiContextEdit } from "../model/pricing.js";

/** Every current Claude model takes a 200k-token prompt; larger windows are opt-in (a beta), so not assumed. */
export const DEFAULT_CONTEXT_WINDOW = 200_000;
const CONTEXT_WINDOWS: Record<string, number> = {};
/** Default `compactAt`, as a share of the window: room for the next turn's output and tool results. */
export const COMPACT_AT_FRACTION = 0.75;
/** Clearing goes on until the prompt is this share of `compactAt`, so it does not recur on every turn. */
const CLEAR_DOWN_TO_FRACTION = 0.5;
/** The newest tool results always kept whole (the model is working with them). */
export const KEEP_RECENT_TOOL_RESULTS = 3;
/** Tokens counted per content block and per message for the framing around the text. */
const BLOCK_OVERHEAD_TOKENS = 4;
/** Bytes per token in agent-ci's estimate: fewer than real text averages, so the estimate errs high. */
const BYTES_PER_TOKEN = 3;

export const CLEARED_PREFIX = "[agent-ci: this tool result was cleared";

export function contextWindowOf(model: string): number {
  return CONTEXT_WINDOWS[normalizeModelId(model)] ?? DEFAULT_CONTEXT_WINDOW;
}

/** agent-ci's own token estimate of a request part (strings by UTF-8 size, plus framing per block). */
export function estimateTokens(value: unknown): number {
  if (typeof value === "string") return Math.ceil(Buffer.byteLength(value, "utf8") / BYTES_PER_TOKEN);
  if (typeof value === "number" || typeof value === "boolean") return 1;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + estimateTokens(item), 0);
  if (typeof value !== "object" || value === null) return 0;
  let sum = BLOCK_OVERHEAD_TOKENS;
  for (const [key, item] of Object.entries(value)) {
    // Image and document data count by their size, but are never sent as text.
    sum += key === "data" && typeof item === "string" ? Math.ceil(item.length / 4) : estimateTokens(item);
  }
  return sum;
}

export interface ContextOptions {
  window: number;
  compactAt: number;
  /** false (--no-compaction): nothing is cleared, and an overflow ends the run. */
  enabled: boolean;
  events: EventSink;
  runId: string;
  runStart: number;
  /** The API-side edit to ask for (the model supports it); absent: agent-ci clears old results itself. */
  apiEdit?: ApiContextEdit;
}

export interface ContextRequest {
  system: string;
  tools: Anthropic.Tool[];
  messages: MessageParam[];
}

export class ContextManager {
  readonly compactions: Compaction[] = [];
  private apiEdit: ApiContextEdit | undefined;
  /** Why the run went over to agent-ci's own clearing (the API refused its edits), for the report. */
  fallbackReason: string | undefined;

  constructor(private readonly options: ContextOptions) {
    this.apiEdit = options.enabled ? options.apiEdit : undefined;
  }

  get enabled(): boolean {
    return this.options.enabled;
  }

  /** Whether requests carry the API's context edits (else agent-ci clears, or nothing is done). */
  get usesApiEdits(): boolean {
    return this.apiEdit !== undefined;
  }

  /**
   * The `context_management` edit for the next request, triggered at `compactAt`. Clearing keeps the newest
   * tool uses and clears only when it frees at least the half of `compactAt` agent-ci's own clearing would:
   * each clearing changes the prompt's prefix and so costs a cache write, which a small gain does not repay.
   */
  contextEdits(): ContextEdits | undefined {
    const edit = this.apiEdit;
    if (!edit) return undefined;
    const trigger = { type: "input_tokens" as const, value: this.options.compactAt };
    const betas = [API_CONTEXT_EDIT_BETAS[edit]];
    if (edit === "compact") return { betas, edits: [{ type: "compact_20260112", trigger }] };
    const clearAtLeast = Math.floor(this.options.compactAt * (1 - CLEAR_DOWN_TO_FRACTION));
    return {
      betas,
      edits: [
        {
          type: "clear_tool_uses_20250919",
          trigger,
          keep: { type: "tool_uses", value: KEEP_RECENT_TOOL_RESULTS },
          clear_at_least: { type: "input_tokens", value: clearAtLeast },
        },
      ],
    };
  }

  /** The API (or a gateway before it) refused the edits: agent-ci clears by itself for the rest of the run. */
  fallBack(reason: string): void {
    const refused = this.apiEdit;
    if (!refused) return;
    this.apiEdit = undefined;
    this.fallbackReason = `the API refused the ${refused === "compact" ? "compact_20260112" : "clear_tool_uses_20250919"} context edit (${reason}); agent-ci cleared old tool results itself for the rest of the run`;
    this.options.events.emit({
      type: "system",
      subtype: "context_management_fallback",
      session_id: this.options.runId,
      refused_edit: refused,
      reason,
    });
  }

  /** Records a clearing or compaction the API reports having applied to the request of `turn`. */
  recordApiEdit(turn: number, edit: AppliedContextEdit): Compaction {
    return this.record({
      turn,
      offsetMs: this.offsetMs(),
      trigger: "auto",
      strategy: edit.strategy,
      tokensBefore: edit.tokensBefore,
      tokensAfter: edit.tokensAfter,
      clearedToolResults: edit.clearedToolResults,
    });
  }

  /**
   * Estimates kept by identity: each message's content blocks (an array is never changed once in the
   * conversation, a message that grows gets a new one, but by `clear`, which forgets the arrays it changed)
   * and each tool's definition. Without it every turn re-measured the whole conversation and the tool list.
   */
  private readonly measured = new WeakMap<object, number>();

  /** The system prompt's estimate, kept while the prompt is the same (it is, from turn to turn). */
  private system: { text: string; tokens: number } | undefined;

  private estimateMessage(message: MessageParam): number {
    const { content } = message;
    if (typeof content !== "object" || content === null) return estimateTokens(message);
    return estimateTokens({ ...message, content: [] }) + this.estimated(content);
  }

  estimate(request: ContextRequest): number {
    if (this.system?.text !== request.system)
      this.system = { text: request.system, tokens: estimateTokens(request.system) };
    let tokens = this.system.tokens;
    // Each tool's definition by itself: a refresh of the tool list replaces the definitions in its array.
    for (const tool of request.tools) tokens += this.estimated(tool);
    for (const message of request.messages) tokens += this.estimateMessage(message);
    return tokens;
  }

  /** The estimate of a value never changed in place, kept by its identity (`measured`). */
  private estimated(value: object): number {
    let tokens = this.measured.get(value);
    if (tokens === undefined) {
      tokens = estimateTokens(value);
      this.measured.set(value, tokens);
    }
    return tokens;
  }

  /** Before a request: clears old tool results when the prompt has reached `compactAt`. */
  beforeTurn(turn: number, request: ContextRequest): Compaction | undefined {
    if (!this.options.enabled || this.apiEdit) return undefined;
    const before = this.estimate(request);
    if (before < this.options.compactAt) return undefined;
    return this.clear(turn, request, "auto", before, KEEP_RECENT_TOOL_RESULTS);
  }

  /**
   * After the API refused a prompt as too long: clears every tool result but the newest, whatever the
   * estimate says (the API's count is the one that matters). Undefined when nothing could be cleared.
   */
  afterOverflow(turn: number, request: ContextRequest): Compaction | undefined {
    if (!this.options.enabled) return undefined;
    return this.clear(turn, request, "overflow", this.estimate(request), 1);
  }

  private clear(
    turn: number,
    request: ContextRequest,
    trigger: Compaction["trigger"],
    before: number,
    keep: number,
  ): Compaction | undefined {
    const target = trigger === "overflow" ? 0 : this.options.compactAt * CLEAR_DOWN_TO_FRACTION;
    const results = request.messages.flatMap((message) =>
      message.role === "user" && Array.isArray(message.content)
        ? message.content
            .filter((block): block is Anthropic.ToolResultBlockParam => block.type === "tool_result")
            .map((block) => ({ message, block }))
        : [],
    );
    let estimate = before;
    let cleared = 0;
    for (const { message, block } of results.slice(0, Math.max(0, results.length - keep))) {
      if (estimate <= target) break;
      if (isCleared(block)) continue;
      const size = estimateTokens(block.content);
      this.measured.delete(message.content as object);
      block.content = `${CLEARED_PREFIX} to keep the conversation within the context window (${resultChars(block)} characters; the run's report keeps it whole). Run the call again if you need it.]`;
      estimate -= size - estimateTokens(block.content);
      cleared += 1;
    }
    if (cleared === 0) return undefined;
    return this.record({
      turn,
      offsetMs: this.offsetMs(),
      trigger,
      strategy: "clear_tool_results",
      tokensBefore: before,
      tokensAfter: this.estimate(request),
      clearedToolResults: cleared,
    });
  }

  private offsetMs(): number {
    return Math.max(0, Math.round(performance.now() - this.options.runStart));
  }

  /** Keeps a compaction and writes its `compact_boundary` event. */
  private record(compaction: Compaction): Compaction {
    this.compactions.push(compaction);
    this.options.events.emit({
      type: "system",
      subtype: "compact_boundary",
      session_id: this.options.runId,
      compact_metadata: {
        trigger: "auto",
        pre_tokens: compaction.tokensBefore,
        post_tokens: compaction.tokensAfter,
        strategy: compaction.strategy,
        ...(compaction.clearedToolResults === undefined
          ? {}
          : { cleared_tool_results: compaction.clearedToolResults }),
      },
    });
    return compaction;
  }
}

function isCleared(block: Anthropic.ToolResultBlockParam): boolean {
  return typeof block.content === "string" && block.content.startsWith(CLEARED_PREFIX);
}

function resultChars(block: Anthropic.ToolResultBlockParam): number {
  if (typeof block.content === "string") return block.content.length;
  return (block.content ?? []).reduce((n, part) => n + (part.type === "text" ? part.text.length : 0), 0);
}

/** Whether an API error says the prompt did not fit (400 "prompt is too long", or the stop reason's wording). */
export function isContextOverflow(message: string): boolean {
  return /prompt is too long|context window|model_context_window_exceeded|too many tokens/i.test(message);
}

/**
 * Whether a 400 says the API (or a gateway before it) does not take the context-management beta: it names the
 * beta, the `context_management` field or its edit types, or calls a field unknown / not permitted.
 */
export function isContextEditRejection(message: string): boolean {
  if (isContextOverflow(message)) return false;
  return /context[_ -]management|anthropic-beta|\bbetas?\b|compact_20260112|clear_tool_uses|compaction|extra inputs are not permitted|unknown (field|parameter)|unrecognized (field|key)/i.test(
    message,
  );
}
