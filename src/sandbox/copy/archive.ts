// Packs the host workspace into a tar stream for the copy-in: with the host's GNU tar where there is one
// (a separate process reads the files; on a 27,000-file node_modules several times faster than packing in
// this process), else with tar-stream (one synchronous read per file: an async read per file is several
// times slower on a 5,000-file tree).
//
// What goes in: the working tree as it is, `.git` included, untracked files included, what git ignores
// left out unless asked (all of it, or the ignored paths matching given patterns, e.g. `node_modules`);
// what stays out is summarised so that the report can say how to include it. Symlinks stay symlinks (never dereferenced: no host bytes leak in through a
// link). Sockets, FIFOs and devices are skipped and listed. Every git config file copied in loses
// the credentials git would use (git-config-credentials.ts); cloud credential files an auth step left in the
// workspace and files that are nothing but credentials (`.netrc`) are held back, and the package managers'
// configuration files lose their auth entries, at any depth (credential-files.ts); each is recorded with what
// went. Files a Read deny rule covers are never copied (the policy's container layer). Over the size or count
// limit is an error, never a silent partial copy.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { type Readable, Transform } from "node:stream";
import picomatch from "picomatch";
import { pack as tarPack, type Header } from "tar-stream";
import { git } from "../../host-git.js";
import {
  credentialFileMatcher,
  type CredentialFileRule,
  credentialFileRule,
  type HeldCredentials,
  listRemoved,
  MAX_STRIPPED_BYTES,
  relativeInside,
  STRIPPED_REASON,
  unreadableReason,
} from "./credential-files.js";
import { AGENT_UID } from "../engine/profile.js";
import { cleanGitConfigs } from "./git-config-credentials.js";

/**
 * Which of the files git ignores are copied: none (false), all (true), or those at or under a path that
 * matches one of these patterns. A pattern without a slash matches a file or directory name at any
 * depth (`node_modules`, `.venv`, `*.pyc`); one with a slash matches the path from the workspace root
 * (`vendor/cache`, `apps/web/node_modules`); a leading `/` anchors a name at the root (`/build`).
 */
export type IncludeIgnored = boolean | readonly string[];

export interface PackOptions {
  includeIgnored?: IncludeIgnored;
  maxFiles?: number;
  maxBytes?: number;
  /** Relative path → a reason to leave it out of the container (e.g. a Read deny rule), or undefined. */
  exclude?: (relPath: string) => string | undefined;
  /** Make every file readable by others (the plan-mode copy is owned by root). */
  worldReadable?: boolean;
  /** The environment whose credential variables name files to hold back (default: this process's). */
  credentialEnv?: NodeJS.ProcessEnv;
}

export interface SkippedEntry {
  path: string;
  reason: string;
}

/** An ignored path left out of the copy: the outermost ignored directory (with a trailing `/`), or a file. */
export interface IgnoredPath {
  path: string;
  files: number;
}

/** What git ignores and the copy left out, biggest first, bounded (the whole count is in `files`). */
export interface IgnoredLeftOut {
  files: number;
  paths: IgnoredPath[];
  /** Ignored paths beyond the ones listed. */
  morePaths: number;
}

export interface PackSummary {
  files: number;
  bytes: number;
  skipped: SkippedEntry[];
  /**
   * Credential files held back (never copied in), and files copied without their credentials, each naming
   * what was removed (credential-files.ts, git-config-credentials.ts).
   */
  credentialFiles: HeldCredentials[];
  /** Present when files git ignores were left out of the copy. */
  ignoredLeftOut?: IgnoredLeftOut;
  /** True when the workspace is the top of a git work tree (its `.git` was copied). */
  isGitRepo: boolean;
  /** The commit checked out when the copy was listed (HEAD of the work tree the workspace is in), if any. */
  baseCommit?: string;
}

export const DEFAULT_MAX_FILES = 200_000;
export const DEFAULT_MAX_BYTES = 1024 * 1024 * 1024;

export class WorkspaceError extends Error {
  override readonly name = "WorkspaceError";
}

/** The copy-in's failure, from the unpacking tar's output: a full workspace says how to make room. */
/** What tar says when the sandbox's workspace is full. */
export const WORKSPACE_FULL = /No space left on device|Wrote only/;

export function copyInFailed(output: string): WorkspaceError {
  const full = WORKSPACE_FULL.test(output)
    ? " (the sandbox's workspace is full: raise --workspace-size)"
    : "";
  return new WorkspaceError(
    `copying the workspace into the container failed${full}: ${output.trim().slice(-1000)}`,
  );
}

/**
 * The work tree's top and the commit checked out, read by one git (undefined outside a work tree; no
 * commit on an unborn branch: `--revs-only` leaves out a HEAD that names none).
 */
async function gitTopAndHead(dir: string): Promise<{ top?: string; head?: string }> {
  try {
    const [top, head] = (await git(["rev-parse", "--show-toplevel", "--revs-only", "HEAD"], { cwd: dir }))
      .split("\n")
      .filter(Boolean);
    return { top, head };
  } catch {
    return {};
  }
}

/** NUL-separated names git prints (a trailing `/` marks a directory it did not descend into). */
async function gitNames(dir: string, args: string[]): Promise<string[]> {
  return (await git(["ls-files", "-z", ...args], { cwd: dir })).split("\0").filter(Boolean);
}

/** Tracked and untracked files (with the ignored ones too when `includeIgnored`), each once. */
async function gitListed(dir: string, includeIgnored: boolean): Promise<string[]> {
  return [
    ...new Set(
      await gitNames(dir, ["--cached", "--others", ...(includeIgnored ? [] : ["--exclude-standard"])]),
    ),
  ];
}

/** The files git ignores (`files`), and the outermost ignored directories and files (`outermost`). */
async function gitIgnored(dir: string): Promise<{ files: string[]; outermost: Set<string> }> {
  const ignored = ["--others", "--ignored", "--exclude-standard"];
  const [files, outermost] = await Promise.all([
    gitNames(dir, ignored),
    gitNames(dir, [...ignored, "--directory", "--no-empty-directory"]),
  ]);
  return { files: files.map((f) => f.replace(/\/+$/, "")), outermost: new Set(outermost) };
}

/** Normalises one `--include-ignored` pattern; throws on one that could not select anything. */
export function normalizeIgnoredPattern(pattern: string): string {
  const p = pattern.trim().replace(/^\.\//, "").replace(/\/+$/, "");
  if (!p || p === "/" || p === ".")
    throw new Error(`"${pattern}" is not a path pattern (give e.g. node_modules or .venv)`);
  if (p.startsWith("!"))
    throw new Error(`"${pattern}": negated patterns are not supported; list the paths to include`);
  return p;
}

/**
 * True for a path at or under one that a pattern matches (see `IncludeIgnored`), tested against the
 * path's own name and each of its parent directories: linear in the path's length per pattern.
 */
export function ignoredPathMatcher(patterns: readonly string[]): (relPath: string) => boolean {
  const byName: Array<(s: string) => boolean> = [];
  const byPath: Array<(s: string) => boolean> = [];
  for (const raw of patterns) {
    const p = normalizeIgnoredPattern(raw);
    if (p.startsWith("/")) byPath.push(picomatch(p.slice(1), { dot: true }));
    else if (p.includes("/")) byPath.push(picomatch(p, { dot: true }));
    else byName.push(picomatch(p, { dot: true }));
  }
  return (relPath) => {
    let start = 0;
    for (;;) {
      const slash = relPath.indexOf("/", start);
      const end = slash === -1 ? relPath.length : slash;
      const name = relPath.slice(start, end);
      if (byName.some((m) => m(name))) return true;
      if (byPath.length && byPath.some((m) => m(relPath.slice(0, end)))) return true;
      if (slash === -1) return false;
      start = slash + 1;
    }
  };
}

/** Ignored paths listed in the report at most; the rest are counted. */
export const MAX_IGNORED_PATHS_LISTED = 10;

/** Groups left-out files by their outermost ignored directory, biggest first, bounded. */
export function summarizeIgnored(
  files: readonly string[],
  outermost: ReadonlySet<string>,
): IgnoredLeftOut | undefined {
  if (!files.length) return undefined;
  const counts = new Map<string, number>();
  for (const file of files) {
    let group = file;
    for (let slash = file.indexOf("/"); slash !== -1; slash = file.indexOf("/", slash + 1)) {
      const dir = file.slice(0, slash + 1);
      if (outermost.has(dir)) {
        group = dir;
        break;
      }
    }
    counts.set(group, (counts.get(group) ?? 0) + 1);
  }
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return {
    files: files.length,
    paths: sorted.slice(0, MAX_IGNORED_PATHS_LISTED).map(([p, n]) => ({ path: p, files: n })),
    morePaths: Math.max(0, sorted.length - MAX_IGNORED_PATHS_LISTED),
  };
}

function walk(dir: string, rel: string, out: string[]): void {
  for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    out.push(child);
    if (entry.isDirectory()) walk(dir, child, out);
  }
}

export interface WorkspaceListing {
  /** Everything to copy, parents before children, relative to the workspace. */
  paths: string[];
  isGitRepo: boolean;
  /** HEAD's commit of the work tree the workspace is in, if any. */
  baseCommit?: string;
  /** What git ignores and the copy leaves out (resolves once git has listed it; nothing to wait for before). */
  ignoredLeftOut: Promise<IgnoredLeftOut | undefined>;
}

/** Directories first so that their modes and mtimes are set before their files land. */
function withParents(paths: string[]): string[] {
  const dirs = new Set<string>();
  for (const p of paths) {
    for (let d = path.posix.dirname(p); d !== "."; d = path.posix.dirname(d)) dirs.add(d);
  }
  return [...[...dirs].sort(), ...paths];
}

/**
 * Whether `dir` is the top of a git work tree with its own `.git` folder: only then is its history copied in.
 * A worktree's or submodule's `.git` is a file naming a directory outside the workspace, which the container
 * cannot reach: such a workspace is copied without its history, like a plain directory. `top` is what
 * `git rev-parse --show-toplevel` answered in `dir` (undefined: no work tree).
 */
export function isGitWorkTreeTop(dir: string, top: string | undefined): boolean {
  const hasGitDir = fs.lstatSync(path.join(dir, ".git"), { throwIfNoEntry: false })?.isDirectory() ?? false;
  return hasGitDir && top !== undefined && fs.realpathSync(top) === fs.realpathSync(dir);
}

/** Everything to copy, parents before children, relative to `dir`, and what git ignores that stays out. */
export async function listWorkspace(
  dir: string,
  includeIgnored: IncludeIgnored = false,
): Promise<WorkspaceListing> {
  const { top, head: baseCommit } = await gitTopAndHead(dir);
  const isGitRepo = isGitWorkTreeTop(dir, top);
  if (!top) {
    const paths: string[] = [];
    walk(dir, "", paths);
    return { paths, isGitRepo: false, ignoredLeftOut: Promise.resolve(undefined) };
  }
  // The ignored listing descends into every ignored directory (node_modules: tens of thousands of files):
  // without patterns it only feeds the report, so it runs while the copy does.
  const ignored = includeIgnored === true ? undefined : gitIgnored(dir);
  ignored?.catch(() => undefined);
  const paths = await gitListed(dir, includeIgnored === true);
  let ignoredLeftOut: Promise<IgnoredLeftOut | undefined> = Promise.resolve(undefined);
  if (ignored && includeIgnored !== false) {
    const matches = ignoredPathMatcher(includeIgnored as readonly string[]);
    const { files, outermost } = await ignored;
    const leftOut: string[] = [];
    for (const file of files) (matches(file) ? paths : leftOut).push(file);
    ignoredLeftOut = Promise.resolve(summarizeIgnored(leftOut, outermost));
  } else if (ignored) {
    ignoredLeftOut = ignored
      .then(({ files, outermost }) => summarizeIgnored(files, outermost))
      .catch(() => undefined);
  }
  if (isGitRepo) {
    paths.push(".git");
    walk(dir, ".git", paths);
  }
  return { paths: withParents(paths), isGitRepo, baseCommit, ignoredLeftOut };
}

/** Bytes gathered before one write to the sink. */
const WRITE_CHUNK_BYTES = 1 << 20;

/**
 * Gathers the tar stream's small pieces (per file: a 512-byte header, the data, the padding) into writes
 * of about 1 MiB. Written piece by piece, every one is a socket write through the engine into the
 * container's `tar -x`: on a 5,000-file tree that roughly doubled the copy's time. A piece of 1 MiB or
 * more (a large file's data) goes on as it is, after what was gathered before it: copying it into a
 * gathered buffer cost as much as reading it (node_modules: 450 MiB copied once more).
 */
function coalesced(): Transform {
  let parts: Buffer[] = [];
  let length = 0;
  const take = () => {
    const out = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
    parts = [];
    length = 0;
    return out;
  };
  return new Transform({
    writableHighWaterMark: 4 * WRITE_CHUNK_BYTES,
    transform(chunk: Buffer, _encoding, callback) {
      if (chunk.length >= WRITE_CHUNK_BYTES) {
        if (length) this.push(take());
        callback(null, chunk);
        return;
      }
      parts.push(chunk);
      length += chunk.length;
      callback(null, length >= WRITE_CHUNK_BYTES ? take() : undefined);
    },
    flush(callback) {
      callback(null, length ? take() : undefined);
    },
  });
}

function isUtf8Name(name: string): boolean {
  return !name.includes("\uFFFD");
}

/** One entry of the copy, checked and counted: what the packers put in the archive. */
interface Entry {
  rel: string;
  st: fs.Stats;
  /** Set when the file's content is rewritten before the copy (credential lines removed). */
  data?: Buffer;
}

/**
 * The copy, decided before a byte moves (`planWorkspaceCopy`): the entries in order, what stays out and
 * why. Made while the container starts; packed by `packWorkspace` (a stream) or by the copier container
 * from `writeCopyList`'s files.
 */
export interface WorkspaceCopy {
  dir: string;
  entries: readonly Entry[];
  skipped: SkippedEntry[];
  credentialFiles: HeldCredentials[];
  files: number;
  bytes: number;
  isGitRepo: boolean;
  /** HEAD's commit of the work tree the workspace is in, when the copy was listed. */
  baseCommit?: string;
  worldReadable: boolean;
  /** What git ignores and the copy leaves out (the report's hint; may still be listing). */
  ignoredLeftOut: Promise<IgnoredLeftOut | undefined>;
}

/**
 * Checks every listed path before a byte is copied: names that are not UTF-8, paths a rule excludes,
 * sockets and FIFOs, unreadable files and the size and count limits (over them is an error up front,
 * never a partial copy). Credential files are held back, or read here and copied without their
 * credentials; the others are read by the packer.
 */
function plan(
  dir: string,
  paths: readonly string[],
  options: PackOptions,
): {
  entries: Entry[];
  skipped: SkippedEntry[];
  credentialFiles: HeldCredentials[];
  files: number;
  bytes: number;
} {
  const maxFiles = options.maxFiles ?? DEFAULT_MAX_FILES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const credentialFile = credentialFileMatcher(dir, options.credentialEnv);
  const linkedRules = rulesThroughLinks(dir, paths);
  const entries: Entry[] = [];
  const skipped: SkippedEntry[] = [];
  const credentialFiles: HeldCredentials[] = [];
  const seen = new Set<string>();
  let files = 0;
  let bytes = 0;
  for (const rel of paths) {
    if (seen.has(rel)) continue;
    seen.add(rel);
    if (!isUtf8Name(rel)) {
      skipped.push({ path: rel, reason: "file name is not valid UTF-8" });
      continue;
    }
    const credential = credentialFile(rel);
    if (credential) {
      if (fs.lstatSync(path.join(dir, rel), { throwIfNoEntry: false }))
        credentialFiles.push({ path: rel, reason: credential });
      continue;
    }
    const reason = options.exclude?.(rel);
    if (reason) {
      skipped.push({ path: rel, reason });
      continue;
    }
    const abs = path.join(dir, rel);
    const st = fs.lstatSync(abs, { throwIfNoEntry: false });
    if (!st) continue; // listed by git but deleted from the working tree: the deletion is the state we copy
    if (st.isDirectory() || st.isSymbolicLink()) {
      entries.push({ rel, st });
      continue;
    }
    if (!st.isFile()) {
      skipped.push({ path: rel, reason: "not a regular file, directory or symlink" });
      continue;
    }
    try {
      fs.accessSync(abs, fs.constants.R_OK);
    } catch (e) {
      skipped.push({ path: rel, reason: `unreadable: ${(e as NodeJS.ErrnoException).code ?? String(e)}` });
      continue;
    }
    files += 1;
    bytes += st.size;
    if (files > maxFiles || bytes > maxBytes) {
      throw new WorkspaceError(
        `the workspace is over the copy limit (${maxFiles} files, ${Math.round(maxBytes / 2 ** 20)} MiB): ` +
          `${files} files / ${Math.round(bytes / 2 ** 20)} MiB so far. Add large paths to .gitignore or raise the limit.`,
      );
    }
    const rule = linkedRules.get(rel) ?? credentialFileRule(rel);
    const treated = rule && treatCredentialFile(rule, abs, st.size);
    if (treated && "heldBack" in treated) {
      credentialFiles.push({ path: rel, reason: treated.heldBack });
      files -= 1;
      bytes -= st.size;
      continue;
    }
    if (treated) credentialFiles.push({ path: rel, reason: STRIPPED_REASON, removed: treated.removed });
    entries.push({ rel, st, data: treated?.content });
  }
  return { entries, skipped, credentialFiles, files, bytes };
}

/**
 * What a credential file's rule makes of it: held back (the reason), copied as `content` without what
 * `removed` names, or undefined (nothing to remove: copied as it is).
 */
function treatCredentialFile(
  rule: CredentialFileRule,
  abs: string,
  size: number,
): { heldBack: string } | { content: Buffer; removed: string[] } | undefined {
  if ("holdBack" in rule) return { heldBack: rule.holdBack };
  if (size > MAX_STRIPPED_BYTES)
    return { heldBack: `${rule.format} over ${MAX_STRIPPED_BYTES / 2 ** 20} MiB: held back unread` };
  const stripped = rule.strip(fs.readFileSync(abs));
  if (!stripped) return { heldBack: unreadableReason(rule.format) };
  return stripped.removed.length
    ? { content: stripped.content, removed: listRemoved(stripped.removed) }
    : undefined;
}

/**
 * The credential file rules reached through a link: a `.npmrc` that links to `ci/npm-config` inside the
 * workspace gives its rule to the file it names, which would otherwise be copied as it is.
 */
function rulesThroughLinks(dir: string, paths: readonly string[]): Map<string, CredentialFileRule> {
  const rules = new Map<string, CredentialFileRule>();
  let realDir: string | undefined;
  for (const rel of paths) {
    const rule = credentialFileRule(rel);
    if (!rule || !fs.lstatSync(path.join(dir, rel), { throwIfNoEntry: false })?.isSymbolicLink()) continue;
    realDir ??= fs.realpathSync(dir);
    let real: string;
    try {
      real = fs.realpathSync(path.join(dir, rel));
    } catch {
      continue;
    }
    const target = relativeInside(realDir, real);
    if (target !== undefined) rules.set(target, rule);
  }
  return rules;
}

/**
 * Cleans the copy's git config files (git-config-credentials.ts): a file with a credential or an include is
 * copied as git-config-credentials.ts rewrote it, one git cannot read is held back; each is recorded.
 */
async function withoutGitConfigCredentials(dir: string, copy: ReturnType<typeof plan>): Promise<void> {
  const byRel = new Map(copy.entries.map((e) => [e.rel, e]));
  const kind = (rel: string) => {
    const st = byRel.get(rel)?.st;
    return st?.isFile() ? "file" : st?.isSymbolicLink() ? "symlink" : undefined;
  };
  const candidates = copy.entries.filter((e) => !e.st.isDirectory()).map((e) => e.rel);
  const outcomes = await cleanGitConfigs(dir, kind, candidates);
  const heldBack = new Set<string>();
  for (const outcome of outcomes) {
    const entry = byRel.get(outcome.path)!;
    if ("unreadable" in outcome) {
      heldBack.add(outcome.path);
      copy.files -= 1;
      copy.bytes -= entry.st.size;
      copy.credentialFiles.push({ path: outcome.path, reason: unreadableReason("a git config") });
      continue;
    }
    entry.data = outcome.content;
    copy.credentialFiles.push({
      path: outcome.path,
      reason: STRIPPED_REASON,
      removed: listRemoved(outcome.removed),
    });
  }
  if (heldBack.size) copy.entries = copy.entries.filter((e) => !heldBack.has(e.rel));
}

/**
 * How this host packs the copy: with GNU tar (Linux hosts), which reads the files in a process of its
 * own, several times faster on a big tree than tar-stream in this one; and, where the host also has zstd,
 * compressed (`zstd -1`, about 5× on node_modules): the engine's exec stream, not reading or writing
 * files, is the copy's narrowest part (~150–200 MB/s through dockerd). Without GNU tar, tar-stream.
 */
export interface HostPacker {
  gnuTar: boolean;
  zstd: boolean;
}

const answers = (program: string, pattern: RegExp) =>
  new Promise<boolean>((resolve) => {
    execFile(program, ["--version"], { timeout: 10_000 }, (err, stdout) =>
      resolve(!err && pattern.test(stdout)),
    );
  });

let detected: Promise<HostPacker> | undefined;
export function detectHostPacker(): Promise<HostPacker> {
  detected ??= Promise.all([answers("tar", /GNU tar/), answers("zstd", /Zstandard/)]).then(
    ([gnuTar, zstd]) => ({ gnuTar, zstd: gnuTar && zstd }),
  );
  return detected;
}

/** The flags the container's GNU tar needs to read what `packWorkspace` writes with this packer. */
export function extractFlags(packer: HostPacker): string[] {
  // Two archives follow each other (the host tar's, then the rewritten files'): read past the first's end.
  return [...(packer.gnuTar ? ["--ignore-zeros"] : []), ...(packer.zstd ? ["--zstd"] : [])];
}

/**
 * Resolves when `child` exits with one of `ok`; else rejects with its stderr. A sink that closes first
 * (the container gone, the run cancelled) kills it: it would otherwise wait on a full pipe for good.
 */
function exited(
  child: ChildProcess,
  sink: NodeJS.WritableStream,
  what: string,
  ok: readonly number[],
): Promise<void> {
  const kill = () => child.kill("SIGKILL");
  sink.once("close", kill);
  child.once("close", () => sink.removeListener("close", kill));
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    if (stderr.length < 4000) stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) =>
      code !== null && ok.includes(code)
        ? resolve()
        : reject(new WorkspaceError(`${what} failed (exit ${code}): ${stderr.trim()}`)),
    );
  });
}

/** Spawns `zstd -1` writing into `sink` (not ending it); `input` is its stdin (a pipe when omitted). */
function compressor(
  sink: NodeJS.WritableStream,
  input: Readable | "pipe" = "pipe",
): { child: ChildProcess; done: Promise<void> } {
  const child = spawn("zstd", ["-1", "-T0", "-q", "-c"], { stdio: [input, "pipe", "pipe"] });
  child.stdout!.pipe(sink, { end: false });
  return { child, done: exited(child, sink, "compressing the workspace with zstd", [0]) };
}

/**
 * GNU tar's arguments to pack `names` (a file of NUL-separated paths, `-` for stdin) from `dir`: by name,
 * without recursion; hard links stored as files; every entry owned by `owner`. The host's tar and the
 * copier container's use the same.
 */
export function tarCreateArgs(dir: string, names: string, owner: number, worldReadable: boolean): string[] {
  const args = ["-c", "-f", "-", "-C", dir, "--null", "--no-recursion", "--verbatim-files-from"];
  args.push(
    "--hard-dereference",
    `--owner=${owner}`,
    `--group=${owner}`,
    "--numeric-owner",
    "--ignore-failed-read",
  );
  if (worldReadable) args.push("--mode=a+rX");
  args.push("-T", names); // last: GNU tar applies options only to the names after them
  return args;
}

/** The entries the packer reads from disk (the rewritten ones go as an archive of their own). */
const readFromDisk = (copy: WorkspaceCopy): string[] => copy.entries.filter((e) => !e.data).map((e) => e.rel);
const rewrittenOf = (copy: WorkspaceCopy): Entry[] => copy.entries.filter((e) => e.data);

/** Packs the entries with the host's GNU tar into `sink` without ending it (through zstd when `zstd`). */
async function packWithHostTar(
  copy: WorkspaceCopy,
  sink: NodeJS.WritableStream,
  zstd: boolean,
): Promise<void> {
  const rels = readFromDisk(copy);
  const args = tarCreateArgs(copy.dir, "-", AGENT_UID, copy.worldReadable);
  const tar = spawn("tar", args, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, LC_ALL: "C" } });
  // 1: a file changed while it was read (what the copy holds is what was read then).
  const waits = [exited(tar, sink, "packing the workspace with tar", [0, 1])];
  if (zstd) {
    waits.push(compressor(sink, tar.stdout).done);
    tar.stdout.destroy(); // zstd holds the pipe now; this end open would hold back tar's "close"
  } else tar.stdout.pipe(sink, { end: false });
  tar.stdin.on("error", () => undefined); // tar's exit says what went wrong
  tar.stdin.end(rels.length ? rels.join("\0") + "\0" : "");
  await Promise.all(waits);
}

/** Packs entries with tar-stream into `sink` without ending it (through zstd when `zstd`), owned by `owner`. */
async function packWithTarStream(
  dir: string,
  entries: readonly Entry[],
  sink: NodeJS.WritableStream,
  options: { worldReadable: boolean; zstd: boolean; owner: number },
): Promise<void> {
  const zstdProcess = options.zstd ? compressor(sink) : undefined;
  const pack = tarPack();
  const out = coalesced();
  pack.pipe(out).pipe(zstdProcess ? zstdProcess.child.stdin! : sink, { end: Boolean(zstdProcess) });
  const add = (header: Partial<Header> & { name: string }, body?: Buffer) =>
    new Promise<void>((resolve, reject) => {
      const done = (err?: Error | null) => (err ? reject(err) : resolve());
      if (body) pack.entry(header, body, done);
      else pack.entry(header, done);
    });
  for (const { rel, st, data } of entries) {
    const abs = path.join(dir, rel);
    const mode = (st.mode & 0o7777) | (options.worldReadable ? (st.isDirectory() ? 0o555 : 0o444) : 0);
    const common = { name: rel, mode, mtime: st.mtime, uid: options.owner, gid: options.owner };
    if (st.isDirectory()) await add({ ...common, type: "directory" });
    else if (st.isSymbolicLink()) await add({ ...common, type: "symlink", linkname: fs.readlinkSync(abs) });
    else {
      const body = data ?? readOrEmpty(abs);
      await add({ ...common, type: "file", size: body.length }, body);
    }
  }
  pack.finalize();
  await new Promise<void>((resolve, reject) => {
    out.on("end", resolve);
    out.on("error", reject);
    pack.on("error", reject);
  });
  await zstdProcess?.done;
}

/** A file that vanished or became unreadable since it was planned is copied empty, not a broken stream. */
function readOrEmpty(abs: string): Buffer {
  try {
    return fs.readFileSync(abs);
  } catch {
    return Buffer.alloc(0);
  }
}

/**
 * Lists and checks the workspace for the copy: every path, its limits, what stays out and why (see
 * `plan`). An error here (over a limit) comes before anything is copied.
 */
export async function planWorkspaceCopy(dir: string, options: PackOptions = {}): Promise<WorkspaceCopy> {
  const { paths, isGitRepo, baseCommit, ignoredLeftOut } = await listWorkspace(dir, options.includeIgnored);
  const planned = plan(dir, paths, options);
  await withoutGitConfigCredentials(dir, planned);
  return {
    dir,
    ...planned,
    isGitRepo,
    baseCommit,
    worldReadable: Boolean(options.worldReadable),
    ignoredLeftOut,
  };
}

/** What was copied and left out, for the report (once git has listed what it ignores). */
export async function copySummary(copy: WorkspaceCopy): Promise<PackSummary> {
  return {
    files: copy.files,
    bytes: copy.bytes,
    skipped: copy.skipped,
    credentialFiles: copy.credentialFiles,
    isGitRepo: copy.isGitRepo,
    ...(copy.baseCommit ? { baseCommit: copy.baseCommit } : {}),
    ignoredLeftOut: await copy.ignoredLeftOut,
  };
}

/**
 * Writes the copy as a tar stream into `sink` (the container's `tar -x` stdin, with `extractFlags(packer)`),
 * without ending it.
 */
export async function packWorkspace(
  copy: WorkspaceCopy,
  sink: NodeJS.WritableStream,
  packer: HostPacker,
): Promise<void> {
  const owned = { worldReadable: copy.worldReadable, owner: AGENT_UID };
  if (!packer.gnuTar) return packWithTarStream(copy.dir, copy.entries, sink, { ...owned, zstd: false });
  await packWithHostTar(copy, sink, packer.zstd);
  const rewritten = rewrittenOf(copy);
  if (rewritten.length) await packWithTarStream(copy.dir, rewritten, sink, { ...owned, zstd: packer.zstd });
}

/**
 * The copier container's input (copier.ts), by file name in its directory: the NUL-separated paths for
 * `tarCreateArgs`, and the files whose credential lines were removed, as a tar archive (absent when none).
 */
export const COPY_LIST = { names: "names", rewritten: "rewritten.tar" } as const;

/** Writes the copier's input (`COPY_LIST`) into `dir`, a directory of its own, every entry owned by `owner`. */
export async function writeCopyList(copy: WorkspaceCopy, dir: string, owner: number): Promise<void> {
  const rels = readFromDisk(copy);
  fs.writeFileSync(path.join(dir, COPY_LIST.names), rels.length ? rels.join("\0") + "\0" : "");
  const entries = rewrittenOf(copy);
  if (!entries.length) return;
  const file = fs.createWriteStream(path.join(dir, COPY_LIST.rewritten));
  await packWithTarStream(copy.dir, entries, file, { worldReadable: copy.worldReadable, zstd: false, owner });
  await new Promise<void>((resolve, reject) =>
    file.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
}
