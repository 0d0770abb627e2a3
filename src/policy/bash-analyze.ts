/**
 * Walks a tree-sitter-bash syntax tree and lists every simple command a command line can run —
 * through `&&`, `||`, `;`, newlines, pipes, `&`, subshells, brace groups, `if/for/while/case`
 * bodies, function bodies, `$( )`, backticks, `<( )`/`>( )`, heredocs and `[[ ]]` — with each word
 * evaluated as bash would before running it: quotes removed, escapes and `$'…'` decoded, `~`
 * expanded. A word bash computes at run time (`$X`, `$(…)`, brace expansion) gets no value; the
 * caller never guesses one.
 *
 * Fail closed: every node type is handled explicitly, and anything else — a parse error, a construct
 * this file does not know, arithmetic over variables (bash evaluates `a[$(cmd)]` inside it) — becomes
 * a `ScriptProblem`. The walk uses an explicit stack, and a pre-scan caps length and nesting, so a
 * hostile line cannot overflow the JS stack (RELIABILITY C15, R12).
 *
 * This file owns the entry and the walk over statements; the walker's state and its stack are
 * bash-walker.ts, and each subject it meets is a file of plain functions that take that state: words
 * and expansions (bash-expansions.ts), redirects and heredocs (bash-redirects.ts), arithmetic
 * (bash-arithmetic.ts), `[[ ]]` (bash-conditional.ts) and the checks where tree-sitter and bash read
 * a line differently (bash-coverage.ts). None of them recurses over the tree: a statement found
 * inside a word or a redirect is pushed on the stack, and the scans of a single node keep their own
 * bounded work lists.
 */
import type { Node as SyntaxNode, Parser } from "web-tree-sitter";
import { arithmetic } from "./bash-arithmetic.js";
import { scanExpression } from "./bash-conditional.js";
import { checkAdjacent, firstSyntaxError, firstUncoveredText, lineDifferentials } from "./bash-coverage.js";
import { subscript, word } from "./bash-expansions.js";
import { redirects } from "./bash-redirects.js";
import type {
  BashAssignment,
  BashRedirect,
  BashWord,
  ParsedScript,
  ParseScriptOptions,
} from "./bash-script.js";
import {
  isRepeated,
  namedChildrenOf,
  newWalker,
  problem,
  push,
  record,
  snippet,
  type WalkItem,
  type Walker,
} from "./bash-walker.js";

function walk(w: Walker, root: SyntaxNode): void {
  w.stack.push({ node: root, repeated: false, depth: 0 });
  while (w.stack.length > 0) {
    const item = w.stack.pop() as WalkItem;
    w.current = item;
    statement(w, item);
    if (w.commands.length > w.options.maxCommands) {
      w.truncated = true;
      w.stack.length = 0;
    }
  }
}

/** `(( ))` and `[[ ]]`: a command bash runs itself, listed by its text (their insides are checked apart). */
function recordSyntax(w: Walker, node: SyntaxNode): void {
  record(w, { kind: "syntax", text: node.text, assignments: [], words: [], redirects: [], stdin: undefined });
}

function statement(w: Walker, { node, repeated }: WalkItem): void {
  switch (node.type) {
    case "program":
    case "list":
    case "pipeline":
      push(w, namedChildrenOf(node), repeated, false);
      return;
    case "subshell":
    case "do_group":
    case "if_statement":
    case "elif_clause":
    case "else_clause":
    case "negated_command":
      push(w, namedChildrenOf(node), repeated);
      return;
    case "compound_statement":
      if (node.child(0)?.type === "((") {
        arithmetic(w, node);
        recordSyntax(w, node);
        return;
      }
      push(w, namedChildrenOf(node), repeated);
      return;
    case "while_statement":
      push(w, namedChildrenOf(node), true);
      return;
    case "for_statement":
      forStatement(w, node);
      return;
    case "c_style_for_statement":
      arithmetic(w, node, ["body"]);
      push(
        w,
        node.childrenForFieldName("body").filter((child) => child !== null),
        true,
      );
      return;
    case "case_statement":
      caseStatement(w, node);
      return;
    case "function_definition":
      // `f() { …; } > file` writes the file each time f runs.
      functionRedirects(w, node);
      push(
        w,
        node.childrenForFieldName("body").filter((child) => child !== null),
        true,
      );
      return;
    case "redirected_statement":
      redirectedStatement(w, node);
      return;
    case "command":
      command(w, node, []);
      return;
    case "declaration_command":
    case "unset_command":
      declaration(w, node, []);
      return;
    case "variable_assignment":
    case "variable_assignments":
      assignmentStatement(w, node);
      return;
    case "test_command":
      scanExpression(w, node);
      recordSyntax(w, node);
      return;
    case "file_redirect":
    case "heredoc_redirect":
    case "herestring_redirect": {
      // `$(< file)` puts a bare redirect inside the substitution.
      const found: BashRedirect[] = [];
      const { stdin, extraWords } = redirects(w, [node], found);
      if (extraWords.length > 0) problem(w, "words after a redirect without a command", node);
      record(w, {
        kind: "redirect-only",
        text: node.text,
        assignments: [],
        words: [],
        redirects: found,
        stdin,
      });
      return;
    }
    case "comment":
      return;
    case "ERROR":
      problem(w, "bash could not parse part of the command", node);
      push(w, namedChildrenOf(node), repeated);
      return;
    default:
      problem(w, `unsupported shell construct "${node.type}"`, node);
  }
}

function functionRedirects(w: Walker, node: SyntaxNode): void {
  const redirectNodes = namedChildrenOf(node).filter((child) => child.type.endsWith("_redirect"));
  if (redirectNodes.length === 0) return;
  const found: BashRedirect[] = [];
  const { stdin, extraWords } = redirects(w, redirectNodes, found);
  if (extraWords.length > 0) problem(w, "words after the redirect of a function", node);
  w.commands.push({
    kind: "redirect-only",
    text: redirectNodes.map((child) => child.text).join(" "),
    assignments: [],
    words: [],
    redirects: found,
    stdin,
    repeated: true,
  });
}

function forStatement(w: Walker, node: SyntaxNode): void {
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child === null || !child.isNamed) continue;
    const field = node.fieldNameForChild(i);
    if (field === "value") word(w, child);
    else if (field === "body") push(w, [child], true);
  }
}

function caseStatement(w: Walker, node: SyntaxNode): void {
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child === null || !child.isNamed) continue;
    if (node.fieldNameForChild(i) === "value") {
      word(w, child);
      continue;
    }
    if (child.type !== "case_item") continue;
    const body: SyntaxNode[] = [];
    for (let j = 0; j < child.childCount; j++) {
      const part = child.child(j);
      if (part === null || !part.isNamed) continue;
      if (child.fieldNameForChild(j) === "value") word(w, part);
      else body.push(part);
    }
    push(w, body, isRepeated(w));
  }
}

function redirectedStatement(w: Walker, node: SyntaxNode): void {
  checkAdjacent(w, node);
  const body = node.childForFieldName("body");
  const redirectNodes = namedChildrenOf(node).filter((child) => child.type.endsWith("_redirect"));
  if (body !== null && body.type === "command") {
    command(w, body, redirectNodes, node.text);
    return;
  }
  if (body !== null && (body.type === "declaration_command" || body.type === "unset_command")) {
    declaration(w, body, redirectNodes, node.text);
    return;
  }
  const found: BashRedirect[] = [];
  const { stdin, extraWords } = redirects(w, redirectNodes, found);
  if (extraWords.length > 0) problem(w, "words after a redirect of a command group", node);
  record(w, {
    kind: "redirect-only",
    text: redirectNodes.map((child) => child.text).join(" "),
    assignments: [],
    words: [],
    redirects: found,
    stdin,
  });
  if (body !== null) push(w, [body], isRepeated(w));
}

function command(w: Walker, node: SyntaxNode, extraRedirects: readonly SyntaxNode[], text = node.text): void {
  checkAdjacent(w, node);
  const assignments: BashAssignment[] = [];
  const words: BashWord[] = [];
  const redirectNodes: SyntaxNode[] = [...extraRedirects];
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child === null) continue;
    if (!child.isNamed) {
      // A lone `$` argument is an anonymous token; bash passes it as the text "$".
      if (node.fieldNameForChild(i) === "argument")
        words.push({ value: child.text, text: child.text, glob: false });
      continue;
    }
    if (child.type === "variable_assignment") assignments.push(assignment(w, child));
    else if (child.type.endsWith("_redirect")) redirectNodes.push(child);
    else if (child.type === "command_name") words.push(word(w, child.namedChild(0) ?? child));
    else words.push(word(w, child));
  }
  const found: BashRedirect[] = [];
  const { stdin, extraWords } = redirects(w, redirectNodes, found);
  words.push(...extraWords);
  record(w, {
    kind: words.length === 0 ? "assignment" : "command",
    text,
    assignments,
    words,
    redirects: found,
    stdin,
  });
}

function declaration(
  w: Walker,
  node: SyntaxNode,
  extraRedirects: readonly SyntaxNode[],
  text = node.text,
): void {
  const keyword = node.child(0)?.text ?? node.type;
  const assignments: BashAssignment[] = [];
  const words: BashWord[] = [{ value: keyword, text: keyword, glob: false }];
  for (const child of namedChildrenOf(node)) {
    if (child.type === "variable_assignment") {
      const parsed = assignment(w, child);
      assignments.push(parsed);
      const value = parsed.value === undefined ? "" : parsed.value.value;
      words.push({
        value: value === undefined ? undefined : `${parsed.name}=${value}`,
        text: child.text,
        glob: false,
      });
    } else if (child.type === "variable_name") {
      words.push({ value: child.text, text: child.text, glob: false });
    } else {
      words.push(word(w, child));
    }
  }
  const found: BashRedirect[] = [];
  const { stdin, extraWords } = redirects(w, extraRedirects, found);
  words.push(...extraWords);
  record(w, { kind: "declaration", text, assignments, words, redirects: found, stdin });
}

function assignmentStatement(w: Walker, node: SyntaxNode): void {
  const nodes = node.type === "variable_assignment" ? [node] : namedChildrenOf(node);
  const assignments = nodes
    .filter((child) => child.type === "variable_assignment")
    .map((child) => assignment(w, child));
  record(w, {
    kind: "assignment",
    text: node.text,
    assignments,
    words: [],
    redirects: [],
    stdin: undefined,
  });
}

function assignment(w: Walker, node: SyntaxNode): BashAssignment {
  const nameNode = node.childForFieldName("name");
  let name = nameNode?.text ?? "";
  if (nameNode !== null && nameNode.type === "subscript") {
    subscript(w, nameNode);
    name = nameNode.childForFieldName("name")?.text ?? name;
  }
  const valueNode = node.childForFieldName("value");
  if (valueNode === null) return { name, value: { value: "", text: "", glob: false }, text: node.text };
  if (valueNode.type === "array") {
    for (const element of namedChildrenOf(valueNode)) word(w, element);
    return { name, value: undefined, text: node.text };
  }
  return { name, value: word(w, valueNode), text: node.text };
}

/** Parses one script (a command line, or the string of a `bash -c`) and lists its simple commands. */
export function parseScript(parser: Parser, source: string, options: ParseScriptOptions): ParsedScript {
  const tree = parser.parse(source);
  if (tree === null) {
    return {
      commands: [],
      problems: [{ reason: "bash could not parse the command", text: snippet(source) }],
      truncated: false,
    };
  }
  try {
    const walker = newWalker(source, options);
    const root = tree.rootNode;
    if (root.hasError) {
      const error = firstSyntaxError(root);
      const reason =
        error?.isMissing === true
          ? `the command is incomplete (bash expects "${error.type}" here)`
          : "bash could not parse the command (a syntax error, an unclosed quote or a stray operator)";
      walker.problems.push({ reason, text: snippet(error?.text || source) });
    }
    const dropped = root.hasError ? undefined : firstUncoveredText(root, source);
    if (dropped !== undefined) {
      walker.problems.push({
        reason: "part of the command was not understood by the parser",
        text: snippet(source.slice(dropped, dropped + 40)),
      });
    }
    lineDifferentials(walker, root, source);
    walk(walker, root);
    return { commands: walker.commands, problems: walker.problems, truncated: walker.truncated };
  } finally {
    tree.delete();
  }
}
