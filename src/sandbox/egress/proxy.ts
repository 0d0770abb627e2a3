// The egress proxy of `--network allowlist`: an HTTP forward proxy (plain requests forwarded by forward.ts,
// tunnels through Node's own CONNECT parsing) that lets a request out only when its host name is on the
// allowlist, resolves the name itself and connects to the address it checked (never one the client sent:
// IP literals are refused), refuses names that lead to non-public addresses unless the host was opted in,
// checks a tunnel's TLS SNI against its CONNECT host, and reports every attempt as a ledger entry: once it
// is decided, before the client hears the answer (whatever a tool call saw answered is in the ledger when
// the call ends, however slowly the connection closes), and again as it goes on and when it ends.
// It runs in the sidecar container (proxy-main.ts) and, in unit tests, on loopback.
import dns from "node:dns";
import http from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import {
  type DomainRule,
  mayReach,
  normalizeHost,
  refusalMessage,
  type Resolve,
} from "../../policy/network.js";
import type { EgressConnection } from "../../report/schema.js";
import { clientHelloServerName } from "./client-hello.js";
import { forwardHttp } from "./forward.js";
import { Connections, isRefusal, requestFraming } from "./http-framing.js";
import { CALLER } from "./source-line.js";
import { injectsAt } from "./inject.js";
import { interceptTls, type ProxyInjection } from "./intercept.js";

/** One connection attempt, as report.json records it (the schema is the one definition). */
export type LedgerEntry = EgressConnection;

export interface EgressProxyOptions {
  rules: readonly DomainRule[];
  /** Hosts that may resolve to non-public addresses (`--allow-private-host`); never the metadata address. */
  privateHosts?: readonly string[];
  /** Name resolution; default: the system resolver (the sidecar's /etc/hosts and the engine's DNS). */
  resolve?: Resolve;
  /**
   * Reports an attempt: first once the proxy decided it, before the client hears the answer, then again,
   * with the same `id`, when it changes (a tunnel's server name refused) and when it ends (its bytes, its
   * failure); `ended` on the attempt's last report.
   */
  onEntry: (entry: LedgerEntry, id: number, ended: boolean) => void;
  /**
   * The tool call whose process opened this connection, for a client that sent no proxy credentials: the
   * sidecar asks the run's container while the client waits for the proxy's answer, so its socket still
   * exists. Undefined when it cannot tell.
   */
  attribute?: (connection: Duplex) => Promise<string | undefined>;
  /** `--inject-secret`: tunnels to these hosts are terminated here and their requests get the secret (intercept.ts). */
  inject?: readonly ProxyInjection[];
  /** The CAs an intercepted host's certificate is verified against; undefined: Node's own. */
  upstreamCa?: readonly string[];
}

/** Who made a connection, and how that was found out (the ledger's caller and attributedBy). */
type Attribution = Pick<LedgerEntry, "caller" | "attributedBy">;

/** How long a tunnel may take to send its TLS ClientHello. */
const HELLO_TIMEOUT_MS = 10_000;
/** A TLS record is at most 2^14 bytes of payload plus its 5-byte header (a ClientHello spanning records is refused). */
const MAX_HELLO_BYTES = 16_384 + 5;

const defaultResolve: Resolve = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

function credentialsOf(req: http.IncomingMessage): string | undefined {
  const auth = req.headers["proxy-authorization"];
  const match = typeof auth === "string" ? /^Basic\s+([A-Za-z0-9+/=]{1,512})$/i.exec(auth) : null;
  if (!match?.[1]) return undefined;
  const user = Buffer.from(match[1], "base64").toString("utf8").split(":")[0];
  return user && CALLER.test(user) ? user : undefined;
}

/** An attempt's start: the wall clock for the record, the monotonic clock for its duration. */
interface Started {
  at: string;
  t0: number;
}
const begin = (): Started => ({ at: new Date().toISOString(), t0: performance.now() });

/** What a ledger entry knows from the request alone: where to, how, and who asked. */
type LedgerBase = Pick<LedgerEntry, "host" | "port" | "kind" | "caller" | "attributedBy">;

/** What the proxy's two handlers (plain requests and tunnels) share, built once per proxy. */
interface ProxyServices {
  options: EgressProxyOptions;
  /** Who made a request: its proxy credentials, else the process that owns its connection. */
  attribution(req: http.IncomingMessage): Promise<Attribution>;
  /** The policy's verdict on one host and port, with the address it resolved and checked. */
  decide(host: string, port: number): ReturnType<typeof mayReach>;
  /** Reports one attempt, timed from its start; the function returned reports it again as it goes on. */
  ledger(base: LedgerBase, started: Started, rest: LedgerRest): (rest: LedgerRest) => void;
  /** Plain requests' connections whose framing is in doubt. */
  connections: Connections;
}

/** What a ledger entry says beyond its base: the decision and what came of it. */
type LedgerRest = Partial<LedgerEntry> & Pick<LedgerEntry, "decision">;

function proxyServices(options: EgressProxyOptions): ProxyServices {
  const resolve = options.resolve ?? defaultResolve;
  // One lookup per connection: the requests of a kept-alive connection come from the same process.
  const byProcess = new WeakMap<Duplex, Promise<string | undefined>>();
  const attribution = async (req: http.IncomingMessage): Promise<Attribution> => {
    const credentials = credentialsOf(req);
    if (credentials) return { caller: credentials, attributedBy: "credentials" };
    if (!options.attribute) return {};
    let pending = byProcess.get(req.socket);
    if (!pending) {
      pending = options.attribute(req.socket).catch(() => undefined);
      byProcess.set(req.socket, pending);
    }
    const caller = await pending;
    return caller ? { caller, attributedBy: "process" } : {};
  };

  const policy = { rules: options.rules, privateHosts: options.privateHosts ?? [] };
  let attempts = 0;
  return {
    options,
    attribution,
    decide: (host, port) => mayReach(host, port, policy, resolve),
    ledger(base, started, rest) {
      const id = ++attempts;
      const report = (now: LedgerRest, ended = true) =>
        options.onEntry(
          {
            bytesUp: 0,
            bytesDown: 0,
            ...base,
            ...now,
            startedAt: started.at,
            durationMs: Math.round(performance.now() - started.t0),
          },
          id,
          ended,
        );
      // An allowed attempt goes on (its bytes, its end come later); a denied one ends here.
      report(rest, rest.decision === "denied");
      return report;
    },
    connections: new Connections(),
  };
}

/**
 * A plain http:// request in absolute form: refused with a 403 naming the rule, or forwarded to the address
 * the policy checked.
 */
function forwardRequest(
  { options, attribution, decide, ledger, connections }: ProxyServices,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  // A request read after a refusal on the same connection: where it begins is in doubt.
  if (connections.isRefused(req)) return;
  const started = begin();
  let url: URL;
  try {
    url = new URL(req.url ?? "");
  } catch {
    res
      .writeHead(400, { "content-type": "text/plain" })
      .end(
        "agent-ci's egress proxy: send requests in absolute form (http://host/path), or CONNECT for https\n",
      );
    return;
  }
  const port = Number(url.port || 80);
  const who = attribution(req);
  if (url.protocol !== "http:") {
    void who.then((by) => {
      ledger({ host: url.hostname, port, kind: "http", ...by }, started, {
        decision: "denied",
        reason: `scheme ${url.protocol} (only http:// is forwarded; https goes through CONNECT)`,
      });
      res
        .writeHead(403, { "content-type": "text/plain" })
        .end(
          refusalMessage(url.hostname, port, `scheme ${url.protocol} is not forwarded`, options.rules) + "\n",
        );
    });
    return;
  }
  const framing = requestFraming(req);
  if (isRefusal(framing)) {
    // Marked now: requests already read behind it on this connection are dropped.
    connections.hold(req);
    void who.then((by) => {
      const reason = `a malformed request: ${framing.reason}`;
      ledger({ host: url.hostname, port, kind: "http", ...by }, started, { decision: "denied", reason });
      connections.refuse(res, framing, `agent-ci's egress proxy refused ${reason}`);
    });
    return;
  }
  void Promise.all([decide(url.hostname, port), who]).then(([verdict, by]) => {
    const base = { host: url.hostname, port, kind: "http" as const, ...by };
    if (!verdict.ok) {
      ledger(base, started, { decision: "denied", reason: verdict.reason });
      res
        .writeHead(403, { "content-type": "text/plain", "x-agent-ci-policy": "denied" })
        .end(refusalMessage(url.hostname, port, verdict.reason, options.rules) + "\n");
      return;
    }
    const update = ledger(base, started, { decision: "allowed", address: verdict.address });
    forwardHttp(req, res, { url, address: verdict.address, port }, framing, (result) =>
      update({
        decision: "allowed",
        address: verdict.address,
        bytesUp: result.bytesUp,
        bytesDown: result.bytesDown,
        ...(result.error ? { reason: result.error } : {}),
      }),
    );
  });
}

/**
 * A CONNECT tunnel: the host:port checked against the policy, then the tunnel's TLS ClientHello read and its
 * server name checked against the CONNECT host before a byte goes upstream.
 */
function openTunnel(proxy: ProxyServices, req: http.IncomingMessage, client: Duplex, head: Buffer): void {
  const { options, attribution, decide, ledger, connections } = proxy;
  if (connections.isRefused(req)) return void client.destroy();
  const started = begin();
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(req.url ?? "");
  const host = match?.[1] ?? req.url ?? "";
  const port = Number(match?.[2] ?? 0);
  client.on("error", () => {});
  const who = attribution(req);
  let base: LedgerBase = { host, port, kind: "connect" };
  const refuse = (reason: string) => {
    ledger(base, started, { decision: "denied", reason });
    const body = refusalMessage(host, port, reason, options.rules) + "\n";
    client.end(
      `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nx-agent-ci-policy: denied\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  };
  const checked = !match || port < 1 || port > 65535 ? undefined : decide(host, port);
  void Promise.all([checked, who]).then(([verdict, by]) => {
    base = { ...base, ...by };
    if (!verdict) return refuse("CONNECT needs host:port");
    if (!verdict.ok) return refuse(verdict.reason);
    const update = ledger(base, started, { decision: "allowed", address: verdict.address });
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    readClientHello(client, head).then(
      (hello) => passHello(proxy, client, hello, { host, port, address: verdict.address }, update),
      () => client.destroy(),
    );
  });
}

/**
 * A tunnel whose ClientHello arrived: refused when its server name is missing or differs from the CONNECT
 * host; else terminated here when a secret is injected for the host (intercept.ts), spliced to the upstream
 * otherwise, and reported when it closes.
 */
function passHello(
  { options }: ProxyServices,
  client: Duplex,
  hello: { data: Buffer; sni?: string; error?: string },
  { host, port, address }: { host: string; port: number; address: string },
  update: (rest: LedgerRest) => void,
): void {
  const expected = normalizeHost(host);
  if (hello.error || !hello.sni || normalizeHost(hello.sni) !== expected) {
    const reason =
      hello.error ??
      (hello.sni
        ? `the TLS server name ${hello.sni} differs from the CONNECT host`
        : "the tunnel's TLS ClientHello names no server (SNI)");
    update({ decision: "denied", reason });
    client.destroy();
    return;
  }
  const injections = (options.inject ?? []).filter((i) => injectsAt(i, host, port));
  if (injections.length) {
    const target = { host: expected ?? host, port, address, injections };
    void interceptTls(client, hello.data, { ...target, ca: options.upstreamCa }).then((done) =>
      update({
        decision: "allowed",
        address,
        bytesUp: done.bytesUp,
        bytesDown: done.bytesDown,
        ...(done.injected.length ? { injected: done.injected } : {}),
        ...(done.scrubbed.length ? { scrubbed: done.scrubbed } : {}),
        ...(done.error ? { reason: done.error } : {}),
      }),
    );
    return;
  }
  const upstream = net.connect({ host: address, port });
  let error: string | undefined;
  upstream.on("error", (e) => {
    error = `upstream failed: ${e.message}`;
    client.destroy();
  });
  upstream.write(hello.data);
  upstream.pipe(client);
  client.pipe(upstream);
  client.on("close", () => upstream.destroy());
  upstream.on("close", () => {
    client.destroy();
    update({
      decision: "allowed",
      address,
      bytesUp: upstream.bytesWritten,
      bytesDown: upstream.bytesRead,
      ...(error ? { reason: error } : {}),
    });
  });
}

export function createEgressProxy(options: EgressProxyOptions): http.Server {
  const proxy = proxyServices(options);
  // What the parser refuses gets Node's own answer (400) and the connection closed: no clientError handler.
  const server = http.createServer((req, res) => forwardRequest(proxy, req, res));
  server.on("connect", (req: http.IncomingMessage, client: Duplex, head: Buffer) =>
    openTunnel(proxy, req, client, head),
  );
  return server;
}

/**
 * Waits for the first TLS record (the ClientHello) of a tunnel and reads its server name. Bounded in size
 * and time; whatever is not TLS is refused, since its destination cannot be checked.
 */
function readClientHello(
  client: Duplex,
  head: Buffer,
): Promise<{ data: Buffer; sni?: string; error?: string }> {
  return new Promise((resolve) => {
    let data = head;
    const timer = setTimeout(
      () => done({ error: "the tunnel sent no TLS ClientHello in time" }),
      HELLO_TIMEOUT_MS,
    );
    const done = (result: { sni?: string; error?: string }) => {
      clearTimeout(timer);
      client.off("data", onData);
      client.off("close", onClose);
      client.pause();
      resolve({ data, ...result });
    };
    const check = () => {
      if (data.length < 5) return;
      if (data[0] !== 0x16)
        return done({
          error: "the tunnel does not carry TLS (only TLS tunnels are allowed, their server name is checked)",
        });
      const length = 5 + data.readUInt16BE(3);
      if (length > MAX_HELLO_BYTES)
        return done({ error: "the TLS record is larger than a ClientHello may be" });
      if (data.length < length) return;
      const sni = clientHelloServerName(data.subarray(0, length));
      done(sni === undefined ? {} : { sni });
    };
    const onData = (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      check();
    };
    const onClose = () => done({ error: "the client closed the tunnel before its TLS ClientHello" });
    client.on("data", onData);
    client.on("close", onClose);
    check();
  });
}
