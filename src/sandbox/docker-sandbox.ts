// The Docker implementation of `Sandbox` once it runs: one hardened container per run, every command and
// file operation served by the in-container helper (restarted when a command kills it), the patch
// produced by git inside the container, and the container removed on every way out. How it is made —
// the container, the copy-in, the egress sidecar, the helper's start, the checks, the setup — is
// assemble.ts; only src/sandbox/ imports dockerode.
import crypto from "node:crypto";
import type Docker from "dockerode";
import type { PackSummary } from "./copy/archive.js";
import {
  assembleSandbox,
  EngineStart,
  type EngineStartOptions,
  type NodeInSandbox,
  type SandboxParts,
  type ToolSource,
} from "./assemble.js";
import { type PhaseTiming, type StartTimings, startTimings } from "./phase-clock.js";
import { Baseline, type ExportedPatch } from "./copy/baseline.js";
import { commandEnv, type CommandSettings } from "./container/command-env.js";
import type { DockerSandboxOptions } from "./container/spec.js";
import { withTimeout } from "./engine/engine.js";
import { type Hardening, readOomKills } from "./container/hardening.js";
import type {
  ExecOpRequest,
  FailureHeader,
  HelperOp,
  HelperOps,
  HelperResult,
  ResponseHeader,
} from "./helper/protocol.js";
import type { HelperLink } from "./helper/link.js";
import {
  HOOK_CALLER,
  HookHelper,
  type HookHost,
  type HookRunner,
  type HookScript,
} from "./container/hook-host.js";
import type { ResolvedImage } from "./image/image.js";
import type { RunObjects } from "./engine/run-objects.js";
import type { SetupCacheRecord } from "./setup/phase.js";
import { EGRESS_PORT, type EgressSidecar } from "./egress/sidecar.js";
import {
  type BackgroundStatus,
  type ExecRequest,
  type ExecResult,
  type FileAccess,
  type FileStat,
  type ReadOptions,
  type Sandbox,
  SandboxFsError,
  SandboxGoneError,
  WORKSPACE_ROOT,
} from "./sandbox.js";
import {
  serviceArgv,
  serviceEnv,
  type ServiceHost,
  type ServiceProcess,
  type ServiceRequest,
  serviceUser,
  startServiceExec,
} from "./container/service.js";

export { MAX_PATCH_FILE_BYTES, type ExportedPatch, type PatchFileStat } from "./copy/baseline.js";
export { BASE_ENV } from "./container/command-env.js";
export type { DockerSandboxOptions, NetworkPolicy, ReachedEngine } from "./container/spec.js";
export type { EngineStart } from "./assemble.js";
export type { Hardening } from "./container/hardening.js";
export { containerName, disposeAllSandboxes, runEngineObjects } from "./engine/run-objects.js";
export { SETUP_CALLER, type NodeInSandbox, type ToolSource } from "./assemble.js";
export type { PhaseTiming, StartPhase, StartTimings } from "./phase-clock.js";

/** How long a container whose helper cannot be restarted may take to read as stopped (a kill from outside). */
const RESTART_SETTLE_MS = 10_000;

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

function fsError(header: FailureHeader, p: string): SandboxFsError {
  return new SandboxFsError(header.code, header.message, p);
}

/** The answer's header, or the helper's error as a SandboxFsError for `p`. */
function okHeader<K extends HelperOp>(res: HelperResult<K>, p: string): ResponseHeader<K> {
  if (!res.ok) throw fsError(res.header, p);
  return res.header;
}

export class DockerSandbox implements Sandbox, ServiceHost, HookHost, AsyncDisposable {
  readonly root = WORKSPACE_ROOT;
  readonly image: ResolvedImage;
  /** The image is for another architecture than the engine's: its programs, and the toolbelt's, run emulated. */
  readonly emulated: boolean;
  readonly copy: PackSummary;
  /** How the workspace came in: a copier container reading a bind mount, or a tar stream through the engine. */
  readonly copiedBy: "copier" | "stream";
  readonly hardening: Hardening;
  /** Which programs the image brings and which come from agent-ci's toolbelt. */
  readonly tools: ToolSource[];
  /** The Bash tool's Node.js and why; undefined: a user image's own, which no option changed. */
  readonly node: NodeInSandbox | undefined;
  /** Networks "allowlist" and "setup": the run's egress proxy and its ledger. */
  readonly egress: EgressSidecar | undefined;
  /** The assembly's steps with their timings. */
  readonly phases: readonly PhaseTiming[];
  /** What the setup cache did (filled through the setup step); undefined: off, or no setup. */
  readonly setupCache: SetupCacheRecord | undefined;
  private readonly container: Docker.Container;
  private readonly commands: CommandSettings;
  /** The helper's connection: replaced when a helper is restarted (the one thing that changes with it). */
  private readonly link: HelperLink;
  private readonly objects: RunObjects;
  private readonly baselineRecord: Baseline;
  /** What else changes while it runs: the cgroup's OOM-kill count after the last check, a helper restart under way. */
  private readonly running: { oomKills: number | undefined; recovering: Promise<void> | undefined };

  /**
   * The start's first steps begun ahead of it, for `start`'s `begun` option: the engine reached (ping, version,
   * the runtime checked, orphans swept), then the image and the toolbelt made ready. Nothing of the run is
   * made: `drop()` ends it when the run ends first.
   */
  static begin(options: EngineStartOptions): EngineStart {
    return new EngineStart(options);
  }

  /** Creates, hardens, fills and baselines the run's container (assemble.ts). On any failure nothing is left behind. */
  static start(options: DockerSandboxOptions): Promise<DockerSandbox> {
    // Only the assembly makes one, once every part is known.
    return assembleSandbox(options, (parts) => new DockerSandbox(parts));
  }

  private constructor(parts: SandboxParts) {
    this.image = parts.image;
    this.emulated = parts.emulated;
    this.copy = parts.copy;
    this.copiedBy = parts.copiedBy;
    this.hardening = parts.hardening;
    this.tools = parts.tools;
    this.node = parts.node;
    this.egress = parts.egress;
    this.phases = parts.phases;
    this.setupCache = parts.setupCache;
    this.container = parts.container;
    this.commands = parts.commands;
    this.link = parts.link;
    this.objects = parts.objects;
    this.baselineRecord = new Baseline(this, parts.copy.isGitRepo);
    this.running = { oomKills: parts.oomKills, recovering: undefined };
    this.egress?.attributeBy((port) => this.callerOfPort(port));
  }

  /**
   * The tool call whose process connected to the egress forwarder from `port`, for a client that sent no
   * proxy credentials (the helper traces it; helper/protocol.ts's `attribute`). Undefined when unknown.
   */
  private async callerOfPort(port: number): Promise<string | undefined> {
    if (this.objects.removed || !this.link.alive) return undefined;
    const res = await this.link.client.request("attribute", { port, peerPort: EGRESS_PORT });
    return res.ok ? (res.header.caller ?? undefined) : undefined;
  }

  get id(): string {
    return this.container.id;
  }

  get description(): string {
    return `Docker container ${this.container.id.slice(0, 12)} (${this.image.name}), workspace at ${WORKSPACE_ROOT}`;
  }

  get baseline(): string {
    return this.baselineRecord.baseTree;
  }

  /** How the helper's requests travel: the direct socket (channel.ts), or the engine's exec stream. */
  get helperChannel(): "socket" | "stream" {
    return this.link.way;
  }

  get helperRestarts(): number {
    return this.link.restarts;
  }

  get timings(): StartTimings {
    return startTimings(this.phases);
  }

  /** Records the git baseline the patch is taken against (the assembly's step). */
  async recordBaseline(): Promise<void> {
    await this.baselineRecord.record();
  }

  private commandEnv(request: Pick<ExecRequest, "argv" | "env" | "caller">): Record<string, string> {
    return commandEnv(this.commands, request);
  }

  private async request<K extends HelperOp>(
    op: K,
    request: HelperOps[K]["request"],
    body?: Uint8Array,
  ): Promise<HelperResult<K>> {
    if (this.objects.removed) throw new SandboxGoneError("the sandbox was disposed");
    try {
      return await this.link.client.request(op, request, body);
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
    this.running.recovering ??= this.restartHelper(cause).finally(() => {
      this.running.recovering = undefined;
    });
    return this.running.recovering;
  }

  private async restartHelper(cause: Error): Promise<void> {
    if (this.objects.removed) throw cause;
    if (this.link.alive) return;
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
      await this.link.start();
      this.link.restarts += 1;
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

  /** The container cgroup's OOM-kill counter (hardening.ts), through the helper. */
  private readOomKills(): Promise<number | undefined> {
    return readOomKills(async (request) => {
      const res = await this.request("exec", { ...request, env: this.commandEnv(request) });
      return res.body.subarray(0, res.ok ? (res.header.stdoutBytes ?? 0) : 0).toString("utf8");
    });
  }

  /** Set when a SIGKILL'd command was ended by the OOM killer (the counter went up since the last check). */
  private async oomKilled(killed: boolean): Promise<ExecResult["oomKilled"]> {
    if (!killed || this.running.oomKills === undefined) return undefined;
    const now = await this.readOomKills();
    if (now === undefined) return undefined;
    const before = this.running.oomKills;
    this.running.oomKills = now;
    return now > before ? { memoryLimitBytes: this.hardening.memoryBytes } : undefined;
  }

  /** The patch from the baseline to the tree as it is now (baseline.ts). */
  async exportPatch(exclude?: (relPath: string) => string | undefined): Promise<ExportedPatch> {
    return this.baselineRecord.exportPatch(exclude);
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
      caller: request.caller,
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
      caller: request.caller,
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
    if (this.objects.removed) throw new SandboxGoneError("the sandbox was disposed");
    // The Bash tool's environment (the image's, its PATH first), its own home, then its own variables.
    const env = {
      ...this.commandEnv({ env: {}, caller: request.caller }),
      ...serviceEnv(request.index),
      ...request.env,
    };
    return startServiceExec(this.container, {
      argv: serviceArgv(request),
      user: serviceUser(request.index),
      env,
    });
  }

  /** The hooks' own helper, as their own user (hook-host.ts), with the scripts copied as the run started. */
  async startHooks(scripts: readonly HookScript[]): Promise<HookRunner> {
    if (this.objects.removed) throw new SandboxGoneError("the sandbox was disposed");
    const hooks = await HookHelper.start(
      {
        startAs: (user, env, prelude) => this.link.startAs(user, env, prelude),
        commandEnv: (env) => this.commandEnv({ env, caller: HOOK_CALLER }),
      },
      scripts,
    );
    this.objects.closeWithRun(hooks);
    return hooks;
  }

  /** Removes the container, its volumes and helpers. Safe to call more than once, and on every path out. */
  dispose(): Promise<void> {
    return this.objects.remove();
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
