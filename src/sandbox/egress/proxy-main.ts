// The egress sidecar's program: bundled into one CommonJS file (scripts/embedded.mjs), written into the
// sidecar container and run on the toolbelt's Node. Its configuration comes in AGENT_CI_EGRESS (JSON);
// it prints one JSON line per event on stdout — `{"ready":socket,"probe":…}` once listening,
// `{"entry":…,"id":n}` for connection attempt n once it is decided and again as it changes and ends,
// `{"sync":n}` in answer to a `sync n` line on stdin (everything before it has been printed), which agent-ci
// uses to read a tool call's connections when the call ends.
// A connection from the run's forwarder starts with one line, `agent-ci-source <port>\n`: the port the
// client connected from, inside the run's container. For a client that sent no proxy credentials the
// proxy prints `{"attribute":{"id":n,"port":p}}` and waits (bounded) for agent-ci's `attributed n <caller>`
// (or `attributed n -`): agent-ci asks the container's helper which call's process holds that port.
// With `--inject-secret`, the secrets' values and the hosts' certificates come as the first stdin line,
// `secrets <json>`, never in the environment: the proxy listens only once it has them.
import fs from "node:fs";
import net from "node:net";
import readline from "node:readline";
import tls from "node:tls";
import type { Duplex } from "node:stream";
import type { DomainRule } from "../../policy/network.js";
import type { Injection } from "./inject.js";
import type { ProxyInjection } from "./intercept.js";
import { createEgressProxy } from "./proxy.js";
import { CALLER, readSourceLine } from "./source-line.js";

/** Written by agent-ci from a validated RunConfig (sidecar.ts); the sidecar carries no schema library. */
export interface EgressSidecarConfig {
  /** The Unix socket to listen on, in the volume the run's container shares. */
  socket: string;
  rules: DomainRule[];
  privateHosts: string[];
  /** `--inject-secret`: the rules and placeholders (the values come over stdin, `SidecarSecrets`). */
  injections: Injection[];
}

/**
 * The `secrets` line: each injection's value by name, each host's certificate and key, and the CAs an
 * intercepted host's certificate is verified against besides Node's (--ca-cert: a whole bundle may be
 * larger than an environment variable may be).
 */
export interface SidecarSecrets {
  values: Record<string, string>;
  certs: Record<string, { cert: string; key: string }>;
  upstreamCa?: string;
}

const config = JSON.parse(process.env.AGENT_CI_EGRESS ?? "{}") as EgressSidecarConfig;
const emit = (event: unknown) => process.stdout.write(`${JSON.stringify(event)}\n`);

/** How long a connection waits for agent-ci to say which call made it, before it is recorded without one. */
const ATTRIBUTE_TIMEOUT_MS = 5_000;

const sourcePorts = new WeakMap<Duplex, number>();
const asked = new Map<number, (caller: string | undefined) => void>();
let asks = 0;
function attribute(connection: Duplex): Promise<string | undefined> {
  const port = sourcePorts.get(connection);
  if (port === undefined) return Promise.resolve(undefined);
  const id = ++asks;
  return new Promise((resolve) => {
    const timer = setTimeout(() => answer(undefined), ATTRIBUTE_TIMEOUT_MS);
    const answer = (caller: string | undefined) => {
      clearTimeout(timer);
      asked.delete(id);
      resolve(caller);
    };
    asked.set(id, answer);
    emit({ attribute: { id, port } });
  });
}

let received: (secrets: SidecarSecrets) => void = () => {};
const secrets = new Promise<SidecarSecrets>((resolve) => (received = resolve));

function injectionsWith(given: SidecarSecrets): ProxyInjection[] {
  return config.injections.map((injection) => {
    const cert = given.certs[injection.host];
    const value = given.values[injection.name];
    if (!cert || value === undefined) throw new Error(`no secret or certificate for ${injection.name}`);
    return { ...injection, value, ...cert };
  });
}

function listen(inject: ProxyInjection[], upstreamCa: string | undefined): void {
  const server = createEgressProxy({
    rules: config.rules,
    privateHosts: config.privateHosts,
    onEntry: (entry, id) => emit({ entry, id }),
    attribute,
    inject,
    upstreamCa: upstreamCa ? [...tls.rootCertificates, upstreamCa] : undefined,
  });
  const listener = net.createServer((socket) => {
    socket.on("error", () => socket.destroy());
    void readSourceLine(socket).then((port) => {
      if (port !== undefined) sourcePorts.set(socket, port);
      server.emit("connection", socket);
      socket.resume();
    });
  });
  fs.rmSync(config.socket, { force: true });
  listener.listen(config.socket, () => {
    // The run's forwarder runs as another user: it must be able to connect.
    fs.chmodSync(config.socket, 0o666);
    // The kernel's view of this process, for agent-ci to check the sidecar's hardening as it does the run's.
    const status = fs.readFileSync("/proc/self/status", "utf8");
    const field = (name: string) => (new RegExp(`^${name}:\\s*(.*)$`, "m").exec(status)?.[1] ?? "").trim();
    const probe = {
      uid: process.getuid?.() ?? null,
      capEff: field("CapEff"),
      noNewPrivs: field("NoNewPrivs"),
      seccomp: field("Seccomp"),
    };
    emit({ ready: config.socket, probe });
  });
}

if (config.injections.length) void secrets.then((given) => listen(injectionsWith(given), given.upstreamCa));
else listen([], undefined);

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.startsWith("secrets ")) received(JSON.parse(line.slice("secrets ".length)) as SidecarSecrets);
  const match = /^sync (\d{1,15})$/.exec(line);
  if (match) emit({ sync: Number(match[1]) });
  const answer = /^attributed (\d{1,15}) (\S{1,128})$/.exec(line);
  if (answer?.[2]) asked.get(Number(answer[1]))?.(CALLER.test(answer[2]) ? answer[2] : undefined);
});
// agent-ci closed the stream (it ended the run, or died): the sidecar has no reason to stay.
process.stdin.on("end", () => process.exit(0));
