/**
 * A fake Anthropic Messages API for the tests: the real `@anthropic-ai/sdk` talks to it over HTTP on
 * 127.0.0.1, so retries, streaming and error handling are exercised exactly as against the real API.
 *
 * A test scripts one response per request (`turns`, used in order, then `handler` if given):
 * - a message (`FakeMessage`): text / thinking / tool_use blocks, streamed as the real API streams them
 *   (`message_start`, `ping`, `content_block_start`, `text_delta` / `input_json_delta` split in small
 *   pieces, `content_block_stop`, `message_delta` with stop_reason and usage, `message_stop`), or as one
 *   JSON body when the request is not streaming; `hold` keeps a stream open partway until the test lets it go;
 * - a fault (`FakeFault`): an HTTP error with headers (429 + retry-after, 529, 500, 401, 400 ...), a
 *   stream cut mid-message (socket destroyed, or ended cleanly without `message_stop`), SSE garbage,
 *   an SSE `error` event, a stall, or a request that never gets a response.
 * `fake.*` builds the common ones. Every request is recorded (method, path, headers, parsed body) so
 * tests can assert how many calls were made and what they carried.
 *
 * Context management as the beta API does it: a request's `context_management` edits (with the betas they need
 * in `anthropic-beta`) are applied before the window is checked — `clear_tool_uses_*` clears old tool results
 * (honouring `trigger`, `keep` and `clear_at_least`, reported in `context_management.applied_edits`),
 * `compact_*` returns a signed `compaction` block in front of the scripted answer (or alone, with
 * `stop_reason: "compaction"`, under `pause_after_compaction`), which later requests must send back verbatim.
 * `rejectContextManagement` plays a gateway that knows no betas.
 *
 * Like the real API, requests are checked before a turn is used (the key, sent as `x-api-key` or as
 * `Authorization: Bearer` — SDK 1.x does the latter —, anthropic-version, body
 * shape, tool_use/tool_result pairing, tool schemas, at most 4 cache_control breakpoints) and a
 * failing check answers 400/401 without consuming a scripted turn. Pass `validate: false` to skip it.
 */
import { listenOnLoopback } from "./loopback.js";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type Anthropic from "@anthropic-ai/sdk";
import { answerExchange, checkExchangedToken, type FakeTokenExchange } from "./fake-token-exchange.js";

export type FakeBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature?: string }
  | {
      type: "tool_use";
      name: string;
      input?: Record<string, unknown>;
      id?: string;
      /** The exact JSON text streamed as `input_json_delta` pieces (default `JSON.stringify(input)`). */
      rawJson?: string;
    }
  | { type: "compaction"; content: string | null; signature?: string }
  /** The API's own tool call (web_search), as a message that used a server tool carries it. */
  | { type: "server_tool_use"; id: string; name: string; input: Record<string, unknown> }
  | {
      type: "web_search_tool_result";
      tool_use_id: string;
      content:
        | Array<{
            type: "web_search_result";
            url: string;
            title: string;
            encrypted_content: string;
            page_age?: string | null;
          }>
        | { type: "web_search_tool_result_error"; error_code: string };
    };

export interface FakeUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** Server tools the message used (billed per search). */
  server_tool_use?: { web_search_requests: number };
}

export interface FakeMessage {
  type?: "message";
  content: FakeBlock[];
  /** Default: `tool_use` when the content has a tool_use block, else `end_turn`. */
  stopReason?: Anthropic.Beta.BetaStopReason | null;
  usage?: Partial<FakeUsage>;
  /** Default: the request's model. */
  model?: string;
  /** Characters per text/JSON delta (default 8). */
  chunkSize?: number;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Answer once this settles (a test's gate: the answer waits for an event, not a timer). */
  until?: Promise<unknown>;
  /**
   * Hold the stream open after its first `afterDeltas` content deltas until `until` settles, then finish it (a
   * long turn the test watches: the answer goes on when the test has seen what it waits for).
   */
  hold?: { afterDeltas: number; until: Promise<unknown> };
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** `context_management` of the response (the edits the API applied). */
  contextManagement?: { applied_edits: Array<Record<string, unknown>> };
  /** `usage.iterations` of the response (a compaction pass, then the sampling pass). */
  iterations?: Array<Record<string, unknown>>;
}

export interface FakeApiError {
  type: string;
  message: string;
  details?: Record<string, unknown>;
}

export type FakeFault =
  | {
      type: "http_error";
      status: number;
      error: FakeApiError;
      headers?: Record<string, string>;
      delayMs?: number;
      /** Answer once this settles. */
      until?: Promise<unknown>;
    }
  | {
      /** Stream `message` up to `afterDeltas` content_block_delta events, then break the connection. */
      type: "cut";
      message: FakeMessage;
      /** Default: halfway through the deltas of the first tool_use block (or of the whole message). */
      afterDeltas?: number;
      /** `destroy` resets the socket (default); `end` finishes the HTTP response without `message_stop`. */
      mode?: "destroy" | "end";
    }
  | {
      /** `bad_json`: a data line that is not JSON; `not_sse`: an HTML page served as event-stream; `binary`: random bytes. */
      type: "garbage";
      variant?: "bad_json" | "not_sse" | "binary";
    }
  | {
      /** An SSE `event: error` after `afterDeltas` deltas of `message` (how overload shows mid-stream). */
      type: "stream_error";
      error: FakeApiError;
      message?: FakeMessage;
      afterDeltas?: number;
    }
  | {
      /** Headers and the first events, then silence with the connection open. */
      type: "stall";
      message?: FakeMessage;
      afterDeltas?: number;
    }
  | {
      /** Never answers (not even headers). */
      type: "hang";
    };

export type FakeTurn = FakeMessage | FakeFault;

export interface RecordedRequest {
  /** 0-based, over all requests to the server. */
  index: number;
  method: string;
  /** Path without the query string. */
  path: string;
  query: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The parsed JSON body, or undefined. */
  body: unknown;
  rawBody: string;
}

/** A `POST /v1/messages` body as the SDK sent it. */
export type MessagesBody = Omit<Anthropic.MessageCreateParamsNonStreaming, "stream"> & { stream?: boolean };

export interface RecordedMessagesRequest extends RecordedRequest {
  body: MessagesBody;
}

export type FakeHandler = (
  request: RecordedMessagesRequest,
  messagesIndex: number,
) => FakeTurn | Promise<FakeTurn>;

/** A subagent's conversation: requests whose first user message contains `match` get these turns, in order. */
export interface FakeConversation {
  match: string;
  turns: FakeTurn[];
}

export interface FakeAnthropicOptions {
  turns?: FakeTurn[];
  /**
   * Subagents' conversations, told apart from the parent's as the real API would see them: by the first user
   * message (the Task prompt). A request that matches none is the parent's and takes from `turns`.
   */
  conversations?: FakeConversation[];
  /** Answers requests after `turns` are used up. */
  handler?: FakeHandler;
  /** When set, any other x-api-key gets a 401 `authentication_error`. */
  apiKey?: string;
  /**
   * Serve workload identity federation's token exchange (`POST /v1/oauth/token`); the API then accepts only
   * the access tokens it minted (fake-token-exchange.ts).
   */
  tokenExchange?: FakeTokenExchange;
  /** Ids served by `GET /v1/models` (default: a few current ids). */
  models?: string[];
  /** Check requests as the real API does (default true). */
  validate?: boolean;
  /**
   * Refuse, as the real API does (400 "prompt is too long"), any request whose effective prompt is over this
   * many tokens: counted after the `context_management` edits the request declared and from its last
   * `compaction` block on, at about 4 characters of request JSON per token.
   */
  contextWindowTokens?: number;
  /** Answer any request that carries `context_management` or an `anthropic-beta` header with a 400, as a gateway without the betas does. */
  rejectContextManagement?: boolean;
}

export interface FakeAnthropic {
  /** Base URL for the SDK (`baseURL`). */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** The `POST /v1/messages` requests only. */
  messagesRequests(): RecordedMessagesRequest[];
  /** Resolves when `POST /v1/messages` request number `index` (0-based) arrives, with when (epoch ms). */
  messagesArrival(index: number): Promise<{ request: RecordedMessagesRequest; receivedAt: number }>;
  /** Resolves when the client closed `POST /v1/messages` request number `index` before its answer ended. */
  messagesAborted(index: number): Promise<void>;
  /** Scripted turns not used yet. */
  remainingTurns(): number;
  close(): Promise<void>;
}

const DEFAULT_MODELS = ["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-haiku-4-5"];

/** Builders for the common turns and faults. */
export const fake = {
  text(text: string, options: Partial<FakeMessage> = {}): FakeMessage {
    return { content: [{ type: "text", text }], ...options };
  },
  toolUse(
    name: string,
    input: Record<string, unknown>,
    options: Partial<FakeMessage> & { id?: string } = {},
  ): FakeMessage {
    const { id, ...rest } = options;
    return { content: [{ type: "tool_use", name, input, ...(id ? { id } : {}) }], ...rest };
  },
  /** Several tool calls in one turn, optionally preceded by text. */
  toolUses(
    calls: Array<{ name: string; input: Record<string, unknown>; id?: string }>,
    text?: string,
  ): FakeMessage {
    const blocks: FakeBlock[] = calls.map((call) => ({ type: "tool_use", ...call }));
    return { content: text === undefined ? blocks : [{ type: "text", text }, ...blocks] };
  },
  httpError(status: number, error: FakeApiError, headers?: Record<string, string>): FakeFault {
    return { type: "http_error", status, error, ...(headers ? { headers } : {}) };
  },
  rateLimited(wait: { retryAfterSeconds?: number; retryAfterMs?: number } = {}): FakeFault {
    const headers: Record<string, string> = {};
    if (wait.retryAfterSeconds !== undefined) headers["retry-after"] = String(wait.retryAfterSeconds);
    if (wait.retryAfterMs !== undefined) headers["retry-after-ms"] = String(wait.retryAfterMs);
    return fake.httpError(
      429,
      {
        type: "rate_limit_error",
        message: "This request would exceed the rate limit for your organization of 50 requests per minute.",
      },
      headers,
    );
  },
  spendLimited(): FakeFault {
    return fake.httpError(429, {
      type: "rate_limit_error",
      message:
        "You have reached your specified API usage limits. You will regain access on 2026-12-01 at 00:00 UTC.",
      details: { error_code: "enforced_spend_limit_reached" },
    });
  },
  overloaded(headers?: Record<string, string>): FakeFault {
    return fake.httpError(529, { type: "overloaded_error", message: "Overloaded" }, headers);
  },
  serverError(status = 500): FakeFault {
    const type = status === 500 ? "api_error" : "overloaded_error";
    const message = status === 500 ? "Internal server error" : "Service unavailable";
    return fake.httpError(status, { type, message });
  },
  unauthorized(message = "invalid x-api-key"): FakeFault {
    return fake.httpError(401, { type: "authentication_error", message });
  },
  forbidden(): FakeFault {
    return fake.httpError(403, {
      type: "permission_error",
      message: "Your API key does not have permission to use the specified resource.",
    });
  },
  promptTooLong(tokens = 210_345, limit = 200_000): FakeFault {
    return fake.httpError(400, {
      type: "invalid_request_error",
      message: `prompt is too long: ${tokens} tokens > ${limit} maximum`,
    });
  },
  /** A tool_use turn whose stream is cut while the tool's input JSON is still arriving. */
  cutMidToolUse(
    name: string,
    input: Record<string, unknown>,
    mode: "destroy" | "end" = "destroy",
  ): FakeFault {
    return { type: "cut", message: fake.toolUse(name, input, { chunkSize: 4 }), mode };
  },
  garbage(variant: "bad_json" | "not_sse" | "binary" = "bad_json"): FakeFault {
    return { type: "garbage", variant };
  },
  /** `stop_reason: "max_tokens"` inside a tool_use: only the first `keepChars` of its input JSON are sent. */
  truncatedToolUse(name: string, input: Record<string, unknown>, keepChars = 12, text?: string): FakeMessage {
    const rawJson = JSON.stringify(input).slice(0, keepChars);
    const tool: FakeBlock = { type: "tool_use", name, input, rawJson };
    return {
      content: text === undefined ? [tool] : [{ type: "text", text }, tool],
      stopReason: "max_tokens",
    };
  },
  refusal(text = "I can't help with that."): FakeMessage {
    return { content: [{ type: "text", text }], stopReason: "refusal" };
  },
} as const;

interface SseContext {
  res: ServerResponse;
  /** Stop after this many content_block_delta events (undefined: never). */
  stopAfterDeltas?: number;
}

/** Starts the fake API on 127.0.0.1 on a free port. */
export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const queue = [...(options.turns ?? [])];
  const requests: RecordedRequest[] = [];
  const validate = options.validate ?? true;
  let messagesCount = 0;
  let idCounter = 0;
  /** signature → summary of every compaction block sent, to check that requests send them back verbatim. */
  const issuedCompactions = new Map<string, string | null>();
  const nextId = (prefix: string): string => `${prefix}_fake${String(++idCounter).padStart(6, "0")}`;
  const arrivals = new Signals<{ request: RecordedMessagesRequest; receivedAt: number }>();
  const aborts = new Signals<void>();
  let messagesSeen = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendError(res, 500, { type: "api_error", message: `fake-anthropic crashed: ${String(error)}` });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAt = Date.now();
    const rawBody = await readBody(req);
    const [path = "/", query = ""] = (req.url ?? "/").split("?", 2);
    const record: RecordedRequest = {
      index: requests.length,
      method: req.method ?? "GET",
      path,
      query,
      headers: flattenHeaders(req),
      body: parseJson(rawBody),
      rawBody,
    };
    requests.push(record);
    res.setHeader("request-id", nextId("req"));
    if (record.method === "POST" && record.path === "/v1/messages") {
      const seen = messagesSeen++;
      res.on("close", () => {
        if (!res.writableFinished) aborts.fire(seen, undefined);
      });
      arrivals.fire(seen, { request: record as RecordedMessagesRequest, receivedAt });
    }

    if (options.tokenExchange && record.method === "POST" && record.path === "/v1/oauth/token") {
      const answer = answerExchange(options.tokenExchange, record.headers, record.body);
      sendJson(res, answer.status, answer.body);
      return;
    }
    const authProblem = options.tokenExchange
      ? checkExchangedToken(options.tokenExchange, record.headers, sentCredential(record))
      : checkAuth(record, options.apiKey);
    if (authProblem) {
      sendError(res, 401, { type: "authentication_error", message: authProblem });
      return;
    }
    if (record.method === "GET" && record.path === "/v1/models") {
      sendJson(res, 200, modelsPage(options.models ?? DEFAULT_MODELS));
      return;
    }
    if (record.method === "GET" && record.path.startsWith("/v1/models/")) {
      const id = decodeURIComponent(record.path.slice("/v1/models/".length));
      const known = options.models ?? DEFAULT_MODELS;
      if (!known.includes(id)) {
        sendError(res, 404, { type: "not_found_error", message: `model: ${id}` });
        return;
      }
      sendJson(res, 200, modelInfo(id));
      return;
    }
    if (record.method === "POST" && record.path === "/v1/messages/count_tokens") {
      sendJson(res, 200, { input_tokens: Math.max(1, Math.ceil(rawBody.length / 4)) });
      return;
    }
    if (record.method !== "POST" || record.path !== "/v1/messages") {
      sendError(res, 404, { type: "not_found_error", message: `Not found: ${record.method} ${record.path}` });
      return;
    }

    if (
      options.rejectContextManagement &&
      (record.headers["anthropic-beta"] || (isRecord(record.body) && "context_management" in record.body))
    ) {
      sendError(res, 400, {
        type: "invalid_request_error",
        message: "context_management: Extra inputs are not permitted",
      });
      return;
    }
    const problem = validate
      ? (validateMessagesRequest(record) ?? validateContextManagement(record, issuedCompactions))
      : undefined;
    if (problem) {
      sendError(res, 400, { type: "invalid_request_error", message: problem });
      return;
    }
    const messagesRecord = record as RecordedMessagesRequest;
    const managed = applyContextManagement(messagesRecord.body);
    if (options.contextWindowTokens !== undefined && managed.tokens > options.contextWindowTokens) {
      sendError(res, 400, {
        type: "invalid_request_error",
        message: `prompt is too long: ${managed.tokens} tokens > ${options.contextWindowTokens} maximum`,
      });
      return;
    }
    if (managed.compaction?.pause) {
      await answer(
        withContextManagement({ content: [], stopReason: "compaction" }, managed, issuedCompactions),
        messagesRecord,
        res,
      );
      return;
    }
    const messagesIndex = messagesCount++;
    const conversation = conversationOf(messagesRecord.body, options.conversations ?? []);
    const scripted = conversation
      ? (conversation.turns.shift() ?? fake.text(`(no scripted turn left for ${conversation.match})`))
      : (queue.shift() ?? (await options.handler?.(messagesRecord, messagesIndex)));
    const turn =
      scripted && (scripted.type === undefined || scripted.type === "message")
        ? withContextManagement(scripted, managed, issuedCompactions)
        : scripted;
    if (!turn) {
      sendError(res, 400, {
        type: "invalid_request_error",
        message: `fake-anthropic: no scripted turn left for messages request #${messagesIndex}`,
      });
      return;
    }
    await answer(turn, messagesRecord, res);
  }

  async function answer(turn: FakeTurn, record: RecordedMessagesRequest, res: ServerResponse): Promise<void> {
    const streaming = record.body.stream === true;
    const model = record.body.model;
    if (turn.type === undefined || turn.type === "message") {
      if (turn.delayMs) await delay(turn.delayMs);
      await turn.until;
      for (const [name, value] of Object.entries(turn.headers ?? {})) res.setHeader(name, value);
      if (!streaming) {
        sendJson(res, 200, buildMessage(turn, model, nextId));
        return;
      }
      startSse(res);
      await streamMessage({ res }, turn, model, nextId);
      res.end();
      return;
    }
    switch (turn.type) {
      case "http_error": {
        if (turn.delayMs) await delay(turn.delayMs);
        await turn.until;
        for (const [name, value] of Object.entries(turn.headers ?? {})) res.setHeader(name, value);
        sendError(res, turn.status, turn.error);
        return;
      }
      case "cut": {
        startSse(res);
        const stopAfterDeltas = turn.afterDeltas ?? defaultCutPoint(turn.message);
        await streamMessage({ res, stopAfterDeltas }, turn.message, model, nextId);
        if (turn.mode === "end") {
          res.end();
          return;
        }
        res.socket?.destroy();
        return;
      }
      case "garbage": {
        await sendGarbage(res, turn.variant ?? "bad_json", model, nextId);
        return;
      }
      case "stream_error": {
        startSse(res);
        const message = turn.message ?? fake.text("Partial answer that will not finish.");
        await streamMessage({ res, stopAfterDeltas: turn.afterDeltas ?? 1 }, message, model, nextId);
        await writeEvent(res, "error", { type: "error", error: turn.error });
        res.end();
        return;
      }
      case "stall": {
        startSse(res);
        const message = turn.message ?? fake.text("This stream stalls.");
        await streamMessage({ res, stopAfterDeltas: turn.afterDeltas ?? 1 }, message, model, nextId);
        return;
      }
      case "hang":
        return;
    }
  }

  const { url, close } = await listenOnLoopback(server);

  return {
    url,
    requests,
    messagesRequests: () =>
      requests.filter(
        (request): request is RecordedMessagesRequest =>
          request.method === "POST" && request.path === "/v1/messages",
      ),
    messagesArrival: (index) => arrivals.when(index),
    messagesAborted: (index) => aborts.when(index),
    remainingTurns: () => queue.length,
    close,
  };
}

/** One promise per index, resolved once its event happens (before or after it is asked for). */
class Signals<T> {
  private readonly waiting = new Map<number, { promise: Promise<T>; resolve: (value: T) => void }>();

  private entry(index: number): { promise: Promise<T>; resolve: (value: T) => void } {
    let found = this.waiting.get(index);
    if (!found) {
      let resolve!: (value: T) => void;
      const promise = new Promise<T>((r) => (resolve = r));
      found = { promise, resolve };
      this.waiting.set(index, found);
    }
    return found;
  }

  fire(index: number, value: T): void {
    this.entry(index).resolve(value);
  }

  when(index: number): Promise<T> {
    return this.entry(index).promise;
  }
}

/** The message as the non-streaming API returns it. */
function buildMessage(
  turn: FakeMessage,
  requestModel: string,
  nextId: (prefix: string) => string,
): Record<string, unknown> {
  const content = turn.content.map((block) => {
    switch (block.type) {
      case "text":
        return { type: "text", text: block.text, citations: null };
      case "thinking":
        return { type: "thinking", thinking: block.thinking, signature: block.signature ?? "fake-signature" };
      case "tool_use":
        return {
          type: "tool_use",
          id: block.id ?? nextId("toolu"),
          name: block.name,
          input: block.input ?? {},
          caller: { type: "direct" },
        };
      case "compaction":
        return {
          type: "compaction",
          content: block.content,
          encrypted_content: null,
          signature: block.signature ?? null,
        };
      case "server_tool_use":
      case "web_search_tool_result":
        return block;
    }
  });
  return {
    id: nextId("msg"),
    type: "message",
    role: "assistant",
    model: turn.model ?? requestModel,
    content,
    stop_reason: stopReasonOf(turn),
    stop_sequence: null,
    usage: { ...usageOf(turn), ...(turn.iterations ? { iterations: turn.iterations } : {}) },
    ...(turn.contextManagement ? { context_management: turn.contextManagement } : {}),
  };
}

function stopReasonOf(turn: FakeMessage): Anthropic.Beta.BetaStopReason | null {
  if (turn.stopReason !== undefined) return turn.stopReason;
  return turn.content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn";
}

function usageOf(turn: FakeMessage): FakeUsage {
  return {
    input_tokens: turn.usage?.input_tokens ?? 100,
    output_tokens: turn.usage?.output_tokens ?? 20,
    cache_creation_input_tokens: turn.usage?.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: turn.usage?.cache_read_input_tokens ?? 0,
    ...(turn.usage?.server_tool_use ? { server_tool_use: turn.usage.server_tool_use } : {}),
  };
}

/** Writes the message's SSE events; returns false when it stopped at `ctx.stopAfterDeltas`. */
async function streamMessage(
  ctx: SseContext,
  turn: FakeMessage,
  requestModel: string,
  nextId: (prefix: string) => string,
): Promise<boolean> {
  const { res } = ctx;
  const usage = usageOf(turn);
  const chunkSize = Math.max(1, turn.chunkSize ?? 8);
  let deltas = 0;
  const stopHere = (): boolean => ctx.stopAfterDeltas !== undefined && deltas >= ctx.stopAfterDeltas;

  await writeEvent(res, "message_start", {
    type: "message_start",
    message: {
      id: nextId("msg"),
      type: "message",
      role: "assistant",
      model: turn.model ?? requestModel,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        cache_creation: {
          ephemeral_5m_input_tokens: usage.cache_creation_input_tokens,
          ephemeral_1h_input_tokens: 0,
        },
        output_tokens: 1,
        service_tier: "standard",
      },
    },
  });
  await writeEvent(res, "ping", { type: "ping" });
  if (stopHere()) return false;
  const holdHere = async (): Promise<void> => {
    if (turn.hold && deltas === turn.hold.afterDeltas) await turn.hold.until;
  };
  await holdHere();

  for (const [index, block] of turn.content.entries()) {
    const { start, pieces, deltaOf, after } = blockEvents(block, chunkSize, nextId);
    await writeEvent(res, "content_block_start", {
      type: "content_block_start",
      index,
      content_block: start,
    });
    for (const piece of pieces) {
      await writeEvent(res, "content_block_delta", {
        type: "content_block_delta",
        index,
        delta: deltaOf(piece),
      });
      deltas += 1;
      if (stopHere()) return false;
      await holdHere();
    }
    for (const delta of after) {
      await writeEvent(res, "content_block_delta", { type: "content_block_delta", index, delta });
    }
    await writeEvent(res, "content_block_stop", { type: "content_block_stop", index });
    if (index === 0) await writeEvent(res, "ping", { type: "ping" });
  }

  await writeEvent(res, "message_delta", {
    type: "message_delta",
    delta: { stop_reason: stopReasonOf(turn), stop_sequence: null },
    usage: {
      output_tokens: usage.output_tokens,
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      ...(turn.iterations ? { iterations: turn.iterations } : {}),
    },
    ...(turn.contextManagement ? { context_management: turn.contextManagement } : {}),
  });
  await writeEvent(res, "message_stop", { type: "message_stop" });
  return true;
}

function blockEvents(
  block: FakeBlock,
  chunkSize: number,
  nextId: (prefix: string) => string,
): {
  start: Record<string, unknown>;
  pieces: string[];
  deltaOf: (piece: string) => Record<string, unknown>;
  after: Array<Record<string, unknown>>;
} {
  switch (block.type) {
    case "text":
      return {
        start: { type: "text", text: "", citations: null },
        pieces: splitPieces(block.text, chunkSize),
        deltaOf: (text) => ({ type: "text_delta", text }),
        after: [],
      };
    case "thinking":
      return {
        start: { type: "thinking", thinking: "", signature: "" },
        pieces: splitPieces(block.thinking, chunkSize),
        deltaOf: (thinking) => ({ type: "thinking_delta", thinking }),
        after: [{ type: "signature_delta", signature: block.signature ?? "fake-signature" }],
      };
    case "tool_use": {
      const json = block.rawJson ?? JSON.stringify(block.input ?? {});
      return {
        start: {
          type: "tool_use",
          id: block.id ?? nextId("toolu"),
          name: block.name,
          input: {},
          caller: { type: "direct" },
        },
        // The real API opens every tool input with an empty delta.
        pieces: ["", ...splitPieces(json, chunkSize)],
        deltaOf: (partial_json) => ({ type: "input_json_delta", partial_json }),
        after: [],
      };
    }
    case "compaction":
      // One delta carries the whole summary, as the API sends it.
      return {
        start: {
          type: "compaction",
          content: null,
          encrypted_content: null,
          signature: block.signature ?? null,
        },
        pieces: [""],
        deltaOf: () => ({ type: "compaction_delta", content: block.content, encrypted_content: null }),
        after: [],
      };
    case "server_tool_use":
      return {
        start: { type: "server_tool_use", id: block.id, name: block.name, input: {} },
        pieces: ["", JSON.stringify(block.input)],
        deltaOf: (partial_json) => ({ type: "input_json_delta", partial_json }),
        after: [],
      };
    case "web_search_tool_result":
      // Whole in its start event, as the API sends it.
      return { start: block, pieces: [], deltaOf: () => ({}), after: [] };
  }
}

/** Splits by code points so that no piece ends inside a surrogate pair. */
function splitPieces(text: string, size: number): string[] {
  const points = Array.from(text);
  const pieces: string[] = [];
  for (let at = 0; at < points.length; at += size) pieces.push(points.slice(at, at + size).join(""));
  return pieces;
}

/** Halfway through the first tool_use's deltas, or through all deltas. */
function defaultCutPoint(turn: FakeMessage): number {
  const chunkSize = Math.max(1, turn.chunkSize ?? 8);
  let before = 0;
  for (const block of turn.content) {
    const length =
      block.type === "tool_use"
        ? 1 + splitPieces(block.rawJson ?? JSON.stringify(block.input ?? {}), chunkSize).length
        : block.type === "text" || block.type === "thinking"
          ? splitPieces(block.type === "text" ? block.text : block.thinking, chunkSize).length
          : block.type === "compaction"
            ? 1
            : 2;
    if (block.type === "tool_use") return before + Math.max(2, Math.ceil(length / 2));
    before += length;
  }
  return Math.max(1, Math.floor(before / 2));
}

async function sendGarbage(
  res: ServerResponse,
  variant: "bad_json" | "not_sse" | "binary",
  model: string,
  nextId: (prefix: string) => string,
): Promise<void> {
  startSse(res);
  if (variant === "not_sse") {
    await write(res, "<html><body><h1>502 Bad Gateway</h1></body></html>\n\n");
    res.end();
    return;
  }
  if (variant === "binary") {
    await write(res, Buffer.from([0x00, 0xff, 0xfe, 0x0a, 0x13, 0x37, 0x0a, 0x0a, 0xde, 0xad, 0xbe, 0xef]));
    res.end();
    return;
  }
  await streamMessage({ res, stopAfterDeltas: 0 }, fake.text("unused"), model, nextId);
  await write(
    res,
    'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, "content_block": {"type": "te\n\n',
  );
  await write(res, "event: content_block_delta\ndata: }}garbage{{\n\n");
  res.end();
}

function startSse(res: ServerResponse): void {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  res.flushHeaders();
}

function writeEvent(res: ServerResponse, event: string, data: unknown): Promise<void> {
  return write(res, `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function write(res: ServerResponse, chunk: string | Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed || res.writableEnded) {
      resolve();
      return;
    }
    res.write(chunk, () => resolve());
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, error: FakeApiError): void {
  sendJson(res, status, { type: "error", error, request_id: String(res.getHeader("request-id") ?? "") });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The credential a request carried: `x-api-key`, or `Authorization: Bearer <key>` (how SDK 1.x sends
 * an `apiKey`).
 */
export function sentCredential(request: RecordedRequest): string | undefined {
  const apiKey = request.headers["x-api-key"];
  if (apiKey) return apiKey;
  const authorization = request.headers["authorization"];
  if (!authorization) return undefined;
  return authorization.replace(/^Bearer\s+/i, "");
}

function checkAuth(record: RecordedRequest, apiKey: string | undefined): string | undefined {
  const sent = sentCredential(record);
  if (!sent) return "x-api-key header is required";
  if (apiKey !== undefined && sent !== apiKey) return "invalid x-api-key";
  return undefined;
}

function modelInfo(id: string): Record<string, unknown> {
  return {
    type: "model",
    id,
    display_name: id,
    created_at: "2026-06-01T00:00:00Z",
    deprecated_at: null,
    capabilities: null,
  };
}

function modelsPage(ids: string[]): Record<string, unknown> {
  return { data: ids.map(modelInfo), has_more: false, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The checks the real API makes that an agent loop can get wrong; returns the API's error text. */
function validateMessagesRequest(record: RecordedRequest): string | undefined {
  if (!record.headers["anthropic-version"]) return "anthropic-version: header is required";
  const body = record.body;
  if (!isRecord(body)) return "Invalid JSON body";
  if (typeof body.model !== "string" || !body.model) return "model: Field required";
  if (typeof body.max_tokens !== "number" || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
    return "max_tokens: Field required";
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return "messages: at least one message is required";
  const toolsProblem = validateTools(body.tools);
  if (toolsProblem) return toolsProblem;
  const thinking = body.thinking;
  if (isRecord(thinking) && thinking.type === "enabled") {
    const budget = thinking.budget_tokens;
    if (typeof budget !== "number" || budget < 1024)
      return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024";
    if (budget >= body.max_tokens) return "`max_tokens` must be greater than `thinking.budget_tokens`";
  }
  const messagesProblem = validateMessages(body.messages);
  if (messagesProblem) return messagesProblem;
  const breakpoints =
    countCacheControl(body.system) + countCacheControl(body.tools) + countCacheControl(body.messages);
  if (breakpoints > 4)
    return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`;
  return undefined;
}

function validateTools(tools: unknown): string | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return "tools: Input should be a valid list";
  const names = new Set<string>();
  for (const [index, tool] of tools.entries()) {
    if (!isRecord(tool)) return `tools.${index}: Input should be an object`;
    // A server tool the API runs itself: a type and a name, no input schema.
    if (tool.type === "web_search_20250305") {
      if (tool.name !== "web_search")
        return `tools.${index}.web_search_20250305.name: Input should be 'web_search'`;
      if (tool.allowed_domains !== undefined && tool.blocked_domains !== undefined)
        return `tools.${index}: allowed_domains and blocked_domains cannot both be given`;
      continue;
    }
    if (typeof tool.name !== "string" || !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name)) {
      return `tools.${index}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
    }
    if (names.has(tool.name)) return "tools: Tool names must be unique.";
    names.add(tool.name);
    if (!isRecord(tool.input_schema) || tool.input_schema.type !== "object") {
      return `tools.${index}.custom.input_schema.type: Input should be 'object'`;
    }
  }
  return undefined;
}

function blocksOf(message: Record<string, unknown>): Array<Record<string, unknown>> {
  if (typeof message.content === "string") return [{ type: "text", text: message.content }];
  if (!Array.isArray(message.content)) return [];
  return message.content.filter(isRecord);
}

function validateMessages(messages: unknown[]): string | undefined {
  let pendingToolUses: string[] = [];
  for (const [index, message] of messages.entries()) {
    if (!isRecord(message) || !["user", "assistant", "system"].includes(String(message.role))) {
      return `messages.${index}.role: Input should be 'user', 'assistant' or 'system'`;
    }
    if (message.role === "system") continue;
    if (index === 0 && message.role !== "user") return 'messages: first message must use the "user" role';
    const blocks = blocksOf(message);
    const isFinalAssistant = index === messages.length - 1 && message.role === "assistant";
    const emptyString = typeof message.content === "string" && message.content.length === 0;
    if ((blocks.length === 0 || emptyString) && !isFinalAssistant) {
      return `messages.${index}: all messages must have non-empty content except for the optional final assistant message`;
    }
    const toolResultIds = blocks
      .filter((block) => block.type === "tool_result")
      .map((block) => String(block.tool_use_id));
    if (pendingToolUses.length > 0) {
      const missing = pendingToolUses.filter((id) => !toolResultIds.includes(id));
      if (message.role !== "user" || missing.length > 0) {
        return `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ") || pendingToolUses.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    }
    const unexpected = toolResultIds.filter((id) => !pendingToolUses.includes(id));
    if (unexpected.length > 0) {
      return `messages.${index}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected.join(", ")}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
    if (new Set(toolResultIds).size !== toolResultIds.length) {
      return `messages.${index}.content: each \`tool_use_id\` may appear in only one \`tool_result\` block`;
    }
    pendingToolUses = [];
    if (message.role !== "assistant") continue;
    const toolUseIds = blocks.filter((block) => block.type === "tool_use").map((block) => String(block.id));
    if (new Set(toolUseIds).size !== toolUseIds.length)
      return `messages.${index}.content: \`tool_use\` ids must be unique`;
    for (const block of blocks) {
      if (block.type === "tool_use" && !isRecord(block.input)) {
        return `messages.${index}.content.tool_use.input: Input should be a valid dictionary`;
      }
    }
    pendingToolUses = toolUseIds;
  }
  return undefined;
}

function countCacheControl(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + countCacheControl(item), 0);
  if (!isRecord(value)) return 0;
  let count = isRecord(value.cache_control) ? 1 : 0;
  if (Array.isArray(value.content)) count += countCacheControl(value.content);
  return count;
}

/** Tool uses kept by a `clear_tool_uses_*` edit that names no `keep` (the API's default). */
const DEFAULT_KEEP_TOOL_USES = 3;
/** The API's default trigger for both edits. */
const DEFAULT_TRIGGER_TOKENS = 100_000;
const DEFAULT_COMPACT_TRIGGER_TOKENS = 150_000;
/** The beta each edit type needs in `anthropic-beta`. */
const EDIT_BETAS: Array<[prefix: string, beta: string]> = [
  ["clear_tool_uses_", "context-management-2025-06-27"],
  ["compact_", "compact-2026-01-12"],
];

type ManagedBody = MessagesBody & { context_management?: { edits?: Array<Record<string, unknown>> } };

/** What the request's context edits did to its prompt. */
export interface ManagedPrompt {
  /** The prompt's size after the edits (JSON characters / 4). */
  tokens: number;
  cleared?: { tool_uses: number; input_tokens: number };
  compaction?: { before: number; after: number; summary: string; pause: boolean };
}

function editsOf(body: unknown): Array<Record<string, unknown>> {
  if (!isRecord(body) || !isRecord(body.context_management) || !Array.isArray(body.context_management.edits))
    return [];
  return body.context_management.edits.filter(isRecord);
}

function valueOf(field: unknown, fallback: number): number {
  return isRecord(field) && typeof field.value === "number" ? field.value : fallback;
}

/** The API's checks on context management: each edit's beta is in `anthropic-beta`; compaction blocks come back verbatim. */
function validateContextManagement(
  record: RecordedRequest,
  issued: Map<string, string | null>,
): string | undefined {
  const betas = (record.headers["anthropic-beta"] ?? "").split(",").map((beta) => beta.trim());
  for (const edit of editsOf(record.body)) {
    const needed = EDIT_BETAS.find(([prefix]) => String(edit.type).startsWith(prefix));
    if (!needed) return `context_management.edits: unknown edit type ${String(edit.type)}`;
    if (!betas.includes(needed[1]))
      return `context_management: the ${String(edit.type)} edit requires the ${needed[1]} beta`;
  }
  const messages = isRecord(record.body) && Array.isArray(record.body.messages) ? record.body.messages : [];
  for (const message of messages) {
    if (!isRecord(message)) continue;
    for (const block of blocksOf(message)) {
      if (block.type !== "compaction") continue;
      const signature = typeof block.signature === "string" ? block.signature : "";
      if (!issued.has(signature) || issued.get(signature) !== block.content) {
        return "messages: a compaction block must be sent back exactly as it was returned (signature mismatch)";
      }
    }
  }
  return undefined;
}

/**
 * The prompt as the fake counts it (JSON characters / 4) once the request's context edits are applied: from
 * the last `compaction` block on; a `compact_*` edit past its trigger leaves only the new summary; a
 * `clear_tool_uses_*` edit past its trigger clears all but the newest `keep` tool results, when that frees at
 * least `clear_at_least`.
 */
export function applyContextManagement(body: ManagedBody): ManagedPrompt {
  const count = (messages: unknown[]) =>
    Math.ceil(JSON.stringify({ system: body.system, tools: body.tools, messages }).length / 4);
  let messages: unknown[] = body.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (isRecord(message) && blocksOf(message).some((b) => b.type === "compaction")) {
      messages = messages.slice(i);
      break;
    }
  }
  const result: ManagedPrompt = { tokens: count(messages) };
  for (const edit of editsOf(body)) {
    const type = String(edit.type);
    if (type.startsWith("compact_")) {
      const before = count(messages);
      if (before <= valueOf(edit.trigger, DEFAULT_COMPACT_TRIGGER_TOKENS)) continue;
      const summary = `Summary of ${messages.length} earlier messages (${before} tokens).`;
      messages = [{ role: "assistant", content: [{ type: "compaction", content: summary }] }];
      result.compaction = {
        before,
        after: count(messages),
        summary,
        pause: edit.pause_after_compaction === true,
      };
      continue;
    }
    if (!type.startsWith("clear_tool_uses_")) continue;
    const before = count(messages);
    if (before <= valueOf(edit.trigger, DEFAULT_TRIGGER_TOKENS)) continue;
    const keep = valueOf(edit.keep, DEFAULT_KEEP_TOOL_USES);
    const results = messages.flatMap((m) =>
      isRecord(m) ? blocksOf(m).filter((b) => b.type === "tool_result" && b.content !== "") : [],
    );
    const cleared = new Set(results.slice(0, Math.max(0, results.length - keep)));
    if (cleared.size === 0) continue;
    const edited = messages.map((m) =>
      isRecord(m) && Array.isArray(m.content)
        ? {
            ...m,
            content: m.content.map((b: unknown) =>
              cleared.has(b as Record<string, unknown>) ? { ...(b as object), content: "" } : b,
            ),
          }
        : m,
    );
    const freed = before - count(edited);
    if (freed < valueOf(edit.clear_at_least, 0)) continue;
    messages = edited;
    result.cleared = { tool_uses: cleared.size, input_tokens: freed };
  }
  result.tokens = count(messages);
  return result;
}

/** The prompt's size after the request's context edits (see applyContextManagement). */
export function effectivePromptTokens(body: ManagedBody): number {
  return applyContextManagement(body).tokens;
}

/** The scripted answer as the API sends it after the edits: the applied edits reported, a compaction block first. */
function withContextManagement(
  turn: FakeMessage,
  managed: ManagedPrompt,
  issued: Map<string, string | null>,
): FakeMessage {
  // A scripted compaction block counts as issued too.
  for (const block of turn.content)
    if (block.type === "compaction" && block.signature) issued.set(block.signature, block.content);
  if (!managed.cleared && !managed.compaction) return turn;
  // The prompt billed is the edited one.
  const out: FakeMessage = { ...turn, usage: { ...turn.usage, input_tokens: managed.tokens } };
  if (managed.cleared) {
    out.contextManagement = {
      applied_edits: [
        {
          type: "clear_tool_uses_20250919",
          cleared_tool_uses: managed.cleared.tool_uses,
          cleared_input_tokens: managed.cleared.input_tokens,
        },
      ],
    };
  }
  if (managed.compaction) {
    const signature = `fake-compaction-${issued.size + 1}`;
    issued.set(signature, managed.compaction.summary);
    out.content = [{ type: "compaction", content: managed.compaction.summary, signature }, ...turn.content];
    const iteration = (type: string, input: number) => ({
      type,
      input_tokens: input,
      output_tokens: 20,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: null,
    });
    out.iterations = [
      iteration("compaction", managed.compaction.before),
      ...(managed.compaction.pause ? [] : [iteration("message", managed.compaction.after)]),
    ];
  }
  return out;
}

/** The text of a request's first user message. */
export function firstUserText(body: MessagesBody): string {
  const first = body.messages[0];
  if (!first) return "";
  if (typeof first.content === "string") return first.content;
  return first.content.map((b) => (b.type === "text" ? b.text : "")).join("\n");
}

/** The subagent conversation a request belongs to, or undefined for the parent's. */
export function conversationOf(
  body: MessagesBody,
  conversations: readonly FakeConversation[],
): FakeConversation | undefined {
  const text = firstUserText(body);
  return conversations.find((c) => text.includes(c.match));
}
