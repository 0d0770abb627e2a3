// How the egress proxy reads and writes HTTP/1.1 messages, for the plain requests it forwards (forward.ts)
// and the requests of a tunnel it terminates to inject a secret (intercept.ts). Requests are parsed by
// Node's own parser (llhttp, strict: no insecureHTTPParser), which refuses most bad framing; what it lets
// through and RFC 9112 forbids (§6.1, §6.3, §3.2: a coding other than chunked, Transfer-Encoding in
// HTTP/1.0, several Host fields) is refused here before anything goes upstream. Every message the proxy
// sends is framed by the proxy: a length it checked and Node counts (strictContentLength), or chunks Node
// writes, never the body as it came (a GET's de-chunked body sent raw would be read upstream as the next
// request: request smuggling). A refusal closes the connection, and later requests read from it are dropped:
// where one message ends is in doubt. What the parser refuses gets Node's own answer (400, or 431 for headers
// too large) and the connection closed: the servers leave `clientError` to Node.
import type http from "node:http";
import type { Duplex } from "node:stream";

/** Headers of one hop, never forwarded (RFC 9110 §7.6.1), the proxy's own, and the framing the proxy sets. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "content-length",
  "upgrade",
]);

/**
 * A message's end-to-end headers: without the hop-by-hop ones, those its Connection header names, and its
 * framing (the proxy frames what it sends itself: `withFraming`, `responseLength`).
 */
export function forwardable(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const named = new Set(
    (headers.connection ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name) && !named.has(name)),
  );
}

/** How a request's body is delimited, as its headers say (RFC 9112 §6.3). */
export type BodyFraming = { kind: "none" } | { kind: "length"; length: number } | { kind: "chunked" };

/** Why a request is not forwarded: the status it is answered with, and the reason (for it and the ledger). */
export interface Refusal {
  status: number;
  reason: string;
}

export const isRefusal = (value: object): value is Refusal => "status" in value;

/** The values of every field named `name` in a message's raw headers, as received. */
export function fieldValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2)
    if (rawHeaders[i]?.toLowerCase() === name) values.push(rawHeaders[i + 1] ?? "");
  return values;
}

/** A Content-Length the proxy accepts: digits only (no sign, list or spaces), within a safe integer. */
const LENGTH = /^[0-9]{1,15}$/;

/**
 * The framing of a request as parsed, or why it is refused (400): a request with both Content-Length and
 * Transfer-Encoding, a Transfer-Encoding other than one `chunked` or in HTTP/1.0, more than one or a malformed
 * Content-Length, more than one Host, an HTTP version other than 1.0 and 1.1. (The parser itself refuses
 * obsolete line folding, whitespace before a colon, bare CR or LF, and bad chunk sizes.)
 */
export function requestFraming(
  req: Pick<http.IncomingMessage, "httpVersion" | "rawHeaders">,
): BodyFraming | Refusal {
  const bad = (reason: string): Refusal => ({ status: 400, reason });
  if (req.httpVersion !== "1.1" && req.httpVersion !== "1.0")
    return bad(`HTTP/${req.httpVersion} is not forwarded (HTTP/1.0 and 1.1 only)`);
  if (fieldValues(req.rawHeaders, "host").length > 1) return bad("more than one Host header");
  for (let i = 1; i < req.rawHeaders.length; i += 2)
    if (/[\0\r\n]/.test(req.rawHeaders[i] ?? "")) return bad("a header value with a line break or NUL");
  const lengths = fieldValues(req.rawHeaders, "content-length");
  const codings = fieldValues(req.rawHeaders, "transfer-encoding");
  if (codings.length && lengths.length) return bad("both Content-Length and Transfer-Encoding");
  if (codings.length) {
    if (req.httpVersion === "1.0") return bad("Transfer-Encoding in an HTTP/1.0 request");
    if (codings.length > 1 || codings[0]?.trim().toLowerCase() !== "chunked")
      return bad("a Transfer-Encoding other than chunked");
    return { kind: "chunked" };
  }
  if (lengths.length > 1) return bad("more than one Content-Length");
  const [length] = lengths;
  if (length === undefined) return { kind: "none" };
  if (!LENGTH.test(length.trim())) return bad("a malformed Content-Length");
  return { kind: "length", length: Number(length.trim()) };
}

/**
 * `headers` (forwardable: no framing of their own) with the framing the proxy sends the body with: the length
 * it read (the request is then written with strictContentLength, so Node counts it), or chunks Node writes.
 * No body: no framing header (Node adds `Content-Length: 0` where a method defines a body).
 */
export function withFraming(
  headers: http.OutgoingHttpHeaders,
  framing: BodyFraming,
): http.OutgoingHttpHeaders {
  if (framing.kind === "length") return { ...headers, "content-length": String(framing.length) };
  if (framing.kind === "chunked") return { ...headers, "transfer-encoding": "chunked" };
  return headers;
}

/**
 * The Content-Length a response to the sandbox may keep from the host's: the host's own when it sent exactly
 * one well-formed length and no Transfer-Encoding, and the body goes on with that length (not decoded);
 * undefined otherwise (Node then chunks the body, or closes after it for an HTTP/1.0 client).
 */
export function responseLength(response: http.IncomingMessage, sameLength: boolean): string | undefined {
  if (!sameLength || response.headers["transfer-encoding"] !== undefined) return undefined;
  const lengths = fieldValues(response.rawHeaders, "content-length");
  const [length] = lengths;
  return lengths.length === 1 && length !== undefined && LENGTH.test(length.trim())
    ? length.trim()
    : undefined;
}

/**
 * The connections of one proxy server whose framing is in doubt: after a refusal, requests already parsed from
 * the same connection are dropped, never forwarded.
 */
export class Connections {
  private readonly refused = new WeakSet<Duplex>();

  /** Marks `req`'s connection refused: requests read from it after `req` are dropped. */
  hold(req: http.IncomingMessage): void {
    this.refused.add(req.socket);
  }

  /** Answers `res` with `refusal` and closes its connection once the answer is written. */
  refuse(res: http.ServerResponse, refusal: Refusal, message: string): void {
    this.hold(res.req);
    if (res.headersSent) return void res.destroy();
    const body = `${message}\n`;
    res
      .writeHead(refusal.status, {
        "content-type": "text/plain",
        "content-length": Buffer.byteLength(body),
        connection: "close",
      })
      .end(body);
  }

  /** Whether `req` came on a connection a refusal closed (drop it: the connection is ending). */
  isRefused(req: http.IncomingMessage): boolean {
    return this.refused.has(req.socket);
  }
}
