/**
 * Amazon Bedrock's and Google Vertex AI's model endpoints as fakes on 127.0.0.1, each a front for the fake
 * Messages API (fake-anthropic.ts): a request in the cloud's wire format is checked as the cloud would check
 * it, turned into a `POST /v1/messages` to the fake API (whose scripted turns, checks and faults answer it: one
 * source of scripted behaviour), and the answer is turned back into the cloud's format.
 *
 * - Bedrock (`startFakeBedrock`): `POST /model/{id}/invoke-with-response-stream` and `/model/{id}/invoke`, the
 *   version and betas in the body (`anthropic_version`, `anthropic_beta`), no `model` or `stream` there; a SigV4
 *   `Authorization` whose credential is the expected access key id (and the session token in
 *   `x-amz-security-token` when one is expected); the stream as AWS event-stream frames encoded with
 *   `@smithy/eventstream-codec` (`:message-type` event, `:event-type` chunk, payload `{"bytes": base64(event)}`),
 *   a mid-stream API error as an exception frame, errors as `{"message"}` with `x-amzn-errortype`.
 * - Vertex (`startFakeVertex`): `POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/{m}:streamRawPredict`
 *   (or `:rawPredict`), the version in the body, the model in the path, a `Bearer` token that must be the
 *   expected one; the answer as the API's own SSE or JSON, passed through.
 */
import { listenOnLoopback } from "./loopback.js";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import type { FakeAnthropic } from "./fake-anthropic.js";

export interface CloudRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | undefined;
}

export interface FakeCloudEndpoint {
  url: string;
  /** Every request received, in order, as it arrived. */
  requests: CloudRequest[];
  close(): Promise<void>;
}

/** What the fake API is called with: a key of its own, never a cloud's credential. */
const UPSTREAM_KEY = "fake-upstream-key";

const utf8 = {
  toUtf8: (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8"),
  fromUtf8: (text: string) => new Uint8Array(Buffer.from(text, "utf8")),
};
const codec = new EventStreamCodec(utf8.toUtf8, utf8.fromUtf8);

export interface FakeBedrockOptions {
  /** The access key id the SigV4 credential must name. */
  accessKeyId: string;
  /** When set, `x-amz-security-token` must carry it. */
  sessionToken?: string;
  region: string;
}

export async function startFakeBedrock(
  upstream: FakeAnthropic,
  options: FakeBedrockOptions,
): Promise<FakeCloudEndpoint> {
  return serve(async (request, res) => {
    const route = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/.exec(request.path);
    if (request.method !== "POST" || !route)
      return bedrockError(
        res,
        404,
        "UnknownOperationException",
        `no route ${request.method} ${request.path}`,
      );
    const authProblem = sigV4Problem(request.headers, options);
    if (authProblem) return bedrockError(res, 403, "UnrecognizedClientException", authProblem);
    const modelId = decodeURIComponent(route[1]!);
    if (!/^(?:(?:us|eu|jp|apac|global|us-gov)\.)?anthropic\.claude-[a-z0-9.:-]+$|^arn:aws/.test(modelId))
      return bedrockError(
        res,
        400,
        "ValidationException",
        `The provided model identifier is invalid: ${modelId}`,
      );
    const body = request.body;
    if (!body || typeof body.anthropic_version !== "string" || "model" in body || "stream" in body)
      return bedrockError(
        res,
        400,
        "ValidationException",
        "malformed input request: anthropic_version is required",
      );
    const { anthropic_version: version, anthropic_beta: betas, ...rest } = body;
    const streaming = route[2] === "invoke-with-response-stream";
    const answer = await callUpstream(
      upstream,
      { ...rest, model: modelId, stream: streaming },
      version,
      betas,
    );
    if (!answer.ok) {
      const error = await upstreamError(answer);
      return bedrockError(
        res,
        answer.status,
        BEDROCK_ERRORS[answer.status] ?? "InternalServerException",
        error,
      );
    }
    if (!streaming) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(await answer.text());
      return;
    }
    res.writeHead(200, {
      "content-type": "application/vnd.amazon.eventstream",
      "x-amzn-bedrock-content-type": "application/json",
    });
    try {
      for await (const event of sseEvents(answer)) {
        if (event.name === "error") {
          res.write(exceptionFrame(event.data));
          break;
        }
        res.write(chunkFrame(event.data));
      }
      res.end();
    } catch {
      // The fake API cut the stream: cut this one too.
      res.destroy();
    }
  });
}

export interface FakeVertexOptions {
  /** The Bearer token requests must carry. */
  accessToken: string;
  projectId: string;
  region: string;
}

export async function startFakeVertex(
  upstream: FakeAnthropic,
  options: FakeVertexOptions,
): Promise<FakeCloudEndpoint> {
  return serve(async (request, res) => {
    const route =
      /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(streamRawPredict|rawPredict)$/.exec(
        request.path,
      );
    if (request.method !== "POST" || !route)
      return vertexError(res, 404, "NOT_FOUND", `no route ${request.method} ${request.path}`);
    if (request.headers.authorization !== `Bearer ${options.accessToken}`)
      return vertexError(res, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials.");
    const [, project, region, model] = route.map((part) => decodeURIComponent(part));
    if (project !== options.projectId || region !== options.region)
      return vertexError(res, 403, "PERMISSION_DENIED", `no access to ${project} in ${region}`);
    const body = request.body;
    if (!body || typeof body.anthropic_version !== "string" || "model" in body)
      return vertexError(
        res,
        400,
        "INVALID_ARGUMENT",
        "anthropic_version is required and model is in the path",
      );
    const { anthropic_version: version, ...rest } = body;
    const betas = request.headers["anthropic-beta"];
    const answer = await callUpstream(upstream, { ...rest, model }, version, betas?.split(","));
    res.writeHead(answer.status, {
      "content-type": answer.headers.get("content-type") ?? "application/json",
    });
    if (!answer.body) return void res.end();
    const relay = Readable.fromWeb(answer.body as import("node:stream/web").ReadableStream);
    relay.on("error", () => res.destroy());
    relay.pipe(res);
  });
}

/** The ASIA…/AKIA… key id a SigV4 `Authorization` names, and what is wrong with the request's signature. */
function sigV4Problem(headers: Record<string, string>, options: FakeBedrockOptions): string | undefined {
  const auth =
    /^AWS4-HMAC-SHA256 Credential=([A-Z0-9]+)\/(\d{8})\/([a-z0-9-]+)\/bedrock\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/.exec(
      headers.authorization ?? "",
    );
  if (!auth) return "The request signature is missing or is not SigV4 for bedrock.";
  if (auth[1] !== options.accessKeyId) return "The security token included in the request is invalid.";
  if (auth[3] !== options.region) return `Credential should be scoped to a valid region, not ${auth[3]}.`;
  if (!/^\d{8}T\d{6}Z$/.test(headers["x-amz-date"] ?? "")) return "x-amz-date is missing.";
  if (options.sessionToken !== undefined && headers["x-amz-security-token"] !== options.sessionToken)
    return "The security token included in the request is invalid.";
  if (!auth[4]!.split(";").includes("host")) return "host is not signed.";
  return undefined;
}

/** How Bedrock names the error of each status. */
const BEDROCK_ERRORS: Record<number, string> = {
  400: "ValidationException",
  401: "AccessDeniedException",
  403: "AccessDeniedException",
  404: "ResourceNotFoundException",
  408: "ModelTimeoutException",
  429: "ThrottlingException",
  500: "InternalServerException",
  503: "ServiceUnavailableException",
  529: "ServiceUnavailableException",
};

function bedrockError(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
  });
  res.end(JSON.stringify({ message }));
}

function vertexError(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { code: status, message, status: code } }));
}

function frame(headers: Record<string, string>, payload: unknown): Uint8Array {
  return codec.encode({
    headers: Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name, { type: "string" as const, value }]),
    ),
    body: utf8.fromUtf8(JSON.stringify(payload)),
  });
}

/** One stream event as Bedrock sends it: the event's JSON, base64, in a chunk frame. */
function chunkFrame(data: string): Uint8Array {
  return frame(
    { ":event-type": "chunk", ":content-type": "application/json", ":message-type": "event" },
    { bytes: Buffer.from(data, "utf8").toString("base64") },
  );
}

/** An API error in the middle of a stream, as Bedrock sends one: an exception frame. */
function exceptionFrame(data: string): Uint8Array {
  let message = data;
  let type = "internalServerException";
  try {
    const parsed = JSON.parse(data) as { error?: { type?: string; message?: string } };
    message = parsed.error?.message ?? data;
    if (parsed.error?.type === "overloaded_error") type = "serviceUnavailableException";
    if (parsed.error?.type === "rate_limit_error") type = "throttlingException";
  } catch {
    // Not JSON: sent as it came.
  }
  return frame(
    { ":exception-type": type, ":content-type": "application/json", ":message-type": "exception" },
    { message },
  );
}

async function callUpstream(
  upstream: FakeAnthropic,
  body: Record<string, unknown>,
  version: unknown,
  betas: unknown,
): Promise<Response> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-api-key": UPSTREAM_KEY,
    "anthropic-version": String(version),
  };
  if (Array.isArray(betas) && betas.length) headers["anthropic-beta"] = betas.join(",");
  return fetch(`${upstream.url}/v1/messages`, { method: "POST", headers, body: JSON.stringify(body) });
}

async function upstreamError(answer: Response): Promise<string> {
  const text = await answer.text();
  try {
    return (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
  } catch {
    return text;
  }
}

/** The SSE events of a response, as `{name, data}`; throws when the connection breaks. */
async function* sseEvents(answer: Response): AsyncGenerator<{ name: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length) yield { name, data: data.join("\n") };
    }
  }
}

async function serve(
  handle: (request: CloudRequest, res: ServerResponse) => Promise<void>,
): Promise<FakeCloudEndpoint> {
  const requests: CloudRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const request = await readRequest(req);
      requests.push(request);
      await handle(request, res);
    })().catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ message: `fake crashed: ${String(error)}` }));
      }
    });
  });
  const { url, close } = await listenOnLoopback(server);
  return { url, requests, close };
}

async function readRequest(req: IncomingMessage): Promise<CloudRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    body = undefined;
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers))
    headers[name] = Array.isArray(value) ? value.join(", ") : (value ?? "");
  return { method: req.method ?? "GET", path: (req.url ?? "/").split("?")[0]!, headers, body };
}
