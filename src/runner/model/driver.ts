import type Anthropic from "@anthropic-ai/sdk";
import type { Sandbox } from "../../sandbox/sandbox.js";
import type { SideCallRequest, SideCallResult } from "../../tools/web-services.js";

/**
 * The conversation in the beta Messages API's shape: a superset of the stable one that also holds the
 * `compaction` blocks server-side compaction returns (sent back verbatim in later requests).
 */
export type MessageParam = Anthropic.Beta.BetaMessageParam;
export type ContentBlockParam = Anthropic.Beta.BetaContentBlockParam;

/** The API-side context management a request carries: its `context_management.edits` and the betas they need. */
export interface ContextEdits {
  betas: string[];
  edits: NonNullable<Anthropic.Beta.BetaContextManagementConfig["edits"]>;
}

/** A clearing or compaction the API reports having made on a request, with the prompt's tokens before and after. */
export interface AppliedContextEdit {
  strategy: "api_clear_tool_uses" | "api_compaction";
  tokensBefore: number;
  tokensAfter: number;
  clearedToolResults?: number;
}

/** What the agent loop sends a driver for one assistant turn. */
export interface TurnRequest {
  system: string;
  messages: MessageParam[];
  tools: Anthropic.Tool[];
  /** Aborted on cancel (SIGINT/SIGTERM) and at the run's wall-clock limit. */
  signal: AbortSignal;
  /** Overrides the driver's `max_tokens` for this turn (e.g. to retry a turn cut off by `max_tokens`). */
  maxTokens?: number;
  /** The API's own context management for this request (absent: a plain, non-beta request). */
  contextEdits?: ContextEdits;
  /** Overrides the driver's model for this request (a subagent's model, a side call's). */
  model?: string;
  /** Told what the stream has brought so far, as it comes (a long turn's progress line counts from it). */
  onStream?: (sofar: StreamedSoFar) => void;
}

/**
 * What a turn's stream has brought so far, for the attempt under way (a retry starts again from nothing): the
 * output tokens the API reported (`message_start`'s, then `message_delta`'s running count, which the API sends
 * at the end of the message) and the characters of text, thinking and tool input the content deltas carried.
 */
export interface StreamedSoFar {
  reportedTokens: number;
  characters: number;
}

/**
 * The output tokens a stream has brought so far: the count the API reported, or, while that is behind (it is
 * sent at the end), the streamed characters at 4 a token, as Claude Code's spinner counts them.
 */
export function outputTokensSoFar(sofar: StreamedSoFar): number {
  return Math.max(sofar.reportedTokens, Math.round(sofar.characters / 4));
}

/** What a subagent's conversation is: the driver for it is chosen by this (a script matches on it). */
export interface AgentSpec {
  /** The subagent_type. */
  type: string;
  description: string;
  prompt: string;
  /** The model id its requests use. */
  model: string;
}

export type { SideCallRequest, SideCallResult } from "../../tools/web-services.js";

export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
}

/** One finished assistant turn: only ever a complete message (tools from a partial stream are never run). */
export interface AssistantTurn {
  /** Content blocks as the API returned them (text, thinking, tool_use, compaction), ready to go back into `messages`. */
  content: ContentBlockParam[];
  stopReason: Anthropic.Beta.BetaStopReason | "script_end" | null;
  usage: TurnUsage;
  model: string;
  /** Attempts it took (1 = no retry). */
  attempts: number;
  /**
   * `stop_reason: "max_tokens"` cut a `tool_use` block before its input JSON was complete. Those blocks
   * were removed from `content` (it may be empty) and must not run; retry the turn with a larger
   * `maxTokens` or ask the model to continue with smaller steps.
   */
  truncatedToolUse?: boolean;
  /** Names of the tool calls removed by `truncatedToolUse`, for the report. */
  truncatedToolNames?: string[];
  /**
   * tool_use id → why its streamed input was not a JSON object. Those blocks stay in `content` with
   * `input: {}` so that the next user message can answer each id with an `is_error` tool_result.
   */
  invalidToolInputs?: Record<string, string>;
  /** The API's `request-id` for the attempt that produced this turn. */
  requestId?: string;
  /** The context edits the API applied to this turn's request (`context_management.applied_edits`, a compaction). */
  contextEdits?: AppliedContextEdit[];
}

/** Thrown by a driver when the model API fails in a way that ends the run (after its retries). */
export class ModelApiError extends Error {
  override readonly name = "ModelApiError";
  /** Attempts made for the turn before giving up, when the driver knows it. */
  readonly attempts: number | undefined;
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly kind:
      | "auth"
      | "rate_limit"
      | "spend_limit"
      | "overloaded"
      | "invalid_request"
      | "server"
      | "connection"
      | "stream",
    options?: { cause?: unknown; attempts?: number },
  ) {
    super(message, options);
    this.attempts = options?.attempts;
  }
}

export interface Driver {
  readonly name: "anthropic" | "script";
  nextTurn(request: TurnRequest): Promise<AssistantTurn>;
  /** What a turn this driver returned cost, in US dollars. */
  costOf(turn: AssistantTurn): number;
  /**
   * Runs after the turn it last returned and before that turn's tools: a scripted driver changes files
   * there, standing in for an outside actor (a linter, a user).
   */
  beforeTools?(sandbox: Sandbox): Promise<void>;
  /** A side call; undefined when this driver has no answer for it (a script without a matching entry). */
  sideCall?(request: SideCallRequest): Promise<SideCallResult | undefined>;
  /** The driver a subagent's loop uses for its own conversation (absent: this one, with the spec's model per request). */
  forAgent?(spec: AgentSpec): Driver;
}
