// The in-container helper's protocol (helper/) as one map from operation to its request and response
// headers, for both ends: the host's client (helper/client.ts) and the helper's handlers (helper/serve.ts).
// Frames are helper/framing.ts's. A request's header is `{ op, id, ...request }`; the response repeats `id`
// with `ok: true` and the operation's response fields, or `ok: false` with an error code and message. Bodies
// carry file content (write in, read out) and command output (stdout then stderr, split at `stdoutBytes`).
// Types only: the helper's bundle takes nothing from the host's modules.
import type { Frame } from "./framing.js";
import type { FileStat } from "../sandbox.js";

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
  /** The tool call the command runs for (its tool_use id, "setup"), which `attribute` answers with. */
  caller?: string;
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

/** The helper's environment variable naming the RLIMIT_AS (KiB) of every script it starts; unset: none. */
export const ADDRESS_SPACE_ENV = "AGENT_CI_ADDRESS_SPACE_KIB";

/** The helper's environment variable naming the folder where it keeps a script's final cwd; unset: /tmp/.agent-ci. */
export const STATE_DIR_ENV = "AGENT_CI_STATE_DIR";

/**
 * Set in the helper's environment when the workspace is shared with other users of the agent's group (stdio
 * MCP servers, hooks): it and its commands keep umask 002, and a new file is written group-writable.
 */
export const SHARED_GROUP_ENV = "AGENT_CI_SHARED_GROUP";

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
  /**
   * In a workspace shared with the agent's group: every file and directory under it that the helper's user
   * owns gets the owner's permissions for the group too (`chmod g=u`); how many were changed. Elsewhere
   * nothing is changed.
   */
  "share-workspace": { request: Record<string, never>; response: { changed: number } };
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
  /**
   * Which call started the process that holds the TCP connection from loopback port `port` to `peerPort`
   * (a client of the egress forwarder): the socket from /proc/net/tcp{,6}, its process from the agent
   * user's /proc/<pid>/fd, the call from that process's call tag or its nearest tagged ancestor's. Null
   * when no process of the agent's user holds it, or none carries a tag of a call the helper knows.
   */
  attribute: {
    request: { port: number; peerPort: number };
    response: { caller: string | null; pid: number | null };
  };
  /** Connect to the host's socket at `path` (channel.ts) and say `token` first; then serve requests from it too. */
  channel: { request: { path: string; token: string }; response: Record<string, never> };
}

export type HelperOp = keyof HelperOps;

/** A request as framed: the operation, the id its answer repeats, and the operation's fields. */
export type RequestHeader<K extends HelperOp> = { op: K; id: number } & HelperOps[K]["request"];

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

/** The first frame a helper sends on the host's socket (channel.ts): the token it was given, nothing else. */
export interface HelloHeader {
  id: 0;
  hello: string;
}

/** A decoded frame before it is matched to its request: only `id` and `ok` are known. */
export type RawFrame = Frame<{ id: number; ok: boolean }>;

export type HelperResult<K extends HelperOp> =
  { ok: true; header: ResponseHeader<K>; body: Buffer } | { ok: false; header: FailureHeader; body: Buffer };
