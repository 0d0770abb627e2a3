// The native side of every comparison: the same operation a tool call performs, done directly on the host
// in a copy of the repository — the same rg/git/bash spawned natively, the same JS work (numbering
// lines, hashing what was read, replacing, writing beside and renaming, the structured patch) — with no
// container, no helper and no pipeline. `NativeSession.runTurn` mirrors the pipeline's concurrency:
// read-only calls of a turn in parallel, the others one at a time.
//
// The native side runs in its own small Node process (`NativeWorker`), which times each operation
// itself: on this kind of VM, spawning from a process with a few hundred MB resident costs ~30 ms instead
// of ~2 ms (fork copies its page tables), and the benchmark's own process is that big. agent-ci spawns
// from its small in-container helper, so a native side in the big process would flatter agent-ci.
import { fork, spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fsp from "node:fs/promises";
import path from "node:path";
import { structuredPatch } from "diff";
import { VCS_EXCLUDES } from "../src/tools/search-common.js";
import type { ScriptCall } from "./session.js";

const WORKSPACE = "/workspace";
const MAX_LINE_CHARS = 2000;
const DEFAULT_READ_LINES = 2000;
const MAX_GLOB_RESULTS = 100;

export interface NativeResult {
  isError: boolean;
  output: string;
}

export interface Spawned {
  exitCode: number | null;
  stdout: Buffer;
  stderr: Buffer;
}

/** Spawns a program on the host and collects its output (what the in-container helper does inside). */
export function run(argv: string[], cwd: string): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const [cmd, ...args] = argv;
    const child = spawn(cmd ?? "false", args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({ exitCode: code, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }),
    );
  });
}

/** Read's output for a file's text: numbered lines, long lines cut (the Read tool's format). */
export function numberLines(text: string, offset = 1, limit = DEFAULT_READ_LINES): string {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  return body
    .split("\n")
    .slice(offset - 1, offset - 1 + limit)
    .map((line, i) => {
      const l = line.endsWith("\r") ? line.slice(0, -1) : line;
      return `${offset + i}\t${l.length > MAX_LINE_CHARS ? l.slice(0, MAX_LINE_CHARS) : l}`;
    })
    .join("\n");
}

const sha256 = (data: Uint8Array | string) => crypto.createHash("sha256").update(data).digest("hex");

/** rg's list through find's `-files0-from`, sorted by mtime: how Grep (files_with_matches) and Glob list files. */
async function filesByMtime(
  rgArgs: string[],
  cwd: string,
  order: "oldest" | "newest",
): Promise<{ res: Spawned; files: string[] }> {
  const script = 'rg "$@" | find -files0-from - -maxdepth 0 -printf "%T@\\t%p\\0"';
  const res = await run(["bash", "-o", "pipefail", "-c", script, "rg", ...rgArgs], cwd);
  const sign = order === "oldest" ? 1 : -1;
  const entries = res.stdout
    .toString("utf8")
    .split("\0")
    .filter(Boolean)
    .map((record) => {
      const tab = record.indexOf("\t");
      return { mtime: Number(record.slice(0, tab)), file: record.slice(tab + 1).replace(/^\.\//, "") };
    })
    .sort((a, b) => sign * (a.mtime - b.mtime) || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { res, files: entries.map((e) => e.file) };
}

/** A container path (/workspace/…) or a path relative to the workspace, on the host under `root`. */
export function hostPathIn(root: string, p: string): string {
  const rel = p.startsWith(WORKSPACE) ? p.slice(WORKSPACE.length).replace(/^\//, "") : p;
  return path.join(root, rel);
}

export class NativeSession {
  private readonly reads = new Map<string, string>();

  constructor(readonly root: string) {}

  hostPath(p: string): string {
    return hostPathIn(this.root, p);
  }

  async read(input: { file_path: string; offset?: number; limit?: number }): Promise<NativeResult> {
    const file = this.hostPath(input.file_path);
    const data = await fsp.readFile(file);
    this.reads.set(file, sha256(data));
    return {
      isError: false,
      output: numberLines(data.toString("utf8"), input.offset ?? 1, input.limit ?? DEFAULT_READ_LINES),
    };
  }

  async edit(input: {
    file_path: string;
    old_string: string;
    new_string: string;
    replace_all?: boolean;
  }): Promise<NativeResult> {
    const file = this.hostPath(input.file_path);
    let before = "";
    if (input.old_string !== "" || (await fsp.stat(file).catch(() => null))) {
      const data = await fsp.readFile(file);
      if (this.reads.get(file) !== sha256(data))
        return { isError: true, output: "not read, or changed since read" };
      before = data.toString("utf8");
    }
    const count = input.old_string === "" ? 0 : before.split(input.old_string).length - 1;
    if (input.old_string !== "" && count === 0) return { isError: true, output: "no match" };
    if (count > 1 && !input.replace_all) return { isError: true, output: "not unique" };
    const after =
      input.old_string === ""
        ? input.new_string
        : input.replace_all
          ? before.split(input.old_string).join(input.new_string)
          : before.replace(input.old_string, () => input.new_string);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    const tmp = path.join(
      path.dirname(file),
      `.${path.basename(file)}.${crypto.randomBytes(4).toString("hex")}`,
    );
    await fsp.writeFile(tmp, after);
    await fsp.rename(tmp, file);
    this.reads.set(file, sha256(after));
    const patch = structuredPatch(file, file, before, after, "", "", { context: 3 });
    return { isError: false, output: `updated (${patch.hunks.length} hunks)` };
  }

  async grep(input: Record<string, unknown>): Promise<NativeResult> {
    const mode = (input.output_mode as string | undefined) ?? "files_with_matches";
    const argv = [
      "--hidden",
      "--no-follow",
      "--no-config",
      "--color",
      "never",
      "--max-columns",
      "500",
      ...VCS_EXCLUDES,
    ];
    if (input["-i"]) argv.push("-i");
    if (input.glob) argv.push("--glob", String(input.glob));
    if (input.type) argv.push("--type", String(input.type));
    if (mode === "files_with_matches") argv.push("--files-with-matches", "--null");
    if (mode === "count") argv.push("--count-matches", "--sort", "path", "--with-filename");
    if (mode === "content") {
      argv.push("--sort", "path", "--with-filename", "--no-heading");
      if (input["-n"] !== false) argv.push("-n");
      for (const flag of ["-C", "-A", "-B"])
        if (input[flag] !== undefined) argv.push(flag, String(input[flag]));
    }
    argv.push("-e", String(input.pattern), "--", (input.path as string | undefined) ?? ".");
    let lines: string[];
    if (mode === "files_with_matches") {
      const { res, files } = await filesByMtime(argv, this.root, "newest");
      if (res.exitCode !== 0 && res.exitCode !== 1)
        return { isError: true, output: res.stderr.toString("utf8") };
      lines = files;
    } else {
      const res = await run(["rg", ...argv], this.root);
      if (res.exitCode !== 0 && res.exitCode !== 1)
        return { isError: true, output: res.stderr.toString("utf8") };
      lines = res.stdout
        .toString("utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => l.replace(/^\.\//, ""));
    }
    const offset = Number(input.offset ?? 0);
    const limit = input.head_limit === undefined ? undefined : Number(input.head_limit);
    const page = lines.slice(offset, limit === undefined ? undefined : offset + limit);
    return { isError: false, output: page.join("\n") };
  }

  async glob(input: { pattern: string; path?: string }): Promise<NativeResult> {
    const args = [
      "--files",
      "--null",
      "--hidden",
      "--no-ignore",
      "--no-follow",
      "--glob",
      input.pattern,
      ...VCS_EXCLUDES,
      "--",
      input.path ?? ".",
    ];
    const { res, files } = await filesByMtime(args, this.root, "oldest");
    if (res.exitCode !== 0 && res.exitCode !== 1)
      return { isError: true, output: res.stderr.toString("utf8") };
    return { isError: false, output: files.slice(0, MAX_GLOB_RESULTS).join("\n") };
  }

  async bash(input: { command: string }): Promise<NativeResult> {
    const res = await run(["bash", "-c", input.command], this.root);
    const output = Buffer.concat([res.stdout, res.stderr]).toString("utf8");
    return { isError: res.exitCode !== 0, output };
  }

  call(call: ScriptCall): Promise<NativeResult> {
    const input = call.input as never;
    switch (call.name) {
      case "Read":
        return this.read(input);
      case "Edit":
        return this.edit(input);
      case "Grep":
        return this.grep(input);
      case "Glob":
        return this.glob(input);
      case "Bash":
        return this.bash(input);
      default:
        throw new Error(`no native equivalent for ${call.name}`);
    }
  }

  /** Milliseconds of every call made through `runTurn`, in the calls' order. */
  readonly latencies: number[] = [];

  /** One turn: read-only calls in parallel batches, the others one at a time, results in order. */
  async runTurn(calls: readonly ScriptCall[]): Promise<NativeResult[]> {
    const results: NativeResult[] = [];
    for (const batch of batchesOf(calls)) {
      const done = await Promise.all(
        batch.map(async (call) => {
          const t0 = performance.now();
          const result = await this.call(call);
          return { result, ms: performance.now() - t0 };
        }),
      );
      for (const d of done) {
        results.push(d.result);
        this.latencies.push(d.ms);
      }
    }
    return results;
  }
}

/** The pipeline's batches: consecutive read-only calls together, every other call alone. */
export function batchesOf(turn: readonly ScriptCall[]): ScriptCall[][] {
  const safe = (c: ScriptCall) => c.name === "Read" || c.name === "Grep" || c.name === "Glob";
  const batches: ScriptCall[][] = [];
  for (let i = 0; i < turn.length;) {
    let j = i + 1;
    if (safe(turn[i]!)) while (j < turn.length && safe(turn[j]!)) j++;
    batches.push(turn.slice(i, j));
    i = j;
  }
  return batches;
}

// ---------------------------------------------------------------- the worker process

export const NATIVE_WORKER_FLAG = "--native-worker";

/** A result and the milliseconds the worker measured for it (IPC not included). */
export interface Timed<T> {
  selfMs: number;
  value: T;
}

interface WorkerRequest {
  id: number;
  op: "call" | "turn" | "session" | "stat" | "run" | "rss";
  arg?: unknown;
}

interface WorkerReply {
  id: number;
  selfMs: number;
  value?: unknown;
  error?: string;
}

/** The worker's side: serves requests for one NativeSession over the IPC channel until it closes. */
export function serveNativeWorker(root: string): void {
  const session = new NativeSession(root);
  const ops: Record<WorkerRequest["op"], (arg: unknown) => Promise<unknown>> = {
    call: (arg) => session.call(arg as ScriptCall),
    turn: (arg) => session.runTurn(arg as ScriptCall[]),
    session: async (arg) => {
      const errors: boolean[] = [];
      for (const turn of arg as ScriptCall[][])
        errors.push(...(await session.runTurn(turn)).map((r) => r.isError));
      return { errors, latencies: session.latencies };
    },
    stat: async (arg) => {
      await fsp.stat(hostPathIn(root, String(arg)));
      return null;
    },
    run: async (arg) => {
      const { argv, cwd } = arg as { argv: string[]; cwd: string };
      const res = await run(argv, cwd);
      return {
        exitCode: res.exitCode,
        stdout: res.stdout.toString("utf8"),
        stderr: res.stderr.toString("utf8"),
      };
    },
    rss: async () => process.memoryUsage().rss,
  };
  process.on("message", (req: WorkerRequest) => {
    const t0 = performance.now();
    ops[req.op](req.arg).then(
      (value) => process.send?.({ id: req.id, selfMs: performance.now() - t0, value } satisfies WorkerReply),
      (e: unknown) =>
        process.send?.({
          id: req.id,
          selfMs: 0,
          error: String((e as Error).stack ?? e),
        } satisfies WorkerReply),
    );
  });
  process.on("disconnect", () => process.exit(0));
}

/** The benchmark's side of a worker working in `root`. */
export class NativeWorker {
  private nextId = 1;
  private readonly waiting = new Map<number, (reply: WorkerReply) => void>();

  private constructor(
    private readonly child: ChildProcess,
    readonly root: string,
  ) {
    child.on("message", (reply: WorkerReply) => {
      this.waiting.get(reply.id)?.(reply);
      this.waiting.delete(reply.id);
    });
  }

  /** Starts `script` (the benchmark's own bundle) in worker mode. */
  static start(script: string, root: string): NativeWorker {
    const child = fork(script, [NATIVE_WORKER_FLAG, root], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    return new NativeWorker(child, root);
  }

  private request<T>(op: WorkerRequest["op"], arg?: unknown): Promise<Timed<T>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (reply) =>
        reply.error
          ? reject(new Error(`native worker: ${reply.error}`))
          : resolve({ selfMs: reply.selfMs, value: reply.value as T }),
      );
      this.child.send({ id, op, arg } satisfies WorkerRequest);
    });
  }

  hostPath(p: string): string {
    return hostPathIn(this.root, p);
  }

  call(name: string, input: Record<string, unknown>): Promise<Timed<NativeResult>> {
    return this.request("call", { name, input });
  }

  runTurn(calls: readonly ScriptCall[]): Promise<Timed<NativeResult[]>> {
    return this.request("turn", calls);
  }

  session(turns: readonly ScriptCall[][]): Promise<Timed<{ errors: boolean[]; latencies: number[] }>> {
    return this.request("session", turns);
  }

  stat(p: string): Promise<Timed<null>> {
    return this.request("stat", p);
  }

  /** Spawns a program from the worker (small process) and collects its output as text. */
  run(
    argv: string[],
    cwd = this.root,
  ): Promise<Timed<{ exitCode: number | null; stdout: string; stderr: string }>> {
    return this.request("run", { argv, cwd });
  }

  async rss(): Promise<number> {
    return (await this.request<number>("rss")).value;
  }

  /** Ends the worker (it exits when its channel closes). Safe to call more than once. */
  close(): void {
    if (this.child.connected) this.child.disconnect();
  }
}
