// The narrow interface the tools see. Only src/sandbox/ knows it is Docker underneath; tools get a
// `Sandbox` and nothing else.

export const WORKSPACE_ROOT = "/workspace";
/** Where full tool outputs that were cut for the model are kept, readable with Read. */
export const OUTPUTS_DIR = "/tmp/agent-ci-outputs";

export interface ExecRequest {
  /** Run a program directly with these arguments (no shell). Paths go here, never into a script. */
  argv?: string[];
  /** Run a bash script (the Bash tool). The final working directory comes back in `cwd`. */
  script?: string;
  /**
   * A script's stderr goes into stdout, interleaved in the order it was written (what a terminal shows);
   * `stderr` then holds only what the sandbox itself reports.
   */
  mergeStderr?: boolean;
  cwd?: string;
  /**
   * Checked in the same request, before anything runs: `cwd` must be a directory inside the workspace
   * (symlinks resolved), else a SandboxFsError (ENOENT, ENOTDIR, EOUTSIDE). A search of the working
   * directory needs no stat of it first.
   */
  confineCwd?: boolean;
  /** Added to the sandbox's allow-listed base environment. */
  env?: Record<string, string>;
  /** The tool call running this (its tool_use id): the egress ledger attributes connections by it. */
  caller?: string;
  stdin?: string | Uint8Array;
  timeoutMs?: number;
  /** Per stream; beyond it the head and tail are kept and the middle is counted. */
  maxOutputBytes?: number;
  signal?: AbortSignal;
}

export interface ExecResult {
  exitCode: number | null;
  signal: string | null;
  stdout: Buffer;
  stderr: Buffer;
  /** Bytes dropped from the middle of each stream (head and tail kept). */
  stdoutOmitted: number;
  stderrOmitted: number;
  /** Byte offset in stdout/stderr where the omitted part sits. */
  stdoutHead: number;
  stderrHead: number;
  timedOut: boolean;
  /** The process group was killed for printing far more than the cap. */
  outputKilled: boolean;
  /** A process outlived the command and still held its output pipe. */
  pipesHeld: boolean;
  /** Working directory when a script ended normally. */
  cwd?: string;
  durationMs: number;
  /** The kernel's OOM killer ended a process of this command (the container's memory limit was reached). */
  oomKilled?: { memoryLimitBytes: number };
  /** `--network allowlist`: the egress proxy's refusals of this command's connections, as messages. */
  egressRefused?: string[];
}

export interface FileStat {
  type: "file" | "directory" | "other";
  size: number;
  mtimeMs: number;
  mode: number;
  /** Canonical path inside the container, symlinks resolved. */
  realPath: string;
  isSymlink: boolean;
}

export interface FileAccess {
  /**
   * Confine to the workspace (and the outputs folder for reads). Default true. Only agent-ci's own
   * bookkeeping passes false.
   */
  confine?: boolean;
}

export interface ReadOptions extends FileAccess {
  start?: number;
  length?: number;
  maxSize?: number;
}

export interface BackgroundStatus {
  status: "running" | "completed" | "killed";
  exitCode: number | null;
  signal: string | null;
  output: Buffer;
  runtimeMs: number;
}

export interface Sandbox {
  readonly root: string;
  readonly description: string;
  exec(request: ExecRequest): Promise<ExecResult>;
  stat(path: string, access?: FileAccess): Promise<FileStat | null>;
  /** The canonical path inside the container: symlinks resolved, a missing tail kept; throws EOUTSIDE. */
  resolvePath(path: string, access?: FileAccess): Promise<string>;
  /**
   * `null` when the file does not exist. A byte range may be asked for. With `maxSize`, a file larger than
   * that is not read: `data` is empty and `stat.size` says how large it is (one request instead of a stat
   * and a read).
   */
  readFile(path: string, options?: ReadOptions): Promise<{ data: Buffer; stat: FileStat } | null>;
  /** Creates parent directories; written beside the target and renamed over it; never through a symlink. */
  writeFile(
    path: string,
    data: string | Uint8Array,
    options?: FileAccess & { mode?: number },
  ): Promise<FileStat>;
  startBackground(id: string, request: ExecRequest): Promise<void>;
  readBackground(id: string): Promise<BackgroundStatus>;
  killBackground(id: string): Promise<void>;
}

/** A recoverable file-system error from inside the sandbox; tools turn it into a message for the model. */
export class SandboxFsError extends Error {
  override readonly name = "SandboxFsError";
  constructor(
    readonly code: string,
    message: string,
    readonly path: string,
  ) {
    super(message);
  }
}

/** The sandbox can no longer run anything (container gone, engine down): this ends the run. */
export class SandboxGoneError extends Error {
  override readonly name = "SandboxGoneError";
}

/** No engine answers, or it refused what a run needs: fails before any model call. */
export class EngineError extends Error {
  override readonly name = "EngineError";
}
