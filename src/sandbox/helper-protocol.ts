// The in-container helper's protocol (helper/helper.cjs) as one map from operation to its request and
// response headers. Each frame: u32 BE header length, header JSON, u32 BE body length, body bytes. A
// request's header is `{ op, id, ...request }`; the response repeats `id` with `ok: true` and the
// operation's response fields, or `ok: false` with an error code and message. Bodies carry file content
// (write in, read out) and command output (stdout then stderr, split at `stdoutBytes`).
import type { FileStat } from "./sandbox.js";

export interface ExecOpRequest {
  argv?: string[];
  script?: string;
  /** A script's stderr goes into its stdout, so the output keeps the order it was written in. */
  mergeStderr?: boolean;
  cwd: string;
  /** `cwd` must be a directory inside the roots (symlinks resolved), checked before spawning. */
  confineCwd?: boolean;
  env: Record<string, string>;
  timeoutMs?: number;
  maxOutputBytes?: number;
  /** The request's body is the command's stdin. */
  stdin?: boolean;
}

export interface ExecOpResponse {
  exitCode: number | null;
  signal: string | null;
  timedOut?: boolean;
  outputKilled?: boolean;
  spawnError?: string | null;
  stdoutBytes?: number;
  stdoutOmitted?: number;
  stdoutHead?: number;
  stderrOmitted?: number;
  stderrHead?: number;
  pipesHeld?: boolean;
  cwd?: string;
  durationMs: number;
}

interface PathRequest {
  path: string;
  confine: boolean;
}

export interface HelperOps {
  /** What the kernel says about the helper's own process: the hardening as seen from inside. */
  ping: {
    request: Record<string, never>;
    response: { pid: number; node: string; uid: number; capEff: string; noNewPrivs: string; seccomp: string };
  };
  stat: { request: PathRequest; response: { stat: FileStat | null } };
  resolve: { request: PathRequest; response: { realPath: string } };
  /** `maxSize`: a file larger than this is not read (no body): the caller learns its size in the same trip. */
  read: {
    request: PathRequest & { start?: number; length?: number; maxSize?: number };
    response: { stat: FileStat; bytes: number };
  };
  write: { request: PathRequest & { mode?: number }; response: { stat: FileStat } };
  remove: { request: PathRequest & { recursive?: boolean }; response: Record<string, never> };
  exec: { request: ExecOpRequest; response: ExecOpResponse };
  "bg-start": {
    request: Omit<ExecOpRequest, "timeoutMs" | "stdin"> & { job: string };
    response: { pid: number };
  };
  "bg-read": {
    request: { job: string };
    response: {
      status: "running" | "completed" | "killed";
      exitCode: number | null;
      signal: string | null;
      runtimeMs: number;
    };
  };
  "bg-kill": { request: { job: string }; response: Record<string, never> };
  "kill-all": { request: Record<string, never>; response: Record<string, never> };
  /** Connect to the host's socket at `path` (channel.ts) and say `token` first; then serve requests from it too. */
  channel: { request: { path: string; token: string }; response: Record<string, never> };
}

export type HelperOp = keyof HelperOps;

/** The helper's first frame (id 0), sent once it listens. */
export interface ReadyHeader {
  id: 0;
  ok: true;
  ready: true;
  pid: number;
  node: string;
}

export interface FailureHeader {
  id: number;
  ok: false;
  code: string;
  message: string;
}

export type ResponseHeader<K extends HelperOp> = { id: number; ok: true } & HelperOps[K]["response"];

/** A decoded frame before it is matched to its request: only `id` and `ok` are known. */
export interface RawFrame {
  header: { id: number; ok: boolean };
  body: Buffer;
}

export type HelperResult<K extends HelperOp> =
  { ok: true; header: ResponseHeader<K>; body: Buffer } | { ok: false; header: FailureHeader; body: Buffer };
