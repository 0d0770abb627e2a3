/**
 * The Bash walker's fail-closed checks (bash-analyze.ts) for where tree-sitter-bash and bash read a
 * line differently: a syntax error, text the parser dropped without an error, a line that starts with
 * a backslash, a backslash-newline inside a word, and two words that touch. Each is refused as a
 * problem rather than guessed at.
 */
import type { Node as SyntaxNode } from "web-tree-sitter";
import { MAX_COMMAND_CHARS } from "./bash-script.js";
import { problem, snippet, type Walker } from "./bash-walker.js";

const LITERAL_TEXT_NODES: ReadonlySet<string> = new Set([
  "raw_string",
  "string_content",
  "string",
  "ansi_c_string",
  "heredoc_body",
  "heredoc_content",
  "comment",
]);

/** Nodes whose whole range counts as read: their text is taken as one piece. */
const OPAQUE_TEXT_NODES: ReadonlySet<string> = new Set([
  ...LITERAL_TEXT_NODES,
  "heredoc_start",
  "heredoc_end",
  "regex",
  "extglob_pattern",
  "translated_string",
]);

/**
 * Bash separates words with blanks or operators. Two parts of one command that touch with word
 * characters on both sides were one word to bash, split by tree-sitter: `>}echo curl` is a
 * redirect to the file `}echo` before `curl` in bash, but `> }` and `echo curl` in the tree.
 */
export function checkAdjacent(w: Walker, node: SyntaxNode): void {
  let previous: SyntaxNode | null = null;
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child === null) continue;
    if (previous !== null && previous.endIndex === child.startIndex) {
      const left = w.source[previous.endIndex - 1] ?? " ";
      const right = w.source[child.startIndex] ?? " ";
      if (/[^\s<>&|;()]/.test(left) && /[^\s<>&|;()]/.test(right)) {
        problem(w, "two words touch without a space where bash reads one word", node);
        return;
      }
    }
    previous = child;
  }
}

/**
 * Two places where tree-sitter-bash and bash read a line break differently; refuse both rather
 * than guess. A line that starts with a backslash is glued onto the previous command
 * (`echo hi⏎\rm x` reads as one echo). Backslash-newline inside a word splits it in tree-sitter
 * (`r\⏎m` reads as `r` and `m`) while bash joins it (`rm`).
 */
export function lineDifferentials(w: Walker, root: SyntaxNode, source: string): void {
  for (let index = source.indexOf("\n\\"); index !== -1; index = source.indexOf("\n\\", index + 1)) {
    let backslashes = 0;
    for (let i = index - 1; i >= 0 && source[i] === "\\"; i--) backslashes++;
    if (backslashes % 2 === 1) continue;
    const node = root.descendantForIndex(index + 1);
    if (node !== null && LITERAL_TEXT_NODES.has(node.type)) continue;
    w.problems.push({
      reason:
        "a line that starts with a backslash is read differently by bash; start it with the command name",
      text: snippet(source.slice(index + 1, index + 41)),
    });
    return;
  }
  continuations(w, root, source);
}

function continuations(w: Walker, root: SyntaxNode, source: string): void {
  for (let index = source.indexOf("\\\n"); index !== -1; index = source.indexOf("\\\n", index + 2)) {
    let backslashes = 0;
    for (let i = index; i >= 0 && source[i] === "\\"; i--) backslashes++;
    if (backslashes % 2 === 0) continue;
    const before = source[index - backslashes];
    const after = source[index + 2];
    if (before === undefined || after === undefined || /\s/.test(before) || /\s/.test(after)) continue;
    const node = root.descendantForIndex(index);
    if (node !== null && LITERAL_TEXT_NODES.has(node.type)) continue;
    w.problems.push({
      reason: "a backslash-newline inside a word joins it differently in bash; put the command on one line",
      text: snippet(source.slice(Math.max(0, index - 20), index + 20)),
    });
    return;
  }
}

/**
 * tree-sitter sometimes recovers from odd input by silently dropping text, without an ERROR node
 * (`-rfcase\⏎ -x=1` loses its first word). Every character outside whitespace and line
 * continuations must belong to some token of the tree; the first one that does not is returned.
 */
export function firstUncoveredText(root: SyntaxNode, source: string): number | undefined {
  const covered = new Uint8Array(source.length);
  const pending: SyntaxNode[] = [root];
  let visited = 0;
  while (pending.length > 0 && visited++ < MAX_COMMAND_CHARS * 4) {
    const node = pending.pop() as SyntaxNode;
    if (node.childCount === 0 || OPAQUE_TEXT_NODES.has(node.type)) {
      covered.fill(1, node.startIndex, node.endIndex);
      continue;
    }
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      if (child !== null) pending.push(child);
    }
  }
  for (let i = 0; i < source.length; i++) {
    if (covered[i] === 1) continue;
    const char = source[i] as string;
    if (char === " " || char === "\t" || char === "\n") continue;
    if (char === "\\" && source[i + 1] === "\n") {
      i++;
      continue;
    }
    return i;
  }
  return undefined;
}

export function firstSyntaxError(root: SyntaxNode): SyntaxNode | undefined {
  const pending: SyntaxNode[] = [root];
  let visited = 0;
  while (pending.length > 0 && visited++ < MAX_COMMAND_CHARS) {
    const node = pending.pop() as SyntaxNode;
    if (node.isError || node.isMissing) return node;
    if (!node.hasError) continue;
    for (let i = node.childCount - 1; i >= 0; i--) {
      const child = node.child(i);
      if (child !== null) pending.push(child);
    }
  }
  return undefined;
}
