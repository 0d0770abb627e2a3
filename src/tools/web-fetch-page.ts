// One WebFetch download, from agent-ci's own process, under the run's network policy: every hop's host is
// decided by the egress decision (allowlist, IP literals, private and metadata addresses) and the request
// connects to the address that decision checked (a fixed `lookup`), so a DNS answer cannot change between
// the check and the connection. Same-host redirects are followed (counted), a redirect to another host is
// returned, not followed. Bounded: bytes on the wire and after decompression (a gzip bomb stops at the cap),
// the whole download's time (a server that trickles stops at the deadline).
import { STATUS_CODES, type IncomingMessage } from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import net from "node:net";
import type { Readable } from "node:stream";
import zlib from "node:zlib";
import type { ReachVerdict } from "../policy/network.js";

export interface FetchLimits {
  /** Body bytes kept after decompression; the rest is not read. */
  maxBytes: number;
  /** The whole download, redirects included. */
  timeoutMs: number;
  maxRedirects: number;
}

export const FETCH_LIMITS: FetchLimits = { maxBytes: 10 * 1024 * 1024, timeoutMs: 60_000, maxRedirects: 10 };

/** One request of a fetch, for the egress ledger. */
export interface FetchHop {
  url: URL;
  port: number;
  decision: "allowed" | "denied";
  reason?: string;
  address?: string;
  status?: number;
  bytesUp: number;
  bytesDown: number;
  startedAt: string;
  durationMs: number;
}

export type FetchOutcome =
  | {
      kind: "page";
      url: URL;
      status: number;
      statusText: string;
      contentType: string;
      body: Buffer;
      /** The body was longer than `maxBytes` and was cut there. */
      cut: boolean;
    }
  | {
      kind: "http_error";
      url: URL;
      status: number;
      statusText: string;
      /** The server's Retry-After header (a 429's or a 503's), as sent. */
      retryAfter?: string;
    }
  | { kind: "redirect"; url: URL; location: string; status: number; statusText: string }
  | { kind: "refused"; url: URL; port: number; reason: string }
  | { kind: "failed"; url: URL; message: string };

export interface FetchOptions {
  decide(host: string, port: number): Promise<ReachVerdict>;
  /** Trusted CAs (the system's plus --ca-cert); undefined: Node's defaults. */
  ca?: string[];
  userAgent: string;
  signal: AbortSignal;
  limits?: FetchLimits;
  onHop(hop: FetchHop): void;
}

/** A redirect WebFetch follows by itself: the same host (give or take `www.`), port and scheme. */
export function sameSite(from: URL, to: URL): boolean {
  const bare = (h: string) => h.replace(/^www\./, "");
  return to.protocol === from.protocol && to.port === from.port && bare(to.hostname) === bare(from.hostname);
}

const fixedLookup =
  (address: string): LookupFunction =>
  (_host, options, callback) => {
    const family = net.isIPv6(address) ? 6 : 4;
    if ((options as { all?: boolean }).all)
      (callback as (e: null, list: Array<{ address: string; family: number }>) => void)(null, [
        { address, family },
      ]);
    else callback(null, address, family);
  };

function decoder(response: IncomingMessage): Readable {
  const encoding = String(response.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  if (encoding === "gzip" || encoding === "x-gzip") return response.pipe(zlib.createGunzip());
  if (encoding === "deflate") return response.pipe(zlib.createInflate());
  if (encoding === "br") return response.pipe(zlib.createBrotliDecompress());
  return response;
}

export async function fetchPage(start: URL, options: FetchOptions): Promise<FetchOutcome> {
  const limits = options.limits ?? FETCH_LIMITS;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`no complete answer within ${limits.timeoutMs / 1000} s`)),
    limits.timeoutMs,
  );
  const abortWith = () => controller.abort(options.signal.reason);
  options.signal.addEventListener("abort", abortWith, { once: true });
  try {
    let url = start;
    for (let hops = 0; ; hops++) {
      const outcome = await oneHop(url, options, limits, controller.signal);
      if (outcome.kind !== "follow") return outcome;
      if (hops >= limits.maxRedirects)
        return { kind: "failed", url, message: `more than ${limits.maxRedirects} redirects` };
      url = outcome.to;
    }
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", abortWith);
  }
}

/** What one hop ends in: an outcome of the fetch, or a same-site redirect to follow. */
type HopOutcome = FetchOutcome | { kind: "follow"; to: URL };
/** Settles a hop once: records it (with its status or error, and the bytes moved) and resolves it. */
type FinishHop = (outcome: HopOutcome, status?: number, error?: string) => void;

/** One request: the policy asked, then a connection to the address it resolved; the hop recorded once. */
async function oneHop(
  url: URL,
  options: FetchOptions,
  limits: FetchLimits,
  signal: AbortSignal,
): Promise<HopOutcome> {
  const port = Number(url.port || 443);
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const hop = (rest: Partial<FetchHop> & Pick<FetchHop, "decision">) =>
    options.onHop({
      url,
      port,
      bytesUp: 0,
      bytesDown: 0,
      startedAt,
      durationMs: Math.round(performance.now() - t0),
      ...rest,
    });
  const verdict = await options.decide(url.hostname, port);
  if (!verdict.ok) {
    hop({ decision: "denied", reason: verdict.reason });
    return { kind: "refused", url, port, reason: verdict.reason };
  }
  const address = verdict.address;
  return new Promise((resolve) => {
    let settled = false;
    let socketBytes = () => ({ bytesUp: 0, bytesDown: 0 });
    const finish: FinishHop = (outcome, status, error) => {
      if (settled) return;
      settled = true;
      hop({
        decision: "allowed",
        address,
        ...(status === undefined ? {} : { status }),
        ...(error ? { reason: error } : {}),
        ...socketBytes(),
      });
      resolve(outcome);
    };
    const request = https.get(url, {
      lookup: fixedLookup(address),
      agent: false,
      ca: options.ca,
      signal,
      headers: {
        accept: "text/markdown, text/html, */*",
        "user-agent": options.userAgent,
        "accept-encoding": "gzip, deflate, br",
      },
    });
    request.on("socket", (socket) => {
      socketBytes = () => ({ bytesUp: socket.bytesWritten, bytesDown: socket.bytesRead });
    });
    request.on("error", (e) => {
      const reason = signal.aborted ? String((signal.reason as Error)?.message ?? e.message) : e.message;
      finish({ kind: "failed", url, message: reason }, undefined, reason);
    });
    request.on("response", (response) => answer(response, url, limits, signal, finish));
  });
}

/**
 * What one response says: a redirect (followed on the same site, handed back otherwise), an HTTP error, or a
 * page whose body is read.
 */
function answer(
  response: IncomingMessage,
  url: URL,
  limits: FetchLimits,
  signal: AbortSignal,
  finish: FinishHop,
): void {
  const status = response.statusCode ?? 0;
  const statusText = response.statusMessage || STATUS_CODES[status] || "";
  const location = response.headers.location;
  if (status >= 300 && status < 400 && location) {
    response.destroy();
    let to: URL;
    try {
      to = new URL(location, url);
    } catch {
      return finish({ kind: "failed", url, message: "a redirect to an unusable URL" }, status);
    }
    if (to.protocol === "http:" && to.hostname === url.hostname) to.protocol = "https:";
    if (sameSite(url, to)) return finish({ kind: "follow", to }, status);
    return finish({ kind: "redirect", url, location: to.href, status, statusText }, status);
  }
  if (status >= 400 || status < 200) {
    response.destroy();
    const retryAfter = response.headers["retry-after"];
    return finish(
      { kind: "http_error", url, status, statusText, ...(retryAfter ? { retryAfter } : {}) },
      status,
    );
  }
  readBody(response, url, status, statusText, limits, signal, finish);
}

/**
 * Reads a page's body, decoded, up to `limits.maxBytes` (cut there), and settles the hop when it ends, is cut,
 * or fails.
 */
function readBody(
  response: IncomingMessage,
  url: URL,
  status: number,
  statusText: string,
  limits: FetchLimits,
  signal: AbortSignal,
  finish: FinishHop,
): void {
  const chunks: Buffer[] = [];
  let kept = 0;
  let cut = false;
  const body = decoder(response);
  const done = () =>
    finish(
      {
        kind: "page",
        url,
        status,
        statusText,
        contentType: String(response.headers["content-type"] ?? ""),
        body: Buffer.concat(chunks),
        cut,
      },
      status,
    );
  body.on("data", (chunk: Buffer) => {
    const room = limits.maxBytes - kept;
    if (chunk.length >= room) {
      chunks.push(chunk.subarray(0, room));
      kept += room;
      cut = true;
      // Settled first: destroying the streams makes them report an early close.
      done();
      response.destroy();
      body.destroy();
      return;
    }
    chunks.push(chunk);
    kept += chunk.length;
  });
  body.on("end", done);
  body.on("error", (e) =>
    finish({ kind: "failed", url, message: `the body could not be read: ${e.message}` }, status, e.message),
  );
  response.on("error", (e) => {
    const reason = signal.aborted ? String((signal.reason as Error)?.message ?? e.message) : e.message;
    finish({ kind: "failed", url, message: reason }, status, reason);
  });
  response.on("aborted", () => {
    const reason = signal.aborted ? String((signal.reason as Error)?.message) : "the connection closed early";
    finish({ kind: "failed", url, message: reason }, status, reason);
  });
}
