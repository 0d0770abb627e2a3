// Git's config files lose every credential git would use before the copy-in (S2, B12): a checkout step leaves
// its token in them (actions/checkout's `http.https://github.com/.extraheader`, in the repository's config and
// in every submodule's), and a workflow may add a push URL with `user:token@`, a
// `url."https://x-access-token:TOKEN@github.com/".insteadOf` (the token in the section's name) or a
// credential helper.
//
// Which files: `config` and `config.worktree` in every git directory the copy holds (`.git`,
// `.git/modules/**`, `.git/worktrees/*`, a nested or bare repository), and the files their includes name
// inside the workspace. The file is read by git itself (`git config --file <f> --list --null`,
// includes not followed), so whatever the file's syntax (quoted and legacy subsections, escapes, continuation
// lines, comments) the entries judged are git's own reading; a file with nothing to remove is copied as it is,
// one with something is written anew from the entries kept. A file git cannot read is held back.
//
// What goes: every `credential.*` entry, `extraheader` in any section, `sendemail.*.smtpPass` and
// `imap.pass`, an entry whose subsection holds URL userinfo (`url."https://user:token@host/".insteadOf`,
// `http."https://user:token@host/".*`), and the include directives (`include.path`, `includeIf.*.path`:
// the sandbox's git reads the file's own entries only; a file they name inside the workspace is itself
// cleaned as a git config, one outside it is not in the container). URL userinfo is removed from every value
// (`remote.*.url`, `remote.*.pushurl`, `http.proxy`, an `insteadOf` value).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { git } from "../../host-git.js";
import { maskUrlCredentials, relativeInside, withoutUrlCredentials } from "./credential-files.js";

/** One entry as git lists it: section and name lowercased, the subsection as written. */
export interface GitConfigEntry {
  /** Undefined for an entry git read before any section header. */
  section?: string;
  subsection?: string;
  name: string;
  /** Undefined for a key with no `=` (a boolean true). */
  value?: string;
}

/**
 * Entries from `git config --list --null`'s output: `key\nvalue\0`, or `key\0` for a key with no value. A
 * key is `section.name` or `section.subsection.name`; the subsection may hold dots, the section and the name
 * cannot.
 */
export function parseGitConfigList(out: string): GitConfigEntry[] {
  const entries: GitConfigEntry[] = [];
  // The next newline, found again only once passed: one far ahead is not searched for from every record.
  let newline = -1;
  for (let start = 0; start < out.length;) {
    let end = out.indexOf("\0", start);
    if (end === -1) end = out.length;
    if (newline < start) {
      newline = out.indexOf("\n", start);
      if (newline === -1) newline = out.length;
    }
    const keyEnd = Math.min(newline, end);
    const key = out.slice(start, keyEnd);
    const value = keyEnd < end ? out.slice(keyEnd + 1, end) : undefined;
    start = end + 1;
    if (!key) continue; // git lists no entry without a key
    const first = key.indexOf(".");
    const last = key.lastIndexOf(".");
    if (first === -1) entries.push({ name: key, value });
    else
      entries.push({
        section: key.slice(0, first),
        subsection: first === last ? undefined : key.slice(first + 1, last),
        name: key.slice(last + 1),
        value,
      });
  }
  return entries;
}

/** An entry's key as git prints it, with any URL userinfo in it shown as `***`. */
function keyOf(entry: GitConfigEntry): string {
  const key = [entry.section, entry.subsection, entry.name].filter((p) => p !== undefined).join(".");
  return maskUrlCredentials(key);
}

/** Why an entry goes whole (the name recorded), or undefined. */
function removal(entry: GitConfigEntry): string | undefined {
  const { section, subsection, name } = entry;
  if (section === "include" && subsection === undefined && name === "path") return "include.path";
  if (section === "includeif" && subsection !== undefined && name === "path")
    return "includeif.<condition>.path";
  if (
    section === "credential" ||
    name === "extraheader" ||
    (section === "sendemail" && name === "smtppass") ||
    (section === "imap" && name === "pass") ||
    (subsection !== undefined && withoutUrlCredentials(subsection) !== subsection)
  )
    return keyOf(entry);
  return undefined;
}

export interface CleanGitConfig {
  /** The entries kept, in order, URL userinfo gone from their values. */
  entries: GitConfigEntry[];
  /** What was removed: keys (never a value), a key whose URL lost its userinfo marked so. */
  removed: string[];
  /** The paths the file's include directives name, as written. */
  includes: string[];
}

/** `entries` without the credentials git would use (see the top of this file). */
export function withoutGitCredentials(entries: readonly GitConfigEntry[]): CleanGitConfig {
  const kept: GitConfigEntry[] = [];
  const removed: string[] = [];
  const includes: string[] = [];
  for (const entry of entries) {
    const why = removal(entry);
    if (why) {
      removed.push(why);
      if (why.startsWith("include") && entry.value) includes.push(entry.value);
      continue;
    }
    const value = entry.value === undefined ? undefined : withoutUrlCredentials(entry.value);
    if (value !== entry.value) removed.push(`${keyOf(entry)} (user:password@ in a URL)`);
    kept.push({ ...entry, value });
  }
  return { entries: kept, removed, includes };
}

/** Characters that make git read a value otherwise when they are not in double quotes. */
const NEEDS_QUOTES = /["\\\n\t\b\r#;]/;

/**
 * A value as git reads it back: as it is when it can be, else in double quotes with the escapes git's parser
 * reads (`\\`, `\"`, `\n`, `\t`, `\b`); git drops white space around an unquoted value.
 */
function writtenValue(value: string): string {
  const edge = (c: string | undefined) => c === " " || c === "\t";
  if (!NEEDS_QUOTES.test(value) && !edge(value[0]) && !edge(value[value.length - 1])) return value;
  const escaped = value
    .replaceAll("\\", "\\\\")
    .replaceAll('"', '\\"')
    .replaceAll("\n", "\\n")
    .replaceAll("\t", "\\t")
    .replaceAll("\b", "\\b");
  return `"${escaped}"`;
}

/** A subsection in double quotes: git reads `\"` and `\\` there, and drops a backslash before anything else. */
const quotedSubsection = (subsection: string) =>
  `"${subsection.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;

/**
 * A config file holding `entries`, that git lists back as the same entries in the same order: a header
 * whenever the section changes (`[section "subsection"]`), a value quoted where git would read it
 * otherwise. Entries git read before any header come first, as they were.
 */
export function writeGitConfig(entries: readonly GitConfigEntry[]): string {
  const line = (e: GitConfigEntry) =>
    e.value === undefined ? `\t${e.name}` : `\t${e.name} = ${writtenValue(e.value)}`;
  const lines = entries.filter((e) => e.section === undefined).map(line);
  let header: string | undefined;
  for (const entry of entries) {
    if (entry.section === undefined) continue;
    const next =
      entry.subsection === undefined
        ? `[${entry.section}]`
        : `[${entry.section} ${quotedSubsection(entry.subsection)}]`;
    if (next !== header) lines.push((header = next));
    lines.push(line(entry));
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
}

/** git's reading of one config file (includes not followed), outside any repository. */
export async function readGitConfig(file: string): Promise<GitConfigEntry[]> {
  // GIT_DIR names no repository: git looks for none, so a broken repository around the file cannot fail the read.
  const out = await git(["config", "--file", file, "--no-includes", "--list", "--null"], {
    cwd: path.dirname(file),
    env: { GIT_DIR: "/dev/null" },
    encoding: "latin1",
  });
  return parseGitConfigList(out);
}

/** What the copy does with one git config file: copy `content` instead (naming what went), or hold it back. */
export type GitConfigOutcome =
  { path: string; content: Buffer; removed: string[] } | { path: string; unreadable: true };

function isFile(p: string): boolean {
  return fs.statSync(p, { throwIfNoEntry: false })?.isFile() ?? false;
}
function isDir(p: string): boolean {
  return fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/** git's own test of a git directory: `HEAD`, and `objects` and `refs` (or a linked worktree's `commondir`). */
function isGitDirectory(dir: string): boolean {
  return (
    isFile(path.join(dir, "HEAD")) &&
    (isFile(path.join(dir, "commondir")) ||
      (isDir(path.join(dir, "objects")) && isDir(path.join(dir, "refs"))))
  );
}

const CONFIG_NAMES = new Set(["config", "config.worktree"]);

/**
 * Whether a workspace-relative path is one of git's config files by where it lies (not by its includes): a
 * `config` or `config.worktree` in a git directory. A `.gitconfig` in the working tree is no config git reads
 * there (a dotfiles repository's is its content, and writing it anew would make any patch to it unappliable).
 */
export function isGitConfigPath(workspace: string, relPath: string): boolean {
  const name = path.posix.basename(relPath);
  return CONFIG_NAMES.has(name) && isGitDirectory(path.join(workspace, path.posix.dirname(relPath)));
}

/** Where an include directive in the file at `configAbs` points, as git resolves it; undefined if nowhere here. */
function includeTarget(configAbs: string, written: string): string | undefined {
  const value = Buffer.from(written, "latin1").toString("utf8");
  if (value.startsWith("%(prefix)/")) return undefined;
  if (value.startsWith("~/")) return path.join(os.homedir(), value.slice(2));
  return path.resolve(path.dirname(configAbs), value);
}

/** Config files read at once. */
const READ_CONCURRENCY = 4;
/** git's own bound on nested includes. */
const MAX_INCLUDE_DEPTH = 10;

/**
 * Cleans every git config file of the copy (see the top of this file): `copied` says whether a
 * workspace-relative path is copied, and as what. Returns an outcome for each file that had a credential, an
 * include, or that git could not read; the others are copied as they are.
 */
export async function cleanGitConfigs(
  workspace: string,
  copied: (relPath: string) => "file" | "symlink" | undefined,
  candidates: readonly string[],
): Promise<GitConfigOutcome[]> {
  const realWorkspace = fs.realpathSync(workspace);
  /** The copied regular file at `abs`, or the one it resolves to through links inside the workspace. */
  const copiedFileAt = (abs: string): string | undefined => {
    const rel = relativeInside(workspace, abs);
    if (rel !== undefined && copied(rel) === "file") return rel;
    let real: string;
    try {
      real = fs.realpathSync(abs);
    } catch {
      return undefined;
    }
    const target = relativeInside(realWorkspace, real);
    return target !== undefined && copied(target) === "file" ? target : undefined;
  };
  const seen = new Set<string>();
  const outcomes: GitConfigOutcome[] = [];
  let level = candidates
    .filter((rel) => isGitConfigPath(workspace, rel))
    .map((rel) => path.join(workspace, rel));
  for (let depth = 0; level.length && depth <= MAX_INCLUDE_DEPTH; depth++) {
    const files = [...new Set(level.map(copiedFileAt))].filter(
      (rel): rel is string => rel !== undefined && !seen.has(rel),
    );
    for (const rel of files) seen.add(rel);
    const next: string[] = [];
    for (let i = 0; i < files.length; i += READ_CONCURRENCY) {
      const batch = files.slice(i, i + READ_CONCURRENCY);
      const read = await Promise.all(
        batch.map((rel) => readGitConfig(path.join(workspace, rel)).catch(() => undefined)),
      );
      batch.forEach((rel, j) => {
        const entries = read[j];
        if (!entries) {
          outcomes.push({ path: rel, unreadable: true });
          return;
        }
        const clean = withoutGitCredentials(entries);
        for (const written of clean.includes) {
          const target = includeTarget(path.join(workspace, rel), written);
          if (target !== undefined) next.push(target);
        }
        if (clean.removed.length)
          outcomes.push({
            path: rel,
            content: Buffer.from(writeGitConfig(clean.entries), "latin1"),
            removed: clean.removed,
          });
      });
    }
    level = next;
  }
  return outcomes;
}
