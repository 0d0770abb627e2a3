// Where `--network allowlist` is enforced. The run's container keeps `--network none`: it has no network
// interface but loopback, so nothing in it has a route anywhere. Its one way out is a Unix socket in a
// volume shared with a sidecar container, on the engine's default network, which runs the egress proxy
// (proxy-main.ts, bundled) on the toolbelt's Node from the run's own image: no registry, no extra image.
// Inside the run's container a small forwarder of agent-ci's (run as the keeper user, out of the agent's
// reach) listens on 127.0.0.1:3128 and hands each connection to the socket, so HTTP_PROXY works as usual.
// Why not an internal network with the sidecar on it: an engine gives an internal bridge a gateway
// address on the host, and the container reaches every service listening on the host through it. Why not a
// proxy in agent-ci's own process: a container on a remote engine or in Docker Desktop's VM cannot reach
// it. A volume and a sidecar work the same on Docker, Podman and a remote engine.
// The proxy's ledger comes back over the sidecar exec's stdout.
import readline from "node:readline";
import { PassThrough, type Duplex } from "node:stream";
import type Docker from "dockerode";
import { ownerLabels, removeContainer, removeVolume, withTimeout } from "../engine/engine.js";
import { startExec } from "../engine/exec.js";
import { assessHardening, type Hardening, type InsideProbe, NON_ROOT_CHECK } from "../container/hardening.js";
import { EngineError } from "../sandbox.js";
import { TOOLBELT_DIR, toolbeltProgram } from "../image/toolbelt.js";
import type { EgressOptions } from "./allowlist.js";
import type { EgressSidecarConfig, SidecarSecrets } from "./proxy-main.js";
import { refusalMessage } from "../../policy/network.js";
import type { LedgerEntry } from "./proxy.js";
import { EGRESS_PROXY_JS } from "./proxy-source.js";
import { CALLER, SOURCE_PREFIX } from "./source-line.js";

export type { LedgerEntry } from "./proxy.js";
export type { EgressOptions } from "./allowlist.js";

/** Where the proxy listens inside the run's container (the forwarder). */
export const EGRESS_PORT = 3128;
/** Where the shared volume with the proxy's socket is mounted, in both containers. */
export const EGRESS_DIR = "/run/agent-ci-egress";
const EGRESS_SOCKET = `${EGRESS_DIR}/proxy.sock`;
/**
 * The sidecar's user: root without capabilities (the fresh volume is root's, and the socket is made
 * connectable by the agent's forwarder); its root filesystem is read-only and it has no privileges.
 */
const SIDECAR_USER = "0:0";
const SYNC_TIMEOUT_MS = 5_000;

/**
 * The forwarder inside the run's container: plain JavaScript on the toolbelt's Node, 127.0.0.1:3128 to the
 * proxy's socket, byte for byte (the proxy reads the requests), after one line naming the port the client
 * connected from (source-line.ts): the proxy asks which call's process holds it. The forwarder runs as
 * another user than the agent and cannot see the agent's processes itself; the helper, which is the
 * agent's user, can. Prints a line once listening.
 */
const FORWARDER_JS = `
const net = require("node:net");
const server = net.createServer((client) => {
  const upstream = net.connect(${JSON.stringify(EGRESS_SOCKET)});
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
  upstream.write(${JSON.stringify(SOURCE_PREFIX)} + client.remotePort + "\\n");
  client.pipe(upstream).pipe(client);
});
server.listen(${EGRESS_PORT}, "127.0.0.1", () => process.stdout.write("ready\\n"));
`;

/** The engine objects of a run's egress, by name: known from the run id alone (the watchdog removes them). */
export function egressNames(runId: string): { sidecar: string; volume: string } {
  return { sidecar: `agent-ci-${runId}-egress`, volume: `agent-ci-${runId}-egress` };
}

/** The volume mount both containers get (the run's container: read-only; connecting to a socket writes nothing). */
export function egressMount(
  runId: string,
  readOnly: boolean,
): { Type: "volume"; Source: string; Target: string; ReadOnly: boolean } {
  return { Type: "volume", Source: egressNames(runId).volume, Target: EGRESS_DIR, ReadOnly: readOnly };
}

/** The proxy variables the tools of the container read (curl, git, pip, npm, yarn, Node's fetch with NODE_USE_ENV_PROXY). */
export function proxyEnv(caller?: string): Record<string, string> {
  // The user name tags the connection with the tool call that made it (the proxy records it, never checks it).
  const url = `http://${caller ? `${caller}:agent-ci@` : ""}127.0.0.1:${EGRESS_PORT}`;
  const noProxy = "localhost,127.0.0.1,::1";
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
    npm_config_proxy: url,
    npm_config_https_proxy: url,
    PIP_PROXY: url,
    YARN_HTTP_PROXY: url,
    YARN_HTTPS_PROXY: url,
    NODE_USE_ENV_PROXY: "1",
  };
}

/** The sidecar's container settings: hardened like the sandbox, on the bridge network, the toolbelt mounted. */
function sidecarHostConfig(
  runId: string,
  options: EgressOptions,
  toolbeltVolume: string,
  ulimits: Docker.HostConfig["Ulimits"],
): Docker.HostConfig {
  return {
    Init: true,
    ReadonlyRootfs: true,
    CapDrop: ["ALL"],
    SecurityOpt: ["no-new-privileges:true"],
    PidsLimit: 64,
    Memory: 256 * 1024 ** 2,
    NanoCpus: 1e9,
    NetworkMode: "bridge",
    Ulimits: ulimits,
    ExtraHosts: Object.entries(options.hosts).map(([name, address]) => `${name}:${address}`),
    Mounts: [
      { Type: "volume", Source: toolbeltVolume, Target: TOOLBELT_DIR, ReadOnly: true },
      egressMount(runId, false),
    ],
  };
}

export class EgressSidecar {
  /**
   * Every connection attempt so far, in the order the proxy decided them: each as it stands (the proxy reports
   * an attempt before its client hears the answer, and again as it changes and when it ends).
   */
  readonly entries: LedgerEntry[] = [];
  /** Where each attempt's entry is in `entries`, by the proxy's id. */
  private readonly entryAt = new Map<number, number>();
  private syncs = 0;
  private readonly waiting = new Map<number, () => void>();
  private readonly streams: Duplex[] = [];
  private proxyStream: Duplex | undefined;
  private container: Docker.Container | undefined;
  private disposed = false;
  /** The sidecar's hardening, read back from the engine and from inside as the run container's is. */
  hardening: Hardening | undefined;
  /**
   * `--inject-secret`: the run's CA certificate (PEM), which the run's container trusts so that the proxy may
   * answer for the injected hosts; undefined without injections.
   */
  interceptionCaPem: string | undefined;
  /** Which call's process holds a port in the run's container (the helper's `attribute`); set once it runs. */
  private attributor: ((port: number) => Promise<string | undefined>) | undefined;

  private constructor(
    private readonly docker: Docker,
    readonly runId: string,
    readonly options: EgressOptions,
  ) {}

  /**
   * Creates the sidecar (its volume made by `createEgressVolume` first) and waits for its proxy. On failure
   * the sidecar is removed; the volume, which the run's container may already mount, is its owner's to remove.
   */
  static async start(
    docker: Docker,
    runId: string,
    image: string,
    toolbeltVolume: string,
    options: EgressOptions,
    ulimits: Docker.HostConfig["Ulimits"],
    onContainerStarted?: () => void,
    allowWeakHardening = false,
    caCertPem?: string,
  ): Promise<EgressSidecar> {
    const sidecar = new EgressSidecar(docker, runId, options);
    try {
      await sidecar.create(
        image,
        toolbeltVolume,
        options,
        ulimits,
        onContainerStarted,
        allowWeakHardening,
        caCertPem,
      );
      return sidecar;
    } catch (e) {
      await sidecar.stop().catch(() => {});
      throw e;
    }
  }

  private async create(
    image: string,
    toolbeltVolume: string,
    options: EgressOptions,
    ulimits: Docker.HostConfig["Ulimits"],
    onContainerStarted: (() => void) | undefined,
    allowWeakHardening: boolean,
    caCertPem: string | undefined,
  ): Promise<void> {
    const names = egressNames(this.runId);
    const labels = ownerLabels(this.runId);
    const requested = sidecarHostConfig(this.runId, options, toolbeltVolume, ulimits);
    const container = await withTimeout(
      "a container create",
      this.docker.createContainer({
        name: names.sidecar,
        Image: image,
        Entrypoint: [toolbeltProgram("sleep"), "infinity"],
        Cmd: [],
        User: SIDECAR_USER,
        Labels: labels,
        HostConfig: requested,
      }),
    );
    this.container = container;
    await withTimeout("a container start", container.start());
    onContainerStarted?.();
    const { config, secretsLine } = await this.proxyConfig(options, caCertPem);
    const { stream, lines } = await this.attach(
      container,
      [toolbeltProgram("node"), "-e", EGRESS_PROXY_JS],
      SIDECAR_USER,
      [`AGENT_CI_EGRESS=${JSON.stringify(config)}`],
      secretsLine,
    );
    this.proxyStream = stream;
    let probe: Probe | undefined;
    lines((line) => {
      const event = parseEvent(line);
      if (event?.probe) probe ??= event.probe;
      if (event?.entry) this.record(event.entry, event.id);
      if (event?.sync !== undefined) this.waiting.get(event.sync)?.();
      if (event?.attribute) this.answerAttribution(event.attribute);
    });
    await this.checkHardening(container, requested, () => probe, allowWeakHardening);
  }

  /**
   * The proxy's configuration (its socket, the rules, the injections without their values) and, when secrets
   * are injected, the line that hands their values and the interception certificates over its stdin.
   */
  private async proxyConfig(
    options: EgressOptions,
    caCertPem: string | undefined,
  ): Promise<{ config: EgressSidecarConfig; secretsLine: string | undefined }> {
    const injections = options.injections;
    const config: EgressSidecarConfig = {
      socket: EGRESS_SOCKET,
      rules: options.rules,
      privateHosts: options.privateHosts,
      injections: injections.map(({ name, header, host, port, placeholder }) => ({
        name,
        header,
        host,
        port,
        placeholder,
      })),
    };
    let secretsLine: string | undefined;
    if (injections.length) {
      // The CA's library (@peculiar/x509) is loaded only by a run that injects a secret.
      const { makeInterceptionCerts } = await import("./interception-ca.js");
      const certs = await makeInterceptionCerts(
        this.runId,
        injections.map((i) => i.host),
      );
      this.interceptionCaPem = certs.caPem;
      const secrets: SidecarSecrets = {
        values: Object.fromEntries(injections.map((i) => [i.name, i.value()])),
        certs: certs.hosts,
        upstreamCa: caCertPem,
      };
      secretsLine = `secrets ${JSON.stringify(secrets)}\n`;
    }
    return { config, secretsLine };
  }

  /** An attempt's entry, new or as it changed (the same id). */
  private record(entry: LedgerEntry, id: number | undefined): void {
    const at = id === undefined ? undefined : this.entryAt.get(id);
    if (at !== undefined) this.entries[at] = entry;
    else {
      if (id !== undefined) this.entryAt.set(id, this.entries.length);
      this.entries.push(entry);
    }
  }

  /** Checks the engine applied the hardening asked of the sidecar; refuses to run if not (unless allowed). */
  private async checkHardening(
    container: Docker.Container,
    requested: Docker.HostConfig,
    /** The probe line, read only once the engine answered (it may arrive meanwhile). */
    probe: () => Probe | undefined,
    allowWeakHardening: boolean,
  ): Promise<void> {
    // The sidecar holds the way out: the engine must have applied what was asked of it, or it does not run.
    const info = await withTimeout("a container inspect", container.inspect());
    const assessed = assessHardening(
      requested,
      info.HostConfig,
      { ...(probe() ?? { uid: null, capEff: "", noNewPrivs: "", seccomp: "" }), userNamespaceOpen: false },
      { user: SIDECAR_USER, workspaceWritableByAgent: false },
    );
    // Root by design (SIDECAR_USER): with no capabilities, no-new-privileges and a read-only root, that is
    // what the other checks hold it to.
    this.hardening = { ...assessed, missing: assessed.missing.filter((m) => m !== NON_ROOT_CHECK) };
    if (this.hardening.missing.length && !allowWeakHardening)
      throw new EngineError(
        `the engine did not apply these settings to the egress sidecar: ${this.hardening.missing.join("; ")}. ` +
          "Use an engine that honours them, or pass --allow-weak-hardening to run anyway (the report will say so).",
      );
  }

  /**
   * The OCI runtime the sidecar runs under, as the engine reports it. The engine's default always: it runs
   * only agent-ci's proxy, and it needs the network that gVisor registered with `--network=none` (the way it
   * starts on Docker's default bridge here) does not give.
   */
  async runtime(): Promise<string> {
    if (!this.container) throw new EngineError("the egress sidecar was not created");
    const info = await withTimeout("a container inspect", this.container.inspect());
    return info.HostConfig.Runtime || "runc";
  }

  /**
   * Runs a long-lived program in a container with a hijacked exec and resolves once it prints its first
   * line (it listens); `lines` then gets every line of its stdout, that first one included.
   */
  private async attach(
    container: Docker.Container,
    cmd: string[],
    user: string,
    env: string[],
    stdinFirst?: string,
  ): Promise<{ stream: Duplex; lines: (onLine: (line: string) => void) => void }> {
    const { stream } = await startExec(container, {
      cmd,
      user,
      env: [...env, "PATH=/usr/bin:/bin"],
      stdin: true,
      workingDir: "/",
    });
    this.streams.push(stream);
    // Over the exec's stdin, never its environment or command line: what the engine could show of the exec.
    if (stdinFirst) stream.write(stdinFirst);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let errors = "";
    stderr.on("data", (d: Buffer) => (errors = (errors + d.toString("utf8")).slice(-4000)));
    this.docker.modem.demuxStream(stream, stdout, stderr);
    stream.on("end", () => stdout.end());
    stream.on("error", () => stdout.end());
    const seen: string[] = [];
    let listener: ((line: string) => void) | undefined;
    const ready = new Promise<void>((resolve, reject) => {
      readline.createInterface({ input: stdout }).on("line", (line) => {
        resolve();
        if (listener) listener(line);
        else seen.push(line);
      });
      stdout.on("end", () =>
        reject(
          new EngineError(
            `agent-ci's egress program ${cmd[0]} ended before it listened: ${errors.trim() || "no output"}`,
          ),
        ),
      );
    });
    await withTimeout("the egress proxy's start", ready, 30_000);
    return {
      stream,
      lines: (onLine) => {
        listener = onLine;
        for (const line of seen.splice(0)) onLine(line);
      },
    };
  }

  /** Starts the forwarder in the run's container (as its keeper user, which the agent cannot signal). */
  async connect(container: Docker.Container, user: string): Promise<void> {
    await this.attach(container, [toolbeltProgram("node"), "-e", FORWARDER_JS], user, []);
  }

  /**
   * Attributes connections that came without proxy credentials by their process: `lookup` maps the client's
   * port in the run's container to the tool call whose process holds it.
   */
  attributeBy(lookup: (port: number) => Promise<string | undefined>): void {
    this.attributor = lookup;
  }

  private answerAttribution(ask: { id: number; port: number }): void {
    const { id, port } = ask;
    if (!Number.isSafeInteger(id) || !Number.isInteger(port)) return;
    const lookup = this.attributor
      ? this.attributor(port).catch(() => undefined)
      : Promise.resolve(undefined);
    void lookup.then((caller) => {
      const valid = caller && CALLER.test(caller) ? caller : "-";
      if (this.active) this.proxyStream?.write(`attributed ${id} ${valid}\n`);
    });
  }

  /**
   * Resolves once every attempt the proxy had decided before now is in `entries`, as it then stood (bounded:
   * never hangs a run). An attempt is decided before its client hears the answer: after a call ends, its
   * connections are there.
   */
  async sync(): Promise<void> {
    if (!this.proxyStream || !this.active) return;
    const n = ++this.syncs;
    const answered = new Promise<void>((resolve) => {
      this.waiting.set(n, resolve);
      setTimeout(resolve, SYNC_TIMEOUT_MS).unref();
    });
    this.proxyStream.write(`sync ${n}\n`);
    await answered;
    this.waiting.delete(n);
  }

  /** The refusals of one caller's connections so far, as the messages its tool call result carries. */
  async refusalsOf(caller: string): Promise<string[]> {
    await this.sync();
    const refused = this.entries.filter((e) => e.caller === caller && e.decision === "denied");
    const unique = new Set(
      refused.map((e) => refusalMessage(e.host, e.port, e.reason ?? "refused", this.options.rules)),
    );
    return [...unique];
  }

  /** Whether commands go through the proxy (false once `stop` ended it: after `--network setup`'s setup). */
  get active(): boolean {
    return !this.stopped && !this.disposed;
  }
  private stopped = false;

  /**
   * Ends the proxy and removes the sidecar, keeping the ledger: the run goes on with no way out at all. The
   * volume stays until the run's container, which mounts it, is gone (dispose).
   */
  async stop(): Promise<void> {
    if (this.stopped || this.disposed) return;
    await this.sync();
    this.stopped = true;
    for (const stream of this.streams) stream.destroy();
    await removeContainer(this.docker.getContainer(egressNames(this.runId).sidecar));
  }

  /** Removes the sidecar and the volume. Safe to call more than once (the run's container must be gone first). */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    for (const stream of this.streams) stream.destroy();
    await removeEgress(this.docker, this.runId);
  }
}

/** What the proxy says of itself once listening: how the kernel sees its process. */
type Probe = Omit<InsideProbe, "userNamespaceOpen">;

interface ProxyEvent {
  entry?: LedgerEntry;
  /** The attempt an entry is of: a later entry with the same id replaces it. */
  id?: number;
  sync?: number;
  probe?: Probe;
  attribute?: { id: number; port: number };
}

function parseEvent(line: string): ProxyEvent | undefined {
  try {
    return JSON.parse(line) as ProxyEvent;
  } catch {
    return undefined;
  }
}

/** The run's socket volume, labelled like its containers (the reaper finds it); made before either container. */
export async function createEgressVolume(docker: Docker, runId: string): Promise<void> {
  await withTimeout(
    "a volume create",
    docker.createVolume({ Name: egressNames(runId).volume, Labels: ownerLabels(runId) }),
  );
}

/** Removes a run's sidecar and its volume by name; what is already gone is fine. */
export async function removeEgress(docker: Docker, runId: string): Promise<void> {
  const names = egressNames(runId);
  await removeContainer(docker.getContainer(names.sidecar));
  await removeVolume(docker, names.volume);
}
