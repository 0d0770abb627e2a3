// An in-memory Sandbox for unit tests: files and symlinks in maps, the same confinement
// rule as the real helper (the workspace, and the outputs folder), and a log of every operation so a test
// can prove that a stopped call touched nothing. Commands are answered by `execHandler`.
import path from "node:path";
import {
  OUTPUTS_DIR,
  SandboxFsError,
  WORKSPACE_ROOT,
  type BackgroundStatus,
  type ExecRequest,
  type ExecResult,
  type FileAccess,
  type FileStat,
  type ReadOptions,
  type Sandbox,
} from "../../src/sandbox/sandbox.js";

interface FakeFile {
  data: Buffer;
  mode: number;
  mtimeMs: number;
}

export interface FakeOp {
  op: "exec" | "stat" | "resolvePath" | "readFile" | "writeFile" | "background";
  path?: string;
}

const ROOTS = [WORKSPACE_ROOT, OUTPUTS_DIR];
const inRoots = (p: string) => ROOTS.some((r) => p === r || p.startsWith(r + "/"));

/** A command that exited 0 with no output, with `fields` laid over it. */
export function execResult(fields: Partial<ExecResult> = {}): ExecResult {
  return {
    exitCode: 0,
    signal: null,
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
    stdoutOmitted: 0,
    stderrOmitted: 0,
    stdoutHead: 0,
    stderrHead: 0,
    timedOut: false,
    outputKilled: false,
    pipesHeld: false,
    durationMs: 0,
    ...fields,
  };
}

export class FakeSandbox implements Sandbox {
  readonly root = WORKSPACE_ROOT;
  readonly description = "in-memory fake sandbox";
  readonly files = new Map<string, FakeFile>();
  /** Absolute link path → target (absolute, or relative to the link's directory). */
  readonly links = new Map<string, string>();
  readonly ops: FakeOp[] = [];
  execHandler: (request: ExecRequest) => Partial<ExecResult> = () => ({});
  private clock = 1_700_000_000_000;

  constructor(files: Record<string, string | Buffer> = {}, links: Record<string, string> = {}) {
    for (const [rel, content] of Object.entries(files))
      this.put(path.posix.resolve(WORKSPACE_ROOT, rel), content);
    for (const [rel, target] of Object.entries(links))
      this.links.set(path.posix.resolve(WORKSPACE_ROOT, rel), target);
  }

  put(absolute: string, content: string | Uint8Array, mode = 0o644): FakeFile {
    const file = { data: Buffer.from(content), mode, mtimeMs: (this.clock += 1000) };
    this.files.set(absolute, file);
    return file;
  }

  text(absolute: string): string | undefined {
    return this.files.get(absolute)?.data.toString("utf8");
  }

  /** Symlinks of every component followed, as realpath would (a missing tail kept). */
  private canonical(given: string): string {
    let parts = path.posix.resolve(WORKSPACE_ROOT, given).split("/").filter(Boolean);
    let resolved = "/";
    for (let hops = 0, i = 0; i < parts.length; i++) {
      const next = path.posix.join(resolved, parts[i]!);
      const target = this.links.get(next);
      if (target === undefined) {
        resolved = next;
        continue;
      }
      if (++hops > 40)
        throw new SandboxFsError("ELOOP", `too many levels of symbolic links: ${given}`, given);
      parts = [...path.posix.resolve(resolved, target).split("/").filter(Boolean), ...parts.slice(i + 1)];
      resolved = "/";
      i = -1;
    }
    return resolved;
  }

  private confined(given: string, access: FileAccess = {}): string {
    const real = this.canonical(given);
    if ((access.confine ?? true) && !inRoots(real)) {
      throw new SandboxFsError(
        "EOUTSIDE",
        `${given} resolves to ${real}, outside ${ROOTS.join(", ")}`,
        given,
      );
    }
    return real;
  }

  private isDirectory(absolute: string): boolean {
    const prefix = absolute === "/" ? "/" : `${absolute}/`;
    return absolute === WORKSPACE_ROOT || [...this.files.keys()].some((f) => f.startsWith(prefix));
  }

  private statOf(real: string, isSymlink: boolean): FileStat | null {
    const file = this.files.get(real);
    if (file)
      return {
        type: "file",
        size: file.data.length,
        mtimeMs: file.mtimeMs,
        mode: file.mode,
        realPath: real,
        isSymlink,
      };
    if (this.isDirectory(real))
      return { type: "directory", size: 4096, mtimeMs: 0, mode: 0o755, realPath: real, isSymlink };
    return null;
  }

  async exec(request: ExecRequest): Promise<ExecResult> {
    this.ops.push({ op: "exec" });
    if (request.confineCwd) {
      const cwd = request.cwd ?? WORKSPACE_ROOT;
      if (!this.isDirectory(this.confined(cwd)))
        throw new SandboxFsError("ENOENT", `the directory ${cwd} does not exist`, cwd);
    }
    return execResult(this.execHandler(request));
  }

  async stat(p: string, access?: FileAccess): Promise<FileStat | null> {
    this.ops.push({ op: "stat", path: p });
    const real = this.confined(p, access);
    return this.statOf(real, this.links.has(path.posix.resolve(WORKSPACE_ROOT, p)));
  }

  async resolvePath(p: string, access?: FileAccess): Promise<string> {
    this.ops.push({ op: "resolvePath", path: p });
    return this.confined(p, access);
  }

  async readFile(p: string, options: ReadOptions = {}): Promise<{ data: Buffer; stat: FileStat } | null> {
    this.ops.push({ op: "readFile", path: p });
    const real = this.confined(p, options);
    if (this.isDirectory(real) && !this.files.has(real))
      throw new SandboxFsError("EISDIR", `EISDIR: illegal operation on a directory, read '${p}'`, p);
    const file = this.files.get(real);
    if (!file) return null;
    const stat = this.statOf(real, this.links.has(path.posix.resolve(WORKSPACE_ROOT, p)))!;
    if (options.maxSize !== undefined && file.data.length > options.maxSize)
      return { data: Buffer.alloc(0), stat };
    const start = options.start ?? 0;
    const end = options.length === undefined ? file.data.length : start + options.length;
    return { data: file.data.subarray(start, end), stat };
  }

  async writeFile(
    p: string,
    data: string | Uint8Array,
    options: FileAccess & { mode?: number } = {},
  ): Promise<FileStat> {
    this.ops.push({ op: "writeFile", path: p });
    const real = this.confined(p, options);
    const mode = options.mode ?? this.files.get(real)?.mode ?? 0o644;
    this.put(real, data, mode);
    return this.statOf(real, false)!;
  }

  async startBackground(id: string): Promise<void> {
    this.ops.push({ op: "background", path: id });
    throw new SandboxFsError("ENOTSUP", "the fake sandbox runs no background shells", id);
  }

  async readBackground(id: string): Promise<BackgroundStatus> {
    throw new SandboxFsError("ENOJOB", `no background shell ${id}`, id);
  }

  async killBackground(id: string): Promise<void> {
    throw new SandboxFsError("ENOJOB", `no background shell ${id}`, id);
  }
}
