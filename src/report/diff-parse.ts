// A small, forgiving parser for the patch agent-ci produces (`git diff --binary`, also plain unified diffs):
// files with status, +/− counts and numbered lines. Used by the patch stats, the secret scan and the HTML view.

export type DiffLineType = "add" | "del" | "ctx" | "note";

export interface DiffLine {
  type: DiffLineType;
  /** The line without its one-character prefix. */
  text: string;
  oldLine?: number;
  newLine?: number;
}

export interface DiffHunk {
  header: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: DiffLine[];
}

export type DiffFileStatus = "added" | "modified" | "deleted" | "renamed" | "copied";

export interface DiffFile {
  path: string;
  oldPath?: string;
  status: DiffFileStatus;
  binary: boolean;
  /** The file's mode after the patch, when the patch sets it (`new file mode`, `new mode`): `100755` is executable. */
  mode?: string;
  /** A binary file's size in the patch (the first `literal`/`delta` of its GIT binary patch, inflated bytes). */
  binaryBytes?: number;
  added: number;
  removed: number;
  hunks: DiffHunk[];
}

export interface ParsedDiff {
  files: DiffFile[];
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** Undoes git's C-style quoting of unusual paths ("a/\303\251 x.txt"). */
export function unquoteGitPath(raw: string): string {
  if (!raw.startsWith('"') || !raw.endsWith('"') || raw.length < 2) return raw;
  const body = raw.slice(1, -1);
  const bytes: number[] = [];
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, '"': 34, "\\": 92, a: 7, b: 8, f: 12, v: 11 };
  for (let i = 0; i < body.length; i++) {
    const char = body[i] ?? "";
    if (char !== "\\") {
      bytes.push(...Buffer.from(char, "utf8"));
      continue;
    }
    const next = body[i + 1] ?? "";
    const octal = /^[0-7]{3}/.exec(body.slice(i + 1, i + 4));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += 3;
      continue;
    }
    bytes.push(simple[next] ?? next.charCodeAt(0));
    i += 1;
  }
  return Buffer.from(bytes).toString("utf8");
}

function stripPrefix(path: string, prefix: "a/" | "b/"): string {
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/** Path from a `--- a/x` / `+++ b/x` line; undefined for /dev/null. */
function pathFromFileLine(rest: string, prefix: "a/" | "b/"): string | undefined {
  // git ends a name holding a space with a TAB (`+++ "b/a b\nc"<TAB>`); inside quotes a TAB is escaped.
  const withoutTimestamp = rest.startsWith('"') ? rest.replace(/"\t.*$/, '"') : rest.replace(/\t.*$/, "");
  const unquoted = unquoteGitPath(withoutTimestamp);
  if (unquoted === "/dev/null") return undefined;
  return stripPrefix(unquoted, prefix);
}

/** Paths from `diff --git a/x b/y`, handling quoted paths and spaces. */
function pathsFromGitHeader(rest: string): { oldPath: string; newPath: string } {
  if (rest.startsWith('"')) {
    const end = rest.indexOf('" ', 1);
    const first = rest.slice(0, end + 1);
    const second = rest.slice(end + 2);
    return {
      oldPath: stripPrefix(unquoteGitPath(first), "a/"),
      newPath: stripPrefix(unquoteGitPath(second), "b/"),
    };
  }
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest.slice(2, half) === rest.slice(half + 3)) {
    const path = rest.slice(2, half);
    return { oldPath: path, newPath: path };
  }
  const split = rest.lastIndexOf(" b/");
  if (split === -1) return { oldPath: rest, newPath: rest };
  return {
    oldPath: stripPrefix(rest.slice(0, split), "a/"),
    newPath: stripPrefix(unquoteGitPath(rest.slice(split + 1)), "b/"),
  };
}

function newFile(path: string): DiffFile {
  return { path, status: "modified", binary: false, added: 0, removed: 0, hunks: [] };
}

interface HunkState {
  hunk: DiffHunk;
  oldLeft: number;
  newLeft: number;
  oldLine: number;
  newLine: number;
}

function startHunk(line: string): HunkState | undefined {
  const match = HUNK_HEADER.exec(line);
  if (!match) return undefined;
  const oldStart = Number(match[1]);
  const oldLines = match[2] === undefined ? 1 : Number(match[2]);
  const newStart = Number(match[3]);
  const newLines = match[4] === undefined ? 1 : Number(match[4]);
  return {
    hunk: { header: line, oldStart, oldLines, newStart, newLines, lines: [] },
    oldLeft: oldLines,
    newLeft: newLines,
    oldLine: oldStart,
    newLine: newStart,
  };
}

/** Consumes one line inside a hunk; false when the line is not hunk content (the hunk ended early). */
function hunkLine(state: HunkState, file: DiffFile, line: string): boolean {
  const prefix = line[0];
  const text = line.slice(1);
  if (prefix === "+") {
    state.hunk.lines.push({ type: "add", text, newLine: state.newLine++ });
    state.newLeft--;
    file.added++;
    return true;
  }
  if (prefix === "-") {
    state.hunk.lines.push({ type: "del", text, oldLine: state.oldLine++ });
    state.oldLeft--;
    file.removed++;
    return true;
  }
  if (prefix === " " || line === "") {
    state.hunk.lines.push({ type: "ctx", text, oldLine: state.oldLine++, newLine: state.newLine++ });
    state.oldLeft--;
    state.newLeft--;
    return true;
  }
  if (prefix === "\\") {
    state.hunk.lines.push({ type: "note", text: line });
    return true;
  }
  return false;
}

/** Applies a header line (outside hunks) to the current file. */
function headerLine(file: DiffFile, line: string): void {
  if (line.startsWith("new file mode")) {
    file.status = "added";
    file.mode = line.slice(14).trim();
  } else if (line.startsWith("new mode ")) file.mode = line.slice(9).trim();
  else if (file.binary && file.binaryBytes === undefined && /^(?:literal|delta) \d{1,15}$/.test(line))
    file.binaryBytes = Number(line.slice(line.indexOf(" ") + 1));
  else if (line.startsWith("deleted file mode")) file.status = "deleted";
  else if (line.startsWith("rename from ")) {
    file.oldPath = unquoteGitPath(line.slice(12));
    file.status = "renamed";
  } else if (line.startsWith("rename to ")) file.path = unquoteGitPath(line.slice(10));
  else if (line.startsWith("copy from ")) {
    file.oldPath = unquoteGitPath(line.slice(10));
    file.status = "copied";
  } else if (line.startsWith("copy to ")) file.path = unquoteGitPath(line.slice(8));
  else if (line.startsWith("GIT binary patch") || /^Binary files .* differ$/.test(line)) file.binary = true;
  else if (line.startsWith("--- ")) {
    if (pathFromFileLine(line.slice(4), "a/") === undefined) file.status = "added";
  } else if (line.startsWith("+++ ")) {
    const path = pathFromFileLine(line.slice(4), "b/");
    if (path === undefined) file.status = "deleted";
    else file.path = path;
  }
}

export function parseGitDiff(text: string): ParsedDiff {
  const files: DiffFile[] = [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  let file: DiffFile | undefined;
  let hunk: HunkState | undefined;

  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? "").replace(/\r$/, "");
    if (hunk && file && (hunk.oldLeft > 0 || hunk.newLeft > 0) && hunkLine(hunk, file, line)) continue;
    if (hunk && line.startsWith("\\")) {
      hunk.hunk.lines.push({ type: "note", text: line });
      continue;
    }
    hunk = undefined;
    if (line.startsWith("diff --git ")) {
      const { oldPath, newPath } = pathsFromGitHeader(line.slice(11));
      file = newFile(newPath);
      if (oldPath !== newPath) file.oldPath = oldPath;
      files.push(file);
      continue;
    }
    const plainStart = line.startsWith("--- ") && (lines[i + 1] ?? "").startsWith("+++ ");
    if (plainStart && (!file || file.hunks.length > 0)) {
      file = newFile(pathFromFileLine(line.slice(4), "a/") ?? "");
      files.push(file);
    }
    if (!file) continue;
    const started = startHunk(line);
    if (started) {
      hunk = started;
      file.hunks.push(started.hunk);
      continue;
    }
    headerLine(file, line);
  }
  return { files };
}
