/**
 * Interprets one simple command from bash-analyze: unwraps wrappers, shells and `eval`
 * (bash-wrappers.ts), records the files it writes and reads, applies the environment-variable and
 * read-only knowledge (bash-environment.ts, bash-programs.ts), and notes `cd`.
 *
 * The result is a set of argv "views" of the command, outer to inner. Deny and ask rules are tried
 * against every view; allow rules must admit every `check` view (a transparent wrapper like
 * `timeout 5` needs no rule of its own, the command it runs does — R5).
 */
import type { BashAssignment, BashWord, RawCommand } from "./bash-script.js";
import { basename, hasLongOption, positionals, shortFlagClusters, staticWord } from "./bash-args.js";
import { classifyVariable } from "./bash-environment.js";
import {
  pathArguments,
  READ_ONLY_COMMANDS,
  readOnlyProof,
  writtenPaths,
  type ReadOnlySpec,
} from "./bash-programs.js";
import { parseShellInvocation, SHELLS, WRAPPERS, type Wrapper } from "./bash-wrappers.js";

export type ViewRole = "check" | "transparent" | "deny-only";

export interface CommandView {
  readonly argv: readonly BashWord[];
  readonly role: ViewRole;
  /** Arguments are appended at run time (`xargs cmd`): only rules ending in a wildcard can match. */
  readonly openArgs: boolean;
}

export interface PathUse {
  readonly word: BashWord;
  /** A redirect needs its own write permission; an argument is covered by the command's rule. */
  readonly via: "redirect" | "argument";
  /** How the path is used, for messages: `redirect >`, `rm argument`, … */
  readonly what: string;
}

export interface CdEffect {
  /** The directory as written, or undefined when it is only known at run time (`cd -`, `popd`). */
  readonly target: string | undefined;
}

export type ReadOnlyProof =
  | {
      readonly proven: true;
      readonly paths: readonly PathUse[];
      /** Reads the working directory when given no path (`ls`, `rg foo`, `find`). */
      readonly usesCwd: boolean;
    }
  | { readonly proven: false; readonly reason: string };

export interface CommandFacts {
  readonly text: string;
  readonly views: readonly CommandView[];
  readonly writes: readonly PathUse[];
  readonly reads: readonly PathUse[];
  /** Directories read recursively (`grep -r`, `rg`). */
  readonly recursiveReads: readonly PathUse[];
  readonly readOnly: ReadOnlyProof;
  /** Things the matcher cannot see through; any one denies unless the mode is bypassPermissions. */
  readonly problems: readonly string[];
  /**
   * Variables that can make a program run something else, set for this command (`PYTHONPATH=src python3 …`).
   * They deny like problems, unless an allow rule spells the assignments out: then the user has decided.
   */
  readonly assignmentProblems: readonly string[];
  /** How many leading words of the first view are the command's own assignments (`FOO=1 cmd`). */
  readonly assignmentWords: number;
  /** Shell code this command runs and that must be checked too (`sh -c`, `eval`, `trap`, heredoc). */
  readonly scripts: readonly string[];
  readonly cd: CdEffect | undefined;
  readonly repeated: boolean;
}

const MAX_WRAPPER_DEPTH = 16;
/** Unquoted, these are bash syntax errors as a command; tree-sitter reads them as command names. */
const RESERVED_WORDS: ReadonlySet<string> = new Set([
  "fi",
  "then",
  "else",
  "elif",
  "do",
  "done",
  "esac",
  "}",
  "]]",
  "in",
]);

class FactsBuilder {
  readonly views: CommandView[] = [];
  readonly writes: PathUse[] = [];
  readonly reads: PathUse[] = [];
  readonly recursiveReads: PathUse[] = [];
  readonly problems: string[] = [];
  readonly assignmentProblems: string[] = [];
  readonly scripts: string[] = [];
  readonly notReadOnly: string[] = [];
  readonly readOnlyPaths: PathUse[] = [];
  usesCwd = false;
  cd: CdEffect | undefined;

  constructor(private readonly stdinBody: string | undefined) {}

  /**
   * Dangerous variables are problems. Unknown ones only matter for the command they are set for
   * (`FOO=1 cmd`, `env FOO=1 cmd`): a plain `FOO=1` or `local FOO=1` changes a shell variable only.
   */
  assignments(
    words: readonly BashWord[] | readonly BashAssignment[],
    forCommand: boolean,
    nameable = false,
  ): "clean" | "unknown" {
    let unknown = false;
    for (const item of words) {
      const name = "name" in item ? item.name : ((item.value ?? "").split("=")[0] ?? "");
      const kind = classifyVariable(name);
      if (kind === "dangerous" && nameable) {
        // Checked only against a rule that names it: the command's view then starts with the assignment.
        unknown = true;
        this.assignmentProblems.push(`setting ${name} can make commands run other programs`);
        this.notReadOnly.push(`it sets ${name}, which can make commands run other programs`);
        continue;
      }
      if (kind === "dangerous") {
        this.problems.push(`setting ${name} can make commands run other programs`);
        continue;
      }
      if (kind === "unknown" && forCommand) {
        unknown = true;
        this.notReadOnly.push(`it sets ${name}, which agent-ci does not know to be harmless`);
      }
    }
    return unknown ? "unknown" : "clean";
  }

  argv(argv: readonly BashWord[], openArgs: boolean, depth: number): void {
    const name = argv[0];
    if (name === undefined) return;
    if (depth > MAX_WRAPPER_DEPTH) {
      this.problems.push("too many nested wrapper commands");
      return;
    }
    if (name.value === undefined) {
      this.problems.push(`the command name ${name.text} is only known at run time`);
      return;
    }
    if (name.glob) {
      this.problems.push(`the command name ${name.text} contains glob characters`);
      return;
    }
    if (!/^[\x21-\x7e]+$/.test(name.value)) {
      this.problems.push(
        `the command name ${JSON.stringify(name.value)} contains spaces, non-ASCII or invisible characters`,
      );
      return;
    }
    if (depth === 0 && name.text === name.value && RESERVED_WORDS.has(name.value)) {
      this.problems.push(`syntax error: "${name.value}" cannot start a command`);
      return;
    }
    const program = basename(name.value);
    const args = argv.slice(1);
    // Every word may name a file (`xargs -a .env`, `cat .env`): R14 checks them all.
    this.reads.push(...args.map((word): PathUse => ({ word, via: "argument", what: `${program} argument` })));
    const wrapper = WRAPPERS[program];
    if (wrapper !== undefined) {
      this.wrapper(program, wrapper, argv, openArgs, depth);
      return;
    }
    this.leaf(program, name, argv, openArgs, depth);
    this.writes.push(
      ...writtenPaths(program, args).map((word): PathUse => ({
        word,
        via: "argument",
        what: `${program} argument`,
      })),
    );
  }

  private wrapper(
    program: string,
    wrapper: Wrapper,
    argv: readonly BashWord[],
    openArgs: boolean,
    depth: number,
  ): void {
    const result = wrapper.unwrap(argv.slice(1));
    if (typeof result === "string") {
      this.views.push({ argv, role: "check", openArgs });
      this.problems.push(result);
      return;
    }
    this.writes.push(...(result.writes ?? []));
    const assignments = this.assignments(result.assignments ?? [], true);
    if (result.inner.length === 0) {
      this.views.push({ argv, role: "check", openArgs });
      this.proveReadOnly(program, argv, openArgs);
      return;
    }
    const role: ViewRole = wrapper.transparent && assignments === "clean" ? "transparent" : "check";
    this.views.push({ argv, role, openArgs });
    if (!wrapper.transparent) this.notReadOnly.push(`${program} runs a command with other privileges`);
    this.argv(result.inner, openArgs || result.openArgs === true, depth + 1);
  }

  private leaf(
    program: string,
    name: BashWord,
    argv: readonly BashWord[],
    openArgs: boolean,
    depth: number,
  ): void {
    const args = argv.slice(1);
    if (SHELLS.has(program)) {
      this.shell(program, argv, openArgs);
      return;
    }
    if (program === "eval") {
      this.views.push({ argv, role: "transparent", openArgs });
      if (args.some((arg) => arg.value === undefined) || openArgs) {
        this.problems.push("eval of text only known at run time");
        return;
      }
      this.scripts.push(args.map((arg) => arg.value).join(" "));
      return;
    }
    if (program === "trap") {
      this.trap(argv, openArgs);
      return;
    }
    if (program === "let") {
      this.views.push({ argv, role: "check", openArgs });
      this.problems.push("let evaluates arithmetic, which can run commands through array subscripts");
      return;
    }
    if (program === "source" || program === ".") {
      this.views.push({ argv, role: "check", openArgs });
      this.notReadOnly.push(`${program} runs ${args[0]?.text ?? "a file"} as shell code`);
      return;
    }
    this.views.push({ argv, role: "check", openArgs });
    this.rebinding(program, args);
    if (program === "find") this.findExec(args, depth);
    if (program === "git") this.gitGlobals(name, args);
    if (program === "grep" || program === "egrep" || program === "fgrep" || program === "rg")
      this.recursive(program, args);
    if (program === "cd" || program === "pushd" || program === "popd")
      this.changeDirectory(program, args, openArgs);
    this.proveReadOnly(program, argv, openArgs);
  }

  /**
   * Builtins that bind a name: `read PATH`, `printf -v IFS`, `hash -p /bin/rm ls`,
   * `shopt -s expand_aliases`, `mapfile -C callback`. They can change what later commands run, so a
   * dangerous target is a problem, as is a subscripted name (evaluated as arithmetic).
   */
  private rebinding(program: string, args: readonly BashWord[]): void {
    const values = args.map((arg) => arg.value ?? "");
    if (program === "hash" && values.some((value) => value.startsWith("-") && value.includes("p"))) {
      this.problems.push("hash -p binds a command name to another program");
    }
    if (program === "shopt" && values.includes("expand_aliases")) {
      this.problems.push("shopt expand_aliases lets aliases replace command names");
    }
    if (
      (program === "mapfile" || program === "readarray") &&
      values.some((value) => /^-[A-Za-z]*C/.test(value))
    ) {
      this.problems.push(`${program} -C runs a callback command`);
    }
    const names =
      program === "read" || program === "mapfile" || program === "readarray" || program === "getopts"
        ? values.filter((value) => !value.startsWith("-"))
        : program === "printf" || program === "wait"
          ? values.filter((_value, index) => values[index - 1] === "-v" || values[index - 1] === "-p")
          : [];
    for (const name of names) {
      if (classifyVariable(name) === "dangerous")
        this.problems.push(`${program} assigns ${name}, which changes how commands run`);
      else if (name.includes("["))
        this.problems.push(`${program} into ${name}: the subscript is evaluated as arithmetic`);
    }
  }

  private proveReadOnly(program: string, argv: readonly BashWord[], openArgs: boolean): void {
    const proof = readOnlyProof(program, argv[0] as BashWord, argv.slice(1), openArgs);
    if (!proof.proven) {
      this.notReadOnly.push(proof.reason);
      return;
    }
    this.readOnlyPaths.push(...proof.paths);
    this.usesCwd ||= proof.usesCwd;
  }

  private shell(program: string, argv: readonly BashWord[], openArgs: boolean): void {
    const invocation = parseShellInvocation(program, argv.slice(1));
    switch (invocation.kind) {
      case "problem":
        this.views.push({ argv, role: "check", openArgs });
        this.problems.push(invocation.reason);
        return;
      case "script":
        this.views.push({ argv, role: "transparent", openArgs });
        if (invocation.script.value === undefined) {
          this.problems.push(`the script given to ${program} -c is only known at run time`);
          return;
        }
        this.scripts.push(invocation.script.value);
        return;
      case "file":
        this.views.push({ argv, role: "check", openArgs });
        this.notReadOnly.push(`${program} runs the script file ${invocation.file.text}`);
        return;
      case "stdin":
        if (this.stdinBody !== undefined && !openArgs) {
          this.views.push({ argv, role: "transparent", openArgs });
          this.scripts.push(this.stdinBody);
          return;
        }
        // A pipe, a file or a heredoc the parser attached elsewhere: the script is not known here, so no
        // rule can be checked against it (`echo 'rm -rf .' | bash`).
        this.views.push({ argv, role: "check", openArgs });
        this.problems.push(
          `${program} runs commands it reads from standard input, which are not known before they run`,
        );
    }
  }

  private trap(argv: readonly BashWord[], openArgs: boolean): void {
    const [action] = argv.slice(1);
    this.views.push({ argv, role: "transparent", openArgs });
    if (action === undefined || action.value === "-l" || action.value === "-p" || action.value === "-")
      return;
    if (action.value === undefined) {
      this.problems.push("trap with an action only known at run time");
      return;
    }
    if (action.value !== "") this.scripts.push(action.value);
  }

  /** `find … -exec cmd {} \;`: each command is checked on its own; `{}` is a run-time word. */
  private findExec(args: readonly BashWord[], depth: number): void {
    for (let i = 0; i < args.length; i++) {
      const value = args[i]?.value;
      if (value === "-fprint" || value === "-fprint0" || value === "-fprintf" || value === "-fls") {
        const target = args[i + 1];
        if (target !== undefined) this.writes.push({ word: target, via: "argument", what: `find ${value}` });
        continue;
      }
      if (value !== "-exec" && value !== "-execdir" && value !== "-ok" && value !== "-okdir") continue;
      const inner: BashWord[] = [];
      let j = i + 1;
      for (; j < args.length; j++) {
        const word = args[j] as BashWord;
        if (word.value === ";" || word.value === "+") break;
        inner.push(word.value === "{}" ? { value: undefined, text: "{}", glob: false } : word);
      }
      if (inner.length === 0) this.problems.push(`find ${value} without a command`);
      else this.argv(inner, false, depth + 1);
      i = j;
    }
  }

  /** `git -C dir push` reads as `git push` for deny rules. */
  private gitGlobals(name: BashWord, args: readonly BashWord[]): void {
    let index = 0;
    while (index < args.length && (args[index]?.value ?? "").startsWith("-")) {
      const value = args[index]?.value ?? "";
      index += [
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--exec-path",
        "--config-env",
      ].includes(value)
        ? 2
        : 1;
    }
    if (index > 0 && index < args.length)
      this.views.push({ argv: [name, ...args.slice(index)], role: "deny-only", openArgs: false });
  }

  private recursive(program: string, args: readonly BashWord[]): void {
    const values = args.map((arg) => arg.value ?? "");
    const recursive =
      program === "rg" ||
      /[rR]/.test(shortFlagClusters(values)) ||
      hasLongOption(values, ["--recursive", "--dereference-recursive"]) ||
      values.some(
        (value, index) =>
          value === "--directories=recurse" || (value === "-d" && values[index + 1] === "recurse"),
      );
    if (!recursive) return;
    const spec = READ_ONLY_COMMANDS[program] as ReadOnlySpec;
    const dirs = pathArguments(spec, args);
    const targets = dirs.length === 0 ? [staticWord(".")] : dirs;
    this.recursiveReads.push(
      ...targets.map((word): PathUse => ({ word, via: "argument", what: `${program} recursive search` })),
    );
  }

  private changeDirectory(program: string, args: readonly BashWord[], openArgs: boolean): void {
    const [target] = positionals(args);
    if (
      program === "popd" ||
      /^[+-]\d+$/.test(target?.value ?? "") ||
      openArgs ||
      (target !== undefined && target.value === undefined) ||
      target?.value === "-"
    ) {
      this.cd = { target: undefined };
      return;
    }
    this.cd = { target: target?.value ?? "~" };
  }
}

/** The facts about one simple command that the evaluator decides on. */
export function interpretCommand(raw: RawCommand): CommandFacts {
  const builder = new FactsBuilder(raw.stdin?.body);
  const withCommand = raw.kind === "command" && raw.words.length > 0;
  const prefix = builder.assignments(raw.assignments, raw.kind === "command", withCommand);
  for (const redirect of raw.redirects) {
    if (redirect.kind === "duplicate") continue;
    if (redirect.target === undefined) {
      builder.problems.push(`a redirect without a target: ${redirect.text}`);
      continue;
    }
    const use: PathUse = { word: redirect.target, via: "redirect", what: `redirect ${redirect.operator}` };
    if (redirect.kind === "write") builder.writes.push(use);
    else builder.reads.push(use);
  }
  if (withCommand) {
    if (prefix === "unknown") {
      // `FOO=1 npm test` is admitted only by a rule that spells FOO=1 out (Claude Code does the same).
      const assignmentWords = raw.assignments.map((assignment): BashWord => ({
        value:
          assignment.value?.value === undefined ? undefined : `${assignment.name}=${assignment.value.value}`,
        text: assignment.text,
        glob: false,
      }));
      builder.views.push({ argv: [...assignmentWords, ...raw.words], role: "check", openArgs: false });
      builder.argv(raw.words, false, 0);
      const own = builder.views[1];
      if (own !== undefined && own.role === "check") builder.views[1] = { ...own, role: "deny-only" };
    } else {
      builder.argv(raw.words, false, 0);
    }
  }
  if (raw.kind === "declaration") declarationFacts(raw, builder);
  const readOnly: ReadOnlyProof =
    builder.problems.length > 0
      ? { proven: false, reason: builder.problems[0] as string }
      : builder.notReadOnly.length > 0
        ? { proven: false, reason: builder.notReadOnly[0] as string }
        : { proven: true, paths: builder.readOnlyPaths, usesCwd: builder.usesCwd };
  return {
    text: raw.text,
    views: builder.views,
    writes: builder.writes,
    reads: builder.reads,
    recursiveReads: builder.recursiveReads,
    readOnly,
    problems: builder.problems,
    assignmentProblems: builder.assignmentProblems,
    assignmentWords: withCommand && prefix === "unknown" ? raw.assignments.length : 0,
    scripts: builder.scripts,
    cd: builder.cd,
    repeated: raw.repeated,
  };
}

/** `export`, `declare`, `local`, `readonly`, `typeset`, `unset`. */
function declarationFacts(raw: RawCommand, builder: FactsBuilder): void {
  const [keyword, ...args] = raw.words;
  if (keyword === undefined) return;
  builder.views.push({ argv: raw.words, role: "check", openArgs: false });
  const flags = shortFlagClusters(args.map((arg) => arg.value ?? ""));
  if (flags.includes("i"))
    builder.problems.push(`${keyword.value} -i makes assignments arithmetic, which can run commands`);
  if (flags.includes("n"))
    builder.problems.push(`${keyword.value} -n creates a reference that can change any variable`);
  if (args.some((arg) => arg.value === undefined))
    builder.problems.push(`${keyword.value} of names only known at run time`);
  const exported = keyword.value === "export" || flags.includes("x");
  if (!exported || keyword.value === "unset") return;
  for (const assignment of raw.assignments) {
    if (classifyVariable(assignment.name) === "unknown") {
      builder.notReadOnly.push(`export ${assignment.name} changes the environment of later commands`);
    }
  }
  for (const arg of args) {
    const value = arg.value ?? "";
    if (!value.startsWith("-") && !value.includes("=") && classifyVariable(value) === "unknown") {
      builder.notReadOnly.push(`export ${value} changes the environment of later commands`);
    }
  }
}
