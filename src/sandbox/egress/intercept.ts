// The egress proxy's one exception to passing tunnels through untouched: a CONNECT to a host that a secret
// is injected for (`--inject-secret`, inject.ts). The proxy answers the sandbox's TLS itself, with a
// certificate for that host from the run's own CA (which the sandbox trusts, and whose key never left
// agent-ci's process), reads each request, puts the secret in place of its placeholder in the named header,
// and sends the request on over its own TLS connection to the address the policy checked, verifying the
// host's certificate as any client would (Node's CAs and --ca-cert's). Nothing else is changed.
import http from "node:http";
import https from "node:https";
import type net from "node:net";
import { Duplex } from "node:stream";
import { forwardable } from "./forward.js";
import { type Injection, substituteSecret } from "./inject.js";

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
  /** The first upstream failure, if any. */
  error?: string;
}

/**
 * Response headers with any injected value put back to its placeholder, as written or inside Basic
 * credentials (a host that echoes the request's header in its own).
 */
function scrubbed(
  headers: http.OutgoingHttpHeaders,
  injections: readonly ProxyInjection[],
): http.OutgoingHttpHeaders {
  const scrub = (value: string) =>
    injections.reduce((text, i) => substituteSecret(text, i.value, i.placeholder) ?? text, value);
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
  const result: InterceptionResult = { bytesUp: 0, bytesDown: 0, requests: 0, injected: [] };
  const upstreamSockets = new Set<net.Socket>();
  // The tunnel's requests share their connections to the host, as the sandbox's client shares the tunnel.
  const agent = new https.Agent({ keepAlive: true, maxSockets: 4 });
  // The tunnel's socket is half-open capable (the proxy's HTTP server made it): when the sandbox's side
  // ends, it is closed once the requests in flight are answered.
  let active = 0;
  let ended = false;
  let secured = false;
  const server = https.createServer({ key: first.key, cert: first.cert }, (req, res) => {
    result.requests += 1;
    active += 1;
    res.on("close", () => {
      active -= 1;
      if (ended && !active) client.destroy();
    });
    const headers = forwardable(req.headers);
    for (const injection of target.injections) {
      const value = headers[injection.header];
      if (typeof value !== "string") continue;
      const replaced = substituteSecret(value, injection.placeholder, injection.value);
      if (replaced === undefined) continue;
      headers[injection.header] = replaced;
      if (!result.injected.includes(injection.name)) result.injected.push(injection.name);
    }
    const upstream = https.request({
      host: target.host,
      servername: target.host,
      port: target.port,
      method: req.method,
      path: req.url,
      headers,
      agent,
      ...(target.ca ? { ca: [...target.ca] } : {}),
      // The name is verified against the certificate; the connection goes to the checked address only.
      lookup: (_name, lookupOptions, callback) => {
        const family = target.address.includes(":") ? 6 : 4;
        const answer = callback as (e: null, address: unknown, family?: number) => void;
        if (lookupOptions.all) answer(null, [{ address: target.address, family }]);
        else answer(null, target.address, family);
      },
    });
    upstream.on("socket", (socket) => upstreamSockets.add(socket));
    upstream.on("response", (response) => {
      res.writeHead(response.statusCode ?? 502, scrubbed(forwardable(response.headers), target.injections));
      response.pipe(res);
    });
    upstream.on("error", (e) => {
      result.error ??= `upstream failed: ${e.message}`;
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`agent-ci's egress proxy: ${target.host}:${target.port} failed: ${e.message}\n`);
    });
    req.pipe(upstream);
  });
  server.on("clientError", (_e, socket) => socket.destroy());
  // Most often a client that reads its own CA list instead of the one agent-ci installs (as for --ca-cert).
  const untrusted = (why: string) =>
    `the sandbox's TLS with the proxy failed (${why}): the client must trust the CA agent-ci installs, as for --ca-cert`;
  server.on("tlsClientError", (e) => {
    result.error ??= untrusted(e.message);
    client.destroy();
  });
  server.on("secureConnection", () => (secured = true));
  client.on("end", () => {
    ended = true;
    if (!secured) result.error ??= untrusted("the client closed the connection during the handshake");
    if (!active) client.destroy();
  });
  server.emit("connection", replaying(client, hello));

  return new Promise((resolve) => {
    client.on("close", () => {
      for (const socket of upstreamSockets) {
        result.bytesUp += socket.bytesWritten;
        result.bytesDown += socket.bytesRead;
        socket.destroy();
      }
      agent.destroy();
      server.close();
      resolve(result);
    });
  });
}
