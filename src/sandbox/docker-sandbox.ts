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
import { packWorkspace, type PackSummary, WorkspaceError } from "./archive.js";
import { createDockerClient, ownerLabels, pingEngine, reapOrphans, withTimeout } from "./engine.js";
import { HelperClient, type HelperResponse } from "./helper-client.js";
import { REQUIRED_TOOLS, resolveImage } from "./image.js";
import {
  type BackgroundStatus,
  EngineError,
  type ExecRequest,
  type ExecResult,
  type FileAccess,
  type FileStat,
  OUTPUTS_DIR,
  type Sandbox,
  SandboxFsError,
  SandboxGoneError,
  WORKSPACE_ROOT,
} from "./sandbox.js";

export type NetworkPolicy = "none" | "setup" | "on";

export interface DockerSandboxOptions {
  runId: string;
  workspaceDir: string;
  /** A user-named image; default: Dockerfile.sandbox, built on demand. */
  image?: string;
  network?: NetworkPolicy;
  /** Run with network before the agent starts (network "setup"), then the network is cut. */
  setup?: string[];
  memoryBytes?: number;
  nanoCpus?: number;
  pidsLimit?: number;
  workspaceSizeBytes?: number;
  tmpSizeBytes?: number;
  /** Plan mode: the workspace is owned by root in the container, so nothing the agent runs can write it. */
  readOnlyWorkspace?: boolean;
  /** Values passed through to commands by name (`--env NAME`). */
  env?: Record<string, string>;
  includeIgnored?: boolean;
  maxCopyFiles?: number;
  maxCopyBytes?: number;
  /** Files kept out of the container (Read deny rules), with the reason. */
  excludeFromCopy?: (relPath: string) => string | undefined;
  /** Run even when the engine did not apply a requested hardening setting (read back after create). */
  allowWeakHardening?: boolean;
  progress?: (line: string) => void;
}

export interface Hardening {
  user: string;
  uid: number | null;
  capEff: string;
  noNewPrivileges: boolean;
  seccomp: string;
  readonlyRootfs: boolean;
  capDrop: string[];
  networkMode: string;
  pidsLimit: number | null;
  memoryBytes: number;
  nanoCpus: number;
  init: boolean;
  privileged: boolean;
  runtime: string;
  workspaceWritableByAgent: boolean;
  /** Requested settings the engine did not apply (empty when all held). */
  missing: string[];
}

export interface PatchFileStat {
  path: string;
  added: number;
  removed: number;
  binary: boolean;
}

export interface ExportedPatch {
  patch: Buffer;
  files: PatchFileStat[];
  baseTree: string;
  tree: string;
  /** Changed paths left out of the patch by `exclude`, with the reason. */
  excluded: Array<{ path: string; reason: string }>;
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
const AGENT_USER = "1000:1000";
/**
 * The container's own processes (init and its `sleep`) run as another unprivileged user, so that a
 * `kill -9 -1` by the agent cannot stop the container: it kills only the agent user's processes.
 */
const KEEPER_USER = "1001:1001";
const STATE_DIR = "/tmp/.agent-ci";
/**
 * A changed file larger than this is left out of the patch, and the report says so (C11): a patch of huge
 * blobs could not be held in memory as one string, posted or reviewed, and it would cost the whole patch.
 */
export const MAX_PATCH_FILE_BYTES = 50 * 1024 * 1024;
const BASELINE_GIT_DIR = `${STATE_DIR}/baseline.git`;

export const BASE_ENV: Readonly<Record<string, string>> = {
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
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

/** git as agent-ci runs it on the agent's tree: nothing from the agent's config can change the output (U4). */
const GIT_ENV: Record<string, string> = {
  GIT_DIR: BASELINE_GIT_DIR,
  GIT_WORK_TREE: WORKSPACE_ROOT,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_ATTR_NOSYSTEM: "1",
  GIT_OPTIONAL_LOCKS: "0",
};
const GIT_CONFIG = [
  "core.autocrlf=false",
  "core.safecrlf=false",
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "core.excludesFile=/dev/null",
  "core.attributesFile=/dev/null",
  "core.quotePath=false",
  "diff.noprefix=false",
  "diff.mnemonicPrefix=false",
  "diff.relative=false",
  "diff.external=",
  "user.name=agent-ci",
  "user.email=agent-ci@localhost",
].flatMap((kv) => ["-c", kv]);
/** Written over the private repository's config before every use, in case the agent edited it. */
const BASELINE_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfilemode = true\n";

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

function fsError(res: HelperResponse, p: string): SandboxFsError {
  return new SandboxFsError(String(res.header.code ?? "EHELPER"), String(res.header.message ?? "failed"), p);
}

/** The run's container name: known before the container exists, so a watchdog can remove one being created. */
export function containerName(runId: string): string {
  return `agent-ci-${runId}`;
}

export class DockerSandbox implements Sandbox, AsyncDisposable {
  readonly root = WORKSPACE_ROOT;
  private helper!: HelperClient;
  private disposed = false;
  private baselineTree = "";
  copy: PackSummary = { files: 0, bytes: 0, skipped: [], isGitRepo: false };
  hardening!: Hardening;
  image = { name: "", id: "", isDefault: true };
  timings: StartTimings = { createMs: 0, startMs: 0, copyMs: 0, baselineMs: 0, readyMs: 0 };
  helperRestarts = 0;
  private recovering: Promise<void> | undefined;
  /** The engine is Podman's Docker-compatible API (a few create settings differ; see spec()). */
  private podman = false;

  private get safeDirectoryEnv(): Readonly<Record<string, string>> {
    return this.podman || this.options.readOnlyWorkspace ? SAFE_DIRECTORY_ENV : {};
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
    return this.baselineTree;
  }

  /** Creates, hardens, fills and baselines the run's container. On any failure nothing is left behind. */
  static async start(options: DockerSandboxOptions): Promise<DockerSandbox> {
    const workspace = path.resolve(options.workspaceDir);
    const st = fs.statSync(workspace, { throwIfNoEntry: false });
    if (!st) throw new WorkspaceError(`workspace ${options.workspaceDir} does not exist`);
    if (!st.isDirectory()) throw new WorkspaceError(`workspace ${options.workspaceDir} is not a directory`);
    const docker = createDockerClient();
    const engine = await pingEngine(docker);
    await reapOrphans(docker).catch(() => []);
    const image = await resolveImage(docker, options.image, options.progress);
    const t0 = performance.now();
    const container = await withTimeout("a container create", docker.createContainer(DockerSandbox.spec(options, image.name, engine.podman)));
    const sandbox = new DockerSandbox(docker, container, options);
    sandbox.podman = engine.podman;
    live.add(sandbox);
    sandbox.image = image;
    try {
      sandbox.timings.createMs = performance.now() - t0;
      const t1 = performance.now();
      await withTimeout("a container start", container.start());
      sandbox.timings.startMs = performance.now() - t1;
      const t2 = performance.now();
      const [copy] = await Promise.all([sandbox.copyIn(workspace), sandbox.startHelper()]);
      sandbox.copy = copy;
      sandbox.timings.copyMs = performance.now() - t2;
      sandbox.hardening = await sandbox.readBackHardening();
      sandbox.oomKills = await sandbox.readOomKills();
      if (!image.isDefault) await sandbox.preflight();
      const t3 = performance.now();
      sandbox.baselineTree = await sandbox.recordBaseline();
      sandbox.timings.baselineMs = performance.now() - t3;
      if (options.network === "setup") await sandbox.runSetup(options.setup ?? []);
      sandbox.timings.readyMs = performance.now() - t0;
      return sandbox;
    } catch (e) {
      await sandbox.dispose();
      throw e;
    }
  }

  private static spec(options: DockerSandboxOptions, image: string, podman = false): Docker.ContainerCreateOptions {
    // Podman 4.3 rejects tmpfs uid=/gid= ("unknown mount option") and the runtime gives the tmpfs the mode
    // of the image's /workspace; `U` hands it to the container user (the keeper), and copyIn opens it up.
    const workspaceOwner = podman ? "U" : `${options.readOnlyWorkspace ? "uid=0,gid=0" : "uid=1000,gid=1000"},mode=0755`;
    const memory = options.memoryBytes ?? DEFAULTS.memoryBytes;
    return {
      name: containerName(options.runId),
      Image: image,
      Entrypoint: ["sleep", "infinity"],
      Cmd: [],
      User: KEEPER_USER,
      WorkingDir: WORKSPACE_ROOT,
      Env: Object.entries(BASE_ENV).map(([k, v]) => `${k}=${v}`),
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
        NetworkMode: (options.network ?? "none") === "none" ? "none" : "bridge",
        // Rootful Podman 4.3 otherwise raises nofile and nproc to its own maxima, and the container fails to
        // start where the service lacks CAP_SYS_RESOURCE ("error setting rlimit"); Docker keeps the daemon's.
        Ulimits: [{ Name: "nofile", Soft: 4096, Hard: 4096 }, ...(podman ? [{ Name: "nproc", Soft: 32768, Hard: 32768 }] : [])],
        Tmpfs: {
          [WORKSPACE_ROOT]: `rw,exec,nosuid,nodev,size=${sizeOption(options.workspaceSizeBytes ?? DEFAULTS.workspaceSizeBytes)},${workspaceOwner}`,
          "/tmp": `rw,exec,nosuid,nodev,size=${sizeOption(options.tmpSizeBytes ?? DEFAULTS.tmpSizeBytes)},mode=1777`,
        },
      },
    };
  }

  private async oneShotExec(cmd: string[], user: string, stdin?: (sink: NodeJS.WritableStream) => Promise<void>): Promise<{ exitCode: number; output: string }> {
    const exec = await withTimeout(
      "an exec create",
      this.container.exec({
        Cmd: cmd,
        AttachStdin: Boolean(stdin),
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        User: user,
        Env: Object.entries(BASE_ENV).map(([k, v]) => `${k}=${v}`),
      }),
    );
    const stream = (await withTimeout("an exec start", exec.start({ hijack: true, stdin: Boolean(stdin) }))) as Duplex;
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

  private async copyIn(workspace: string): Promise<PackSummary> {
    let summary: PackSummary | undefined;
    let packError: unknown;
    // On Podman /workspace belongs to the keeper (see spec): it copies plan mode's tree itself, and opens the
    // directory to the agent otherwise. Either way the agent cannot write a plan-mode tree.
    const user = this.options.readOnlyWorkspace ? (this.podman ? KEEPER_USER : "0:0") : AGENT_USER;
    if (this.podman && !this.options.readOnlyWorkspace) {
      const opened = await this.oneShotExec(["chmod", "0777", WORKSPACE_ROOT], KEEPER_USER);
      if (opened.exitCode !== 0) throw new EngineError(`preparing ${WORKSPACE_ROOT} failed: ${opened.output.trim()}`);
    }
    const copying = this.oneShotExec(
      ["tar", "-x", "-f", "-", "-C", WORKSPACE_ROOT, "--no-same-owner", "--delay-directory-restore"],
      user,
      async (sink) => {
        try {
          summary = await packWorkspace(workspace, sink, {
            includeIgnored: this.options.includeIgnored,
            maxFiles: this.options.maxCopyFiles,
            maxBytes: this.options.maxCopyBytes,
            exclude: this.options.excludeFromCopy,
            worldReadable: this.options.readOnlyWorkspace,
          });
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
    if (result.exitCode !== 0 || !summary) {
      const full = /No space left on device|Wrote only/.test(result.output)
        ? " (the sandbox's workspace is full: raise --workspace-size)"
        : "";
      throw new WorkspaceError(`copying the workspace into the container failed${full}: ${result.output.trim().slice(-1000)}`);
    }
    return summary;
  }

  private async startHelper(): Promise<void> {
    const env = { ...BASE_ENV, ...this.options.env, AGENT_CI_ROOTS: `${WORKSPACE_ROOT}:${OUTPUTS_DIR}` };
    const exec = await withTimeout(
      "an exec create",
      this.container.exec({
        Cmd: ["node", "-e", helperSource()],
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        User: AGENT_USER,
        WorkingDir: "/",
        Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      }),
    );
    const stream = (await withTimeout("an exec start", exec.start({ hijack: true, stdin: true }))) as Duplex;
    this.helper = new HelperClient(stream, (s, out, err) => this.docker.modem.demuxStream(s, out, err));
    try {
      await withTimeout("the exec helper's start", this.helper.ready, 30_000);
    } catch (e) {
      throw new EngineError(
        `the exec helper did not start in the container (the image needs ${REQUIRED_TOOLS.join(", ")}): ${(e as Error).message}`,
      );
    }
  }

  private async request(header: Record<string, unknown>, body?: Uint8Array): Promise<HelperResponse> {
    if (this.disposed) throw new SandboxGoneError("the sandbox was disposed");
    try {
      return await this.helper.request(header, body);
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
      const why = state.oomKilled ? "it ran out of memory (OOMKilled)" : `state ${state.status}, exit code ${state.exitCode}`;
      return new SandboxGoneError(`the sandbox container is not running: ${why}`, { cause });
    };
    const early = await gone();
    if (early) throw early;
    try {
      await this.startHelper();
      this.helperRestarts += 1;
    } catch (e) {
      // A container being killed from outside still reads as running for a moment.
      throw (await gone()) ?? new SandboxGoneError(`the sandbox's exec helper could not be restarted: ${(e as Error).message}`, { cause });
    }
  }

  async containerState(): Promise<{ running: boolean; status: string; oomKilled: boolean; exitCode: number | null }> {
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

  private async readBackHardening(): Promise<Hardening> {
    const info = await withTimeout("a container inspect", this.container.inspect());
    const host = info.HostConfig;
    const inside = (await this.helper.request({ op: "ping" })).header;
    const want = DockerSandbox.spec(this.options, this.image.name, this.podman).HostConfig ?? {};
    const capDrop: string[] = host.CapDrop ?? [];
    const hardening: Hardening = {
      user: AGENT_USER,
      uid: typeof inside.uid === "number" ? inside.uid : null,
      capEff: String(inside.capEff ?? ""),
      noNewPrivileges: inside.noNewPrivs === "1",
      seccomp: String(inside.seccomp ?? ""),
      readonlyRootfs: Boolean(host.ReadonlyRootfs),
      capDrop,
      networkMode: String(host.NetworkMode ?? ""),
      pidsLimit: host.PidsLimit ?? null,
      memoryBytes: host.Memory ?? 0,
      nanoCpus: host.NanoCpus ?? 0,
      init: Boolean(host.Init),
      privileged: Boolean(host.Privileged),
      runtime: host.Runtime ?? "runc",
      workspaceWritableByAgent: !this.options.readOnlyWorkspace,
      missing: [],
    };
    const missing = hardening.missing;
    if (hardening.uid === 0 || hardening.uid === null) missing.push("non-root user");
    if (!/^0+$/.test(hardening.capEff)) missing.push(`capabilities dropped (CapEff ${hardening.capEff})`);
    if (!hardening.noNewPrivileges) missing.push("no-new-privileges");
    if (!hardening.readonlyRootfs) missing.push("read-only root filesystem");
    // Podman reports the dropped capabilities one by one instead of "ALL"; CapEff above is the proof.
    if (!capDrop.some((c) => /^(CAP_)?ALL$/i.test(c)) && capDrop.length < 10) missing.push("CapDrop ALL");
    if (hardening.pidsLimit !== want.PidsLimit) missing.push(`pids limit ${want.PidsLimit} (got ${hardening.pidsLimit})`);
    if (hardening.memoryBytes !== want.Memory) missing.push(`memory limit ${want.Memory} (got ${hardening.memoryBytes})`);
    if (hardening.nanoCpus !== want.NanoCpus) missing.push(`CPU limit ${want.NanoCpus} (got ${hardening.nanoCpus})`);
    if (!hardening.init) missing.push("init process");
    if (hardening.privileged) missing.push("unprivileged");
    if (want.NetworkMode === "none" && hardening.networkMode !== "none") missing.push("network none");
    if (hardening.seccomp === "0") missing.push("seccomp filter");
    // Docker's default seccomp profile refuses unshare(CLONE_NEWUSER) without CAP_SYS_ADMIN; Podman's
    // (containers-common) allows it, opening the kernel's user-namespace surface. Probed, not assumed.
    const userns = await this.helper.request({ op: "exec", argv: ["unshare", "-U", "true"], cwd: "/", env: BASE_ENV, timeoutMs: 10_000 });
    if (userns.header.exitCode === 0) missing.push("user namespaces blocked (the engine's seccomp profile allows unshare -U)");
    if (missing.length && !this.options.allowWeakHardening) {
      throw new EngineError(
        `the engine did not apply these sandbox settings: ${missing.join("; ")}. ` +
          "Use an engine that honours them, or pass --allow-weak-hardening to run anyway (the report will say so).",
      );
    }
    return hardening;
  }

  /**
   * The container cgroup's OOM-kill counter (cgroup v2 `memory.events`, v1 `memory.oom_control`). Docker
   * sets `State.OOMKilled` only when the container itself exits, so a command killed by the OOM killer
   * in a running container is recognised by this counter going up (C10).
   */
  private async readOomKills(): Promise<number | undefined> {
    try {
      const res = await this.request({
        op: "exec",
        script: "cat /sys/fs/cgroup/memory.events 2>/dev/null || cat /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null",
        cwd: "/",
        env: BASE_ENV,
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

  private async preflight(): Promise<void> {
    const check = REQUIRED_TOOLS.map((t) => `command -v ${t} >/dev/null 2>&1 || echo ${t}`).join("; ");
    const res = await this.exec({ argv: ["sh", "-c", check], timeoutMs: 10_000 });
    const missing = res.stdout.toString("utf8").split("\n").filter(Boolean);
    if (missing.length) {
      throw new EngineError(`image ${this.image.name} lacks tools agent-ci needs: ${missing.join(", ")}`);
    }
  }

  private async git(args: string[], options: { timeoutMs?: number; index?: string } = {}): Promise<ExecResult> {
    const env: Record<string, string> = { ...GIT_ENV, GIT_INDEX_FILE: options.index ?? `${STATE_DIR}/baseline.index` };
    if (args.includes("core.bare=true")) {
      // No work tree and an index that does not exist: git then reads no in-tree .gitattributes at all.
      delete env.GIT_WORK_TREE;
      env.GIT_INDEX_FILE = `${STATE_DIR}/no.index`;
    }
    const cwd = env.GIT_WORK_TREE ? WORKSPACE_ROOT : BASELINE_GIT_DIR;
    return this.exec({ argv: ["git", ...GIT_CONFIG, ...args], env, cwd, timeoutMs: options.timeoutMs ?? 300_000 });
  }

  private async gitOk(args: string[], options: { timeoutMs?: number; index?: string } = {}): Promise<string> {
    const res = await this.git(args, options);
    if (res.exitCode !== 0) {
      throw new EngineError(`git ${args[0]} failed in the sandbox (exit ${res.exitCode}): ${res.stderr.toString("utf8").trim().slice(-800)}`);
    }
    return res.stdout.toString("utf8").trim();
  }

  /** Resets agent-ci's private repository to a known config; the agent could have written to it. */
  private async resetPrivateRepo(): Promise<void> {
    await this.writeFile(`${BASELINE_GIT_DIR}/config`, BASELINE_CONFIG, { confine: false });
    await this.writeFile(`${BASELINE_GIT_DIR}/info/attributes`, "", { confine: false });
    await this.writeFile(`${BASELINE_GIT_DIR}/info/exclude`, "", { confine: false });
    const alternates = this.copy.isGitRepo ? `${WORKSPACE_ROOT}/.git/objects\n` : "";
    await this.writeFile(`${BASELINE_GIT_DIR}/objects/info/alternates`, alternates, { confine: false });
  }

  /**
   * Records the tree as copied in, in a private repository under /tmp (never the user's branches or
   * index). A git workspace's own index is reused as a stat cache so only changed files are hashed.
   */
  private async recordBaseline(): Promise<string> {
    await this.gitOk(["init", "-q"]);
    await this.resetPrivateRepo();
    if (this.copy.isGitRepo) {
      const index = await this.readFile(`${WORKSPACE_ROOT}/.git/index`, { confine: false }).catch(() => null);
      if (index) await this.writeFile(`${STATE_DIR}/baseline.index`, index.data, { confine: false });
    }
    const fast = ["-c", "core.checkStat=minimal", "-c", "core.trustctime=false"];
    let added = await this.git([...fast, "add", "-A"]);
    if (added.exitCode !== 0 && this.copy.isGitRepo) {
      // The repository's index could not be reused (split index, newer format): start from none.
      await this.exec({ argv: ["rm", "-f", `${STATE_DIR}/baseline.index`] });
      added = await this.git(["add", "-A"]);
    }
    if (added.exitCode !== 0) {
      throw new EngineError(`recording the baseline failed: ${added.stderr.toString("utf8").trim().slice(-800)}`);
    }
    return this.gitOk(["write-tree"]);
  }

  /**
   * The patch from the baseline to the tree as it is now, made by git inside the container with external
   * diff drivers and textconv off. Every file is re-hashed from a fresh index built from the baseline tree
   * id held here on the host, so nothing the agent did to git's files can hide a change (U4).
   */
  async exportPatch(exclude?: (relPath: string) => string | undefined): Promise<ExportedPatch> {
    const index = `${STATE_DIR}/export.index`;
    await this.resetPrivateRepo();
    await this.exec({ argv: ["rm", "-f", index] });
    await this.gitOk(["read-tree", this.baselineTree], { index });
    await this.gitOk(["add", "-A"], { index });
    const tree = await this.gitOk(["write-tree"], { index });
    const numstat = await this.gitOk(["diff-tree", "-r", "-z", "--no-renames", "--numstat", this.baselineTree, tree], { index });
    const sizes = await this.changedFileSizes(tree, index);
    const files: PatchFileStat[] = [];
    const excluded: ExportedPatch["excluded"] = [];
    // -z --numstat without renames: "added<TAB>removed<TAB>path" records, NUL-terminated.
    for (const record of numstat.split("\0")) {
      const [added = "0", removed = "0", ...rest] = record.split("\t");
      const file = rest.join("\t");
      if (!file) continue;
      const size = sizes.get(file) ?? 0;
      const reason =
        exclude?.(file) ??
        (size > MAX_PATCH_FILE_BYTES ? `it is ${Math.round(size / 2 ** 20)} MiB, over the ${MAX_PATCH_FILE_BYTES / 2 ** 20} MiB limit for one file in the patch` : undefined);
      if (reason) {
        excluded.push({ path: file, reason });
        continue;
      }
      const binary = added === "-";
      files.push({ path: file, added: binary ? 0 : Number(added), removed: binary ? 0 : Number(removed), binary });
    }
    if (!files.length) return { patch: Buffer.alloc(0), files, baseTree: this.baselineTree, tree, excluded };
    const out = `${STATE_DIR}/patch.diff`;
    const pathspecs = excluded.length ? ["--", ...files.map((f) => f.path)] : [];
    // Two trees need neither a work tree nor an index: run bare, so that a .gitattributes the agent wrote
    // (`* -diff`) cannot turn readable text changes into opaque binary patches.
    await this.gitOk(
      [
        "-c", "core.bare=true", "--literal-pathspecs",
        "diff-tree", "-r", "-p", "--binary", "--full-index", "--no-renames", "--no-ext-diff", "--no-textconv",
        "--no-color", `--output=${out}`, this.baselineTree, tree, ...pathspecs,
      ],
      { index },
    );
    const patch = await this.readFile(out, { confine: false });
    return { patch: patch?.data ?? Buffer.alloc(0), files, baseTree: this.baselineTree, tree, excluded };
  }

  /** Sizes of the changed files' new blobs (deleted files are absent), from git's own objects. */
  private async changedFileSizes(tree: string, index: string): Promise<Map<string, number>> {
    const raw = await this.gitOk(["diff-tree", "-r", "-z", "--no-renames", "--raw", this.baselineTree, tree], { index });
    // -z --raw: ":oldmode newmode oldsha newsha status" NUL path NUL, per file.
    const parts = raw.split("\0");
    const blobs = new Map<string, string[]>();
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const sha = parts[i]?.split(" ")[3];
      const file = parts[i + 1];
      if (!sha || !file || /^0+$/.test(sha)) continue;
      blobs.set(sha, [...(blobs.get(sha) ?? []), file]);
    }
    const sizes = new Map<string, number>();
    if (!blobs.size) return sizes;
    const res = await this.exec({
      argv: ["git", ...GIT_CONFIG, "cat-file", "--batch-check"],
      env: { ...GIT_ENV, GIT_INDEX_FILE: index },
      cwd: WORKSPACE_ROOT,
      stdin: [...blobs.keys()].join("\n") + "\n",
      timeoutMs: 300_000,
    });
    for (const line of res.stdout.toString("utf8").split("\n")) {
      const [sha, , size] = line.split(" ");
      for (const file of blobs.get(sha ?? "") ?? []) sizes.set(file, Number(size));
    }
    return sizes;
  }

  private async runSetup(commands: string[]): Promise<void> {
    for (const command of commands) {
      this.options.progress?.(`setup: ${command}`);
      const res = await this.exec({ script: command, timeoutMs: 30 * 60_000 });
      if (res.exitCode !== 0) {
        const tail = Buffer.concat([res.stdout, res.stderr]).toString("utf8").trim().slice(-2000);
        throw new WorkspaceError(`setup command failed (exit ${res.exitCode}): ${command}\n${tail}`);
      }
    }
    // Nothing setup started may carry the network into the agent's phase (C18): kill every process of
    // the agent user (the helper too), cut the network, then start a fresh helper.
    await this.oneShotExec(["sh", "-c", "kill -9 -1 2>/dev/null; true"], AGENT_USER);
    const info = await this.container.inspect();
    for (const name of Object.keys(info.NetworkSettings.Networks ?? {})) {
      await withTimeout("a network disconnect", this.docker.getNetwork(name).disconnect({ Container: this.container.id, Force: true }));
    }
    const after = await this.container.inspect();
    if (Object.keys(after.NetworkSettings.Networks ?? {}).length) throw new EngineError("cutting the network after setup failed");
    this.hardening.networkMode = "none (cut after setup)";
    await this.startHelper();
  }

  // ---- Sandbox ----

  async exec(request: ExecRequest): Promise<ExecResult> {
    const stdin = typeof request.stdin === "string" ? Buffer.from(request.stdin) : request.stdin;
    const header = {
      op: "exec",
      argv: request.argv,
      script: request.script,
      cwd: request.cwd ?? WORKSPACE_ROOT,
      env: { ...BASE_ENV, ...this.safeDirectoryEnv, ...this.options.env, ...request.env },
      timeoutMs: request.timeoutMs,
      maxOutputBytes: request.maxOutputBytes,
      stdin: stdin !== undefined,
    };
    let res: HelperResponse;
    try {
      const pending = this.request(header, stdin);
      // A cancel stops the wait; the request may still fail later (the container removed): not unhandled.
      pending.catch(() => {});
      res = await abortable(pending, request.signal);
    } catch (e) {
      if (e instanceof SandboxFsError && e.code === "EHELPERDIED") {
        const oomKilled = await this.oomKilled(true);
        const msg = Buffer.from((oomKilled ? "the sandbox's exec helper was killed by the out-of-memory killer during this call; it was restarted and background shells were lost" : e.message) + "\n");
        return {
          exitCode: 137, signal: "SIGKILL", stdout: Buffer.alloc(0), stderr: msg, stdoutOmitted: 0, stderrOmitted: 0,
          stdoutHead: 0, stderrHead: msg.length, timedOut: false, outputKilled: false, pipesHeld: false, durationMs: 0, oomKilled,
        };
      }
      throw e;
    }
    const h = res.header;
    const outLen = Number(h.stdoutBytes ?? 0);
    const killed = (h.signal === "SIGKILL" || h.exitCode === 137) && !h.timedOut && !h.outputKilled;
    const oomKilled = await this.oomKilled(killed);
    return {
      exitCode: typeof h.exitCode === "number" ? h.exitCode : null,
      signal: typeof h.signal === "string" ? h.signal : null,
      stdout: res.body.subarray(0, outLen),
      stderr: h.spawnError ? Buffer.from(String(h.spawnError)) : res.body.subarray(outLen),
      stdoutOmitted: Number(h.stdoutOmitted ?? 0),
      stderrOmitted: Number(h.stderrOmitted ?? 0),
      stdoutHead: Number(h.stdoutHead ?? 0),
      stderrHead: Number(h.stderrHead ?? 0),
      timedOut: Boolean(h.timedOut),
      outputKilled: Boolean(h.outputKilled),
      pipesHeld: Boolean(h.pipesHeld),
      cwd: typeof h.cwd === "string" ? h.cwd : undefined,
      durationMs: Number(h.durationMs ?? 0),
      oomKilled,
    };
  }

  async stat(p: string, access: FileAccess = {}): Promise<FileStat | null> {
    const res = await this.request({ op: "stat", path: p, confine: access.confine ?? true });
    if (!res.header.ok) throw fsError(res, p);
    return (res.header.stat as FileStat | null) ?? null;
  }

  async resolvePath(p: string, access: FileAccess = {}): Promise<string> {
    const res = await this.request({ op: "resolve", path: p, confine: access.confine ?? true });
    if (!res.header.ok) throw fsError(res, p);
    return String(res.header.realPath);
  }

  async readFile(
    p: string,
    options: FileAccess & { start?: number; length?: number } = {},
  ): Promise<{ data: Buffer; stat: FileStat } | null> {
    const res = await this.request({ op: "read", path: p, confine: options.confine ?? true, start: options.start, length: options.length });
    if (!res.header.ok) {
      if (res.header.code === "ENOENT" || res.header.code === "ENOTDIR") return null;
      throw fsError(res, p);
    }
    return { data: res.body, stat: res.header.stat as FileStat };
  }

  async writeFile(p: string, data: string | Uint8Array, options: FileAccess & { mode?: number } = {}): Promise<FileStat> {
    const body = typeof data === "string" ? Buffer.from(data) : data;
    const res = await this.request({ op: "write", path: p, confine: options.confine ?? true, mode: options.mode }, body);
    if (!res.header.ok) throw fsError(res, p);
    return res.header.stat as FileStat;
  }

  async startBackground(id: string, request: ExecRequest): Promise<void> {
    const res = await this.request({
      op: "bg-start",
      job: id,
      script: request.script,
      argv: request.argv,
      cwd: request.cwd ?? WORKSPACE_ROOT,
      env: { ...BASE_ENV, ...this.safeDirectoryEnv, ...this.options.env, ...request.env },
      maxOutputBytes: request.maxOutputBytes,
    });
    if (!res.header.ok) throw fsError(res, id);
  }

  async readBackground(id: string): Promise<BackgroundStatus> {
    const res = await this.request({ op: "bg-read", job: id });
    if (!res.header.ok) throw fsError(res, id);
    const h = res.header;
    return {
      status: h.status as BackgroundStatus["status"],
      exitCode: typeof h.exitCode === "number" ? h.exitCode : null,
      signal: typeof h.signal === "string" ? h.signal : null,
      output: res.body,
      runtimeMs: Number(h.runtimeMs ?? 0),
    };
  }

  async killBackground(id: string): Promise<void> {
    const res = await this.request({ op: "bg-kill", job: id });
    if (!res.header.ok) throw fsError(res, id);
  }

  /** Removes the container (and its tmpfs contents). Safe to call more than once, and on every path out. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    live.delete(this);
    this.helper?.close();
    try {
      await withTimeout("a container removal", this.container.remove({ force: true, v: true }));
    } catch (e) {
      if ((e as { statusCode?: number }).statusCode !== 404) throw e;
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
