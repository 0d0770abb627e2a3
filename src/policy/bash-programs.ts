/**
 * Per-program knowledge: which files a writing command changes, and the short explicit list of
 * commands proven read-only with the flags that would make them write or run code excluded
 * (`sed -i`/`w`/`e`, `find -exec`, `git -c`, `sort -o`, `rg --pre`, …).
 */
import type { BashWord } from "./bash-script.js";
import { hasLongOption, positionals, shortFlagClusters, staticWord } from "./bash-args.js";
import type { PathUse, ReadOnlyProof } from "./bash-commands.js";
import { INTERPRETERS } from "./bash-wrappers.js";

/** Files a writing command changes, by program (best effort; the container layer backs it up). */
export function writtenPaths(program: string, args: readonly BashWord[]): BashWord[] {
  const values = args.map((arg) => arg.value ?? "");
  switch (program) {
    case "rm":
    case "rmdir":
    case "touch":
    case "mkdir":
    case "unlink":
    case "shred":
    case "mv":
    case "tee":
      return positionals(args);
    case "truncate":
      return positionals(args, { values: { "-s": 1, "--size": 1, "-r": 1, "--reference": 1 } });
    case "chmod":
    case "chown":
    case "chgrp": {
      const found = positionals(args);
      return hasLongOption(values, ["--reference"]) ? found : found.slice(1);
    }
    case "cp":
    case "ln":
    case "install": {
      const targetIndex = values.findIndex((value) => value === "-t" || value === "--target-directory");
      if (targetIndex !== -1 && args[targetIndex + 1] !== undefined)
        return [args[targetIndex + 1] as BashWord];
      const found = positionals(args, { values: { "-S": 1, "--suffix": 1, "-m": 1, "-o": 1, "-g": 1 } });
      return found.slice(-1);
    }
    case "dd":
      return args
        .filter((arg) => arg.value?.startsWith("of=") === true)
        .map((arg) => ({ value: arg.value?.slice(3), text: arg.text, glob: arg.glob }));
    case "sort": {
      const index = values.findIndex((value) => value === "-o" || value === "--output");
      return index === -1 || args[index + 1] === undefined ? [] : [args[index + 1] as BashWord];
    }
    case "curl":
    case "wget": {
      const names = program === "curl" ? ["-o", "--output"] : ["-O", "--output-document"];
      const index = values.findIndex((value) => names.includes(value));
      return index === -1 || args[index + 1] === undefined ? [] : [args[index + 1] as BashWord];
    }
    default:
      return [];
  }
}

export type PathArgs = "none" | "positionals" | "after-pattern" | "find" | "sed";

export interface ReadOnlySpec {
  readonly paths: PathArgs;
  /** Why these (static) arguments make the command write or run code; undefined when they do not. */
  readonly check?: (values: readonly string[]) => string | undefined;
  readonly values?: Readonly<Record<string, number>>;
  /** For `after-pattern`: options that supply the pattern, so every positional is a path. */
  readonly patternOptions?: readonly string[];
}

const NO_PATHS: ReadOnlySpec = { paths: "none" };
const FILES: ReadOnlySpec = { paths: "positionals" };

const filesWith = (values: Readonly<Record<string, number>>, check?: ReadOnlySpec["check"]): ReadOnlySpec =>
  check === undefined ? { paths: "positionals", values } : { paths: "positionals", values, check };

const atMostOnePositional =
  (program: string, values: Readonly<Record<string, number>> = {}) =>
  (args: readonly string[]): string | undefined => {
    const words = positionals(
      args.map((value) => staticWord(value)),
      { values },
    );
    return words.length > 1 ? `${program} with two file names writes the second one` : undefined;
  };

const FIND_BLOCKED: ReadonlySet<string> = new Set([
  "-exec",
  "-execdir",
  "-ok",
  "-okdir",
  "-delete",
  "-fprint",
  "-fprint0",
  "-fprintf",
  "-fls",
]);

const GIT_READ_ONLY_GLOBALS: readonly string[] = [
  "--no-pager",
  "-P",
  "--no-optional-locks",
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
  "--no-replace-objects",
  "--version",
  "--help",
  "-h",
];
const GIT_READ_ONLY_SUBCOMMANDS: ReadonlySet<string> = new Set([
  "status",
  "log",
  "diff",
  "show",
  "blame",
  "annotate",
  "shortlog",
  "describe",
  "rev-parse",
  "ls-files",
  "ls-tree",
  "cat-file",
  "grep",
  "merge-base",
  "rev-list",
  "show-ref",
  "for-each-ref",
  "name-rev",
  "count-objects",
  "whatchanged",
  "show-branch",
  "check-ignore",
  "check-attr",
  "var",
  "version",
  "help",
  "diff-tree",
  "diff-files",
  "diff-index",
  "cherry",
  "range-diff",
]);
const GIT_BLOCKED_OPTIONS: readonly string[] = [
  "--output",
  "--ext-diff",
  "--no-index",
  "--open-files-in-pager",
];

function listingOnly(
  sub: string,
  rest: readonly string[],
  writeFlags: string,
  writeLong: readonly string[],
): string | undefined {
  if (/[A-Za-z]/.test(shortFlagClusters(rest).replace(new RegExp(`[^${writeFlags}]`, "g"), ""))) {
    return `git ${sub} with these options changes the repository`;
  }
  if (hasLongOption(rest, writeLong)) return `git ${sub} with these options changes the repository`;
  const listing = rest.includes("-l") || rest.includes("--list");
  const named = positionals(
    rest.map((value) => staticWord(value)),
    {
      values: {
        "--contains": 1,
        "--no-contains": 1,
        "--merged": 1,
        "--no-merged": 1,
        "--points-at": 1,
        "--sort": 1,
        "--format": 1,
      },
    },
  );
  if (named.length > 0 && !listing) return `git ${sub} NAME creates ${sub === "tag" ? "a tag" : "a branch"}`;
  return undefined;
}

/** Why a git command is not read-only, or undefined when it is. */
export function gitReadOnlyProblem(values: readonly string[]): string | undefined {
  let index = 0;
  for (; index < values.length && (values[index] as string).startsWith("-"); index++) {
    const option = values[index] as string;
    if (!GIT_READ_ONLY_GLOBALS.includes(option)) {
      return option === "-c" || option.startsWith("--config")
        ? "git -c sets configuration that can run commands (core.pager, aliases)"
        : `the git option ${option} is not on the read-only list`;
    }
  }
  const sub = values[index];
  if (sub === undefined) return undefined;
  const rest = values.slice(index + 1);
  const blocked = rest.find((value) => hasLongOption([value], GIT_BLOCKED_OPTIONS) || /^-O/.test(value));
  if (blocked !== undefined) return `git ${sub} ${blocked} writes files or runs another program`;
  if (GIT_READ_ONLY_SUBCOMMANDS.has(sub)) return undefined;
  const first = rest[0];
  switch (sub) {
    case "branch":
      return listingOnly(sub, rest, "dDmMcCfut", [
        "--delete",
        "--move",
        "--copy",
        "--force",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
        "--track",
        "--no-track",
      ]);
    case "tag":
      return listingOnly(sub, rest, "asufdmFe", [
        "--annotate",
        "--sign",
        "--force",
        "--delete",
        "--message",
        "--file",
        "--edit",
        "--local-user",
      ]);
    case "remote":
      return first === undefined ||
        first === "-v" ||
        first === "--verbose" ||
        first === "get-url" ||
        first === "show"
        ? undefined
        : `git remote ${first} changes the repository configuration`;
    case "config": {
      const reads = [
        "--get",
        "--get-all",
        "--get-regexp",
        "--list",
        "-l",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
      ];
      const readsConfig = rest.some((value) => reads.includes(value)) || first === "get" || first === "list";
      const writes = [
        "--add",
        "--unset",
        "--unset-all",
        "--replace-all",
        "--rename-section",
        "--remove-section",
        "--edit",
        "-e",
      ];
      return readsConfig && !rest.some((value) => writes.includes(value))
        ? undefined
        : "git config can change configuration";
    }
    case "stash":
    case "worktree":
    case "notes":
      return first === "list" ||
        (first === "show" && sub !== "worktree") ||
        (first === undefined && sub === "notes")
        ? undefined
        : `git ${sub} ${first ?? ""} changes the repository`.trim();
    case "reflog":
      return first === undefined || first === "show" || first.startsWith("-")
        ? undefined
        : `git reflog ${first} rewrites the reflog`;
    case "submodule":
      return first === undefined || first === "status"
        ? undefined
        : `git submodule ${first} changes the repository`;
    default:
      return `git ${sub} is not a read-only git command`;
  }
}

const SED_LONG_OPTIONS: readonly string[] = [
  "--quiet",
  "--silent",
  "--regexp-extended",
  "--separate",
  "--null-data",
  "--zero-terminated",
  "--unbuffered",
  "--posix",
  "--debug",
  "--sandbox",
  "--follow-symlinks",
];

interface SedInvocation {
  readonly scripts: readonly string[];
  readonly files: readonly string[];
  readonly problem: string | undefined;
}

function parseSedInvocation(values: readonly string[]): SedInvocation {
  const scripts: string[] = [];
  const files: string[] = [];
  const fail = (problem: string): SedInvocation => ({ scripts, files, problem });
  let endOfOptions = false;
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as string;
    if (endOfOptions || value === "-" || !value.startsWith("-")) {
      if (scripts.length === 0) scripts.push(value);
      else files.push(value);
      continue;
    }
    if (value === "--") {
      endOfOptions = true;
      continue;
    }
    if (value === "--expression" || value === "-e") {
      scripts.push(values[++i] ?? "");
      continue;
    }
    if (value.startsWith("--expression=")) {
      scripts.push(value.slice("--expression=".length));
      continue;
    }
    if (value.startsWith("-i") || value.startsWith("--in-place")) return fail("sed -i edits files in place");
    if (value === "-f" || value.startsWith("--file"))
      return fail("sed -f runs a script file agent-ci cannot check");
    if (value.startsWith("--line-length")) continue;
    if (value.startsWith("--")) {
      if (SED_LONG_OPTIONS.includes(value)) continue;
      return fail(`the sed option ${value} is not on the read-only list`);
    }
    for (let j = 1; j < value.length; j++) {
      const letter = value[j] as string;
      if (letter === "i") return fail("sed -i edits files in place");
      if (letter === "f") return fail("sed -f runs a script file agent-ci cannot check");
      if (letter === "e" || letter === "l") {
        const attached = value.slice(j + 1);
        const argument = attached !== "" ? attached : (values[++i] ?? "");
        if (letter === "e") scripts.push(argument);
        break;
      }
      if (!"nErszu".includes(letter)) return fail(`the sed option -${letter} is not on the read-only list`);
    }
  }
  return { scripts, files, problem: undefined };
}

/** Reads a sed regex or replacement up to the unescaped delimiter; brackets count only in regexes. */
function skipDelimited(script: string, start: number, delimiter: string, isRegex: boolean): number {
  let i = start;
  while (i < script.length) {
    const char = script[i];
    if (char === "\\") {
      i += 2;
      continue;
    }
    if (isRegex && char === "[") {
      let j = i + 1;
      if (script[j] === "^") j++;
      if (script[j] === "]") j++;
      while (j < script.length && script[j] !== "]") j++;
      i = j + 1;
      continue;
    }
    if (char === delimiter) return i + 1;
    i++;
  }
  return -1;
}

/** A sed script being scanned, and how far. */
interface SedCursor {
  script: string;
  i: number;
}

function skipSed(cur: SedCursor, pattern: RegExp): void {
  while (cur.i < cur.script.length && pattern.test(cur.script[cur.i] as string)) cur.i++;
}

/** Steps over one address (a line number, `$` or a regex), if there is one; false when it is not understood. */
function sedAddress(cur: SedCursor): boolean {
  const char = cur.script[cur.i];
  if (char === undefined) return true;
  if (/[0-9]/.test(char)) {
    skipSed(cur, /[0-9~]/);
    return true;
  }
  if (char === "$") {
    cur.i++;
    return true;
  }
  if (char === "/" || char === "\\") {
    const delimiter = char === "\\" ? cur.script[cur.i + 1] : "/";
    if (delimiter === undefined) return false;
    const end = skipDelimited(cur.script, cur.i + (char === "\\" ? 2 : 1), delimiter, true);
    if (end === -1) return false;
    cur.i = end;
    skipSed(cur, /[IM]/);
  }
  return true;
}

/** Steps over `s` or `y`'s two delimited parts and `s`'s flags; why when the flags write or run something. */
function sedSubstituteProblem(cur: SedCursor, command: "s" | "y"): string | undefined {
  const { script } = cur;
  const delimiter = script[cur.i];
  if (delimiter === undefined || delimiter === "\\" || delimiter === "\n") return "sed script not understood";
  const middle = skipDelimited(script, cur.i + 1, delimiter, command === "s");
  const end = middle === -1 ? -1 : skipDelimited(script, middle, delimiter, false);
  if (end === -1) return "sed script not understood";
  cur.i = end;
  if (command === "y") return undefined;
  const flagsStart = cur.i;
  skipSed(cur, /[A-Za-z0-9]/);
  const flags = script.slice(flagsStart, cur.i);
  if (flags.includes("e")) return "sed s///e runs the result as a shell command";
  if (flags.includes("w")) return "sed s///w writes a file";
  return undefined;
}

/** Steps over one command's argument; why when the command writes files, runs commands, or is not known. */
function sedCommandProblem(cur: SedCursor, command: string | undefined): string | undefined {
  switch (command) {
    case "{":
    case "}":
    case "=":
    case "d":
    case "D":
    case "g":
    case "G":
    case "h":
    case "H":
    case "n":
    case "N":
    case "p":
    case "P":
    case "x":
    case "z":
    case "F":
      return undefined;
    case "q":
    case "Q":
    case "l":
    case "L":
      skipSed(cur, /[\s0-9]/);
      return undefined;
    case "#":
    case ":":
    case "b":
    case "t":
    case "T":
    case "v":
    case "r":
    case "R":
      skipSed(cur, command === "#" || command === "r" || command === "R" ? /[^\n]/ : /[^;\n}]/);
      return undefined;
    case "a":
    case "i":
    case "c":
      while (cur.i < cur.script.length && !(cur.script[cur.i] === "\n" && cur.script[cur.i - 1] !== "\\"))
        cur.i++;
      return undefined;
    case "y":
    case "s":
      return sedSubstituteProblem(cur, command);
    case "w":
    case "W":
      return "the sed w command writes a file";
    case "e":
      return "the sed e command runs a shell command";
    default:
      return `sed command ${JSON.stringify(command)} is not on the read-only list`;
  }
}

/**
 * Why a sed script writes files or runs commands (`w`, `W`, `e`, `s///w`, `s///e`), or undefined.
 * Anything the scanner does not recognise counts as unsafe.
 */
export function sedScriptProblem(script: string): string | undefined {
  const cur: SedCursor = { script, i: 0 };
  while (cur.i < script.length) {
    skipSed(cur, /[\s;]/);
    if (cur.i >= script.length) break;
    if (!sedAddress(cur)) return "sed script not understood";
    if (script[cur.i] === ",") {
      cur.i++;
      if (script[cur.i] === "+" || script[cur.i] === "~") cur.i++;
      if (!sedAddress(cur)) return "sed script not understood";
    }
    skipSed(cur, /[\s!]/);
    const problem = sedCommandProblem(cur, script[cur.i++]);
    if (problem) return problem;
  }
  return undefined;
}

const GREP_VALUES = {
  "-e": 1,
  "-f": 1,
  "-m": 1,
  "-A": 1,
  "-B": 1,
  "-C": 1,
  "-d": 1,
  "-D": 1,
  "--regexp": 1,
  "--file": 1,
};
const RG_VALUES = {
  ...GREP_VALUES,
  "-g": 1,
  "--glob": 1,
  "-t": 1,
  "--type": 1,
  "-T": 1,
  "--type-not": 1,
  "-j": 1,
  "--threads": 1,
  "-M": 1,
  "--max-columns": 1,
  "-E": 1,
  "--encoding": 1,
  "--sort": 1,
  "--sortr": 1,
  "--max-depth": 1,
  "-r": 1,
  "--replace": 1,
};

/**
 * The commands proven read-only (their flags that write or run code excluded). Deliberately short:
 * anything not here needs an allow rule. awk, less, vim, tar and interpreters are absent on purpose
 * (`system()`, shell escapes, `--to-command`).
 */
export const READ_ONLY_COMMANDS: Readonly<Record<string, ReadOnlySpec>> = {
  ls: filesWith({ "-I": 1, "--ignore": 1, "-w": 1, "-T": 1 }),
  cat: FILES,
  head: filesWith({ "-n": 1, "-c": 1 }),
  tail: filesWith({ "-n": 1, "-c": 1, "-s": 1, "--pid": 1 }),
  wc: FILES,
  nl: filesWith({ "-b": 1, "-d": 1, "-f": 1, "-h": 1, "-i": 1, "-l": 1, "-n": 1, "-s": 1, "-v": 1, "-w": 1 }),
  od: filesWith({ "-A": 1, "-j": 1, "-N": 1, "-t": 1, "-w": 1 }),
  hexdump: filesWith({ "-n": 1, "-s": 1, "-e": 1, "-f": 1 }),
  xxd: filesWith(
    { "-c": 1, "-g": 1, "-l": 1, "-s": 1, "-o": 1 },
    atMostOnePositional("xxd", { "-c": 1, "-g": 1, "-l": 1, "-s": 1, "-o": 1 }),
  ),
  tac: FILES,
  rev: FILES,
  strings: filesWith({ "-n": 1, "-t": 1, "-e": 1 }),
  cmp: FILES,
  diff: filesWith({ "-C": 1, "-U": 1, "-L": 1, "--label": 1, "-x": 1, "-X": 1, "-I": 1 }),
  comm: FILES,
  paste: filesWith({ "-d": 1 }),
  join: filesWith({ "-t": 1, "-1": 1, "-2": 1, "-j": 1, "-o": 1, "-a": 1, "-v": 1, "-e": 1 }),
  column: filesWith({ "-s": 1, "-c": 1, "-o": 1 }),
  fold: filesWith({ "-w": 1 }),
  fmt: filesWith({ "-w": 1 }),
  expand: filesWith({ "-t": 1 }),
  unexpand: filesWith({ "-t": 1 }),
  cut: filesWith({ "-d": 1, "-f": 1, "-b": 1, "-c": 1, "--output-delimiter": 1 }),
  tr: NO_PATHS,
  uniq: filesWith({ "-f": 1, "-s": 1, "-w": 1 }, atMostOnePositional("uniq", { "-f": 1, "-s": 1, "-w": 1 })),
  sort: filesWith({ "-t": 1, "-k": 1, "-S": 1, "-T": 1 }, (values) =>
    shortFlagClusters(values).includes("o") || hasLongOption(values, ["--output", "--compress-program"])
      ? "sort -o writes a file, --compress-program runs one"
      : undefined,
  ),
  stat: filesWith({ "-c": 1, "--format": 1, "--printf": 1 }),
  file: filesWith({ "-m": 1, "-F": 1, "-e": 1 }, (values) =>
    values.includes("-C") || values.includes("--compile")
      ? "file -C writes a compiled magic file"
      : undefined,
  ),
  du: filesWith({ "-d": 1, "-B": 1, "-t": 1, "--exclude": 1 }),
  df: filesWith({ "-B": 1, "-t": 1, "-x": 1 }),
  tree: filesWith({ "-L": 1, "-P": 1, "-I": 1, "--filelimit": 1 }, (values) =>
    values.includes("-o") || values.includes("-R") || hasLongOption(values, ["--output"])
      ? "tree -o/-R writes files"
      : undefined,
  ),
  realpath: FILES,
  readlink: FILES,
  md5sum: FILES,
  sha1sum: FILES,
  sha224sum: FILES,
  sha256sum: FILES,
  sha384sum: FILES,
  sha512sum: FILES,
  b2sum: FILES,
  cksum: FILES,
  grep: { paths: "after-pattern", values: GREP_VALUES, patternOptions: ["-e", "-f", "--regexp", "--file"] },
  egrep: { paths: "after-pattern", values: GREP_VALUES, patternOptions: ["-e", "-f", "--regexp", "--file"] },
  fgrep: { paths: "after-pattern", values: GREP_VALUES, patternOptions: ["-e", "-f", "--regexp", "--file"] },
  rg: {
    paths: "after-pattern",
    values: RG_VALUES,
    patternOptions: ["-e", "-f", "--regexp", "--file", "--files", "--type-list"],
    check: (values) =>
      hasLongOption(values, ["--pre"]) ? "rg --pre runs a program on every file" : undefined,
  },
  jq: {
    paths: "after-pattern",
    values: { "--arg": 2, "--argjson": 2, "--slurpfile": 2, "--rawfile": 2, "--indent": 1, "-L": 1 },
    patternOptions: ["-f", "--from-file", "-n", "--null-input"],
  },
  find: {
    paths: "find",
    check: (values) => {
      const blocked = values.find((value) => FIND_BLOCKED.has(value));
      return blocked === undefined
        ? undefined
        : `find ${blocked} ${blocked === "-delete" ? "deletes files" : "runs commands or writes files"}`;
    },
  },
  sed: { paths: "sed" },
  git: { paths: "none", check: gitReadOnlyProblem },
  echo: NO_PATHS,
  printf: NO_PATHS,
  pwd: NO_PATHS,
  true: NO_PATHS,
  false: NO_PATHS,
  ":": NO_PATHS,
  test: NO_PATHS,
  "[": NO_PATHS,
  sleep: NO_PATHS,
  seq: NO_PATHS,
  yes: NO_PATHS,
  basename: NO_PATHS,
  dirname: NO_PATHS,
  which: NO_PATHS,
  type: NO_PATHS,
  whereis: NO_PATHS,
  whoami: NO_PATHS,
  id: NO_PATHS,
  groups: NO_PATHS,
  uname: NO_PATHS,
  nproc: NO_PATHS,
  arch: NO_PATHS,
  printenv: NO_PATHS,
  env: NO_PATHS,
  nice: NO_PATHS,
  command: NO_PATHS,
  busybox: NO_PATHS,
  tty: NO_PATHS,
  locale: NO_PATHS,
  expr: NO_PATHS,
  date: {
    paths: "none",
    check: (values) =>
      values.some(
        (value) =>
          value === "-s" || value.startsWith("--set") || (!value.startsWith("-") && !value.startsWith("+")),
      )
        ? "date -s sets the clock"
        : undefined,
  },
  hostname: {
    paths: "none",
    check: (values) =>
      values.some((value) => !value.startsWith("-")) ? "hostname NAME sets the host name" : undefined,
  },
  exec: NO_PATHS,
  time: NO_PATHS,
  cd: NO_PATHS,
  pushd: NO_PATHS,
  popd: NO_PATHS,
  dirs: NO_PATHS,
  set: NO_PATHS,
  exit: NO_PATHS,
  return: NO_PATHS,
  break: NO_PATHS,
  continue: NO_PATHS,
  shift: NO_PATHS,
  wait: NO_PATHS,
  jobs: NO_PATHS,
  umask: NO_PATHS,
  ulimit: NO_PATHS,
  read: NO_PATHS,
  getopts: NO_PATHS,
  times: NO_PATHS,
  help: NO_PATHS,
};

/** Absolute names of programs from the image, not from the workspace. */
const SYSTEM_BINARY = /^\/(?:usr\/)?(?:local\/)?s?bin\/[^/]+$/;

function findStartingPoints(args: readonly BashWord[]): BashWord[] {
  const found: BashWord[] = [];
  let index = 0;
  while (index < args.length && /^-(?:[HLP]|O\d*)$/.test(args[index]?.value ?? "")) index++;
  if (args[index]?.value === "-D") index += 2;
  for (; index < args.length; index++) {
    const arg = args[index] as BashWord;
    const value = arg.value ?? "";
    if (value.startsWith("-") || value === "(" || value === "!" || value === ")") break;
    found.push(arg);
  }
  return found.length === 0 ? [staticWord(".")] : found;
}

export function pathArguments(spec: ReadOnlySpec, args: readonly BashWord[]): BashWord[] {
  switch (spec.paths) {
    case "none":
      return [];
    case "positionals":
      return positionals(args, { values: spec.values ?? {} });
    case "after-pattern": {
      const found = positionals(args, { values: spec.values ?? {} });
      const patternGiven = args.some((arg) =>
        (spec.patternOptions ?? []).some(
          (option) => arg.value === option || arg.value?.startsWith(`${option}=`) === true,
        ),
      );
      return patternGiven ? found : found.slice(1);
    }
    case "find":
      return findStartingPoints(args);
    case "sed":
      return parseSedInvocation(args.map((arg) => arg.value ?? "")).files.map((file) => staticWord(file));
  }
}

/** Why this command (name plus arguments) is not proven read-only, or its path arguments. */
export function readOnlyProof(
  program: string,
  name: BashWord,
  args: readonly BashWord[],
  openArgs: boolean,
): ReadOnlyProof {
  const written = name.value ?? "";
  if (written.includes("/") && !SYSTEM_BINARY.test(written)) {
    return {
      proven: false,
      reason: `${written} is a program from the workspace, not a known read-only command`,
    };
  }
  const spec = READ_ONLY_COMMANDS[program];
  if (spec === undefined) {
    if (INTERPRETERS.test(program)) return { proven: false, reason: `${program} runs arbitrary code` };
    return { proven: false, reason: `${program} is not on the read-only list` };
  }
  const dynamic = openArgs || args.some((arg) => arg.value === undefined);
  if (dynamic && (spec.paths !== "none" || spec.check !== undefined)) {
    return { proven: false, reason: `${program} has arguments only known at run time` };
  }
  const values = args.flatMap((arg) => (arg.value === undefined ? [] : [arg.value]));
  const problem =
    spec.paths === "sed"
      ? (parseSedInvocation(values).problem ??
        parseSedInvocation(values)
          .scripts.map(sedScriptProblem)
          .find((reason) => reason !== undefined))
      : spec.check?.(values);
  if (problem !== undefined) return { proven: false, reason: problem };
  const paths = pathArguments(spec, args).map((word): PathUse => ({
    word,
    via: "argument",
    what: `${program} argument`,
  }));
  return { proven: true, paths, usesCwd: spec.paths !== "none" };
}
