// Plain HTTP through the egress proxy: a request the policy let out is sent again, in origin form, to the
// address the policy checked (never a name resolved again), with its end-to-end headers only; the answer is
// streamed back, and an upstream failure before the answer is a 502. Both ways the message is framed by the
// proxy (http-framing.ts), as the TLS interception (intercept.ts) frames its requests.
import http from "node:http";
import type net from "node:net";
import { pipeline } from "node:stream";
import { type BodyFraming, forwardable, responseLength, withFraming } from "./http-framing.js";

/** An allowed plain request's destination. */
export interface ForwardTarget {
  /** The request's absolute URL: its path is requested, its host (and port) is the Host header. */
  url: URL;
  /** The address the policy checked: the only one connected to. */
  address: string;
  port: number;
}

/** What a forwarded request did, once it ended: its upstream connection's bytes, and the failure if any. */
export interface ForwardResult {
  bytesUp: number;
  bytesDown: number;
  error?: string;
}

/** How long the upstream connection may stay silent before the request fails (as a 502 if nothing came yet). */
const UPSTREAM_IDLE_MS = 300_000;

/**
 * Sends `req` (whose body is delimited as `framing` says, checked: http-framing.ts's requestFraming) on to
 * `target`, streams the answer to `res`, and calls `done` once, when the exchange ends.
 */
export function forwardHttp(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  target: ForwardTarget,
  framing: BodyFraming,
  done: (result: ForwardResult) => void,
): void {
  // The body goes on with the length it came with (Node counts it) or chunked by Node, whatever the method.
  const headers = withFraming({ ...forwardable(req.headers), host: target.url.host }, framing);
  const upstream = http.request({
    host: target.address,
    port: target.port,
    method: req.method,
    path: `${target.url.pathname}${target.url.search}`,
    headers,
    // A connection of its own, closed after the answer: its byte counts are this request's.
    agent: false,
  });
  let socket: net.Socket | undefined;
  let error: string | undefined;
  let ended = false;
  const fail = (e: Error) => (error ??= `upstream failed: ${e.message}`);
  if (framing.kind === "length")
    (upstream as http.ClientRequest & { strictContentLength: boolean }).strictContentLength = true;
  upstream.on("socket", (s) => (socket = s));
  upstream.setTimeout(UPSTREAM_IDLE_MS, () =>
    upstream.destroy(new Error(`no answer for ${UPSTREAM_IDLE_MS / 1000} s`)),
  );
  upstream.on("response", (response) => {
    response.on("error", fail);
    const length = responseLength(response, true);
    const headers = forwardable(response.headers);
    res.writeHead(
      response.statusCode ?? 502,
      response.statusMessage,
      length === undefined ? headers : { ...headers, "content-length": length },
    );
    if (length !== undefined) res.strictContentLength = true;
    // Either side ending early ends the other: an answer cut upstream reaches the client cut.
    pipeline(response, res, () => {});
  });
  upstream.on("error", (e) => {
    fail(e);
    // Once the answer has begun, the client sees it cut, never with this text appended to its body.
    if (res.headersSent || res.destroyed) res.destroy();
    else
      res
        .writeHead(502, { "content-type": "text/plain" })
        .end(`agent-ci's egress proxy: ${target.url.host} failed: ${e.message}\n`);
  });
  res.on("close", () => {
    if (ended) return;
    ended = true;
    done({
      bytesUp: socket?.bytesWritten ?? 0,
      bytesDown: socket?.bytesRead ?? 0,
      ...(error ? { error } : {}),
    });
    upstream.destroy();
  });
  // A body cut short (the client went away) never ends the request upstream: it is destroyed unfinished.
  req.on("close", () => {
    if (!req.complete) upstream.destroy();
  });
  req.pipe(upstream);
}
