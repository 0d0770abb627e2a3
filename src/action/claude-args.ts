// claude-code-action's `claude_args` input: a string of Claude Code CLI flags. agent-ci accepts the flags it
// shares with Claude Code and maps each to the Action input that means the same thing, so a workflow moved
// from claude-code-action keeps its `claude_args` and gets the same configuration as the separate inputs.
// Any other flag is refused by name: silently dropping one would run with a policy the user did not write.
// The flags and the inputs they set come from the option table (options/table.ts). Pure.
import { splitList } from "../github/input-conventions.js";
import {
  actionSide,
  CLAUDE_ARGS_FLAGS,
  CLAUDE_ARGS_REFUSED,
  type ClaudeArgsInput,
} from "../options/table.js";

export type { ClaudeArgsInput };
/** The flags accepted, in the table's order. */
export const CLAUDE_ARGS_FLAGS_ACCEPTED: readonly string[] = [...CLAUDE_ARGS_FLAGS.keys()];

export class ClaudeArgsError extends Error {
  override readonly name = "ClaudeArgsError";
}

/**
 * Splits a command line into words the way a POSIX shell does, without expanding anything: whitespace
 * (newlines too) separates words, '…' is literal, "…" keeps its text with \" \\ \$ \` and a backslash-newline
 * (dropped) escaped, and an unquoted backslash escapes the next character (a backslash-newline joins lines).
 * One difference: whitespace inside unquoted parentheses does not split, so Claude Code's tool rules such as
 * Bash(npm test) stay one word as users write them (a shell would refuse the parentheses instead).
 */
export function tokenize(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let depth = 0;
  let i = 0;
  const n = line.length;
  while (i < n) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new ClaudeArgsError("claude_args: a ' quote is not closed");
      word += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i += 1;
      for (;;) {
        if (i >= n) throw new ClaudeArgsError('claude_args: a " quote is not closed');
        const d = line[i]!;
        if (d === '"') break;
        if (d === "\\" && i + 1 < n && '"\\$`\n'.includes(line[i + 1]!)) {
          if (line[i + 1] !== "\n") word += line[i + 1];
          i += 2;
        } else {
          word += d;
          i += 1;
        }
      }
      inWord = true;
      i += 1;
    } else if (c === "\\") {
      if (i + 1 < n && line[i + 1] !== "\n") {
        word += line[i + 1];
        inWord = true;
      }
      i += 2;
    } else if (/\s/.test(c) && depth === 0) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      i += 1;
    } else {
      if (c === "(") depth += 1;
      if (c === ")") depth = Math.max(0, depth - 1);
      word += c;
      inWord = true;
      i += 1;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** What `claude_args` sets: each input's value (lists newline-joined) and the flag that set it. */
export interface ClaudeArgsSet {
  values: Partial<Record<ClaudeArgsInput, string>>;
  flags: Partial<Record<ClaudeArgsInput, string>>;
}

function refusal(name: string): ClaudeArgsError {
  const reason = Object.hasOwn(CLAUDE_ARGS_REFUSED, name)
    ? CLAUDE_ARGS_REFUSED[name as `--${string}`]
    : undefined;
  return new ClaudeArgsError(
    reason
      ? `claude_args: ${name} is not supported by agent-ci: ${reason}`
      : `claude_args: ${name} is not supported by agent-ci; it accepts ${CLAUDE_ARGS_FLAGS_ACCEPTED.join(", ")} (the other settings are separate inputs)`,
  );
}

/**
 * `claude_args` → the inputs it sets, as input strings (lists newline-joined), to be validated with the
 * other inputs, and the flag each came from. A flag given twice: lists add up, a single value may not be
 * given twice.
 */
export function readClaudeArgs(value: string): ClaudeArgsSet {
  const words = tokenize(value);
  const lists: Partial<Record<ClaudeArgsInput, string[]>> = {};
  const values: Partial<Record<ClaudeArgsInput, string>> = {};
  const flags: Partial<Record<ClaudeArgsInput, string>> = {};
  let i = 0;
  while (i < words.length) {
    const word = words[i]!;
    const eq = word.startsWith("--") ? word.indexOf("=") : -1;
    const name = eq > 0 ? word.slice(0, eq) : word;
    if (!word.startsWith("-"))
      throw new ClaudeArgsError(`claude_args: unexpected "${word}" (not after a flag)`);
    const input = CLAUDE_ARGS_FLAGS.get(name as `--${string}`);
    if (!input) throw refusal(name);
    const list = actionSide(input).list === true;
    i += 1;
    const args: string[] = eq > 0 ? [word.slice(eq + 1)] : [];
    if (eq < 0)
      while (i < words.length && !words[i]!.startsWith("--") && (list || args.length === 0)) {
        args.push(words[i]!);
        i += 1;
      }
    if (args.length === 0) throw new ClaudeArgsError(`claude_args: ${name} needs a value`);
    flags[input] ??= name;
    if (list) {
      // Claude Code takes rules separated by commas or spaces: Bash(npm test),Read Edit.
      (lists[input] ??= []).push(...args.flatMap((arg) => splitList(arg)));
    } else {
      if (values[input] !== undefined)
        throw new ClaudeArgsError(`claude_args: ${name} is given more than once`);
      values[input] = args[0]!;
    }
  }
  for (const [input, items] of Object.entries(lists)) values[input as ClaudeArgsInput] = items.join("\n");
  return { values, flags };
}
