/**
 * Words and expansions in the Bash walker (bash-analyze.ts): one word's value as bash computes it
 * before running the command (the quoting itself is bash-words.ts), and the statements hidden in a
 * word — `$( )`, backticks, `<( )`, `$(( ))` — scheduled on the walker's stack. A part known only at
 * run time leaves the word without a value; a form that evaluates a variable's value as code, or a
 * word tree-sitter reads differently from bash, is a problem.
 */
import type { Node as SyntaxNode } from "web-tree-sitter";
import { arithmetic } from "./bash-arithmetic.js";
import type { BashWord } from "./bash-script.js";
import { isRepeated, namedChildrenOf, problem, push, type Walker } from "./bash-walker.js";
import { decodeAnsiC, finishWord, unescapeDoubleQuoted, unquotedPieces, type Piece } from "./bash-words.js";

export function word(w: Walker, node: SyntaxNode): BashWord {
  const pieces: Piece[] = [];
  const isStatic = wordPieces(w, node, pieces);
  return finishWord(node.text, pieces, isStatic, w.options.homeDir);
}

/**
 * The parts of one bash word follow each other without a gap. tree-sitter sometimes builds a
 * word across a blank (`>>$ git` as the expansion `$git`, hiding the command git).
 */
function hasGap(w: Walker, node: SyntaxNode): boolean {
  let end = -1;
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child === null) continue;
    if (end !== -1 && child.startIndex !== end) {
      problem(w, "a word with a blank inside it, which bash reads as two words", node);
      return true;
    }
    end = child.endIndex;
  }
  return false;
}

/** Appends the node's pieces; returns false when any part is only known at run time. */
function wordPieces(w: Walker, node: SyntaxNode, out: Piece[]): boolean {
  if ((node.type === "concatenation" || node.type === "simple_expansion") && hasGap(w, node)) return false;
  switch (node.type) {
    case "word":
      if (splitsLine(w, node)) return false;
      unquotedPieces(node.text, out);
      return true;
    case "number":
    case "extglob_pattern":
    case "regex":
      if (splitsLine(w, node)) return false;
      out.push({ text: node.text, quoted: false });
      return true;
    case "raw_string":
      out.push({ text: node.text.slice(1, -1), quoted: true });
      return true;
    case "ansi_c_string":
      out.push({ text: decodeAnsiC(node.text.slice(2, -1)), quoted: true });
      return true;
    case "string":
    case "translated_string":
      return stringPieces(w, node, out);
    case "concatenation": {
      let isStatic = true;
      for (let i = 0; i < node.childCount; i++) {
        const child = node.child(i);
        if (child === null) continue;
        if (!child.isNamed) out.push({ text: child.type, quoted: false });
        else if (!wordPieces(w, child, out)) isStatic = false;
      }
      return isStatic;
    }
    case "simple_expansion":
    case "expansion":
      expansion(w, node);
      return false;
    case "command_substitution":
      substitution(w, node);
      return false;
    case "process_substitution":
      push(w, namedChildrenOf(node), isRepeated(w));
      return false;
    case "arithmetic_expansion":
      arithmetic(w, node);
      return false;
    case "brace_expression":
      return false;
    case "subshell":
    case "compound_statement":
      // `time (rm x)`: the group runs; as a word it is unknowable.
      push(w, [node], isRepeated(w));
      return false;
    default:
      problem(w, `unsupported word "${node.type}"`, node);
      return false;
  }
}

/**
 * An unquoted word never holds a newline in bash: it ends the command. tree-sitter-bash glues a
 * line that starts with a backslash onto the previous command (`echo hi⏎\rm x` reads as one
 * echo), so such a word means the tree is wrong.
 */
function splitsLine(w: Walker, node: SyntaxNode): boolean {
  if (!/(?:^|[^\\])\n/.test(node.text)) return false;
  problem(
    w,
    "a line break inside a word: bash would start a new command there; put each command on its own clean line",
    node,
  );
  return true;
}

/**
 * Inside backquotes bash drops the backslash before another backslash, a backquote, `$` (and `"`
 * within double quotes), and
 * parses the rest again, so `` `echo \`rm x\`` `` runs rm; tree-sitter reads the inner
 * backquotes as text. Such backquotes are refused rather than re-implemented (`$( )` is plain).
 */
export function substitution(w: Walker, node: SyntaxNode): void {
  if (node.text.startsWith("`") && /\\[\\`$"]/.test(node.text)) {
    problem(
      w,
      "a backquote substitution containing backslashes is read differently by bash; use $( ) instead",
      node,
    );
  }
  push(w, namedChildrenOf(node), isRepeated(w));
}

function stringPieces(w: Walker, node: SyntaxNode, out: Piece[]): boolean {
  let isStatic = true;
  for (const child of namedChildrenOf(node)) {
    if (child.type === "string_content") continue;
    if (child.type === "string" || child.type === "raw_string") continue;
    isStatic = false;
    wordPieces(w, child, []);
  }
  if (!isStatic) return false;
  const text = node.text;
  const open = text.indexOf('"');
  out.push({ text: unescapeDoubleQuoted(text.slice(open + 1, -1)), quoted: true });
  return true;
}

/**
 * `${…}`: walks defaults for substitutions, and refuses the forms that evaluate a variable's value
 * as code — `${x:i}` (the offset is arithmetic) and `${x@P}` (prompt expansion runs `$( )` in x).
 */
export function expansion(w: Walker, node: SyntaxNode): void {
  let substring = false;
  let transform = false;
  let name = true;
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child === null) continue;
    if (!child.isNamed) {
      if (node.fieldNameForChild(i) !== "operator") continue;
      if (transform && child.type === "P") {
        problem(w, "${x@P} expands x as a prompt, which runs the command substitutions in it", node);
      }
      substring = child.type === ":";
      transform = child.type === "@";
      name = false;
      continue;
    }
    if (child.type === "subscript") subscript(w, child);
    else if (substring && child.type !== "number") {
      problem(
        w,
        "a substring offset other than a number is evaluated as arithmetic, which can run commands",
        node,
      );
      wordPieces(w, child, []);
    } else if ((child.type === "variable_name" || child.type === "special_variable_name") && name) continue;
    else if (child.type !== "variable_name" && child.type !== "special_variable_name")
      wordPieces(w, child, []);
  }
}

/** Array subscripts are arithmetic: `a[$i]` with i='x[$(cmd)]' runs cmd. Only literals pass. */
export function subscript(w: Walker, node: SyntaxNode): void {
  const index = node.childForFieldName("index");
  if (index === null) return;
  if (/^(?:\d+|@|\*)$/.test(index.text)) return;
  problem(w, "array subscripts other than numbers are evaluated as arithmetic, which can run commands", node);
  wordPieces(w, index, []);
}
