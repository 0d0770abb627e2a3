// Project memory as Claude Code reads it: CLAUDE.md, .claude/CLAUDE.md, .claude/rules/*.md and CLAUDE.local.md,
// their `@path` imports, and the same files in subdirectories (nested memory, read when a tool reaches them).
// Files are read on the host from a `MemoryTree`: the workspace itself, or a folder holding the repository's
// memory files at the trusted (base) revision. Every read is confined to the tree's root (no `..`, no symlink
// out of it), so nothing outside /workspace is ever read, and a file is cut at MAX_MEMORY_FILE_CHARS.
import fs from "node:fs";
import path from "node:path";
import picomatch from "picomatch";
import { WORKSPACE_ROOT } from "../../../sandbox/sandbox.js";
import { parseFrontmatter } from "../frontmatter.js";

/** A memory file is sent whole up to this many characters (a 60,000-character CLAUDE.md is); past it, cut with a note. */
export const MAX_MEMORY_FILE_CHARS = 100_000;
/** Claude Code's import depth: a file imported by an import of an import … five levels down, no further. */
export const MAX_IMPORT_DEPTH = 5;
/** At most this many memory files per conversation (imports included); more are left out and reported. */
export const MAX_MEMORY_FILES = 200;
/** Bytes read of one file at most (enough for MAX_MEMORY_FILE_CHARS of any UTF-8 text). */
const MAX_READ_BYTES = MAX_MEMORY_FILE_CHARS * 4;

export const PROJECT_MEMORY = "CLAUDE.md";
export const DOT_CLAUDE_MEMORY = ".claude/CLAUDE.md";
export const LOCAL_MEMORY = "CLAUDE.local.md";
export const RULES_DIR = ".claude/rules";

/** What a file is, as the model is told in its `Contents of … (<label>):` line. */
export type MemoryKind = "project" | "local" | "user";
export const MEMORY_LABELS: Record<MemoryKind, string> = {
  project: "project instructions, checked into the codebase",
  local: "user's private project instructions, not checked in",
  user: "user's private global instructions for all projects",
};

/** Where memory files are read from: a host folder standing for /workspace at `revision`. */
export interface MemoryTree {
  root: string;
  /** The revision the files come from, for the report: `workspace`, `base <sha>`, `memory-file`. */
  revision: string;
  /** The path the model sees for a file of this tree (default: /workspace/<rel>). */
  shownPath?: (rel: string) => string;
}

export interface MemoryFile {
  /** The path the model is told (`/workspace/CLAUDE.md`). */
  path: string;
  /** Relative to its tree's root (posix). */
  rel: string;
  kind: MemoryKind;
  revision: string;
  /** The text sent (frontmatter of a rule removed; cut with a note past the limit). */
  text: string;
  /** Characters of the file (before any cut). */
  chars: number;
  cut: boolean;
  /** The memory file whose `@path` brought this one in. */
  importedBy?: string;
}

/** A file a conversation could not use, with why (for the report and the log). */
export interface MemoryProblem {
  path: string;
  reason: string;
}

const shown = (tree: MemoryTree, rel: string) =>
  tree.shownPath ? tree.shownPath(rel) : path.posix.join(WORKSPACE_ROOT, rel);

/** Whether a repository path is one agent-ci reads as memory (for the base revision's listing). */
export function isMemoryPath(rel: string): boolean {
  const base = path.posix.basename(rel);
  if (base === PROJECT_MEMORY || base === LOCAL_MEMORY) return true;
  return /(^|\/)\.claude\/rules\/.+\.md$/.test(rel);
}

/** A repository-relative path inside the tree, or undefined (absolute, climbing out, empty). */
function within(rel: string): string | undefined {
  const normalized = path.posix.normalize(rel.replace(/\\/g, "/"));
  if (normalized.startsWith("../") || normalized === ".." || normalized === "." || normalized.startsWith("/"))
    return undefined;
  return normalized;
}

/**
 * Reads `rel` from the tree: undefined when it is missing, not a regular file, outside the root (through a
 * symlink too) or binary. At most MAX_READ_BYTES are read; the file's size is known from its stat.
 */
export function readTreeFile(
  tree: MemoryTree,
  rel: string,
): { text: string; chars: number; cut: boolean } | undefined {
  const inside = within(rel);
  if (inside === undefined) return undefined;
  const file = path.join(tree.root, inside);
  let real: string;
  let rootReal: string;
  try {
    real = fs.realpathSync(file);
    rootReal = fs.realpathSync(tree.root);
  } catch {
    return undefined;
  }
  if (real !== rootReal && !real.startsWith(rootReal + path.sep)) return undefined;
  const stat = fs.statSync(real, { throwIfNoEntry: false });
  if (!stat?.isFile()) return undefined;
  const fd = fs.openSync(real, "r");
  let bytes: Buffer;
  try {
    bytes = Buffer.alloc(Math.min(stat.size, MAX_READ_BYTES));
    const read = fs.readSync(fd, bytes, 0, bytes.length, 0);
    bytes = bytes.subarray(0, read);
  } finally {
    fs.closeSync(fd);
  }
  if (bytes.subarray(0, 8192).includes(0)) return undefined;
  const whole = bytes.toString("utf8");
  const partialRead = stat.size > bytes.length;
  if (!partialRead && whole.length <= MAX_MEMORY_FILE_CHARS)
    return { text: whole, chars: whole.length, cut: false };
  const chars = partialRead ? stat.size : whole.length;
  const note = `\n\n[agent-ci: this memory file has ${partialRead ? `${stat.size} bytes` : `${chars} characters`}; only its first ${MAX_MEMORY_FILE_CHARS} characters are shown. Read the file for the rest.]`;
  return { text: whole.slice(0, MAX_MEMORY_FILE_CHARS) + note, chars, cut: true };
}

/**
 * The `@path` imports of a memory file, in order, as paths relative to the tree's root (undefined entries
 * dropped): relative to the importing file, `/workspace/…` as the tree's own; `~/…` (the host's home) and any
 * other absolute path are refused. Not inside fenced code blocks or code spans. Linear in the text.
 */
export function importsOf(text: string, fromRel: string): string[] {
  const found: string[] = [];
  let fence: string | undefined;
  for (const line of text.split("\n")) {
    const opener = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (
        opener &&
        opener[1]![0] === fence[0] &&
        opener[1]!.length >= fence.length &&
        !line.slice(opener[0].length).trim()
      )
        fence = undefined;
      continue;
    }
    if (opener) {
      fence = opener[1];
      continue;
    }
    for (const token of outsideCodeSpans(line)) {
      for (const match of token.matchAll(/(?:^|\s)@((?:[^\s\\]|\\ )+)/g)) {
        const target = resolveImport(match[1]!.replace(/\\ /g, " "), fromRel);
        if (target !== undefined) found.push(target);
      }
    }
  }
  return found;
}

/** The parts of a line outside its `code spans` (a backtick run closed by a run of the same length). */
function outsideCodeSpans(line: string): string[] {
  const parts: string[] = [];
  let at = 0;
  let from = 0;
  while (at < line.length) {
    if (line[at] !== "`") {
      at += 1;
      continue;
    }
    let run = 1;
    while (line[at + run] === "`") run += 1;
    const ticks = "`".repeat(run);
    let close = line.indexOf(ticks, at + run);
    while (close !== -1 && line[close + run] === "`") {
      let end = close;
      while (line[end] === "`") end += 1;
      close = line.indexOf(ticks, end);
    }
    if (close === -1) {
      at += run;
      continue;
    }
    parts.push(line.slice(from, at));
    at = close + run;
    from = at;
  }
  parts.push(line.slice(from));
  return parts;
}

function resolveImport(raw: string, fromRel: string): string | undefined {
  const target = raw.split("#")[0]!;
  if (!target || target.startsWith("~")) return undefined;
  if (target.startsWith("/")) {
    if (target === WORKSPACE_ROOT || !target.startsWith(`${WORKSPACE_ROOT}/`)) return undefined;
    return within(target.slice(WORKSPACE_ROOT.length + 1));
  }
  if (!/^[A-Za-z0-9._-]/.test(target) && !target.startsWith("./")) return undefined;
  return within(path.posix.join(path.posix.dirname(fromRel), target));
}

/**
 * One conversation's record of the memory files it was given: each file once, and the file limit. The first
 * request's files and each tool result's nested ones go through the same `take`.
 */
export class MemorySeen {
  private readonly seen = new Set<string>();
  readonly problems: MemoryProblem[] = [];
  count = 0;

  has(tree: MemoryTree, rel: string): boolean {
    return this.seen.has(`${tree.root}\0${rel}`);
  }

  /** The file and its imports (depth first, the importing file first), each not yet seen. */
  take(
    tree: MemoryTree,
    rel: string,
    kind: MemoryKind,
    options: { stripFrontmatter?: boolean; importedBy?: string; depth?: number } = {},
  ): MemoryFile[] {
    const key = `${tree.root}\0${rel}`;
    if (this.seen.has(key)) return [];
    const read = readTreeFile(tree, rel);
    if (!read) return [];
    this.seen.add(key);
    if (this.count >= MAX_MEMORY_FILES) {
      this.problems.push({
        path: shown(tree, rel),
        reason: `left out: over ${MAX_MEMORY_FILES} memory files in one conversation`,
      });
      return [];
    }
    this.count += 1;
    let text = read.text;
    if (options.stripFrontmatter) {
      try {
        text = parseFrontmatter(text).body;
      } catch {
        // A rule whose frontmatter does not parse is sent as it is, as Claude Code does.
      }
    }
    const file: MemoryFile = {
      path: shown(tree, rel),
      rel,
      kind,
      revision: tree.revision,
      text,
      chars: read.chars,
      cut: read.cut,
      ...(options.importedBy ? { importedBy: options.importedBy } : {}),
    };
    const depth = options.depth ?? 0;
    if (depth >= MAX_IMPORT_DEPTH) return [file];
    const imported = importsOf(read.text, rel).flatMap((target) =>
      this.take(tree, target, kind, { importedBy: file.path, depth: depth + 1 }),
    );
    return [file, ...imported];
  }
}

/** `.claude/rules/**\/*.md` under `dir` (relative to the tree), sorted, each with its `paths:` globs. */
export function rulesIn(tree: MemoryTree, dir: string): Array<{ rel: string; globs?: string[] }> {
  const rulesRel = dir ? path.posix.join(dir, RULES_DIR) : RULES_DIR;
  const found: string[] = [];
  const walk = (rel: string, depth: number) => {
    const abs = path.join(tree.root, rel);
    let entries: fs.Dirent[];
    try {
      if (!fs.lstatSync(abs).isDirectory()) return;
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const child = path.posix.join(rel, entry.name);
      if (entry.isDirectory() && depth < 5) walk(child, depth + 1);
      else if (entry.name.endsWith(".md") && (entry.isFile() || entry.isSymbolicLink())) found.push(child);
    }
  };
  walk(rulesRel, 0);
  return found.slice(0, MAX_MEMORY_FILES).map((rel) => ({ rel, globs: ruleGlobs(tree, rel) }));
}

/** A rule's `paths:` (a list, or one comma-separated string); undefined when it has none. */
function ruleGlobs(tree: MemoryTree, rel: string): string[] | undefined {
  const read = readTreeFile(tree, rel);
  if (!read) return undefined;
  let paths: unknown;
  try {
    paths = parseFrontmatter(read.text).frontmatter.paths;
  } catch {
    return undefined;
  }
  const list = Array.isArray(paths)
    ? paths.map(String)
    : typeof paths === "string"
      ? paths.split(",")
      : undefined;
  const globs = list?.map((g) => g.trim()).filter(Boolean);
  return globs?.length ? globs : undefined;
}

/** Whether a conditional rule's globs (relative to the folder that holds `.claude/`) match `rel`. */
export function ruleMatches(globs: readonly string[], baseDir: string, rel: string): boolean {
  const relToBase = baseDir ? path.posix.relative(baseDir, rel) : rel;
  if (relToBase.startsWith("../")) return false;
  return picomatch(globs as string[], { dot: true })(relToBase);
}
