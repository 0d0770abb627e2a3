/**
 * Redirects and heredocs in the Bash walker (bash-analyze.ts): each redirect classified as a write, a
 * read or a descriptor duplicate with its target evaluated as a word, what a heredoc or here-string
 * gives the command on stdin, and the words tree-sitter hangs on a redirect that bash passes to the
 * command.
 */
import type { Node as SyntaxNode } from "web-tree-sitter";
import { checkAdjacent } from "./bash-coverage.js";
import { word } from "./bash-expansions.js";
import type { BashRedirect, BashStdin, BashWord } from "./bash-script.js";
import { isRepeated, namedChildrenOf, problem, push, type Walker } from "./bash-walker.js";
import { unescapeHeredoc } from "./bash-words.js";

const WRITE_OPERATORS: ReadonlySet<string> = new Set([">", ">>", ">|", "&>", "&>>"]);

/**
 * Collects redirects into `into`. Returns what the command reads on stdin when a heredoc or
 * here-string fixes it, and the words tree-sitter hung on a redirect that are really arguments:
 * bash takes one word as the target, so in `sed -n p >/dev/null -i f` the `-i f` go to sed.
 */
export function redirects(
  w: Walker,
  nodes: readonly SyntaxNode[],
  into: BashRedirect[],
): { stdin: BashStdin | undefined; extraWords: BashWord[] } {
  let stdin: BashStdin | undefined;
  const extraWords: BashWord[] = [];
  for (const node of nodes) {
    if (node.type === "file_redirect") extraWords.push(...fileRedirect(w, node, into));
    else if (node.type === "herestring_redirect") {
      const [operand, ...rest] = namedChildrenOf(node);
      const value = operand === undefined ? undefined : word(w, operand);
      stdin = { kind: "herestring", body: value?.value === undefined ? undefined : `${value.value}\n` };
      extraWords.push(...rest.map((child) => word(w, child)));
    } else if (node.type === "heredoc_redirect") {
      const found = heredoc(w, node);
      stdin = found.stdin;
      extraWords.push(...found.extraWords);
    } else problem(w, `unsupported redirection "${node.type}"`, node);
  }
  return { stdin, extraWords };
}

function fileRedirect(w: Walker, node: SyntaxNode, into: BashRedirect[]): BashWord[] {
  let operator = "";
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child !== null && !child.isNamed) operator = child.type;
  }
  // `x2>f`: bash keeps the 2 in the word and redirects stdout; tree-sitter reads fd 2.
  const descriptor = node.childForFieldName("descriptor");
  const before = w.source[node.startIndex - 1];
  if (descriptor !== null && before !== undefined && !/[\s;&|()<>]/.test(before)) {
    problem(
      w,
      "a file descriptor number glued to the word before it is read differently by bash; add a space",
      node,
    );
  }
  // tree-sitter also takes `-rf2` in `-rf2>&1` for a descriptor; bash runs it as a command.
  if (descriptor !== null && !/^(?:\d+|\{[A-Za-z_][A-Za-z0-9_]*\})$/.test(descriptor.text)) {
    problem(w, `"${descriptor.text}" is not a file descriptor`, node);
  }
  checkAdjacent(w, node);
  const [destination, ...extra] = node.childrenForFieldName("destination").filter((child) => child !== null);
  const target = destination === undefined ? undefined : word(w, destination);
  const extraWords = extra.map((child) => word(w, child));
  classifyRedirect(w, node, operator, target, into);
  return extraWords;
}

function classifyRedirect(
  w: Walker,
  node: SyntaxNode,
  operator: string,
  target: BashWord | undefined,
  into: BashRedirect[],
): void {
  const text = node.text;
  if (WRITE_OPERATORS.has(operator)) {
    into.push({ operator, kind: "write", target, text });
    return;
  }
  if (operator === "<") {
    into.push({ operator, kind: "read", target, text });
    return;
  }
  if (operator === ">&" || operator === "<&" || operator === ">&-" || operator === "<&-") {
    const fd = target?.value;
    const isDescriptor = fd === undefined ? false : /^(?:\d+|-)$/.test(fd);
    // `>& file` (no digits) is `&> file`: it writes the file.
    if (operator === ">&" && target !== undefined && !isDescriptor)
      into.push({ operator, kind: "write", target, text });
    else into.push({ operator, kind: "duplicate", target, text });
    return;
  }
  problem(w, `unsupported redirection operator "${operator}"`, node);
}

function heredoc(w: Walker, node: SyntaxNode): { stdin: BashStdin; extraWords: BashWord[] } {
  let operator = "<<";
  let quoted = false;
  let body: string | undefined = "";
  const statements: SyntaxNode[] = [];
  const extraWords: BashWord[] = [];
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child === null) continue;
    if (!child.isNamed) {
      if (child.type === "<<" || child.type === "<<-") operator = child.type;
      continue;
    }
    if (child.type === "heredoc_start") quoted = /['"\\]/.test(child.text);
    else if (child.type === "heredoc_body") body = heredocBody(w, child, quoted);
    else if (node.fieldNameForChild(i) === "argument") extraWords.push(word(w, child));
    else if (child.type !== "heredoc_end") statements.push(child);
  }
  // `cat <<EOF | sh` puts the rest of the pipeline inside the redirect node.
  push(w, statements, isRepeated(w));
  if (body !== undefined && operator === "<<-") body = body.replace(/^\t+/gm, "");
  return { stdin: { kind: "heredoc", body }, extraWords };
}

function heredocBody(w: Walker, node: SyntaxNode, quoted: boolean): string | undefined {
  if (quoted) return node.text;
  let isStatic = true;
  for (const child of namedChildrenOf(node)) {
    if (child.type === "heredoc_content") continue;
    isStatic = false;
    word(w, child);
  }
  return isStatic ? unescapeHeredoc(node.text) : undefined;
}
