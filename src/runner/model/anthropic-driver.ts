/**
 * The Anthropic driver: one assistant turn per call, streamed from the Messages API with
 * `@anthropic-ai/sdk`, with agent-ci's own bounded retries.
 *
 * The SDK's retries are off (`maxRetries: 0`) because a retry here is a whole turn: a stream that breaks
 * mid-message (reset, no `message_stop`, SSE garbage, an SSE `error` event, a stall) is thrown away and
 * asked for again, so tool calls from a partial message never reach the loop. What is retried:
 * - 429 `rate_limit_error`: after at least `retry-after-ms` / `retry-after`, else with backoff;
 *   a 429 that is a spend limit (`enforced_spend_limit_reached` and the like) is not retried;
 * - 529 `overloaded_error`, 500/502/503/504, 408/409, connection errors, broken streams: exponential
 *   backoff with jitter;
 * all within `maxAttempts` and never sleeping past `wallClockDeadline`. 400/401/403/404/413 are not
 * retried. Error messages never contain the API key.
 *
 * Each request marks three prompt-cache breakpoints: the system prompt, the last tool definition and the
 * last block of the last message (so each turn reads the conversation so far from the cache).
 *
 * Tool input is taken from the streamed JSON text itself, not from the SDK's partial-JSON snapshot
 * (which quietly turns `{"file_path": "/wor` into `{}`):
 * - `stop_reason: "max_tokens"` inside a tool_use (input JSON incomplete): the block is removed and the
 *   turn comes back with `truncatedToolUse: true` (content may then be empty); the loop retries with a
 *   larger `TurnRequest.maxTokens` or asks the model to continue in smaller steps;
 * - input that is JSON but not an object: the block keeps its id with `input: {}` and is listed in
 *   `invalidToolInputs`, so the loop answers it with an `is_error` tool_result;
 * - input that is not JSON at all: the SDK's stream accumulator throws, so it counts as a broken stream
 *   and the turn is asked for again.
 * A half-received input is never handed over as runnable.
 *
 * Cancel: when `TurnRequest.signal` aborts, the stream or the wait stops and the signal's reason (if an
 * Error, else the SDK's `APIUserAbortError`) is thrown, not a `ModelApiError`.
 */
import Anthropic, { APIUserAbortError } from "@anthropic-ai/sdk";
import {
  ModelApiError,
  type AgentSpec,
  type AppliedContextEdit,
  type AssistantTurn,
  type ContentBlockParam,
  type Driver,
  type SideCallRequest,
  type SideCallResult,
  type StreamedSoFar,
  type TurnRequest,
  type TurnUsage,
} from "./driver.js";
import { costUsd, normalizeModelId } from "./pricing.js";
import { withCacheBreakpoints } from "./prompt-cache.js";
import { credentialHint, type AnthropicCredential } from "./credentials.js";
import {
  classifyError,
  describeCause,
  type Failure,
  KIND_LABEL,
  safeJson,
  StreamBrokenError,
  truncate,
} from "./api-errors.js";

import {
  createModelClient,
  modelProvider,
  providerModel,
  type ModelClient,
  type Provider,
  type ProviderSettings,
} from "./providers.js";

/** One request's parameters: the beta API's shape, which the stable one is a part of. */
type RequestParams = Anthropic.Beta.Messages.MessageCreateParamsNonStreaming;

/** What the loop reads from a stream, from the stable or the beta endpoint. */
interface TurnStream {
  [Symbol.asyncIterator](): AsyncIterator<
    Anthropic.RawMessageStreamEvent | Anthropic.Beta.BetaRawMessageStreamEvent
  >;
  abort(): void;
  finalMessage(): Promise<Anthropic.Message | Anthropic.Beta.BetaMessage>;
  request_id?: string | null | undefined;
}

export interface AnthropicDriverOptions {
  /** An API key; `credential`, when given, is used instead. */
  apiKey?: string;
  /** The Anthropic API's credential (credentials.ts): a key, a bearer token, an OAuth token or federation. */
  credential?: AnthropicCredential;
  /** Told every credential value the client learns while it runs (an exchanged token), to mask it. */
  onSecret?: (value: string) => void;
  /** Default: `ANTHROPIC_BASE_URL`, else the public API. */
  baseURL?: string;
  /**
   * Amazon Bedrock or Google Vertex AI instead of the Anthropic API (`apiKey` and `baseURL` are then unused):
   * model names go through the model table to the provider's ids.
   */
  cloud?: Omit<ProviderSettings, "apiKey">;
  model: string;
  /** `max_tokens` per turn (a TurnRequest may override it). */
  maxTokens: number;
  /**
   * Extended thinking. Models that take a manual budget (Claude 3.7, Sonnet 4/4.5, Opus 4-4.5,
   * Haiku 4.5) get `{type: "enabled", budget_tokens}`; later models only take adaptive thinking and get
   * `{type: "adaptive"}`. Unset or 0: no `thinking` parameter (the model's default).
   */
  thinkingBudget?: number;
  /** Attempts per turn, the first included (default 4). */
  maxAttempts?: number;
  /** Epoch ms: a retry whose wait would end after this is not made. */
  wallClockDeadline?: number;
  /** One line per retry and per SDK warning; never contains the API key. */
  logger?: (line: string) => void;
  /** Injectable for tests; must reject when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Injectable clock (epoch ms) for tests. */
  now?: () => number;
  /** Injectable jitter source in [0, 1) for tests. */
  random?: () => number;
  /** First backoff step (default 1000 ms); doubles per attempt. */
  baseDelayMs?: number;
  /** Longest backoff step (default 30 s). */
  maxDelayMs?: number;
  /** A `retry-after` longer than this ends the run instead of waiting (default 120 s). */
  maxRetryAfterMs?: number;
  /** Time allowed until the response headers arrive (default 10 min, the SDK's). */
  requestTimeoutMs?: number;
  /** A stream with no event for this long is dropped and retried (default 10 min). */
  streamIdleTimeoutMs?: number;
  /** Put a cache breakpoint on the last message block (default true). */
  cacheConversation?: boolean;
}

const DEFAULT_MAX_ATTEMPTS = 4;
const DEFAULT_BASE_DELAY_MS = 1_000;
const DEFAULT_MAX_DELAY_MS = 30_000;
const DEFAULT_MAX_RETRY_AFTER_MS = 120_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 600_000;
const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 600_000;
const MIN_THINKING_BUDGET = 1_024;

/**
 * Models that accept `thinking: {type: "enabled", budget_tokens}` (normalized ids). Later models take
 * only adaptive thinking: a budget is a 400 on Sonnet 5+, and deprecated on Sonnet 4.6 / Opus 4.6+.
 */
const MANUAL_THINKING_MODELS = new Set([
  "claude-3-7-sonnet",
  "claude-sonnet-4",
  "claude-sonnet-4-0",
  "claude-sonnet-4-5",
  "claude-opus-4",
  "claude-opus-4-0",
  "claude-opus-4-1",
  "claude-opus-4-5",
  "claude-haiku-4-5",
]);

/** Looks like an Anthropic key even when it is not the configured one. */
const KEY_PATTERN = /sk-ant-[A-Za-z0-9_-]{8,}/g;

export class AnthropicDriver implements Driver {
  readonly name = "anthropic" as const;
  readonly model: string;
  readonly provider: Provider;
  /** Made once; a Vertex client waits for Google's credentials first. */
  private readonly client: Promise<ModelClient>;
  private readonly options: AnthropicDriverOptions;
  /** Values never printed: the key or token, the cloud credential, an exchanged access token. */
  private readonly secrets: string[];
  private readonly credential: AnthropicCredential;
  private readonly maxAttempts: number;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(options: AnthropicDriverOptions) {
    this.options = options;
    this.model = options.model;
    this.maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS));
    this.sleep = options.sleep ?? defaultSleep;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.provider = options.cloud?.provider ?? "anthropic";
    const aws = options.cloud?.awsCredentials;
    this.credential = options.credential ?? { kind: "api_key", token: options.apiKey ?? "" };
    this.secrets = [
      "token" in this.credential ? this.credential.token : undefined,
      aws?.accessKeyId,
      aws?.secretAccessKey,
      aws?.sessionToken,
      options.cloud?.googleAccessToken,
    ].filter((value): value is string => Boolean(value));
    this.client = createClient(
      this.settings(),
      options,
      (line) => this.log(line),
      (token) => {
        this.secrets.push(token);
        options.onSecret?.(token);
      },
    );
    // A client that cannot be made fails the first turn (as an auth error), not the process.
    this.client.catch(() => undefined);
  }

  private settings(): ProviderSettings {
    const { cloud, baseURL } = this.options;
    return cloud ?? { provider: "anthropic", credential: this.credential, ...(baseURL ? { baseURL } : {}) };
  }

  costOf(turn: AssistantTurn): number {
    return costUsd(turn.model || this.model, turn.usage).usd;
  }

  /** The same client, its requests made with the subagent's model. */
  forAgent(spec: AgentSpec): Driver {
    return {
      name: this.name,
      nextTurn: (request) => this.nextTurn({ ...request, model: request.model ?? spec.model }),
      costOf: (turn) => this.costOf(turn),
    };
  }

  async nextTurn(request: TurnRequest): Promise<AssistantTurn> {
    const params = this.buildParams(request);
    for (let attempt = 1; ; attempt += 1) {
      throwIfAborted(request.signal);
      let failure: Failure;
      try {
        return await this.attemptTurn(params, request.signal, attempt, request.onStream);
      } catch (error) {
        if (request.signal.aborted) throw abortError(request.signal);
        failure = classifyError(error, (text) => this.redact(text));
      }
      const waitMs = this.nextWait(failure, attempt);
      await this.waitBeforeRetry(waitMs, request.signal);
    }
  }

  /** Decides whether to retry; returns the wait or throws the error that ends the turn. */
  private nextWait(failure: Failure, attempt: number): number {
    if (!failure.retryable) throw this.toModelError(failure, attempt, undefined);
    if (attempt >= this.maxAttempts) {
      throw this.toModelError(failure, attempt, `gave up after ${attempt} attempts`);
    }
    const maxRetryAfter = this.options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    if (failure.retryAfterMs !== undefined && failure.retryAfterMs > maxRetryAfter) {
      const asked = formatSeconds(failure.retryAfterMs);
      throw this.toModelError(
        failure,
        attempt,
        `the API asked to wait ${asked}, longer than the ${formatSeconds(maxRetryAfter)} agent-ci waits`,
      );
    }
    const waitMs = this.retryDelay(failure, attempt);
    const deadline = this.options.wallClockDeadline;
    if (deadline !== undefined && this.now() + waitMs > deadline) {
      throw this.toModelError(
        failure,
        attempt,
        `a retry in ${formatSeconds(waitMs)} would pass the run's wall-clock limit`,
      );
    }
    const why = failure.retryAfterMs !== undefined ? "as the API asked" : "backoff";
    this.log(
      `model API: ${failure.detail} (attempt ${attempt}/${this.maxAttempts}); retrying in ${formatSeconds(waitMs)} (${why})`,
    );
    return waitMs;
  }

  private async waitBeforeRetry(ms: number, signal: AbortSignal): Promise<void> {
    try {
      await this.sleep(ms, signal);
    } catch (error) {
      if (signal.aborted) throw abortError(signal);
      throw error;
    }
  }

  /**
   * At least the server's retry-after (plus up to 10% / 1 s of jitter); otherwise exponential backoff
   * with "equal jitter": half the step fixed, half random.
   */
  private retryDelay(failure: Failure, attempt: number): number {
    if (failure.retryAfterMs !== undefined) {
      const jitter = Math.min(1_000, failure.retryAfterMs * 0.1) * this.random();
      return Math.ceil(failure.retryAfterMs + jitter);
    }
    const base = this.options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
    const cap = this.options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
    const step = Math.min(cap, base * 2 ** (attempt - 1));
    return Math.ceil(step / 2 + (step / 2) * this.random());
  }

  private toModelError(failure: Failure, attempts: number, why: string | undefined): ModelApiError {
    const label = KIND_LABEL[failure.kind];
    const tail = why ? `; ${why}` : "";
    const hint = failure.kind === "auth" ? ` ${this.authHint()}` : "";
    const message = this.redact(
      `${modelProvider(this.provider).name} ${label}: ${failure.detail}${tail}.${hint}`,
    );
    return new ModelApiError(message, failure.status, failure.kind, { attempts });
  }

  private async attemptTurn(
    params: RequestParams,
    signal: AbortSignal,
    attempt: number,
    onStream?: (sofar: StreamedSoFar) => void,
  ): Promise<AssistantTurn> {
    const idleMs = this.options.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
    const called = providerModel(params.model, this.provider, this.options.cloud?.region);
    const requestOptions = {
      signal,
      timeout: this.requestTimeout(),
      maxRetries: 0,
      ...versionHeader(called.apiVersion),
    };
    const client = await this.connectedClient();
    const sent = { ...params, model: called.id };
    // The beta endpoint only when the request carries context edits: a gateway that knows nothing of betas
    // still gets the plain request, of the same shape (the conversation holds a compaction block only after
    // the API sent one).
    const stream: TurnStream = sent.betas
      ? client.beta.messages.stream(sent, requestOptions)
      : client.messages.stream(sent as Anthropic.MessageCreateParamsNonStreaming, requestOptions);
    const rawToolJson = new Map<number, string>();
    const sofar: StreamedSoFar = { reportedTokens: 0, characters: 0 };
    onStream?.({ ...sofar });
    let sawMessageStop = false;
    let idle = false;
    let timer: NodeJS.Timeout | undefined;
    const armIdleTimer = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        idle = true;
        stream.abort();
      }, idleMs);
    };

    armIdleTimer();
    try {
      for await (const event of stream) {
        armIdleTimer();
        if (event.type === "content_block_start" && event.content_block.type === "tool_use") {
          rawToolJson.set(event.index, "");
        }
        if (event.type === "content_block_delta" && event.delta.type === "input_json_delta") {
          rawToolJson.set(event.index, (rawToolJson.get(event.index) ?? "") + event.delta.partial_json);
        }
        if (event.type === "message_stop") sawMessageStop = true;
        if (onStream && countStreamed(event, sofar)) onStream({ ...sofar });
      }
    } catch (error) {
      if (idle) throw new StreamBrokenError(`no stream event for ${formatSeconds(idleMs)}`);
      throw error;
    } finally {
      clearTimeout(timer);
    }
    if (!sawMessageStop) throw new StreamBrokenError("stream ended before message_stop");
    const message = await stream.finalMessage();
    if (message.stop_reason === null) throw new StreamBrokenError("message_stop without a stop_reason");
    return this.toTurn(message, rawToolJson, attempt, stream.request_id ?? undefined);
  }

  private toTurn(
    message: Anthropic.Message | Anthropic.Beta.BetaMessage,
    rawToolJson: Map<number, string>,
    attempts: number,
    requestId: string | undefined,
  ): AssistantTurn {
    const content: ContentBlockParam[] = [];
    const truncatedToolNames: string[] = [];
    const invalidToolInputs: Record<string, string> = {};
    for (const [index, block] of message.content.entries()) {
      if (block.type === "text") {
        // The API refuses empty text blocks in a request, so one would break the next turn.
        if (block.text) content.push({ type: "text", text: block.text });
        continue;
      }
      if (block.type === "thinking") {
        content.push({ type: "thinking", thinking: block.thinking, signature: block.signature });
        continue;
      }
      if (block.type === "redacted_thinking") {
        content.push({ type: "redacted_thinking", data: block.data });
        continue;
      }
      if (block.type === "compaction") {
        // Sent back exactly as received: the API checks the summary against its signature.
        content.push(block as Anthropic.Beta.BetaCompactionBlockParam);
        continue;
      }
      if (block.type !== "tool_use") {
        this.log(`model API: dropped a content block of unexpected type ${block.type}`);
        continue;
      }
      const parsed = parseToolInput(rawToolJson.get(index), block.input);
      if (parsed.ok) {
        content.push({ type: "tool_use", id: block.id, name: block.name, input: parsed.input });
        continue;
      }
      if (message.stop_reason === "max_tokens") {
        truncatedToolNames.push(block.name);
        continue;
      }
      invalidToolInputs[block.id] = parsed.reason;
      content.push({ type: "tool_use", id: block.id, name: block.name, input: {} });
    }

    const turn: AssistantTurn = {
      content,
      stopReason: message.stop_reason,
      usage: toTurnUsage(message.usage),
      model: message.model,
      attempts,
    };
    if (requestId) turn.requestId = requestId;
    if (truncatedToolNames.length > 0) {
      turn.truncatedToolUse = true;
      turn.truncatedToolNames = truncatedToolNames;
      this.log(
        `model API: max_tokens cut the input of ${truncatedToolNames.join(", ")}; the call was dropped`,
      );
    }
    if (Object.keys(invalidToolInputs).length > 0) turn.invalidToolInputs = invalidToolInputs;
    const contextEdits = appliedContextEdits(message);
    if (contextEdits.length > 0) turn.contextEdits = contextEdits;
    return turn;
  }

  /**
   * A side call: one non-streaming request with the SDK's own retries (a failed side call is the tool
   * call's error, never the run's end), bounded by the run's wall clock.
   */
  async sideCall(request: SideCallRequest): Promise<SideCallResult> {
    try {
      const called = providerModel(request.model, this.provider, this.options.cloud?.region);
      const client = await this.connectedClient();
      const message = await client.messages.create(
        {
          model: called.id,
          max_tokens: request.maxTokens,
          messages: request.messages as Anthropic.MessageParam[],
          ...(request.system ? { system: request.system } : {}),
          ...(request.tools?.length ? { tools: request.tools, tool_choice: { type: "auto" } } : {}),
        },
        {
          signal: request.signal,
          timeout: this.requestTimeout(),
          maxRetries: 2,
          ...versionHeader(called.apiVersion),
        },
      );
      return {
        content: message.content,
        usage: toTurnUsage(message.usage),
        webSearchRequests: message.usage.server_tool_use?.web_search_requests ?? 0,
        model: message.model,
      };
    } catch (error) {
      if (request.signal.aborted) throw abortError(request.signal);
      const failure = classifyError(error, (text) => this.redact(text));
      throw this.toModelError(failure, 1, undefined);
    }
  }

  private buildParams(request: TurnRequest): RequestParams {
    const maxTokens = request.maxTokens ?? this.options.maxTokens;
    const model = request.model ?? this.model;
    const params: RequestParams = {
      model,
      max_tokens: maxTokens,
      messages: request.messages,
    };
    if (request.contextEdits) {
      params.betas = request.contextEdits.betas;
      params.context_management = { edits: request.contextEdits.edits };
    }
    Object.assign(params, withCacheBreakpoints(request, this.options.cacheConversation ?? true));
    const thinking = this.thinkingParam(maxTokens, model);
    if (thinking) params.thinking = thinking;
    return params;
  }

  private thinkingParam(maxTokens: number, model: string): Anthropic.ThinkingConfigParam | undefined {
    const budget = this.options.thinkingBudget;
    if (!budget || budget <= 0) return undefined;
    if (!MANUAL_THINKING_MODELS.has(normalizeModelId(model))) return { type: "adaptive" };
    const budgetTokens = Math.min(Math.floor(budget), maxTokens - 1);
    if (budgetTokens < MIN_THINKING_BUDGET) {
      this.log(
        `model API: thinking off: max_tokens ${maxTokens} leaves no room for a ${MIN_THINKING_BUDGET}-token budget`,
      );
      return undefined;
    }
    return { type: "enabled", budget_tokens: budgetTokens };
  }

  private requestTimeout(): number {
    const timeout = this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const deadline = this.options.wallClockDeadline;
    if (deadline === undefined) return timeout;
    return Math.max(1, Math.min(timeout, Math.floor(deadline - this.now())));
  }

  /** The client; one that could not be made (no Google credentials) is an auth error, never retried. */
  private async connectedClient(): Promise<ModelClient> {
    try {
      return await this.client;
    } catch (error) {
      const detail = this.redact(describeCause(error as Error));
      throw new ModelApiError(
        `${modelProvider(this.provider).name} ${KIND_LABEL.auth}: ${detail}. ${this.authHint()}`,
        undefined,
        "auth",
      );
    }
  }

  private authHint(): string {
    return modelProvider(this.provider).authHint(this.credential);
  }

  /**
   * A cheap call made before the sandbox starts, so bad credentials fail fast: throws `ModelApiError` (kind
   * `auth`) on 401/403; anything else that stops the check (network, 404 from a proxy, 5xx) resolves
   * `unverified` and leaves the decision to the first real turn. Made through this driver's own client, so a
   * federated token is exchanged once for the check and the run.
   */
  async checkCredentials(options: CredentialCheckOptions = {}): Promise<ApiKeyCheck> {
    const client = (await this.connectedClient()) as Anthropic;
    return checkWithClient(client, this.credential, options, (text) => this.redact(text));
  }

  private redact(text: string): string {
    let out = redactSecret(text, "");
    for (const secret of this.secrets) if (secret.length >= 4) out = out.split(secret).join("***");
    return out;
  }

  private log(line: string): void {
    this.options.logger?.(this.redact(line));
  }
}

export interface CredentialCheckOptions {
  /** Checked with `GET /v1/models/{model}` when given, else `GET /v1/models`. */
  model?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export type ApiKeyCheck = { status: "ok" } | { status: "unverified"; reason: string };

async function checkWithClient(
  client: Anthropic,
  credential: AnthropicCredential,
  options: CredentialCheckOptions,
  redact: (text: string) => string,
): Promise<ApiKeyCheck> {
  const requestOptions = {
    maxRetries: 1,
    timeout: options.timeoutMs ?? 15_000,
    signal: options.signal ?? null,
  };
  try {
    if (options.model) await client.models.retrieve(options.model, {}, requestOptions);
    else await client.models.list({ limit: 1 }, requestOptions);
    return { status: "ok" };
  } catch (error) {
    if (options.signal?.aborted) throw abortError(options.signal);
    const failure = classifyError(error, redact);
    if (failure.kind === "auth") {
      const message = redact(
        `Anthropic API ${KIND_LABEL.auth}: ${failure.detail}. ${credentialHint(credential)}`,
      );
      throw new ModelApiError(message, failure.status, "auth");
    }
    return { status: "unverified", reason: failure.detail };
  }
}

/** The request option that sends another `anthropic-version` (Bedrock's own, for its older models). */
function versionHeader(apiVersion: string | undefined): { headers?: Record<string, string> } {
  return apiVersion ? { headers: { "anthropic-version": apiVersion } } : {};
}

function createClient(
  settings: ProviderSettings,
  options: { requestTimeoutMs?: number; timeoutMs?: number },
  log: (line: string) => void,
  onToken?: (token: string) => void,
): Promise<ModelClient> {
  const forward =
    (level: string) =>
    (message: string, ...rest: unknown[]): void => {
      const extra = rest.map((item) => (typeof item === "string" ? item : safeJson(item))).join(" ");
      log(`anthropic-sdk ${level}: ${message} ${extra}`.trim().slice(0, 500));
    };
  return createModelClient(settings, {
    timeout: options.requestTimeoutMs ?? options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    logger: { error: forward("error"), warn: forward("warn"), info: () => {}, debug: () => {} },
    ...(onToken ? { onToken } : {}),
  });
}

/**
 * Adds what one stream event brought to `sofar`: the output tokens the API reported, the characters of a text,
 * thinking or tool input delta. True when it changed.
 */
function countStreamed(
  event: Anthropic.RawMessageStreamEvent | Anthropic.Beta.BetaRawMessageStreamEvent,
  sofar: StreamedSoFar,
): boolean {
  if (event.type === "message_start" || event.type === "message_delta") {
    const reported = (event.type === "message_start" ? event.message.usage : event.usage).output_tokens;
    if (typeof reported !== "number" || reported === sofar.reportedTokens) return false;
    sofar.reportedTokens = reported;
    return true;
  }
  if (event.type !== "content_block_delta") return false;
  const { delta } = event;
  const text =
    delta.type === "text_delta"
      ? delta.text
      : delta.type === "thinking_delta"
        ? delta.thinking
        : delta.type === "input_json_delta"
          ? delta.partial_json
          : "";
  if (!text) return false;
  sofar.characters += text.length;
  return true;
}

type ParsedInput = { ok: true; input: Record<string, unknown> } | { ok: false; reason: string };

/** The tool input from the streamed JSON text; only a complete JSON object counts. */
function parseToolInput(raw: string | undefined, sdkInput: unknown): ParsedInput {
  if (raw === undefined) {
    if (isPlainObject(sdkInput)) return { ok: true, input: sdkInput };
    return { ok: false, reason: "the tool input was not a JSON object" };
  }
  if (raw.trim() === "") return { ok: true, input: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { ok: false, reason: `the tool input was not valid JSON: ${truncate(raw, 200)}` };
  }
  if (!isPlainObject(value)) return { ok: false, reason: "the tool input was valid JSON but not an object" };
  return { ok: true, input: value };
}

/**
 * The clearings and compactions the API reports for a request, each with the prompt's tokens before and after:
 * a `clear_tool_uses` edit from `context_management.applied_edits` (after = the prompt billed, before = that
 * plus what was cleared), a compaction from `usage.iterations` (the compaction pass read the prompt before; the
 * sampling pass after it read the prompt after).
 */
function appliedContextEdits(message: Anthropic.Message | Anthropic.Beta.BetaMessage): AppliedContextEdit[] {
  const edits: AppliedContextEdit[] = [];
  const usage: Anthropic.Usage | Anthropic.Beta.BetaUsage = message.usage;
  const prompt = promptTokens(usage);
  const applied = "context_management" in message ? (message.context_management?.applied_edits ?? []) : [];
  for (const edit of applied) {
    if (edit.type !== "clear_tool_uses_20250919") continue;
    edits.push({
      strategy: "api_clear_tool_uses",
      tokensBefore: prompt + edit.cleared_input_tokens,
      tokensAfter: prompt,
      clearedToolResults: edit.cleared_tool_uses,
    });
  }
  if (!(message.content ?? []).some((block) => block.type === "compaction")) return edits;
  const iterations = "iterations" in usage ? (usage.iterations ?? []) : [];
  const at = iterations.findIndex((iteration) => iteration.type === "compaction");
  const compacted = iterations[at];
  const next = iterations[at + 1];
  edits.push({
    strategy: "api_compaction",
    tokensBefore: compacted ? promptTokens(compacted) : prompt,
    tokensAfter: next ? promptTokens(next) : prompt,
  });
  return edits;
}

function promptTokens(usage: {
  input_tokens: number | null;
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
}): number {
  return (
    (usage.input_tokens ?? 0) +
    (usage.cache_creation_input_tokens ?? 0) +
    (usage.cache_read_input_tokens ?? 0)
  );
}

function toTurnUsage(usage: Anthropic.Usage | Anthropic.Beta.BetaUsage): TurnUsage {
  return {
    inputTokens: usage.input_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
    cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
    cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
  };
}

/** Replaces the configured key, and anything shaped like an Anthropic key, with `***`. */
export function redactSecret(text: string, apiKey: string): string {
  let out = text;
  if (apiKey.length >= 4) out = out.split(apiKey).join("***");
  return out.replace(KEY_PATTERN, "***");
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError(signal);
}

/** The signal's reason when it is an Error, else the SDK's abort error. */
function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new APIUserAbortError();
}

/** Waits on the global timer, which tests drive with fake timers; an abort ends the wait at once. */
function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function formatSeconds(ms: number): string {
  return `${(ms / 1_000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}
