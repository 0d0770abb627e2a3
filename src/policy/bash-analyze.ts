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
 */
import type { Node as SyntaxNode, Parser } from "web-tree-sitter";
import {
  MAX_COMMAND_CHARS,
  MAX_NESTING,
  type BashAssignment,
  type BashRedirect,
  type BashStdin,
  type BashWord,
  type ParsedScript,
  type ParseScriptOptions,
  type RawCommand,
  type ScriptProblem,
} from "./bash-script.js";
import {
  decodeAnsiC,
  finishWord,
  unescapeDoubleQuoted,
  unescapeHeredoc,
  unquotedPieces,
  type Piece,
} from "./bash-words.js";

interface WalkItem {
  readonly node: SyntaxNode;
  readonly repeated: boolean;
  readonly depth: number;
}

const WRITE_OPERATORS: ReadonlySet<string> = new Set([">", ">>", ">|", "&>", "&>>"]);
const ARITHMETIC_TEST_OPERATORS: ReadonlySet<string> = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);
const LITERAL_TEXT_NODES: ReadonlySet<string> = new Set([
  "raw_string",
  "string_content",
  "string",
  "ansi_c_string",
  "heredoc_body",
  "heredoc_content",
  "comment",
]);
const ARITHMETIC_SAFE_NODES: ReadonlySet<string> = new Set([
  "number",
  "binary_expression",
  "unary_expression",
  "parenthesized_expression",
  "ternary_expression",
]);

const snippet = (text: string): string => (text.length > 80 ? `${text.slice(0, 77)}...` : text);

function namedChildrenOf(node: SyntaxNode): SyntaxNode[] {
  const children: SyntaxNode[] = [];
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child !== null && child.isNamed) children.push(child);
  }
  return children;
}

class ScriptWalker {
  readonly commands: RawCommand[] = [];
  readonly problems: ScriptProblem[] = [];
  truncated = false;
  private readonly stack: WalkItem[] = [];
  private current: WalkItem | undefined;

  constructor(
    private readonly source: string,
    private readonly options: ParseScriptOptions,
  ) {}

  problem(reason: string, node: SyntaxNode): void {
    this.problems.push({ reason, text: snippet(node.text) });
  }

  walk(root: SyntaxNode): void {
    this.stack.push({ node: root, repeated: false, depth: 0 });
    while (this.stack.length > 0) {
      const item = this.stack.pop() as WalkItem;
      this.current = item;
      this.statement(item);
      if (this.commands.length > this.options.maxCommands) {
        this.truncated = true;
        this.stack.length = 0;
      }
    }
  }

  /**
   * Schedules statements. `nest` is false for siblings in a list or pipeline (`a && b && …` is a
   * deep left-leaning tree, not nesting the reader would cap).
   */
  private push(nodes: readonly SyntaxNode[], repeated: boolean, nest = true): void {
    const depth = (this.current?.depth ?? 0) + (nest ? 1 : 0);
    for (let i = nodes.length - 1; i >= 0; i--) {
      const node = nodes[i] as SyntaxNode;
      if (depth > MAX_NESTING) {
        this.problem(`the command nests more than ${MAX_NESTING} levels deep`, node);
        return;
      }
      this.stack.push({ node, repeated, depth });
    }
  }

  private get repeated(): boolean {
    return this.current?.repeated ?? false;
  }

  private record(command: Omit<RawCommand, "repeated">): void {
    this.commands.push({ ...command, repeated: this.repeated });
  }

  private statement({ node, repeated }: WalkItem): void {
    switch (node.type) {
      case "program":
      case "list":
      case "pipeline":
        this.push(namedChildrenOf(node), repeated, false);
        return;
      case "subshell":
      case "do_group":
      case "if_statement":
      case "elif_clause":
      case "else_clause":
      case "negated_command":
        this.push(namedChildrenOf(node), repeated);
        return;
      case "compound_statement":
        if (node.child(0)?.type === "((") {
          this.arithmetic(node);
          this.record({
            kind: "syntax",
            text: node.text,
            assignments: [],
            words: [],
            redirects: [],
            stdin: undefined,
          });
          return;
        }
        this.push(namedChildrenOf(node), repeated);
        return;
      case "while_statement":
        this.push(namedChildrenOf(node), true);
        return;
      case "for_statement":
        this.forStatement(node);
        return;
      case "c_style_for_statement":
        this.arithmetic(node, ["body"]);
        this.push(
          node.childrenForFieldName("body").filter((child) => child !== null),
          true,
        );
        return;
      case "case_statement":
        this.caseStatement(node);
        return;
      case "function_definition":
        // `f() { …; } > file` writes the file each time f runs.
        this.functionRedirects(node);
        this.push(
          node.childrenForFieldName("body").filter((child) => child !== null),
          true,
        );
        return;
      case "redirected_statement":
        this.redirectedStatement(node);
        return;
      case "command":
        this.command(node, []);
        return;
      case "declaration_command":
      case "unset_command":
        this.declaration(node, []);
        return;
      case "variable_assignment":
      case "variable_assignments":
        this.assignmentStatement(node);
        return;
      case "test_command":
        this.scanExpression(node);
        this.record({
          kind: "syntax",
          text: node.text,
          assignments: [],
          words: [],
          redirects: [],
          stdin: undefined,
        });
        return;
      case "file_redirect":
      case "heredoc_redirect":
      case "herestring_redirect": {
        // `$(< file)` puts a bare redirect inside the substitution.
        const redirects: BashRedirect[] = [];
        const { stdin, extraWords } = this.redirects([node], redirects);
        if (extraWords.length > 0) this.problem("words after a redirect without a command", node);
        this.record({ kind: "redirect-only", text: node.text, assignments: [], words: [], redirects, stdin });
        return;
      }
      case "comment":
        return;
      case "ERROR":
        this.problem("bash could not parse part of the command", node);
        this.push(namedChildrenOf(node), repeated);
        return;
      default:
        this.problem(`unsupported shell construct "${node.type}"`, node);
    }
  }

  private functionRedirects(node: SyntaxNode): void {
    const redirectNodes = namedChildrenOf(node).filter((child) => child.type.endsWith("_redirect"));
    if (redirectNodes.length === 0) return;
    const redirects: BashRedirect[] = [];
    const { stdin, extraWords } = this.redirects(redirectNodes, redirects);
    if (extraWords.length > 0) this.problem("words after the redirect of a function", node);
    this.commands.push({
      kind: "redirect-only",
      text: redirectNodes.map((child) => child.text).join(" "),
      assignments: [],
      words: [],
      redirects,
      stdin,
      repeated: true,
    });
  }

  private forStatement(node: SyntaxNode): void {
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      if (child === null || !child.isNamed) continue;
      const field = node.fieldNameForChild(i);
      if (field === "value") this.word(child);
      else if (field === "body") this.push([child], true);
    }
  }

  private caseStatement(node: SyntaxNode): void {
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      if (child === null || !child.isNamed) continue;
      if (node.fieldNameForChild(i) === "value") {
        this.word(child);
        continue;
      }
      if (child.type !== "case_item") continue;
      const body: SyntaxNode[] = [];
      for (let j = 0; j < child.childCount; j++) {
        const part = child.child(j);
        if (part === null || !part.isNamed) continue;
        if (child.fieldNameForChild(j) === "value") this.word(part);
        else body.push(part);
      }
      this.push(body, this.repeated);
    }
  }

  private redirectedStatement(node: SyntaxNode): void {
    this.checkAdjacent(node);
    const body = node.childForFieldName("body");
    const redirectNodes = namedChildrenOf(node).filter((child) => child.type.endsWith("_redirect"));
    if (body !== null && body.type === "command") {
      this.command(body, redirectNodes, node.text);
      return;
    }
    if (body !== null && (body.type === "declaration_command" || body.type === "unset_command")) {
      this.declaration(body, redirectNodes, node.text);
      return;
    }
    const redirects: BashRedirect[] = [];
    const { stdin, extraWords } = this.redirects(redirectNodes, redirects);
    if (extraWords.length > 0) this.problem("words after a redirect of a command group", node);
    this.record({
      kind: "redirect-only",
      text: redirectNodes.map((child) => child.text).join(" "),
      assignments: [],
      words: [],
      redirects,
      stdin,
    });
    if (body !== null) this.push([body], this.repeated);
  }

  /**
   * Bash separates words with blanks or operators. Two parts of one command that touch with word
   * characters on both sides were one word to bash, split by tree-sitter: `>}echo curl` is a
   * redirect to the file `}echo` before `curl` in bash, but `> }` and `echo curl` in the tree.
   */
  private checkAdjacent(node: SyntaxNode): void {
    let previous: SyntaxNode | null = null;
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      if (child === null) continue;
      if (previous !== null && previous.endIndex === child.startIndex) {
        const left = this.source[previous.endIndex - 1] ?? " ";
        const right = this.source[child.startIndex] ?? " ";
        if (/[^\s<>&|;()]/.test(left) && /[^\s<>&|;()]/.test(right)) {
          this.problem("two words touch without a space where bash reads one word", node);
          return;
        }
      }
      previous = child;
    }
  }

  private command(node: SyntaxNode, extraRedirects: readonly SyntaxNode[], text = node.text): void {
    this.checkAdjacent(node);
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
      if (child.type === "variable_assignment") assignments.push(this.assignment(child));
      else if (child.type.endsWith("_redirect")) redirectNodes.push(child);
      else if (child.type === "command_name") words.push(this.word(child.namedChild(0) ?? child));
      else words.push(this.word(child));
    }
    const redirects: BashRedirect[] = [];
    const { stdin, extraWords } = this.redirects(redirectNodes, redirects);
    words.push(...extraWords);
    this.record({
      kind: words.length === 0 ? "assignment" : "command",
      text,
      assignments,
      words,
      redirects,
      stdin,
    });
  }

  private declaration(node: SyntaxNode, extraRedirects: readonly SyntaxNode[], text = node.text): void {
    const keyword = node.child(0)?.text ?? node.type;
    const assignments: BashAssignment[] = [];
    const words: BashWord[] = [{ value: keyword, text: keyword, glob: false }];
    for (const child of namedChildrenOf(node)) {
      if (child.type === "variable_assignment") {
        const assignment = this.assignment(child);
        assignments.push(assignment);
        const value = assignment.value === undefined ? "" : assignment.value.value;
        words.push({
          value: value === undefined ? undefined : `${assignment.name}=${value}`,
          text: child.text,
          glob: false,
        });
      } else if (child.type === "variable_name") {
        words.push({ value: child.text, text: child.text, glob: false });
      } else {
        words.push(this.word(child));
      }
    }
    const redirects: BashRedirect[] = [];
    const { stdin, extraWords } = this.redirects(extraRedirects, redirects);
    words.push(...extraWords);
    this.record({ kind: "declaration", text, assignments, words, redirects, stdin });
  }

  private assignmentStatement(node: SyntaxNode): void {
    const nodes = node.type === "variable_assignment" ? [node] : namedChildrenOf(node);
    const assignments = nodes
      .filter((child) => child.type === "variable_assignment")
      .map((child) => this.assignment(child));
    this.record({
      kind: "assignment",
      text: node.text,
      assignments,
      words: [],
      redirects: [],
      stdin: undefined,
    });
  }

  private assignment(node: SyntaxNode): BashAssignment {
    const nameNode = node.childForFieldName("name");
    let name = nameNode?.text ?? "";
    if (nameNode !== null && nameNode.type === "subscript") {
      this.subscript(nameNode);
      name = nameNode.childForFieldName("name")?.text ?? name;
    }
    const valueNode = node.childForFieldName("value");
    if (valueNode === null) return { name, value: { value: "", text: "", glob: false }, text: node.text };
    if (valueNode.type === "array") {
      for (const element of namedChildrenOf(valueNode)) this.word(element);
      return { name, value: undefined, text: node.text };
    }
    return { name, value: this.word(valueNode), text: node.text };
  }

  /**
   * Collects redirects into `into`. Returns what the command reads on stdin when a heredoc or
   * here-string fixes it, and the words tree-sitter hung on a redirect that are really arguments:
   * bash takes one word as the target, so in `sed -n p >/dev/null -i f` the `-i f` go to sed.
   */
  private redirects(
    nodes: readonly SyntaxNode[],
    into: BashRedirect[],
  ): { stdin: BashStdin | undefined; extraWords: BashWord[] } {
    let stdin: BashStdin | undefined;
    const extraWords: BashWord[] = [];
    for (const node of nodes) {
      if (node.type === "file_redirect") extraWords.push(...this.fileRedirect(node, into));
      else if (node.type === "herestring_redirect") {
        const [operand, ...rest] = namedChildrenOf(node);
        const word = operand === undefined ? undefined : this.word(operand);
        stdin = { kind: "herestring", body: word?.value === undefined ? undefined : `${word.value}\n` };
        extraWords.push(...rest.map((child) => this.word(child)));
      } else if (node.type === "heredoc_redirect") {
        const heredoc = this.heredoc(node);
        stdin = heredoc.stdin;
        extraWords.push(...heredoc.extraWords);
      } else this.problem(`unsupported redirection "${node.type}"`, node);
    }
    return { stdin, extraWords };
  }

  private fileRedirect(node: SyntaxNode, into: BashRedirect[]): BashWord[] {
    let operator = "";
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      if (child !== null && !child.isNamed) operator = child.type;
    }
    // `x2>f`: bash keeps the 2 in the word and redirects stdout; tree-sitter reads fd 2.
    const descriptor = node.childForFieldName("descriptor");
    const before = this.source[node.startIndex - 1];
    if (descriptor !== null && before !== undefined && !/[\s;&|()<>]/.test(before)) {
      this.problem(
        "a file descriptor number glued to the word before it is read differently by bash; add a space",
        node,
      );
    }
    // tree-sitter also takes `-rf2` in `-rf2>&1` for a descriptor; bash runs it as a command.
    if (descriptor !== null && !/^(?:\d+|\{[A-Za-z_][A-Za-z0-9_]*\})$/.test(descriptor.text)) {
      this.problem(`"${descriptor.text}" is not a file descriptor`, node);
    }
    this.checkAdjacent(node);
    const [destination, ...extra] = node
      .childrenForFieldName("destination")
      .filter((child) => child !== null);
    const target = destination === undefined ? undefined : this.word(destination);
    const extraWords = extra.map((child) => this.word(child));
    this.classifyRedirect(node, operator, target, into);
    return extraWords;
  }

  private classifyRedirect(
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
    this.problem(`unsupported redirection operator "${operator}"`, node);
  }

  private heredoc(node: SyntaxNode): { stdin: BashStdin; extraWords: BashWord[] } {
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
      else if (child.type === "heredoc_body") body = this.heredocBody(child, quoted);
      else if (node.fieldNameForChild(i) === "argument") extraWords.push(this.word(child));
      else if (child.type !== "heredoc_end") statements.push(child);
    }
    // `cat <<EOF | sh` puts the rest of the pipeline inside the redirect node.
    this.push(statements, this.repeated);
    if (body !== undefined && operator === "<<-") body = body.replace(/^\t+/gm, "");
    return { stdin: { kind: "heredoc", body }, extraWords };
  }

  private heredocBody(node: SyntaxNode, quoted: boolean): string | undefined {
    if (quoted) return node.text;
    let isStatic = true;
    for (const child of namedChildrenOf(node)) {
      if (child.type === "heredoc_content") continue;
      isStatic = false;
      this.word(child);
    }
    return isStatic ? unescapeHeredoc(node.text) : undefined;
  }

  word(node: SyntaxNode): BashWord {
    const pieces: Piece[] = [];
    const isStatic = this.pieces(node, pieces);
    return finishWord(node.text, pieces, isStatic, this.options.homeDir);
  }

  /**
   * The parts of one bash word follow each other without a gap. tree-sitter sometimes builds a
   * word across a blank (`>>$ git` as the expansion `$git`, hiding the command git).
   */
  private hasGap(node: SyntaxNode): boolean {
    let end = -1;
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      if (child === null) continue;
      if (end !== -1 && child.startIndex !== end) {
        this.problem("a word with a blank inside it, which bash reads as two words", node);
        return true;
      }
      end = child.endIndex;
    }
    return false;
  }

  /** Appends the node's pieces; returns false when any part is only known at run time. */
  private pieces(node: SyntaxNode, out: Piece[]): boolean {
    if ((node.type === "concatenation" || node.type === "simple_expansion") && this.hasGap(node))
      return false;
    switch (node.type) {
      case "word":
        if (this.splitsLine(node)) return false;
        unquotedPieces(node.text, out);
        return true;
      case "number":
      case "extglob_pattern":
      case "regex":
        if (this.splitsLine(node)) return false;
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
        return this.stringPieces(node, out);
      case "concatenation": {
        let isStatic = true;
        for (let i = 0; i < node.childCount; i++) {
          const child = node.child(i);
          if (child === null) continue;
          if (!child.isNamed) out.push({ text: child.type, quoted: false });
          else if (!this.pieces(child, out)) isStatic = false;
        }
        return isStatic;
      }
      case "simple_expansion":
      case "expansion":
        this.expansion(node);
        return false;
      case "command_substitution":
        this.substitution(node);
        return false;
      case "process_substitution":
        this.push(namedChildrenOf(node), this.repeated);
        return false;
      case "arithmetic_expansion":
        this.arithmetic(node);
        return false;
      case "brace_expression":
        return false;
      case "subshell":
      case "compound_statement":
        // `time (rm x)`: the group runs; as a word it is unknowable.
        this.push([node], this.repeated);
        return false;
      default:
        this.problem(`unsupported word "${node.type}"`, node);
        return false;
    }
  }

  /**
   * An unquoted word never holds a newline in bash: it ends the command. tree-sitter-bash glues a
   * line that starts with a backslash onto the previous command (`echo hi⏎\rm x` reads as one
   * echo), so such a word means the tree is wrong.
   */
  private splitsLine(node: SyntaxNode): boolean {
    if (!/(?:^|[^\\])\n/.test(node.text)) return false;
    this.problem(
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
  private substitution(node: SyntaxNode): void {
    if (node.text.startsWith("`") && /\\[\\`$"]/.test(node.text)) {
      this.problem(
        "a backquote substitution containing backslashes is read differently by bash; use $( ) instead",
        node,
      );
    }
    this.push(namedChildrenOf(node), this.repeated);
  }

  private stringPieces(node: SyntaxNode, out: Piece[]): boolean {
    let isStatic = true;
    for (const child of namedChildrenOf(node)) {
      if (child.type === "string_content") continue;
      if (child.type === "string" || child.type === "raw_string") continue;
      isStatic = false;
      this.pieces(child, []);
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
  private expansion(node: SyntaxNode): void {
    let substring = false;
    let transform = false;
    let name = true;
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      if (child === null) continue;
      if (!child.isNamed) {
        if (node.fieldNameForChild(i) !== "operator") continue;
        if (transform && child.type === "P") {
          this.problem("${x@P} expands x as a prompt, which runs the command substitutions in it", node);
        }
        substring = child.type === ":";
        transform = child.type === "@";
        name = false;
        continue;
      }
      if (child.type === "subscript") this.subscript(child);
      else if (substring && child.type !== "number") {
        this.problem(
          "a substring offset other than a number is evaluated as arithmetic, which can run commands",
          node,
        );
        this.pieces(child, []);
      } else if ((child.type === "variable_name" || child.type === "special_variable_name") && name) continue;
      else if (child.type !== "variable_name" && child.type !== "special_variable_name")
        this.pieces(child, []);
    }
  }

  /** Array subscripts are arithmetic: `a[$i]` with i='x[$(cmd)]' runs cmd. Only literals pass. */
  private subscript(node: SyntaxNode): void {
    const index = node.childForFieldName("index");
    if (index === null) return;
    if (/^(?:\d+|@|\*)$/.test(index.text)) return;
    this.problem(
      "array subscripts other than numbers are evaluated as arithmetic, which can run commands",
      node,
    );
    this.pieces(index, []);
  }

  /**
   * `(( ))`, `$(( ))` and C-style `for`: only number literals pass. Bash evaluates a variable's value
   * as arithmetic again, so `x='a[$(rm -rf .)]'; echo $((x))` runs rm.
   */
  private arithmetic(node: SyntaxNode, skipFields: readonly string[] = []): void {
    let flagged = false;
    const pending: SyntaxNode[] = [];
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      const field = node.fieldNameForChild(i);
      if (child !== null && child.isNamed && (field === null || !skipFields.includes(field)))
        pending.push(child);
    }
    let visited = 0;
    while (pending.length > 0 && visited++ < MAX_COMMAND_CHARS) {
      const current = pending.pop() as SyntaxNode;
      if (current.type === "command_substitution" || current.type === "process_substitution") {
        this.push(namedChildrenOf(current), this.repeated);
      }
      if (!ARITHMETIC_SAFE_NODES.has(current.type) && !flagged) {
        flagged = true;
        this.problem(
          "arithmetic over variables or command output can run commands (bash evaluates array subscripts in it)",
          node,
        );
      }
      if (current.type !== "command_substitution" && current.type !== "process_substitution") {
        pending.push(...namedChildrenOf(current));
      }
    }
  }

  /** `[[ … ]]`: walk substitutions; arithmetic comparisons and `-v` take literals only. */
  private scanExpression(root: SyntaxNode): void {
    const pending: SyntaxNode[] = [...namedChildrenOf(root)];
    let visited = 0;
    while (pending.length > 0 && visited++ < MAX_COMMAND_CHARS) {
      const node = pending.pop() as SyntaxNode;
      switch (node.type) {
        case "command_substitution":
          this.substitution(node);
          continue;
        case "process_substitution":
          this.push(namedChildrenOf(node), this.repeated);
          continue;
        case "arithmetic_expansion":
          this.arithmetic(node);
          continue;
        case "expansion":
        case "simple_expansion":
          this.expansion(node);
          continue;
        case "binary_expression": {
          const operator = node.childForFieldName("operator")?.text ?? "";
          if (ARITHMETIC_TEST_OPERATORS.has(operator)) this.arithmeticOperands(node);
          break;
        }
        case "unary_expression": {
          const operator = node.childForFieldName("operator")?.text ?? "";
          if (operator === "-v" && node.text.includes("[")) {
            this.problem(
              "`[[ -v name[...] ]]` evaluates the subscript as arithmetic, which can run commands",
              node,
            );
          }
          break;
        }
        default:
          break;
      }
      pending.push(...namedChildrenOf(node));
    }
  }

  private arithmeticOperands(node: SyntaxNode): void {
    for (const field of ["left", "right"]) {
      const operand = node.childForFieldName(field);
      if (operand === null || /^-?\d+$/.test(operand.text)) continue;
      this.problem(
        "`[[ a -eq b ]]` evaluates its operands as arithmetic; only number literals are accepted",
        node,
      );
      return;
    }
  }

  /**
   * Two places where tree-sitter-bash and bash read a line break differently; refuse both rather
   * than guess. A line that starts with a backslash is glued onto the previous command
   * (`echo hi⏎\rm x` reads as one echo). Backslash-newline inside a word splits it in tree-sitter
   * (`r\⏎m` reads as `r` and `m`) while bash joins it (`rm`).
   */
  lineDifferentials(root: SyntaxNode, source: string): void {
    for (let index = source.indexOf("\n\\"); index !== -1; index = source.indexOf("\n\\", index + 1)) {
      let backslashes = 0;
      for (let i = index - 1; i >= 0 && source[i] === "\\"; i--) backslashes++;
      if (backslashes % 2 === 1) continue;
      const node = root.descendantForIndex(index + 1);
      if (node !== null && LITERAL_TEXT_NODES.has(node.type)) continue;
      this.problems.push({
        reason:
          "a line that starts with a backslash is read differently by bash; start it with the command name",
        text: snippet(source.slice(index + 1, index + 41)),
      });
      return;
    }
    this.continuations(root, source);
  }

  private continuations(root: SyntaxNode, source: string): void {
    for (let index = source.indexOf("\\\n"); index !== -1; index = source.indexOf("\\\n", index + 2)) {
      let backslashes = 0;
      for (let i = index; i >= 0 && source[i] === "\\"; i--) backslashes++;
      if (backslashes % 2 === 0) continue;
      const before = source[index - backslashes];
      const after = source[index + 2];
      if (before === undefined || after === undefined || /\s/.test(before) || /\s/.test(after)) continue;
      const node = root.descendantForIndex(index);
      if (node !== null && LITERAL_TEXT_NODES.has(node.type)) continue;
      this.problems.push({
        reason: "a backslash-newline inside a word joins it differently in bash; put the command on one line",
        text: snippet(source.slice(Math.max(0, index - 20), index + 20)),
      });
      return;
    }
  }
}

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
 * tree-sitter sometimes recovers from odd input by silently dropping text, without an ERROR node
 * (`-rfcase\⏎ -x=1` loses its first word). Every character outside whitespace and line
 * continuations must belong to some token of the tree; the first one that does not is returned.
 */
function firstUncoveredText(root: SyntaxNode, source: string): number | undefined {
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

function firstSyntaxError(root: SyntaxNode): SyntaxNode | undefined {
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
    const walker = new ScriptWalker(source, options);
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
    walker.lineDifferentials(root, source);
    walker.walk(root);
    return { commands: walker.commands, problems: walker.problems, truncated: walker.truncated };
  } finally {
    tree.delete();
  }
}
