// The egress proxy's one exception to passing tunnels through untouched: a CONNECT to a host that a secret
// is injected for (`--inject-secret`, inject.ts). The proxy answers the sandbox's TLS itself, with a
// certificate for that host from the run's own CA (which the sandbox trusts, and whose key never left
// agent-ci's process), reads each request, puts the secret in place of its placeholder in the named header,
// and sends the request on over its own TLS connection to the address the policy checked, verifying the
// host's certificate as any client would (Node's CAs and --ca-cert's).
// The proxy frames what it sends (http-framing.ts): a request with bad framing, for another host (Host or an
// absolute target), a TRACE, a CONNECT or an upgrade is refused before anything goes upstream. What comes
// back has the value masked out, headers and body (scrub.ts), and the ledger says when that happened.
import http from "node:http";
import https from "node:https";
import type net from "node:net";
import { Duplex, pipeline } from "node:stream";
import { normalizeHost } from "../../policy/network.js";
import {
  type BodyFraming,
  Connections,
  fieldValues,
  forwardable,
  isRefusal,
  type Refusal,
  requestFraming,
  responseLength,
  withFraming,
} from "./http-framing.js";
import { type Injection, substituteSecret } from "./inject.js";
import { acceptEncoding, decodersFor, MaskStream } from "./scrub.js";

/** An injection as the proxy holds it: the rule, the value, and the certificate it answers the host with. */
export interface ProxyInjection extends Injection {
  value: string;
  /** The host's certificate (PEM) from the run's CA, and its private key. */
  cert: string;
  key: string;
}

export interface Interception {
  host: string;
  port: number;
  /** The address the policy checked: the only one connected to. */
  address: string;
  /** The injections for this host and port (at least one; all share one certificate). */
  injections: readonly ProxyInjection[];
  /** The CAs the host's certificate is verified against; undefined: Node's own. */
  ca?: readonly string[];
}

/** What an intercepted tunnel did, once the sandbox closed it. */
export interface InterceptionResult {
  bytesUp: number;
  bytesDown: number;
  requests: number;
  /** The names of the secrets put in at least once. */
  injected: string[];
  /** The names of the secrets found in a response (a header or the body) and kept from the sandbox. */
  scrubbed: string[];
  /** The first upstream failure or refused request, if any. */
  error?: string;
}

/**
 * The text each injection's value has gone out as, besides the value itself: the Basic credentials the proxy
 * wrote with it (base64 of user:value). A host may echo either; both are masked in what comes back.
 */
const sentForms = new WeakMap<ProxyInjection, Set<string>>();
function formsOf(injection: ProxyInjection): Set<string> {
  let forms = sentForms.get(injection);
  if (!forms) sentForms.set(injection, (forms = new Set(injection.value ? [injection.value] : [])));
  return forms;
}

const masked = (form: string) => "*".repeat(form.length);

/**
 * Response headers with any injected value put back to its placeholder, as written or inside Basic
 * credentials (a host that echoes the request's header in its own), and any other form it went out as masked.
 */
function scrubbedHeaders(
  headers: http.OutgoingHttpHeaders,
  injections: readonly ProxyInjection[],
  found: (name: string) => void,
): http.OutgoingHttpHeaders {
  const scrub = (value: string) =>
    injections.reduce((text, i) => {
      let out = substituteSecret(text, i.value, i.placeholder) ?? text;
      for (const form of formsOf(i)) out = out.split(form).join(masked(form));
      if (out !== text) found(i.name);
      return out;
    }, value);
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      typeof value === "string" ? scrub(value) : Array.isArray(value) ? value.map(scrub) : value,
    ]),
  );
}

/**
 * `client` as a plain stream that first gives `first` (the bytes already read off it) and then the rest.
 * TLS is layered on this one, not on the socket itself: a TLS socket made over a net.Socket reads its handle
 * directly and would miss what was already read.
 */
function replaying(client: Duplex, first: Buffer): Duplex {
  const stream = new Duplex({
    read: () => void client.resume(),
    write: (chunk: Buffer, _encoding, callback) => void client.write(chunk, callback),
    final: (callback) => void client.end(callback),
    destroy: (error, callback) => {
      client.destroy(error ?? undefined);
      callback(error);
    },
  });
  stream.push(first);
  client.on("data", (chunk: Buffer) => {
    if (!stream.push(chunk)) client.pause();
  });
  client.on("end", () => stream.push(null));
  client.on("close", () => stream.destroy());
  return stream;
}

/**
 * The tunnel's connections to the host, shared by its requests as the sandbox's client shares the tunnel.
 * Node's client frees a connection only when an exchange ended at its framing (the request written whole,
 * the response read to the end of its length or chunks, neither side asking to close); it is kept only if
 * nothing more was read from it, and closed if anything arrives while it waits (an answer no request asked
 * for). No cap on connections: a request queued for one would be handed a freed connection without this
 * check.
 */
class FramedAgent extends https.Agent {
  private readonly guards = new WeakMap<Duplex, () => void>();

  override keepSocketAlive(socket: Duplex): boolean {
    if (socket.readableLength > 0) return false;
    if ((super.keepSocketAlive(socket) as unknown) === false) return false;
    const guard = () => socket.destroy();
    this.guards.set(socket, guard);
    socket.once("data", guard);
    return true;
  }

  override reuseSocket(socket: Duplex, request: http.ClientRequest): void {
    const guard = this.guards.get(socket);
    if (guard) socket.off("data", guard);
    super.reuseSocket(socket, request);
  }
}

/** Has Node refuse to write a body other than the Content-Length the message was sent with (Node 18.10+). */
const counted = (message: http.OutgoingMessage) =>
  void ((message as http.OutgoingMessage & { strictContentLength: boolean }).strictContentLength = true);

/** One intercepted tunnel: where it goes, what it did so far, its connections to the host. */
interface Tunnel {
  target: Interception;
  result: InterceptionResult;
  agent: https.Agent;
  connections: Connections;
  upstreamSockets: Set<net.Socket>;
}

/** `host[:port]`, the host a name or a bracketed address, the port digits (possibly none). */
const AUTHORITY = /^([^\s:@/?#[\]]+|\[[0-9A-Fa-f:.]+\])(?::([0-9]{0,5}))?$/;

/** Does `authority` name the tunnel's host and port (no port: 443)? "malformed" when it is no authority. */
function namesTarget(authority: string, target: Interception): boolean | "malformed" {
  const match = AUTHORITY.exec(authority.trim());
  if (!match?.[1]) return "malformed";
  const port = match[2] ? Number(match[2]) : 443;
  return normalizeHost(match[1]) === target.host && port === target.port;
}

/**
 * What the proxy sends on for `req`: its framing and the path in origin form; or why it is refused. The Host
 * header and an absolute-form target must name the tunnel's host (421 otherwise, RFC 9110 §15.5.20).
 */
function checkRequest(
  req: http.IncomingMessage,
  target: Interception,
): { framing: BodyFraming; path: string } | Refusal {
  const framing = requestFraming(req);
  if (isRefusal(framing)) return framing;
  const method = req.method ?? "";
  if (method === "TRACE" || method === "CONNECT")
    return { status: 501, reason: `${method} is not forwarded to a host a secret is injected for` };
  if (req.headers.upgrade !== undefined)
    return { status: 501, reason: "a protocol upgrade is not forwarded to a host a secret is injected for" };
  const misdirected = (what: string): Refusal => ({
    status: 421,
    reason: `${what} names another host than the tunnel's ${target.host}:${target.port}`,
  });
  const [host] = fieldValues(req.rawHeaders, "host");
  const hostNamed = host === undefined ? true : namesTarget(host, target);
  if (hostNamed === "malformed") return { status: 400, reason: "a malformed Host header" };
  if (!hostNamed) return misdirected("the Host header");
  const url = req.url ?? "";
  if (url.startsWith("/")) return { framing, path: url };
  if (url === "*" && method === "OPTIONS") return { framing, path: url };
  const absolute = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)(.*)$/is.exec(url);
  if (!absolute) return { status: 400, reason: "a request target in no form the proxy forwards" };
  const [, scheme = "", authority = "", rest = ""] = absolute;
  const named = namesTarget(authority, target);
  if (named === "malformed") return { status: 400, reason: "a malformed authority in the request target" };
  if (!named || scheme.toLowerCase() !== "https") return misdirected("the request target");
  if (rest.startsWith("#")) return { status: 400, reason: "a fragment in the request target" };
  return { framing, path: rest.startsWith("/") ? rest : `/${rest}` };
}

/** Puts each injection's value in place of its placeholder in its header, and notes the forms it went as. */
function inject(headers: http.OutgoingHttpHeaders, tunnel: Tunnel): void {
  for (const injection of tunnel.target.injections) {
    const value = headers[injection.header];
    if (typeof value !== "string") continue;
    const replaced = substituteSecret(value, injection.placeholder, injection.value);
    if (replaced === undefined) continue;
    headers[injection.header] = replaced;
    // Inside Basic credentials: the base64 the proxy wrote holds the value too.
    if (!value.includes(injection.placeholder)) {
      const token = /^Basic[ \t]+(\S+)/i.exec(replaced)?.[1];
      if (token) formsOf(injection).add(token);
    }
    const { injected } = tunnel.result;
    if (!injected.includes(injection.name)) injected.push(injection.name);
  }
}

/** Sends one of the tunnel's requests on to the host, and its answer back with the value masked out. */
function serveRequest(tunnel: Tunnel, req: http.IncomingMessage, res: http.ServerResponse): void {
  const { target, result, connections } = tunnel;
  // A request read after a refusal on the same connection: where it begins is in doubt.
  if (connections.isRefused(req)) return;
  result.requests += 1;
  const checked = checkRequest(req, target);
  if (isRefusal(checked)) {
    result.error ??= `refused a request: ${checked.reason}`;
    connections.refuse(res, checked, `agent-ci's egress proxy: ${checked.reason}`);
    return;
  }
  const headers = withFraming(forwardable(req.headers), checked.framing);
  // The name the tunnel was opened for, as the proxy writes it: no other spelling reaches the host.
  headers.host = target.port === 443 ? target.host : `${target.host}:${target.port}`;
  headers["accept-encoding"] = acceptEncoding(req.headers["accept-encoding"]);
  inject(headers, tunnel);
  const upstream = https.request({
    host: target.host,
    servername: target.host,
    port: target.port,
    method: req.method,
    path: checked.path,
    headers,
    agent: tunnel.agent,
    ...(target.ca ? { ca: [...target.ca] } : {}),
    // The name is verified against the certificate; the connection goes to the checked address only.
    lookup: (_name, lookupOptions, callback) => {
      const family = target.address.includes(":") ? 6 : 4;
      const answer = callback as (e: null, address: unknown, family?: number) => void;
      if (lookupOptions.all) answer(null, [{ address: target.address, family }]);
      else answer(null, target.address, family);
    },
  });
  // Node counts the body against the length it was sent with.
  if (checked.framing.kind === "length") counted(upstream);
  upstream.on("socket", (socket) => tunnel.upstreamSockets.add(socket));
  upstream.on("response", (response) => answer(tunnel, req, res, response));
  upstream.on("error", (e) => {
    result.error ??= `upstream failed: ${e.message}`;
    // Once the answer has begun, the client sees it cut, never with this text appended to its body.
    if (res.headersSent || res.destroyed) res.destroy();
    else
      res
        .writeHead(502, { "content-type": "text/plain", connection: "close" })
        .end(`agent-ci's egress proxy: ${target.host}:${target.port} failed: ${e.message}\n`);
  });
  // A body cut short (the client went away) never ends the request upstream: it is destroyed unfinished.
  req.on("close", () => {
    if (!req.complete) upstream.destroy();
  });
  req.pipe(upstream);
}

/**
 * The host's answer to the sandbox: its headers scrubbed, its body decoded and masked, framed by the proxy
 * (the host's length when the body keeps it, else chunks).
 */
function answer(
  tunnel: Tunnel,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  response: http.IncomingMessage,
): void {
  const { target, result } = tunnel;
  const status = response.statusCode ?? 502;
  const bodiless = req.method === "HEAD" || status === 204 || status === 304;
  const decoders = bodiless ? [] : decodersFor(response.headers["content-encoding"]);
  if (typeof decoders === "string") {
    response.destroy();
    result.error ??= `the host's answer was not passed on: ${decoders}`;
    res
      .writeHead(502, { "content-type": "text/plain", connection: "close" })
      .end(`agent-ci's egress proxy: ${target.host}:${target.port} answered in ${decoders}\n`);
    return;
  }
  const found = (name: string) => {
    if (!result.scrubbed.includes(name)) result.scrubbed.push(name);
  };
  const headers = scrubbedHeaders(forwardable(response.headers), target.injections, found);
  if (decoders.length) delete headers["content-encoding"];
  const length = responseLength(response, decoders.length === 0);
  if (length !== undefined) headers["content-length"] = length;
  res.writeHead(status, headers);
  if (length !== undefined && !bodiless) counted(res);
  // The value as Node writes a header (latin1), and as UTF-8 where that differs.
  const forms = target.injections.flatMap((i) =>
    [...formsOf(i)].flatMap((form) => {
      const latin1 = Buffer.from(form, "latin1");
      const utf8 = Buffer.from(form, "utf8");
      return (latin1.equals(utf8) ? [latin1] : [latin1, utf8]).map((bytes) => ({ name: i.name, bytes }));
    }),
  );
  const mask = new MaskStream(
    forms.map((f) => f.bytes),
    (index) => found(forms[index]?.name ?? ""),
  );
  pipeline([response, ...decoders, mask, res], (e) => {
    if (e) result.error ??= `the host's answer was cut: ${e.message}`;
  });
}

/**
 * Terminates the sandbox's TLS on `client` (whose ClientHello, already read, is `hello`), serves its
 * requests through to the host with the secrets in, and resolves when the tunnel closes.
 */
export function interceptTls(
  client: Duplex,
  hello: Buffer,
  target: Interception,
): Promise<InterceptionResult> {
  const [first] = target.injections;
  if (!first) throw new Error("an interception needs an injection");
  const tunnel: Tunnel = {
    target,
    result: { bytesUp: 0, bytesDown: 0, requests: 0, injected: [], scrubbed: [] },
    agent: new FramedAgent({ keepAlive: true, maxFreeSockets: 4 }),
    connections: new Connections(),
    upstreamSockets: new Set(),
  };
  // The tunnel's socket is half-open capable (the proxy's HTTP server made it): when the sandbox's side
  // ends, it is closed once the requests in flight are answered.
  let active = 0;
  let ended = false;
  let secured = false;
  // What the parser refuses gets Node's own answer (400) and the connection closed: no clientError handler.
  const server = https.createServer({ key: first.key, cert: first.cert }, (req, res) => {
    active += 1;
    res.on("close", () => {
      active -= 1;
      if (ended && !active) client.destroy();
    });
    serveRequest(tunnel, req, res);
  });
  server.on("connect", (_req: http.IncomingMessage, socket: Duplex) => {
    const reason = "CONNECT is not forwarded to a host a secret is injected for";
    tunnel.result.error ??= `refused a request: ${reason}`;
    const body = `agent-ci's egress proxy: ${reason}\n`;
    socket.end(
      `HTTP/1.1 501 Not Implemented\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  // Most often a client that reads its own CA list instead of the one agent-ci installs (as for --ca-cert).
  const untrusted = (why: string) =>
    `the sandbox's TLS with the proxy failed (${why}): the client must trust the CA agent-ci installs, as for --ca-cert`;
  server.on("tlsClientError", (e) => {
    tunnel.result.error ??= untrusted(e.message);
    client.destroy();
  });
  server.on("secureConnection", () => (secured = true));
  client.on("end", () => {
    ended = true;
    if (!secured) tunnel.result.error ??= untrusted("the client closed the connection during the handshake");
    if (!active) client.destroy();
  });
  server.emit("connection", replaying(client, hello));

  return new Promise((resolve) => {
    client.on("close", () => {
      const { result } = tunnel;
      for (const socket of tunnel.upstreamSockets) {
        result.bytesUp += socket.bytesWritten;
        result.bytesDown += socket.bytesRead;
        socket.destroy();
      }
      tunnel.agent.destroy();
      server.close();
      resolve(result);
    });
  });
}
