// The Docker implementation of `Sandbox`: one hardened container per run, the workspace copied in with a
// tar stream, a git baseline recorded inside it, every command and file operation served by the
// in-container helper, the patch produced by git inside the container, and the container removed on
// every way out. The only module (with engine.ts and image.ts) that imports dockerode.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { PassThrough, type Duplex } from "node:stream";
import { fileURLToPath } from "node:url";
import type Docker from "dockerode";
import {
  copyInFailed,
  copySummary,
  detectHostPacker,
  extractFlags,
  type HostPacker,
  type IncludeIgnored,
  packWorkspace,
  type PackSummary,
  planWorkspaceCopy,
  type WorkspaceCopy,
  WorkspaceError,
} from "./archive.js";
import { CHANNEL_SOCKET, type ChannelListener, channelToken, HelperChannel } from "./channel.js";
import {
  copierName,
  copyThroughBind,
  createWorkspaceVolume,
  workspaceMount,
  workspaceVolumeName,
} from "./copier.js";
import { Baseline, type ExportedPatch } from "./baseline.js";
import {
  createDockerClient,
  engineElsewhere,
  ownerLabels,
  pingEngine,
  reapOrphans,
  removeContainer,
  removeVolume,
  withTimeout,
} from "./engine.js";
import {
  AGENT_UID,
  AGENT_USER,
  containerUlimits,
  DOCKER_PROFILE,
  type EngineProfile,
  KEEPER_USER,
} from "./engine-profile.js";
import { assessHardening, type Hardening } from "./hardening.js";
import { HelperClient } from "./helper-client.js";
import type {
  ExecOpRequest,
  FailureHeader,
  HelperOp,
  HelperOps,
  HelperResult,
  ResponseHeader,
} from "./helper-protocol.js";
import { type ResolvedImage, resolveImage, userImage } from "./image.js";
import {
  createEgressVolume,
  type EgressOptions,
  egressMount,
  egressNames,
  EgressSidecar,
  proxyEnv,
  removeEgress,
} from "./egress/sidecar.js";
import {
  type BackgroundStatus,
  EngineError,
  type ExecRequest,
  type ExecResult,
  type FileAccess,
  type FileStat,
  OUTPUTS_DIR,
  type ReadOptions,
  type Sandbox,
  SandboxFsError,
  SandboxGoneError,
  WORKSPACE_ROOT,
} from "./sandbox.js";
import {
  serviceArgv,
  serviceHome,
  type ServiceHost,
  type ServiceProcess,
  type ServiceRequest,
  serviceUser,
  startServiceExec,
} from "./service.js";
import { ensureToolbelt, FALLBACK_PATH, TOOLBELT_BIN, TOOLBELT_DIR, toolbeltProgram } from "./toolbelt.js";

export type { Hardening } from "./hardening.js";
export { MAX_PATCH_FILE_BYTES, type ExportedPatch, type PatchFileStat } from "./baseline.js";

export type NetworkPolicy = "none" | "setup" | "on" | "allowlist";

export interface DockerSandboxOptions {
  runId: string;
  workspaceDir: string;
  /** A user-named image; default: Dockerfile.sandbox, built on demand. */
  image?: string;
  network?: NetworkPolicy;
  /**
   * Run before the agent starts. Network "setup": through the egress proxy with `egress` (the setup
   * allowlist), which is then removed; "allowlist" and "on": with the run's own network.
   */
  setup?: string[];
  /** Networks "allowlist" and "setup": what the egress proxy lets through (sidecar.ts). */
  egress?: EgressOptions;
  /** A CA certificate (PEM) for commands to trust besides the image's (`--ca-cert`: a company or test proxy). */
  caCertPem?: string;
  memoryBytes?: number;
  nanoCpus?: number;
  pidsLimit?: number;
  workspaceSizeBytes?: number;
  tmpSizeBytes?: number;
  /** Plan mode: the workspace is owned by root in the container, so nothing the agent runs can write it. */
  readOnlyWorkspace?: boolean;
  /** Values passed through to commands by name (`--env NAME`). */
  env?: Record<string, string>;
  includeIgnored?: IncludeIgnored;
  maxCopyFiles?: number;
  maxCopyBytes?: number;
  /** Files kept out of the container (Read deny rules), with the reason. */
  excludeFromCopy?: (relPath: string) => string | undefined;
  /**
   * Stream the copy-in through the engine, packed this way, even where a copier container could read the
   * workspace from a bind mount (copier.ts); default: the copier where the engine sees this host's files,
   * else a stream packed as this host can (`detectHostPacker`).
   */
  packer?: HostPacker;
  /**
   * How the host talks to the exec helper: "auto" (the default), a Unix socket bind-mounted from this host
   * where the engine sees its files (channel.ts), else the exec stream; "stream", the exec stream always
   * (what a remote engine gets).
   */
  helperChannel?: "auto" | "stream";
  /** A toolbelt volume made ready by the caller (the benchmark's cold starts); default: the engine's own. */
  toolbeltVolume?: string;
  /** Run even when the engine did not apply a requested hardening setting (read back after create). */
  allowWeakHardening?: boolean;
  /**
   * Services (MCP servers) will write the workspace too: its files are made group-writable after the
   * copy-in, for the agent's group that every service shares (service.ts).
   */
  sharedWorkspace?: boolean;
  progress?: (line: string) => void;
}

export interface StartTimings {
  createMs: number;
  startMs: number;
  copyMs: number;
  baselineMs: number;
  readyMs: number;
}

const DEFAULTS = {
  memoryBytes: 4 * 1024 ** 3,
  nanoCpus: 2e9,
  pidsLimit: 512,
  workspaceSizeBytes: 4 * 1024 ** 3,
  tmpSizeBytes: 1024 ** 3,
};
/**
 * The allow-listed environment every command gets. PATH is composed per run (see `commandPath`): the
 * image's own for the Bash tool with the toolbelt last, the toolbelt first for agent-ci's own commands.
 */
export const BASE_ENV: Readonly<Record<string, string>> = {
  PATH: FALLBACK_PATH,
  HOME: "/tmp/home",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  TERM: "dumb",
  CI: "true",
  AGENT_CI: "1",
  GIT_TERMINAL_PROMPT: "0",
  GIT_EDITOR: "true",
  GIT_PAGER: "cat",
  PAGER: "cat",
};

/**
 * Added where /workspace is not the agent's own (plan mode: root's; Podman: the keeper's, see spec): git
 * refuses a work tree another user owns ("dubious ownership") unless safe.directory names it, and config
 * from the environment counts. The repository's config there is the user's checkout's, not the agent's.
 */
const SAFE_DIRECTORY_ENV: Readonly<Record<string, string>> = {
  GIT_CONFIG_COUNT: "1",
  GIT_CONFIG_KEY_0: "safe.directory",
  GIT_CONFIG_VALUE_0: WORKSPACE_ROOT,
};

/** `--ca-cert`: the CA alone and the image's bundle with it, written by the keeper (the agent cannot change them). */
const CA_DIR = "/tmp/agent-ci-ca";
const CA_FILE = `${CA_DIR}/ca.pem`;
const CA_BUNDLE = `${CA_DIR}/bundle.pem`;
/** What OpenSSL, curl, git, pip, requests, npm and Node read for trusted CAs. */
const CA_ENV: Readonly<Record<string, string>> = {
  NODE_EXTRA_CA_CERTS: CA_FILE,
  SSL_CERT_FILE: CA_BUNDLE,
  CURL_CA_BUNDLE: CA_BUNDLE,
  GIT_SSL_CAINFO: CA_BUNDLE,
  PIP_CERT: CA_BUNDLE,
  REQUESTS_CA_BUNDLE: CA_BUNDLE,
  npm_config_cafile: CA_BUNDLE,
};
/** Where images keep their CA bundle (Debian and Alpine; Fedora and its kin). */
const IMAGE_CA_BUNDLES = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"];

/** How long a container whose helper cannot be restarted may take to read as stopped (a kill from outside). */
const RESTART_SETTLE_MS = 10_000;

/** The ledger's caller for setup commands (tool calls carry their tool_use id). */
export const SETUP_CALLER = "setup";

const live = new Set<DockerSandbox>();

/** Removes every sandbox this process still holds (SIGINT/SIGTERM path). */
export async function disposeAllSandboxes(): Promise<void> {
  await Promise.allSettled([...live].map((s) => s.dispose()));
}

function helperSource(): string {
  return fs.readFileSync(fileURLToPath(new URL("./helper/helper.cjs", import.meta.url)), "utf8");
}

/** Rejects when `signal` aborts; the command itself ends with the container (cancel removes it). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function sizeOption(bytes: number): string {
  return `${Math.floor(bytes / 1024)}k`;
}

/** /workspace's tmpfs: its size, its owner (the agent, or root in plan mode), no devices, no setuid. */
function workspaceMountOptions(options: DockerSandboxOptions, profile: EngineProfile): string {
  return `rw,exec,nosuid,nodev,size=${sizeOption(options.workspaceSizeBytes ?? DEFAULTS.workspaceSizeBytes)},${profile.workspaceOwner(Boolean(options.readOnlyWorkspace))}`;
}

function fsError(header: FailureHeader, p: string): SandboxFsError {
  return new SandboxFsError(header.code, header.message, p);
}

/** The run's container name: known before the container exists, so a watchdog can remove one being created. */
export function containerName(runId: string): string {
  return `agent-ci-${runId}`;
}

/** Every engine object a run may create, by name (the watchdog removes them without asking the sandbox). */
export function runEngineObjects(runId: string): { containers: string[]; volumes: string[] } {
  const egress = egressNames(runId);
  return {
    containers: [containerName(runId), copierName(runId), egress.sidecar],
    volumes: [workspaceVolumeName(runId), egress.volume],
  };
}

/** The answer's header, or the helper's error as a SandboxFsError for `p`. */
function okHeader<K extends HelperOp>(res: HelperResult<K>, p: string): ResponseHeader<K> {
  if (!res.ok) throw fsError(res.header, p);
  return res.header;
}

/** Where the tools of a run are found: which of the programs agent-ci's tools need the image has itself. */
export interface ToolSource {
  name: string;
  from: "image" | "agent-ci";
  path: string;
}
/** Programs reported by where they come from (the Bash tool finds the image's first). */
const REPORTED_TOOLS = ["bash", "git", "rg", "node", "tar", "python3", "go"];

/** Removes a run's sidecar (started, failed or still starting) and its volume, keeping the ledger read so far. */
async function removeStartedEgress(
  docker: Docker,
  runId: string,
  starting: Promise<EgressSidecar>,
): Promise<void> {
  const sidecar = await starting.catch(() => undefined);
  await sidecar?.sync();
  await (sidecar ? sidecar.dispose() : removeEgress(docker, runId));
}

/** Allowlist, and setup while it runs its commands, go out through the egress sidecar. */
function usesEgress(options: DockerSandboxOptions): boolean {
  return options.network === "allowlist" || (options.network === "setup" && Boolean(options.setup?.length));
}

/** Only "on" gives the container a network interface; the others have loopback (and the sidecar's socket). */
function networkMode(options: DockerSandboxOptions): string {
  return options.network === "on" ? "bridge" : "none";
}

const envList = (env: Readonly<Record<string, string>>): string[] =>
  Object.entries(env).map(([k, v]) => `${k}=${v}`);

export class DockerSandbox implements Sandbox, ServiceHost, AsyncDisposable {
  readonly root = WORKSPACE_ROOT;
  private helper!: HelperClient;
  private disposed = false;
  private disposing: Promise<void> | undefined;
  private baselineRecord: Baseline | undefined;
  copy: PackSummary = { files: 0, bytes: 0, skipped: [], isGitRepo: false };
  /** How the workspace came in: a copier container reading a bind mount, or a tar stream through the engine. */
  copiedBy: "copier" | "stream" | undefined;
  /** How the helper's requests travel: the direct socket (channel.ts), or the engine's exec stream. */
  helperChannel: "socket" | "stream" = "stream";
  /** The socket's directory, mounted into the container; undefined once it did not work for this run. */
  private channel: HelperChannel | undefined;
  /** A copier container was (or is being) made: dispose removes it too. */
  private copierUsed = false;
  hardening!: Hardening;
  image: ResolvedImage = { name: "", id: "", isDefault: true, env: {}, architecture: "" };
  /** The image is for another architecture than the engine's: its programs, and the toolbelt's, run emulated. */
  emulated = false;
  /** Which programs the image brings and which come from agent-ci's toolbelt (filled at start). */
  tools: ToolSource[] = [];
  timings: StartTimings = { createMs: 0, startMs: 0, copyMs: 0, baselineMs: 0, readyMs: 0 };
  helperRestarts = 0;
  private recovering: Promise<void> | undefined;
  private profile: EngineProfile = DOCKER_PROFILE;
  /** Network "allowlist": the run's egress proxy and its ledger. */
  egress: EgressSidecar | undefined;
  /** The sidecar while it starts (dispose waits for it, so one still starting is removed too). */
  private egressStart: Promise<EgressSidecar> | undefined;

  private get safeDirectoryEnv(): Readonly<Record<string, string>> {
    return this.profile.workspaceNotAgents || this.options.readOnlyWorkspace ? SAFE_DIRECTORY_ENV : {};
  }

  /**
   * The environment of one command. agent-ci's own commands (argv) find the toolbelt first and get nothing
   * from the image's environment (an LD_PRELOAD there must not reach them); the Bash tool's scripts get the
   * image's environment and PATH, with the toolbelt last so the image's own git and bash win.
   */
  private commandEnv(request: Pick<ExecRequest, "argv" | "env" | "caller">): Record<string, string> {
    const own = request.argv !== undefined;
    const imagePath = this.image.env.PATH ?? FALLBACK_PATH;
    const pathValue = own ? `${TOOLBELT_BIN}:${imagePath}` : `${imagePath}:${TOOLBELT_BIN}`;
    const proxy = this.egress?.active ? proxyEnv(request.caller) : {};
    const ca = this.options.caCertPem ? CA_ENV : {};
    return {
      ...(own ? {} : this.image.env),
      ...BASE_ENV,
      PATH: pathValue,
      ...this.safeDirectoryEnv,
      ...this.options.env,
      ...proxy,
      ...ca,
      ...request.env,
    };
  }

  /** The cgroup's OOM-kill count after the last check (undefined: the engine does not expose it). */
  private oomKills: number | undefined;

  private constructor(
    private readonly docker: Docker,
    private readonly container: Docker.Container,
    private readonly options: DockerSandboxOptions,
  ) {}

  get id(): string {
    return this.container.id;
  }

  get description(): string {
    return `Docker container ${this.container.id.slice(0, 12)} (${this.image.name}), workspace at ${WORKSPACE_ROOT}`;
  }

  get baseline(): string {
    return this.baselineRecord?.baseTree ?? "";
  }

  /** Creates, hardens, fills and baselines the run's container. On any failure nothing is left behind. */
  static async start(options: DockerSandboxOptions): Promise<DockerSandbox> {
    const workspace = path.resolve(options.workspaceDir);
    const st = fs.statSync(workspace, { throwIfNoEntry: false });
    if (!st) throw new WorkspaceError(`workspace ${options.workspaceDir} does not exist`);
    if (!st.isDirectory()) throw new WorkspaceError(`workspace ${options.workspaceDir} is not a directory`);
    // The copy is listed and checked while the engine prepares the container (an error here, such as a
    // workspace over the limit, ends the start before anything is copied).
    const planning = planWorkspaceCopy(workspace, {
      includeIgnored: options.includeIgnored,
      maxFiles: options.maxCopyFiles,
      maxBytes: options.maxCopyBytes,
      exclude: options.excludeFromCopy,
      worldReadable: options.readOnlyWorkspace,
    });
    planning.catch(() => undefined);
    const docker = createDockerClient();
    const engine = await pingEngine(docker);
    await reapOrphans(docker).catch(() => []);
    // The toolbelt is built for the image's architecture: a user image of another one (arm64 on an x86-64
    // engine, run under emulation) gets a toolbelt of its own. The default image is the engine's.
    const resolving = resolveImage(docker, options.image, options.progress);
    const architecture = userImage(options.image) ? (await resolving).architecture : engine.architecture;
    const emulated = Boolean(architecture) && architecture !== engine.architecture;
    if (emulated)
      options.progress?.(
        `the image is for ${architecture} and the engine runs ${engine.architecture}: its programs and agent-ci's run under emulation, several times slower`,
      );
    const [image, toolbelt] = await Promise.all([
      resolving,
      options.toolbeltVolume ??
        ensureToolbelt(docker, options.progress, {
          ulimits: containerUlimits(engine.profile),
          architecture: emulated ? architecture : undefined,
        }),
    ]);
    const t0 = performance.now();
    // The egress sidecar starts while the run's container is created and filled; both mount its volume.
    // The sidecar's container starts before the run's: the first to mount a new volume gives it its owner on
    // Podman, and the proxy (root, no capabilities) must be able to make its socket there.
    let egressStart: Promise<EgressSidecar> | undefined;
    let sidecarStarted: Promise<void> | undefined;
    if (usesEgress(options)) {
      await createEgressVolume(docker, options.runId);
      let started = () => {};
      sidecarStarted = new Promise<void>((resolve) => (started = resolve));
      egressStart = EgressSidecar.start(
        docker,
        options.runId,
        image.name,
        toolbelt,
        options.egress ?? { given: [], rules: [], privateHosts: [], hosts: {} },
        containerUlimits(engine.profile),
        started,
      );
      // A sidecar that fails before its container starts: the run's start goes on, and meets the failure below.
      void egressStart.catch(() => {}).finally(started);
    }
    let container: Docker.Container;
    let channel = options.helperChannel === "stream" ? undefined : HelperChannel.open();
    try {
      if (engine.profile.workspaceVolume)
        await createWorkspaceVolume(docker, options.runId, workspaceMountOptions(options, engine.profile));
      const create = () =>
        withTimeout(
          "a container create",
          docker.createContainer(DockerSandbox.spec(options, image.name, toolbelt, engine.profile, channel)),
        );
      container = await create().catch((e: unknown) => {
        // The engine does not see this host's files: no channel, the helper uses the exec stream.
        if (!channel || !engineElsewhere(e)) throw e;
        channel.close();
        channel = undefined;
        return create();
      });
    } catch (e) {
      channel?.close();
      await removeVolume(docker, workspaceVolumeName(options.runId)).catch(() => undefined);
      if (egressStart) await removeStartedEgress(docker, options.runId, egressStart);
      throw e;
    }
    const sandbox = new DockerSandbox(docker, container, options);
    sandbox.channel = channel;
    sandbox.profile = engine.profile;
    sandbox.egressStart = egressStart;
    live.add(sandbox);
    sandbox.image = image;
    sandbox.emulated = emulated;
    try {
      sandbox.timings.createMs = performance.now() - t0;
      const t1 = performance.now();
      await sidecarStarted;
      await withTimeout("a container start", container.start());
      if (egressStart) {
        sandbox.egress = await egressStart;
        await sandbox.egress.connect(container, KEEPER_USER);
      }
      if (options.caCertPem) await sandbox.installCaCert(options.caCertPem);
      sandbox.timings.startMs = performance.now() - t1;
      const t2 = performance.now();
      const copy = await planning;
      await Promise.all([sandbox.copyIn(copy, toolbelt), sandbox.startHelper()]);
      sandbox.copy = await copySummary(copy);
      if (options.sharedWorkspace && !options.readOnlyWorkspace) await sandbox.shareWorkspace();
      sandbox.timings.copyMs = performance.now() - t2;
      const refreshed = sandbox.refreshWorkspaceIndex();
      sandbox.hardening = await sandbox.readBackHardening(toolbelt);
      if (options.network === "allowlist")
        sandbox.hardening.networkMode = "none (egress only through the allowlist proxy)";
      sandbox.oomKills = await sandbox.readOomKills();
      sandbox.tools = await sandbox.findTools();
      await refreshed;
      const t3 = performance.now();
      sandbox.baselineRecord = new Baseline(sandbox, copy.isGitRepo);
      await sandbox.baselineRecord.record();
      sandbox.timings.baselineMs = performance.now() - t3;
      if (options.setup?.length) await sandbox.runSetup(options.setup);
      sandbox.timings.readyMs = performance.now() - t0;
      return sandbox;
    } catch (e) {
      await sandbox.dispose();
      throw e;
    }
  }

  private static spec(
    options: DockerSandboxOptions,
    image: string,
    toolbeltVolume: string,
    profile: EngineProfile,
    channel: HelperChannel | undefined,
  ): Docker.ContainerCreateOptions {
    const memory = options.memoryBytes ?? DEFAULTS.memoryBytes;
    return {
      name: containerName(options.runId),
      Image: image,
      // The toolbelt's sleep: the image needs none of its own.
      Entrypoint: [toolbeltProgram("sleep"), "infinity"],
      Cmd: [],
      User: KEEPER_USER,
      WorkingDir: WORKSPACE_ROOT,
      Env: envList(BASE_ENV),
      Labels: ownerLabels(options.runId),
      NetworkDisabled: false,
      HostConfig: {
        Init: true,
        ReadonlyRootfs: true,
        CapDrop: ["ALL"],
        SecurityOpt: ["no-new-privileges:true"],
        Privileged: false,
        PidsLimit: options.pidsLimit ?? DEFAULTS.pidsLimit,
        Memory: memory,
        MemorySwap: memory,
        NanoCpus: options.nanoCpus ?? DEFAULTS.nanoCpus,
        NetworkMode: networkMode(options),
        Ulimits: containerUlimits(profile),
        Tmpfs: {
          ...(profile.workspaceVolume ? {} : { [WORKSPACE_ROOT]: workspaceMountOptions(options, profile) }),
          "/tmp": `rw,exec,nosuid,nodev,size=${sizeOption(options.tmpSizeBytes ?? DEFAULTS.tmpSizeBytes)},mode=1777`,
        },
        // The toolbelt, read-only (filled already: the engine copies an image's content only into an empty volume).
        Mounts: [
          { Type: "volume", Source: toolbeltVolume, Target: TOOLBELT_DIR, ReadOnly: true },
          ...(profile.workspaceVolume ? [workspaceMount(options.runId)] : []),
          ...(usesEgress(options) ? [egressMount(options.runId, true)] : []),
          ...(channel ? [channel.mount] : []),
        ],
      },
    };
  }

  private async oneShotExec(
    cmd: string[],
    user: string,
    stdin?: (sink: NodeJS.WritableStream) => Promise<void>,
  ): Promise<{ exitCode: number; output: string }> {
    const exec = await withTimeout(
      "an exec create",
      this.container.exec({
        Cmd: cmd,
        AttachStdin: Boolean(stdin),
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        User: user,
        Env: envList({ ...BASE_ENV, PATH: TOOLBELT_BIN }),
      }),
    );
    const stream = (await withTimeout(
      "an exec start",
      exec.start({ hijack: true, stdin: Boolean(stdin) }),
    )) as Duplex;
    const out = new PassThrough();
    let output = "";
    out.on("data", (d: Buffer) => {
      output = (output + d.toString("utf8")).slice(-8000);
    });
    this.docker.modem.demuxStream(stream, out, out);
    const ended = new Promise<void>((resolve, reject) => {
      stream.on("end", resolve);
      stream.on("close", resolve);
      stream.on("error", reject);
    });
    if (stdin) await stdin(stream);
    await ended;
    const info = await withTimeout("an exec inspect", exec.inspect());
    return { exitCode: info.ExitCode ?? -1, output };
  }

  private async installCaCert(pem: string): Promise<void> {
    const script = `umask 022 && mkdir -p ${CA_DIR} && cat > ${CA_FILE} && { for f in ${IMAGE_CA_BUNDLES.join(" ")}; do [ -f "$f" ] && cat "$f" && break; done; cat ${CA_FILE}; } > ${CA_BUNDLE}`;
    const res = await this.oneShotExec([toolbeltProgram("bash"), "-c", script], KEEPER_USER, async (sink) => {
      sink.end(pem.endsWith("\n") ? pem : `${pem}\n`);
    });
    if (res.exitCode !== 0)
      throw new EngineError(`installing the --ca-cert certificate failed: ${res.output.trim()}`);
  }

  /**
   * Fills /workspace: with a copier container reading the host's workspace from a bind mount, where the
   * engine sees this host's files (copier.ts), else as a tar stream into the container's `tar -x`.
   */
  private async copyIn(copy: WorkspaceCopy, toolbeltVolume: string): Promise<void> {
    if (this.profile.workspaceVolume && !this.options.packer) {
      this.copierUsed = true;
      const owner = this.options.readOnlyWorkspace ? 0 : AGENT_UID;
      const ulimits = containerUlimits(this.profile);
      if (
        await copyThroughBind(this.docker, {
          runId: this.options.runId,
          image: this.image.name,
          toolbeltVolume,
          copy,
          owner,
          ulimits,
        })
      ) {
        this.copiedBy = "copier";
        return;
      }
      this.options.progress?.(
        "copy-in: the engine does not see this host's files (a remote engine?): streaming the workspace instead",
      );
    }
    await this.streamCopy(copy);
    this.copiedBy = "stream";
  }

  private async streamCopy(copy: WorkspaceCopy): Promise<void> {
    let packError: unknown;
    const user = this.profile.copyInUser(Boolean(this.options.readOnlyWorkspace));
    if (this.profile.opensWorkspace && !this.options.readOnlyWorkspace) {
      const opened = await this.oneShotExec([toolbeltProgram("chmod"), "0777", WORKSPACE_ROOT], KEEPER_USER);
      if (opened.exitCode !== 0)
        throw new EngineError(`preparing ${WORKSPACE_ROOT} failed: ${opened.output.trim()}`);
    }
    const packer = this.options.packer ?? (await detectHostPacker());
    const copying = this.oneShotExec(
      [
        toolbeltProgram("tar"),
        "-x",
        "-f",
        "-",
        "-C",
        WORKSPACE_ROOT,
        "--no-same-owner",
        "--delay-directory-restore",
        ...extractFlags(packer),
      ],
      user,
      async (sink) => {
        try {
          await packWorkspace(copy, sink, packer);
        } catch (e) {
          packError = e;
        } finally {
          sink.end();
        }
      },
    );
    const result = await copying.catch((e: unknown) => {
      throw packError ?? e;
    });
    if (packError) throw packError;
    if (result.exitCode !== 0) throw copyInFailed(result.output);
  }

  private async startHelper(): Promise<void> {
    const env = {
      ...BASE_ENV,
      PATH: `${TOOLBELT_BIN}:${FALLBACK_PATH}`,
      ...this.options.env,
      AGENT_CI_ROOTS: `${WORKSPACE_ROOT}:${OUTPUTS_DIR}`,
    };
    const exec = await withTimeout(
      "an exec create",
      this.container.exec({
        Cmd: [toolbeltProgram("node"), "-e", helperSource()],
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        User: AGENT_USER,
        WorkingDir: "/",
        Env: envList(env),
      }),
    );
    const stream = (await withTimeout("an exec start", exec.start({ hijack: true, stdin: true }))) as Duplex;
    this.helper = new HelperClient(stream, (s, out, err) => this.docker.modem.demuxStream(s, out, err));
    try {
      // Node.js starts in well under a second; under emulation it takes seconds, more on a loaded host.
      await withTimeout("the exec helper's start", this.helper.ready, this.emulated ? 120_000 : 30_000);
    } catch (e) {
      throw new EngineError(
        `the exec helper did not start in the container (from agent-ci's toolbelt at ${TOOLBELT_DIR}${this.emulated ? `; the image is for ${this.image.architecture}, run under emulation` : ""}): ${(e as Error).message}`,
      );
    }
    this.helperChannel = "stream";
    if (this.channel) await this.connectChannel(this.channel);
  }

  /**
   * Moves the helper's requests onto the direct socket. Where it cannot connect (an engine in a VM that
   * shares the path but not its sockets), the run goes on over the exec stream and stops trying.
   */
  private async connectChannel(channel: HelperChannel): Promise<void> {
    const token = channelToken();
    let listening: ChannelListener | undefined;
    try {
      listening = await channel.listen(token);
      const asked = await this.helper.request("channel", { path: CHANNEL_SOCKET, token });
      if (!asked.ok) throw new Error(asked.header.message);
      this.helper.adopt(
        await withTimeout(
          "the helper's connection to its channel",
          listening.connection,
          this.emulated ? 60_000 : 10_000,
        ),
      );
      this.helperChannel = "socket";
    } catch (e) {
      if (e instanceof SandboxGoneError) throw e;
      this.channel = undefined;
      channel.close();
      this.options.progress?.(
        `the exec helper could not use agent-ci's local socket (${(e as Error).message}); its requests go through the engine's exec stream`,
      );
    } finally {
      listening?.close();
    }
  }

  private async request<K extends HelperOp>(
    op: K,
    request: HelperOps[K]["request"],
    body?: Uint8Array,
  ): Promise<HelperResult<K>> {
    if (this.disposed) throw new SandboxGoneError("the sandbox was disposed");
    try {
      return await this.helper.request(op, request, body);
    } catch (e) {
      if (!(e instanceof SandboxGoneError)) throw e;
      await this.recoverHelper(e);
      throw new SandboxFsError(
        "EHELPERDIED",
        "the sandbox's exec helper was killed during this call (a command killed every process of the agent user?); it was restarted and background shells were lost",
        "",
      );
    }
  }

  /** The helper died (the agent ran `kill -9 -1`?): restart it if the container still runs, else give up (D4, D5). */
  private recoverHelper(cause: Error): Promise<void> {
    this.recovering ??= this.restartHelper(cause).finally(() => {
      this.recovering = undefined;
    });
    return this.recovering;
  }

  private async restartHelper(cause: Error): Promise<void> {
    if (this.disposed) throw cause;
    if (this.helper.alive) return;
    const gone = async () => {
      const state = await this.containerState();
      if (state.running) return undefined;
      const why = state.oomKilled
        ? "it ran out of memory (OOMKilled)"
        : `state ${state.status}, exit code ${state.exitCode}`;
      return new SandboxGoneError(`the sandbox container is not running: ${why}`, { cause });
    };
    const early = await gone();
    if (early) throw early;
    try {
      await this.startHelper();
      this.helperRestarts += 1;
    } catch (e) {
      // A container being killed from outside still reads as running for a moment (the engine is still
      // tearing it down): wait, bounded, for it to stop before telling one case from the other.
      await withTimeout("a container wait", this.container.wait(), RESTART_SETTLE_MS).catch(() => undefined);
      throw (
        (await gone()) ??
        new SandboxGoneError(`the sandbox's exec helper could not be restarted: ${(e as Error).message}`, {
          cause,
        })
      );
    }
  }

  async containerState(): Promise<{
    running: boolean;
    status: string;
    oomKilled: boolean;
    exitCode: number | null;
  }> {
    try {
      const info = await withTimeout("a container inspect", this.container.inspect(), 10_000);
      return {
        running: info.State.Running,
        status: info.State.Status,
        oomKilled: info.State.OOMKilled,
        exitCode: info.State.ExitCode,
      };
    } catch {
      return { running: false, status: "removed", oomKilled: false, exitCode: null };
    }
  }

  private async readBackHardening(toolbeltVolume: string): Promise<Hardening> {
    const info = await withTimeout("a container inspect", this.container.inspect());
    const inside = okHeader(await this.helper.request("ping", {}), "");
    const userns = await this.helper.request("exec", {
      argv: [toolbeltProgram("unshare"), "-U", "true"],
      cwd: "/",
      env: this.commandEnv({ argv: [] }),
      timeoutMs: 10_000,
    });
    const requested =
      DockerSandbox.spec(this.options, this.image.name, toolbeltVolume, this.profile, this.channel)
        .HostConfig ?? {};
    const hardening = assessHardening(
      requested,
      info.HostConfig,
      {
        uid: inside.uid,
        capEff: inside.capEff,
        noNewPrivs: inside.noNewPrivs,
        seccomp: inside.seccomp,
        userNamespaceOpen: userns.ok && userns.header.exitCode === 0,
      },
      { user: AGENT_USER, workspaceWritableByAgent: !this.options.readOnlyWorkspace },
    );
    if (hardening.missing.length && !this.options.allowWeakHardening) {
      throw new EngineError(
        `the engine did not apply these sandbox settings: ${hardening.missing.join("; ")}. ` +
          "Use an engine that honours them, or pass --allow-weak-hardening to run anyway (the report will say so).",
      );
    }
    return hardening;
  }

  /** Where each reported program comes from: the image's PATH first (as the Bash tool sees it), else the toolbelt. */
  private async findTools(): Promise<ToolSource[]> {
    const script = 'for t in "$@"; do printf "%s\\t%s\\n" "$t" "$(command -v "$t" || true)"; done';
    const res = await this.exec({
      script: `set -- ${REPORTED_TOOLS.join(" ")}; ${script}`,
      cwd: "/",
      timeoutMs: 10_000,
    });
    const tools: ToolSource[] = [];
    for (const line of res.stdout.toString("utf8").split("\n")) {
      const [name, where] = line.split("\t");
      if (!name || !where) continue;
      tools.push({ name, from: where.startsWith(`${TOOLBELT_BIN}/`) ? "agent-ci" : "image", path: where });
    }
    return tools;
  }

  /**
   * The container cgroup's OOM-kill counter (cgroup v2 `memory.events`, v1 `memory.oom_control`). Docker
   * sets `State.OOMKilled` only when the container itself exits, so a command killed by the OOM killer
   * in a running container is recognised by this counter going up (C10).
   */
  private async readOomKills(): Promise<number | undefined> {
    try {
      const script =
        "cat /sys/fs/cgroup/memory.events 2>/dev/null || cat /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null";
      const argv = [toolbeltProgram("bash"), "-c", script];
      const res = await this.request("exec", {
        argv,
        cwd: "/",
        env: this.commandEnv({ argv }),
        timeoutMs: 10_000,
      });
      const match = /^oom_kill (\d+)$/m.exec(res.body.toString("utf8"));
      return match ? Number(match[1]) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Set when a SIGKILL'd command was ended by the OOM killer (the counter went up since the last check). */
  private async oomKilled(killed: boolean): Promise<ExecResult["oomKilled"]> {
    if (!killed || this.oomKills === undefined) return undefined;
    const now = await this.readOomKills();
    if (now === undefined) return undefined;
    const before = this.oomKills;
    this.oomKills = now;
    return now > before ? { memoryLimitBytes: this.hardening.memoryBytes } : undefined;
  }

  /**
   * Brings the workspace's own git index up to date with the copied files. Every copied file has a new
   * inode and ctime, so the index's stat data matches none of them: without this, the agent's first
   * `git status` re-hashes the whole tree (on 3,000 files, ~100 ms more than the ones after). Done here,
   * while the hardening read-back waits on the engine. Never fails the start: a repository git cannot
   * refresh (a worktree's `.git` file, a lock) is left as it was. Plan mode's tree is root's and stays so.
   */
  private async refreshWorkspaceIndex(): Promise<void> {
    if (!this.copy.isGitRepo || this.options.readOnlyWorkspace) return;
    await this.exec({
      argv: [
        "git",
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.hooksPath=/dev/null",
        "update-index",
        "-q",
        "--refresh",
      ],
      timeoutMs: 120_000,
    }).catch(() => undefined);
  }

  /** The patch from the baseline to the tree as it is now (baseline.ts). */
  async exportPatch(exclude?: (relPath: string) => string | undefined): Promise<ExportedPatch> {
    if (!this.baselineRecord) throw new EngineError("the sandbox has no baseline");
    return this.baselineRecord.exportPatch(exclude);
  }

  private async runSetup(commands: string[]): Promise<void> {
    for (const command of commands) {
      this.options.progress?.(`setup: ${command}`);
      const res = await this.exec({ script: command, timeoutMs: 30 * 60_000, caller: SETUP_CALLER });
      if (res.exitCode !== 0) {
        const tail = Buffer.concat([res.stdout, res.stderr]).toString("utf8").trim().slice(-2000);
        const refused = res.egressRefused?.length
          ? `\n${res.egressRefused.join("\n")} (widen it with --setup-allow-domain)`
          : "";
        throw new WorkspaceError(
          `setup command failed (exit ${res.exitCode}): ${command}\n${tail}${refused}`,
        );
      }
    }
    if (this.options.network !== "setup") return;
    // Nothing setup started may carry the network into the agent's phase (C18): kill every process of
    // the agent user (the helper too), end the egress proxy, then start a fresh helper.
    await this.oneShotExec([toolbeltProgram("bash"), "-c", "kill -9 -1 2>/dev/null; true"], AGENT_USER);
    await this.egress?.stop();
    this.hardening.networkMode = "none (setup went through the egress proxy, ended before the agent)";
    await this.startHelper();
  }

  // ---- Sandbox ----

  async exec(request: ExecRequest): Promise<ExecResult> {
    const stdin = typeof request.stdin === "string" ? Buffer.from(request.stdin) : request.stdin;
    const op: ExecOpRequest = {
      argv: request.argv,
      script: request.script,
      mergeStderr: request.mergeStderr,
      cwd: request.cwd ?? WORKSPACE_ROOT,
      confineCwd: request.confineCwd,
      env: this.commandEnv(request),
      timeoutMs: request.timeoutMs,
      maxOutputBytes: request.maxOutputBytes,
      stdin: stdin !== undefined,
    };
    let res: HelperResult<"exec">;
    try {
      const pending = this.request("exec", op, stdin);
      // A cancel stops the wait; the request may still fail later (the container removed): not unhandled.
      pending.catch(() => {});
      res = await abortable(pending, request.signal);
    } catch (e) {
      if (e instanceof SandboxFsError && e.code === "EHELPERDIED") {
        const oomKilled = await this.oomKilled(true);
        const msg = Buffer.from(
          (oomKilled
            ? "the sandbox's exec helper was killed by the out-of-memory killer during this call; it was restarted and background shells were lost"
            : e.message) + "\n",
        );
        return {
          exitCode: 137,
          signal: "SIGKILL",
          stdout: Buffer.alloc(0),
          stderr: msg,
          stdoutOmitted: 0,
          stderrOmitted: 0,
          stdoutHead: 0,
          stderrHead: msg.length,
          timedOut: false,
          outputKilled: false,
          pipesHeld: false,
          durationMs: 0,
          oomKilled,
        };
      }
      throw e;
    }
    const h = okHeader(res, request.argv?.[0] ?? "bash");
    const outLen = h.stdoutBytes ?? 0;
    const killed = (h.signal === "SIGKILL" || h.exitCode === 137) && !h.timedOut && !h.outputKilled;
    const oomKilled = await this.oomKilled(killed);
    const egressRefused =
      request.caller && this.egress?.active ? await this.egress.refusalsOf(request.caller) : undefined;
    return {
      egressRefused: egressRefused?.length ? egressRefused : undefined,
      exitCode: h.exitCode,
      signal: h.signal,
      stdout: res.body.subarray(0, outLen),
      stderr: h.spawnError ? Buffer.from(h.spawnError) : res.body.subarray(outLen),
      stdoutOmitted: h.stdoutOmitted ?? 0,
      stderrOmitted: h.stderrOmitted ?? 0,
      stdoutHead: h.stdoutHead ?? 0,
      stderrHead: h.stderrHead ?? 0,
      timedOut: Boolean(h.timedOut),
      outputKilled: Boolean(h.outputKilled),
      pipesHeld: Boolean(h.pipesHeld),
      cwd: h.cwd,
      durationMs: h.durationMs,
      oomKilled,
    };
  }

  async stat(p: string, access: FileAccess = {}): Promise<FileStat | null> {
    return okHeader(await this.request("stat", { path: p, confine: access.confine ?? true }), p).stat;
  }

  async resolvePath(p: string, access: FileAccess = {}): Promise<string> {
    return okHeader(await this.request("resolve", { path: p, confine: access.confine ?? true }), p).realPath;
  }

  async readFile(p: string, options: ReadOptions = {}): Promise<{ data: Buffer; stat: FileStat } | null> {
    const res = await this.request("read", {
      path: p,
      confine: options.confine ?? true,
      start: options.start,
      length: options.length,
      maxSize: options.maxSize,
    });
    if (!res.ok && (res.header.code === "ENOENT" || res.header.code === "ENOTDIR")) return null;
    return { data: res.body, stat: okHeader(res, p).stat };
  }

  async writeFile(
    p: string,
    data: string | Uint8Array,
    options: FileAccess & { mode?: number } = {},
  ): Promise<FileStat> {
    const body = typeof data === "string" ? Buffer.from(data) : data;
    return okHeader(
      await this.request("write", { path: p, confine: options.confine ?? true, mode: options.mode }, body),
      p,
    ).stat;
  }

  async startBackground(id: string, request: ExecRequest): Promise<void> {
    const res = await this.request("bg-start", {
      job: id,
      script: request.script,
      argv: request.argv,
      cwd: request.cwd ?? WORKSPACE_ROOT,
      env: this.commandEnv(request),
      maxOutputBytes: request.maxOutputBytes,
    });
    okHeader(res, id);
  }

  async readBackground(id: string): Promise<BackgroundStatus> {
    const res = await this.request("bg-read", { job: id });
    const h = okHeader(res, id);
    return {
      status: h.status,
      exitCode: h.exitCode,
      signal: h.signal,
      output: res.body,
      runtimeMs: h.runtimeMs,
    };
  }

  async killBackground(id: string): Promise<void> {
    okHeader(await this.request("bg-kill", { job: id }), id);
  }

  /** A long-lived process as a user of its own (service.ts); it ends with the container. */
  async startService(request: ServiceRequest): Promise<ServiceProcess> {
    if (this.disposed) throw new SandboxGoneError("the sandbox was disposed");
    // The Bash tool's environment (the image's, its PATH first), its own home, then its own variables.
    const env = {
      ...this.commandEnv({ env: {}, caller: request.caller }),
      HOME: serviceHome(request.name),
      ...request.env,
    };
    return startServiceExec(this.docker, this.container, {
      argv: serviceArgv(request),
      user: serviceUser(request.index),
      env,
    });
  }

  /** The copied tree group-writable (the agent owns it), so that services in its group may change it. */
  private async shareWorkspace(): Promise<void> {
    const res = await this.exec({
      argv: ["chmod", "-R", "g+w", WORKSPACE_ROOT],
      cwd: "/",
      timeoutMs: 120_000,
    });
    if (res.exitCode !== 0)
      throw new EngineError(
        `making ${WORKSPACE_ROOT} group-writable failed: ${res.stderr.toString("utf8").trim()}`,
      );
  }

  /** Removes the container, its volumes and helpers. Safe to call more than once, and on every path out. */
  dispose(): Promise<void> {
    // Every caller waits for the one removal: a second signal's exit must not cut off the volumes' removal,
    // which follows the containers'.
    this.disposing ??= this.removeEngineObjects().finally(() => live.delete(this));
    return this.disposing;
  }

  private async removeEngineObjects(): Promise<void> {
    this.disposed = true;
    this.helper?.close();
    this.channel?.close();
    try {
      // A copier still running (a cancel during the copy) holds the workspace volume too.
      const copier = this.copierUsed
        ? [removeContainer(this.docker.getContainer(copierName(this.options.runId)))]
        : [];
      await Promise.all([removeContainer(this.container), ...copier]);
    } finally {
      // After the containers (the sidecar's tunnels closed and recorded): a volume goes once no container uses it.
      try {
        if (this.profile.workspaceVolume)
          await removeVolume(this.docker, workspaceVolumeName(this.options.runId));
      } finally {
        if (this.egressStart) await removeStartedEgress(this.docker, this.options.runId, this.egressStart);
      }
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}

/** A fresh run id: sortable by time, unique across concurrent runs on one host. */
export function newRunId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*/, "").replace("T", "-");
  return `${stamp}-${crypto.randomBytes(3).toString("hex")}`;
}
