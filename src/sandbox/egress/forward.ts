// Plain HTTP through the egress proxy: a request the policy let out is sent again, in origin form, to the
// address the policy checked (never a name resolved again), with its end-to-end headers only; the answer is
// streamed back, and an upstream failure before the answer is a 502. The TLS interception (intercept.ts)
// forwards its requests the same way, over https, with the same headers left out.
import http from "node:http";
import type net from "node:net";
import { pipeline } from "node:stream";

/** Headers of one hop, never forwarded (RFC 9110 §7.6.1), and the proxy's own. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** A message's headers without the hop-by-hop ones. */
export function forwardable(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

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

/** Sends `req` on to `target`, streams the answer to `res`, and calls `done` once, when the exchange ends. */
export function forwardHttp(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  target: ForwardTarget,
  done: (result: ForwardResult) => void,
): void {
  const headers: http.OutgoingHttpHeaders = { ...forwardable(req.headers), host: target.url.host };
  // The body is read de-chunked; it goes on chunked again (Node frames it), as a length goes on as is.
  if (req.headers["transfer-encoding"] !== undefined) headers["transfer-encoding"] = "chunked";
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
  upstream.on("socket", (s) => (socket = s));
  upstream.setTimeout(UPSTREAM_IDLE_MS, () =>
    upstream.destroy(new Error(`no answer for ${UPSTREAM_IDLE_MS / 1000} s`)),
  );
  upstream.on("response", (response) => {
    response.on("error", fail);
    res.writeHead(response.statusCode ?? 502, response.statusMessage, forwardable(response.headers));
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
  req.pipe(upstream);
}
