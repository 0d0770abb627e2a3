// The repository scripts a hook command runs, found in its text so that they can be taken from the workspace
// as the run started rather than from the working copy the agent edits (docs/hooks.md "Trust"). A script is a
// word in a command's place (`"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh`, `./scripts/fmt.sh`) or the
// script an interpreter is given (`bash .claude/hooks/fmt.sh`, `python3 "$CLAUDE_PROJECT_DIR/lint.py"`),
// written as a path: absolute under /workspace, relative to it (hooks run in /workspace), or through
// CLAUDE_PROJECT_DIR. A word with any other expansion is not a path agent-ci can know, and is left alone.
import path from "node:path";
import { relativeToRoot } from "../../policy/inside-root.js";

const WORKSPACE = "/workspace";
/** Programs whose first operand is a script they run. */
const INTERPRETERS = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "node",
  "python",
  "python3",
  "ruby",
  "perl",
  "php",
]);
/** Options after which an interpreter runs no script file (`python3 -m mod`, `node -e code`, `bash -c cmd`). */
const NO_SCRIPT_OPTIONS = new Set(["-c", "-m", "-e", "-p", "--eval", "--print", "-"]);
/** Words that leave the next word in a command's place. */
const PREFIXES = new Set([
  "then",
  "do",
  "else",
  "elif",
  "if",
  "while",
  "until",
  "!",
  "exec",
  "command",
  "nohup",
  "time",
  "{",
]);

/** A script named in a hook command: where its word is in the text, and its path relative to /workspace. */
export interface ScriptWord {
  start: number;
  end: number;
  rel: string;
}

interface Word {
  start: number;
  end: number;
  /** The value after quote removal with CLAUDE_PROJECT_DIR expanded; undefined when another expansion is in it. */
  value: string | undefined;
  /** An operator (`;`, `&&`, `|`, `(`, a redirection) rather than a word. */
  op?: string;
}

/** Splits a command into words and operators, with spans; quotes and backslashes as the shell reads them. */
function words(text: string): Word[] {
  const out: Word[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === " " || c === "\t") {
      i++;
      continue;
    }
    if (c === "#") {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    const op = /^(?:&&|\|\||;;|[;&|()\n]|[0-9]*(?:>>|>&|<&|>|<))/.exec(text.slice(i, i + 4))?.[0];
    if (op) {
      out.push({ start: i, end: i + op.length, value: undefined, op });
      i += op.length;
      continue;
    }
    const start = i;
    let value: string | undefined = "";
    const expand = (at: number): number => {
      // `$CLAUDE_PROJECT_DIR` or `${CLAUDE_PROJECT_DIR}` at `at` (the `$`): the workspace; anything else is dynamic.
      const m = /^\$(?:CLAUDE_PROJECT_DIR\b|\{CLAUDE_PROJECT_DIR\})/.exec(text.slice(at));
      if (m) {
        if (value !== undefined) value += WORKSPACE;
        return at + m[0].length;
      }
      value = undefined;
      return at + 1;
    };
    while (i < text.length && !/[\s;&|()<>]/.test(text[i] as string)) {
      const ch = text[i] as string;
      if (ch === "'") {
        const close = text.indexOf("'", i + 1);
        const endAt = close < 0 ? text.length : close;
        if (value !== undefined) value += text.slice(i + 1, endAt);
        i = endAt + 1;
      } else if (ch === '"') {
        i++;
        while (i < text.length && text[i] !== '"') {
          if (text[i] === "\\" && i + 1 < text.length) {
            if (value !== undefined) value += text[i + 1];
            i += 2;
          } else if (text[i] === "$") i = expand(i);
          else if (text[i] === "`") {
            value = undefined;
            i++;
          } else {
            if (value !== undefined) value += text[i];
            i++;
          }
        }
        i++;
      } else if (ch === "\\" && i + 1 < text.length) {
        if (value !== undefined) value += text[i + 1];
        i += 2;
      } else if (ch === "$") i = expand(i);
      else {
        if (ch === "`" || ch === "*" || ch === "?" || ch === "[" || ch === "~") value = undefined;
        else if (value !== undefined) value += ch;
        i++;
      }
    }
    out.push({ start, end: Math.min(i, text.length), value });
  }
  return out;
}

/** A word's value as a path relative to /workspace, or undefined (a program on PATH, outside, dynamic). */
function workspacePath(value: string | undefined, bareIsFile: boolean): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!bareIsFile && !value.includes("/")) return undefined;
  const abs = path.posix.resolve(WORKSPACE, value);
  return relativeToRoot(abs, WORKSPACE) || undefined; // the workspace itself is no script
}

/** The repository scripts `command` runs, in order. */
export function scriptWords(command: string): ScriptWord[] {
  const found: ScriptWord[] = [];
  let place: "command" | "args" | "script" = "command";
  let redirectTarget = false;
  for (const word of words(command)) {
    if (word.op !== undefined) {
      if (/[<>]/.test(word.op)) redirectTarget = true;
      else place = "command";
      continue;
    }
    if (redirectTarget) {
      redirectTarget = false;
      continue;
    }
    const value = word.value;
    if (place === "command") {
      if (value !== undefined && (PREFIXES.has(value) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(value))) continue;
      if (value === "env") continue;
      const rel = workspacePath(value, false);
      if (rel !== undefined) found.push({ start: word.start, end: word.end, rel });
      place = value !== undefined && INTERPRETERS.has(path.posix.basename(value)) ? "script" : "args";
      continue;
    }
    if (place === "script") {
      if (value !== undefined && NO_SCRIPT_OPTIONS.has(value)) {
        place = "args";
        continue;
      }
      if (value !== undefined && value.startsWith("-")) continue;
      const rel = workspacePath(value, true);
      if (rel !== undefined) found.push({ start: word.start, end: word.end, rel });
      place = "args";
    }
  }
  return found;
}

/** `text` quoted for bash as one word. */
export const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** The command with each script word replaced by `replacement(rel)`, quoted. */
export function rewriteScripts(
  command: string,
  scripts: readonly ScriptWord[],
  replacement: (rel: string) => string,
): string {
  let out = "";
  let at = 0;
  for (const word of scripts) {
    out += command.slice(at, word.start) + shellQuote(replacement(word.rel));
    at = word.end;
  }
  return out + command.slice(at);
}
