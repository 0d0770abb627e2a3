/**
 * What agent-ci knows about individual programs, applied to one simple command from
 * bash-analyze: wrappers to see through (`timeout`, `env`, `xargs`, `sudo`, …), shells and `eval`
 * whose string is parsed again, `find -exec`, environment variables that hijack programs, files a
 * command writes or reads, and the short explicit list of commands proven read-only.
 *
 * The result is a set of argv "views" of the command, outer to inner. Deny and ask rules are tried
 * against every view; allow rules must admit every `check` view (a transparent wrapper like
 * `timeout 5` needs no rule of its own, the command it runs does — R5).
 */
import type { BashAssignment, BashWord, RawCommand } from "./bash-analyze.js";

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
  | { readonly proven: true; readonly paths: readonly PathUse[] }
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
  /** Shell code this command runs and that must be checked too (`sh -c`, `eval`, `trap`, heredoc). */
  readonly scripts: readonly string[];
  readonly cd: CdEffect | undefined;
  readonly repeated: boolean;
}

const MAX_WRAPPER_DEPTH = 16;

export const basename = (name: string): string => name.slice(name.lastIndexOf("/") + 1);

const staticWord = (value: string, text = value): BashWord => ({ value, text, glob: false });

// ---------------------------------------------------------------------------------------------
// Environment variables

/**
 * Variables that make a program load or run something else. Setting one denies the command (it
 * cannot be checked); the list is long on purpose and still not complete, so unknown variables make
 * a command unprovable as read-only and need a rule that spells them out.
 */
const DANGEROUS_VARIABLES: ReadonlySet<string> = new Set([
  "PATH",
  "IFS",
  "CDPATH",
  "GLOBIGNORE",
  "BASH_ENV",
  "ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
  "PROMPT_COMMAND",
  "HOME",
  "XDG_CONFIG_HOME",
  "PAGER",
  "MANPAGER",
  "EDITOR",
  "VISUAL",
  "BROWSER",
  "LESSOPEN",
  "LESSCLOSE",
  "NODE_OPTIONS",
  "NODE_PATH",
  "PYTHONPATH",
  "PYTHONSTARTUP",
  "PYTHONHOME",
  "PERL5OPT",
  "PERL5LIB",
  "PERLLIB",
  "RUBYOPT",
  "RUBYLIB",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "GOFLAGS",
  "RUSTC_WRAPPER",
  "RUSTC",
  "RUSTDOC",
  "CC",
  "CXX",
  "MAKEFLAGS",
  "SHELL",
  "TERMINFO",
]);
const DANGEROUS_PREFIXES: readonly string[] = [
  "LD_",
  "DYLD_",
  "GIT_",
  "BASH_FUNC_",
  "NPM_CONFIG_",
  "YARN_",
  "CARGO_TARGET_",
  "SSH_",
];
/** Variables that only change output or locale; they are dropped before matching allow rules. */
const SAFE_VARIABLES: ReadonlySet<string> = new Set([
  "NODE_ENV",
  "CI",
  "DEBUG",
  "LANG",
  "LANGUAGE",
  "TZ",
  "FORCE_COLOR",
  "NO_COLOR",
  "TERM",
  "COLUMNS",
  "LINES",
  "RUST_BACKTRACE",
  "RUST_LOG",
  "PYTHONUNBUFFERED",
  "PYTHONDONTWRITEBYTECODE",
  "PYTHONIOENCODING",
  "NODE_NO_WARNINGS",
  "CGO_ENABLED",
  "GOOS",
  "GOARCH",
  "HUSKY",
]);

export type VariableClass = "dangerous" | "safe" | "unknown";

export function classifyVariable(name: string): VariableClass {
  const upper = name.toUpperCase();
  if (DANGEROUS_VARIABLES.has(name) || DANGEROUS_PREFIXES.some((prefix) => upper.startsWith(prefix))) {
    return "dangerous";
  }
  if (SAFE_VARIABLES.has(name) || name.startsWith("LC_")) return "safe";
  return "unknown";
}

// ---------------------------------------------------------------------------------------------
// Option parsing shared by the wrappers

interface OptionSpec {
  /** Options without a value. A name ending in `=` is matched as a prefix (`--signal=…`). */
  readonly flags?: readonly string[];
  /** Options taking the next word as value (or an attached `-s9` / `--signal=9`). */
  readonly values?: readonly string[];
}

interface ParsedOptions {
  readonly rest: readonly BashWord[];
  readonly present: ReadonlyMap<string, BashWord | undefined>;
}

function parseOptions(program: string, args: readonly BashWord[], spec: OptionSpec): ParsedOptions | string {
  const flags = spec.flags ?? [];
  const values = spec.values ?? [];
  const present = new Map<string, BashWord | undefined>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as BashWord;
    const text = arg.value;
    if (text === undefined) return `${program} options that are only known at run time`;
    if (text === "--") return { rest: args.slice(i + 1), present };
    if (!text.startsWith("-") || text === "-") return { rest: args.slice(i), present };
    if (flags.includes(text)) {
      present.set(text, undefined);
      continue;
    }
    if (values.includes(text)) {
      present.set(text, args[i + 1]);
      i++;
      continue;
    }
    const equals = text.indexOf("=");
    if (text.startsWith("--") && equals !== -1 && values.includes(text.slice(0, equals))) {
      present.set(text.slice(0, equals), staticWord(text.slice(equals + 1), arg.text));
      continue;
    }
    const short = text.slice(0, 2);
    if (!text.startsWith("--") && values.includes(short)) {
      present.set(short, staticWord(text.slice(2), arg.text));
      continue;
    }
    return `the ${program} option ${text} is not understood`;
  }
  return { rest: [], present };
}

// ---------------------------------------------------------------------------------------------
// Wrappers

interface Unwrapped {
  /** The command the wrapper runs; empty when it runs none (`env` alone prints). */
  readonly inner: readonly BashWord[];
  readonly openArgs?: boolean;
  readonly writes?: readonly PathUse[];
  readonly assignments?: readonly BashWord[];
}

interface Wrapper {
  /** A transparent wrapper needs no allow rule of its own: its inner command does. */
  readonly transparent: boolean;
  unwrap(args: readonly BashWord[]): Unwrapped | string;
}

function simpleWrapper(program: string, spec: OptionSpec, transparent = true): Wrapper {
  return {
    transparent,
    unwrap(args) {
      const parsed = parseOptions(program, args, spec);
      return typeof parsed === "string" ? parsed : { inner: parsed.rest };
    },
  };
}

const ASSIGNMENT_WORD = /^[A-Za-z_][A-Za-z0-9_]*=/;

const WRAPPERS: Readonly<Record<string, Wrapper>> = {
  timeout: {
    transparent: true,
    unwrap(args) {
      const parsed = parseOptions("timeout", args, {
        flags: ["--preserve-status", "--foreground", "-v", "--verbose"],
        values: ["-s", "--signal", "-k", "--kill-after"],
      });
      if (typeof parsed === "string") return parsed;
      if (parsed.rest.length === 0) return "timeout without a duration";
      return { inner: parsed.rest.slice(1) };
    },
  },
  nice: {
    transparent: true,
    unwrap(args) {
      const adjusted = args[0]?.value !== undefined && /^-\d+$/.test(args[0].value) ? args.slice(1) : args;
      const parsed = parseOptions("nice", adjusted, { values: ["-n", "--adjustment"] });
      return typeof parsed === "string" ? parsed : { inner: parsed.rest };
    },
  },
  nohup: simpleWrapper("nohup", {}),
  stdbuf: simpleWrapper("stdbuf", { values: ["-i", "-o", "-e", "--input", "--output", "--error"] }),
  setsid: simpleWrapper("setsid", { flags: ["-c", "--ctty", "-f", "--fork", "-w", "--wait"] }),
  builtin: simpleWrapper("builtin", {}),
  coproc: simpleWrapper("coproc", {}),
  exec: simpleWrapper("exec", { flags: ["-c", "-l"], values: ["-a"] }),
  command: {
    transparent: true,
    unwrap(args) {
      const parsed = parseOptions("command", args, { flags: ["-p", "-v", "-V"] });
      if (typeof parsed === "string") return parsed;
      // `command -v x` only looks x up.
      if (parsed.present.has("-v") || parsed.present.has("-V")) return { inner: [] };
      return { inner: parsed.rest };
    },
  },
  time: {
    transparent: true,
    unwrap(args) {
      const parsed = parseOptions("time", args, {
        flags: ["-p", "-v", "--verbose", "-q", "--quiet", "-a", "--append", "--portability"],
        values: ["-o", "--output", "-f", "--format"],
      });
      if (typeof parsed === "string") return parsed;
      const output = parsed.present.get("-o") ?? parsed.present.get("--output");
      const writes: PathUse[] = output === undefined ? [] : [{ word: output, via: "argument", what: "time -o" }];
      return { inner: parsed.rest, writes };
    },
  },
  env: {
    transparent: true,
    unwrap(args) {
      const parsed = parseOptions("env", args, {
        flags: [
          "-i",
          "--ignore-environment",
          "-0",
          "--null",
          "-v",
          "--debug",
          "--ignore-signal",
          "--default-signal",
          "--block-signal",
        ],
        values: ["-u", "--unset"],
      });
      if (typeof parsed === "string") {
        if (/-C|--chdir|-S|--split-string/.test(parsed)) {
          return "env -C / env -S change how the command is found; run the command directly";
        }
        return parsed;
      }
      const assignments: BashWord[] = [];
      let index = 0;
      for (; index < parsed.rest.length; index++) {
        const word = parsed.rest[index] as BashWord;
        if (word.value === undefined) return "env arguments that are only known at run time";
        if (!ASSIGNMENT_WORD.test(word.value)) break;
        assignments.push(word);
      }
      return { inner: parsed.rest.slice(index), assignments };
    },
  },
  xargs: {
    transparent: true,
    unwrap(args) {
      const optional = /^(?:-[iel]|--replace|--eof)/;
      const flagged = args.filter((arg) => arg.value === undefined || !optional.test(arg.value));
      const parsed = parseOptions("xargs", flagged, {
        flags: ["-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-p", "--interactive", "-x", "--exit"],
        values: [
          "-a",
          "--arg-file",
          "-d",
          "--delimiter",
          "-E",
          "-I",
          "-L",
          "--max-lines",
          "-n",
          "--max-args",
          "-P",
          "--max-procs",
          "-s",
          "--max-chars",
          "--process-slot-var",
        ],
      });
      if (typeof parsed === "string") return parsed;
      const inner = parsed.rest.length === 0 ? [staticWord("echo")] : parsed.rest;
      return { inner, openArgs: true };
    },
  },
  busybox: {
    transparent: true,
    unwrap(args) {
      const first = args[0]?.value;
      if (first === undefined && args.length > 0) return "busybox applet only known at run time";
      if (first === undefined || first.startsWith("-")) return { inner: [] };
      return { inner: args };
    },
  },
  ionice: simpleWrapper("ionice", {
    flags: ["-t", "--ignore"],
    values: ["-c", "--class", "-n", "--classdata"],
  }),
  sudo: {
    transparent: false,
    unwrap(args) {
      const parsed = parseOptions("sudo", args, {
        flags: ["-A", "-b", "-E", "-H", "-n", "-P", "-S", "-i", "-s", "-k", "-K", "-l", "-v", "--preserve-env"],
        values: ["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group", "--chdir"],
      });
      if (typeof parsed === "string") return parsed;
      let index = 0;
      while ((parsed.rest[index]?.value ?? "").match(ASSIGNMENT_WORD) !== null) index++;
      return { inner: parsed.rest.slice(index), assignments: parsed.rest.slice(0, index) };
    },
  },
  doas: simpleWrapper("doas", { flags: ["-n", "-s", "-L"], values: ["-u", "-C"] }, false),
  chroot: {
    transparent: false,
    unwrap(args) {
      const parsed = parseOptions("chroot", args, { flags: ["--skip-chdir"], values: ["--userspec", "--groups"] });
      if (typeof parsed === "string") return parsed;
      return { inner: parsed.rest.slice(1) };
    },
  },
};

// ---------------------------------------------------------------------------------------------
// Shells and code-running builtins

const SHELLS: ReadonlySet<string> = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "fish"]);

const INTERPRETERS =
  /^(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|Rscript|osascript|tclsh|awk|gawk|mawk|nawk|pwsh|powershell|jshell|irb)$/;

type ShellInvocation =
  | { readonly kind: "script"; readonly script: BashWord }
  | { readonly kind: "file"; readonly file: BashWord }
  | { readonly kind: "stdin" }
  | { readonly kind: "problem"; readonly reason: string };

const SHELL_LONG_FLAGS: readonly string[] = [
  "--norc",
  "--noprofile",
  "--posix",
  "--login",
  "--noediting",
  "--verbose",
  "--debug",
  "--restricted",
];

/** `bash -xc 'cmd'`, `sh -e -c 'cmd' arg0`, `bash script.sh`, `sh` reading stdin. */
function parseShellInvocation(program: string, args: readonly BashWord[]): ShellInvocation {
  let commandMode = false;
  let readsStdin = false;
  let index = 0;
  for (; index < args.length; index++) {
    const value = (args[index] as BashWord).value;
    if (value === undefined) return { kind: "problem", reason: `${program} options only known at run time` };
    if (value === "--" || value === "-") {
      index++;
      break;
    }
    if (SHELL_LONG_FLAGS.includes(value)) continue;
    if (value === "--rcfile" || value === "--init-file") {
      index++;
      continue;
    }
    if (value.startsWith("--")) return { kind: "problem", reason: `the ${program} option ${value} is not understood` };
    if (!/^[-+][A-Za-z]+$/.test(value)) break;
    if (value.startsWith("-") && value.includes("c")) commandMode = true;
    if (value.startsWith("-") && value.includes("s")) readsStdin = true;
    if (value.includes("o") || value.includes("O")) index++;
  }
  const rest = args.slice(index);
  if (commandMode) {
    const script = rest[0];
    if (script === undefined) return { kind: "problem", reason: `${program} -c without a command string` };
    return { kind: "script", script };
  }
  if (rest.length > 0 && !readsStdin) return { kind: "file", file: rest[0] as BashWord };
  return { kind: "stdin" };
}

// ---------------------------------------------------------------------------------------------
// Paths named by arguments

interface PositionalSpec {
  /** Options followed by N value words. */
  readonly values?: Readonly<Record<string, number>>;
}

function positionals(args: readonly BashWord[], spec: PositionalSpec = {}): BashWord[] {
  const found: BashWord[] = [];
  let endOfOptions = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as BashWord;
    const value = arg.value;
    if (endOfOptions || value === undefined || value === "-" || !value.startsWith("-")) {
      found.push(arg);
      continue;
    }
    if (value === "--") {
      endOfOptions = true;
      continue;
    }
    i += spec.values?.[value] ?? 0;
  }
  return found;
}

const shortFlagClusters = (values: readonly string[]): string =>
  values.filter((value) => /^-[A-Za-z0-9]+$/.test(value)).map((value) => value.slice(1)).join("");

const hasLongOption = (values: readonly string[], names: readonly string[]): boolean =>
  values.some((value) => names.some((name) => value === name || value.startsWith(`${name}=`)));

/** Files a writing command changes, by program (best effort; the container layer backs it up). */
function writtenPaths(program: string, args: readonly BashWord[]): BashWord[] {
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
      if (targetIndex !== -1 && args[targetIndex + 1] !== undefined) return [args[targetIndex + 1] as BashWord];
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

// ---------------------------------------------------------------------------------------------
// Read-only proofs

type PathArgs = "none" | "positionals" | "after-pattern" | "find" | "sed";

interface ReadOnlySpec {
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
    const words = positionals(args.map((value) => staticWord(value)), { values });
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
const GIT_BLOCKED_OPTIONS: readonly string[] = ["--output", "--ext-diff", "--no-index", "--open-files-in-pager"];

function listingOnly(sub: string, rest: readonly string[], writeFlags: string, writeLong: readonly string[]): string | undefined {
  if (/[A-Za-z]/.test(shortFlagClusters(rest).replace(new RegExp(`[^${writeFlags}]`, "g"), ""))) {
    return `git ${sub} with these options changes the repository`;
  }
  if (hasLongOption(rest, writeLong)) return `git ${sub} with these options changes the repository`;
  const listing = rest.includes("-l") || rest.includes("--list");
  const named = positionals(rest.map((value) => staticWord(value)), {
    values: { "--contains": 1, "--no-contains": 1, "--merged": 1, "--no-merged": 1, "--points-at": 1, "--sort": 1, "--format": 1 },
  });
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
      return first === undefined || first === "-v" || first === "--verbose" || first === "get-url" || first === "show"
        ? undefined
        : `git remote ${first} changes the repository configuration`;
    case "config": {
      const reads = ["--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch", "--get-color", "--get-colorbool"];
      const readsConfig = rest.some((value) => reads.includes(value)) || first === "get" || first === "list";
      const writes = ["--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "--edit", "-e"];
      return readsConfig && !rest.some((value) => writes.includes(value)) ? undefined : "git config can change configuration";
    }
    case "stash":
    case "worktree":
    case "notes":
      return first === "list" || (first === "show" && sub !== "worktree") || (first === undefined && sub === "notes")
        ? undefined
        : `git ${sub} ${first ?? ""} changes the repository`.trim();
    case "reflog":
      return first === undefined || first === "show" || first.startsWith("-") ? undefined : `git reflog ${first} rewrites the reflog`;
    case "submodule":
      return first === undefined || first === "status" ? undefined : `git submodule ${first} changes the repository`;
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
    if (value === "-f" || value.startsWith("--file")) return fail("sed -f runs a script file agent-ci cannot check");
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

/**
 * Why a sed script writes files or runs commands (`w`, `W`, `e`, `s///w`, `s///e`), or undefined.
 * Anything the scanner does not recognise counts as unsafe.
 */
export function sedScriptProblem(script: string): string | undefined {
  let i = 0;
  const skip = (pattern: RegExp): void => {
    while (i < script.length && pattern.test(script[i] as string)) i++;
  };
  const address = (): boolean => {
    const char = script[i];
    if (char === undefined) return true;
    if (/[0-9]/.test(char)) {
      skip(/[0-9~]/);
      return true;
    }
    if (char === "$") {
      i++;
      return true;
    }
    if (char === "/" || char === "\\") {
      const delimiter = char === "\\" ? script[i + 1] : "/";
      if (delimiter === undefined) return false;
      const end = skipDelimited(script, i + (char === "\\" ? 2 : 1), delimiter, true);
      if (end === -1) return false;
      i = end;
      skip(/[IM]/);
    }
    return true;
  };
  while (i < script.length) {
    skip(/[\s;]/);
    if (i >= script.length) break;
    if (!address()) return "sed script not understood";
    if (script[i] === ",") {
      i++;
      if (script[i] === "+" || script[i] === "~") i++;
      if (!address()) return "sed script not understood";
    }
    skip(/[\s!]/);
    const command = script[i++];
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
        continue;
      case "q":
      case "Q":
      case "l":
      case "L":
        skip(/[\s0-9]/);
        continue;
      case "#":
      case ":":
      case "b":
      case "t":
      case "T":
      case "v":
      case "r":
      case "R":
        skip(command === "#" || command === "r" || command === "R" ? /[^\n]/ : /[^;\n}]/);
        continue;
      case "a":
      case "i":
      case "c":
        while (i < script.length && !(script[i] === "\n" && script[i - 1] !== "\\")) i++;
        continue;
      case "y":
      case "s": {
        const delimiter = script[i];
        if (delimiter === undefined || delimiter === "\\" || delimiter === "\n") return "sed script not understood";
        const middle = skipDelimited(script, i + 1, delimiter, command === "s");
        const end = middle === -1 ? -1 : skipDelimited(script, middle, delimiter, false);
        if (end === -1) return "sed script not understood";
        i = end;
        if (command === "y") continue;
        const flagsStart = i;
        skip(/[A-Za-z0-9]/);
        const flags = script.slice(flagsStart, i);
        if (flags.includes("e")) return "sed s///e runs the result as a shell command";
        if (flags.includes("w")) return "sed s///w writes a file";
        continue;
      }
      case "w":
      case "W":
        return "the sed w command writes a file";
      case "e":
        return "the sed e command runs a shell command";
      default:
        return `sed command ${JSON.stringify(command)} is not on the read-only list`;
    }
  }
  return undefined;
}

const GREP_VALUES = { "-e": 1, "-f": 1, "-m": 1, "-A": 1, "-B": 1, "-C": 1, "-d": 1, "-D": 1, "--regexp": 1, "--file": 1 };
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
const READ_ONLY_COMMANDS: Readonly<Record<string, ReadOnlySpec>> = {
  ls: filesWith({ "-I": 1, "--ignore": 1, "-w": 1, "-T": 1 }),
  cat: FILES,
  head: filesWith({ "-n": 1, "-c": 1 }),
  tail: filesWith({ "-n": 1, "-c": 1, "-s": 1, "--pid": 1 }),
  wc: FILES,
  nl: filesWith({ "-b": 1, "-d": 1, "-f": 1, "-h": 1, "-i": 1, "-l": 1, "-n": 1, "-s": 1, "-v": 1, "-w": 1 }),
  od: filesWith({ "-A": 1, "-j": 1, "-N": 1, "-t": 1, "-w": 1 }),
  hexdump: filesWith({ "-n": 1, "-s": 1, "-e": 1, "-f": 1 }),
  xxd: filesWith({ "-c": 1, "-g": 1, "-l": 1, "-s": 1, "-o": 1 }, atMostOnePositional("xxd", { "-c": 1, "-g": 1, "-l": 1, "-s": 1, "-o": 1 })),
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
    values.includes("-C") || values.includes("--compile") ? "file -C writes a compiled magic file" : undefined,
  ),
  du: filesWith({ "-d": 1, "-B": 1, "-t": 1, "--exclude": 1 }),
  df: filesWith({ "-B": 1, "-t": 1, "-x": 1 }),
  tree: filesWith({ "-L": 1, "-P": 1, "-I": 1, "--filelimit": 1 }, (values) =>
    values.includes("-o") || values.includes("-R") || hasLongOption(values, ["--output"]) ? "tree -o/-R writes files" : undefined,
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
    check: (values) => (hasLongOption(values, ["--pre"]) ? "rg --pre runs a program on every file" : undefined),
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
      return blocked === undefined ? undefined : `find ${blocked} ${blocked === "-delete" ? "deletes files" : "runs commands or writes files"}`;
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
      values.some((value) => value === "-s" || value.startsWith("--set") || (!value.startsWith("-") && !value.startsWith("+")))
        ? "date -s sets the clock"
        : undefined,
  },
  hostname: {
    paths: "none",
    check: (values) => (values.some((value) => !value.startsWith("-")) ? "hostname NAME sets the host name" : undefined),
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

function pathArguments(spec: ReadOnlySpec, args: readonly BashWord[]): BashWord[] {
  switch (spec.paths) {
    case "none":
      return [];
    case "positionals":
      return positionals(args, { values: spec.values ?? {} });
    case "after-pattern": {
      const found = positionals(args, { values: spec.values ?? {} });
      const patternGiven = args.some((arg) =>
        (spec.patternOptions ?? []).some((option) => arg.value === option || arg.value?.startsWith(`${option}=`) === true),
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
function readOnlyProof(program: string, name: BashWord, args: readonly BashWord[], openArgs: boolean): ReadOnlyProof {
  const written = name.value ?? "";
  if (written.includes("/") && !SYSTEM_BINARY.test(written)) {
    return { proven: false, reason: `${written} is a program from the workspace, not a known read-only command` };
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
        parseSedInvocation(values).scripts.map(sedScriptProblem).find((reason) => reason !== undefined))
      : spec.check?.(values);
  if (problem !== undefined) return { proven: false, reason: problem };
  const paths = pathArguments(spec, args).map((word): PathUse => ({ word, via: "argument", what: `${program} argument` }));
  return { proven: true, paths };
}

// ---------------------------------------------------------------------------------------------
// Putting one command together

class FactsBuilder {
  readonly views: CommandView[] = [];
  readonly writes: PathUse[] = [];
  readonly reads: PathUse[] = [];
  readonly recursiveReads: PathUse[] = [];
  readonly problems: string[] = [];
  readonly scripts: string[] = [];
  readonly notReadOnly: string[] = [];
  readonly readOnlyPaths: PathUse[] = [];
  cd: CdEffect | undefined;

  constructor(private readonly stdinBody: string | undefined) {}

  /**
   * Dangerous variables are problems. Unknown ones only matter for the command they are set for
   * (`FOO=1 cmd`, `env FOO=1 cmd`): a plain `FOO=1` or `local FOO=1` changes a shell variable only.
   */
  assignments(words: readonly BashWord[] | readonly BashAssignment[], forCommand: boolean): "clean" | "unknown" {
    let unknown = false;
    for (const item of words) {
      const name = "name" in item ? item.name : ((item.value ?? "").split("=")[0] ?? "");
      const kind = classifyVariable(name);
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
      this.problems.push(`the command name ${JSON.stringify(name.value)} contains non-ASCII or invisible characters`);
      return;
    }
    const program = basename(name.value);
    const args = argv.slice(1);
    const wrapper = WRAPPERS[program];
    if (wrapper !== undefined) {
      this.wrapper(program, wrapper, argv, openArgs, depth);
      return;
    }
    this.leaf(program, name, argv, openArgs, depth);
    this.reads.push(...args.map((word): PathUse => ({ word, via: "argument", what: `${program} argument` })));
    this.writes.push(...writtenPaths(program, args).map((word): PathUse => ({ word, via: "argument", what: `${program} argument` })));
  }

  private wrapper(program: string, wrapper: Wrapper, argv: readonly BashWord[], openArgs: boolean, depth: number): void {
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

  private leaf(program: string, name: BashWord, argv: readonly BashWord[], openArgs: boolean, depth: number): void {
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
    if (program === "find") this.findExec(args, depth);
    if (program === "git") this.gitGlobals(name, args);
    if (program === "grep" || program === "egrep" || program === "fgrep" || program === "rg") this.recursive(program, args);
    if (program === "cd" || program === "pushd" || program === "popd") this.changeDirectory(program, args, openArgs);
    this.proveReadOnly(program, argv, openArgs);
  }

  private proveReadOnly(program: string, argv: readonly BashWord[], openArgs: boolean): void {
    const proof = readOnlyProof(program, argv[0] as BashWord, argv.slice(1), openArgs);
    if (proof.proven) this.readOnlyPaths.push(...proof.paths);
    else this.notReadOnly.push(proof.reason);
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
        this.views.push({ argv, role: "check", openArgs });
        this.notReadOnly.push(`${program} runs commands it reads from standard input`);
    }
  }

  private trap(argv: readonly BashWord[], openArgs: boolean): void {
    const [action] = argv.slice(1);
    this.views.push({ argv, role: "transparent", openArgs });
    if (action === undefined || action.value === "-l" || action.value === "-p" || action.value === "-") return;
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
      index += ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"].includes(value) ? 2 : 1;
    }
    if (index > 0 && index < args.length) this.views.push({ argv: [name, ...args.slice(index)], role: "deny-only", openArgs: false });
  }

  private recursive(program: string, args: readonly BashWord[]): void {
    const values = args.map((arg) => arg.value ?? "");
    const recursive =
      program === "rg" ||
      /[rR]/.test(shortFlagClusters(values)) ||
      hasLongOption(values, ["--recursive", "--dereference-recursive"]) ||
      values.some((value, index) => value === "--directories=recurse" || (value === "-d" && values[index + 1] === "recurse"));
    if (!recursive) return;
    const spec = READ_ONLY_COMMANDS[program] as ReadOnlySpec;
    const dirs = pathArguments(spec, args);
    const targets = dirs.length === 0 ? [staticWord(".")] : dirs;
    this.recursiveReads.push(...targets.map((word): PathUse => ({ word, via: "argument", what: `${program} recursive search` })));
  }

  private changeDirectory(program: string, args: readonly BashWord[], openArgs: boolean): void {
    const [target] = positionals(args);
    if (program === "popd" || openArgs || (target !== undefined && target.value === undefined) || target?.value === "-") {
      this.cd = { target: undefined };
      return;
    }
    this.cd = { target: target?.value ?? "~" };
  }
}

/** The facts about one simple command that the evaluator decides on. */
export function interpretCommand(raw: RawCommand): CommandFacts {
  const builder = new FactsBuilder(raw.stdin?.body);
  const prefix = builder.assignments(raw.assignments, raw.kind === "command");
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
  if (raw.kind === "command" && raw.words.length > 0) {
    if (prefix === "unknown") {
      // `FOO=1 npm test` is admitted only by a rule that spells FOO=1 out (Claude Code does the same).
      const assignmentWords = raw.assignments.map((assignment): BashWord => ({
        value: assignment.value?.value === undefined ? undefined : `${assignment.name}=${assignment.value.value}`,
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
        : { proven: true, paths: builder.readOnlyPaths };
  return {
    text: raw.text,
    views: builder.views,
    writes: builder.writes,
    reads: builder.reads,
    recursiveReads: builder.recursiveReads,
    readOnly,
    problems: builder.problems,
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
  if (flags.includes("i")) builder.problems.push(`${keyword.value} -i makes assignments arithmetic, which can run commands`);
  if (flags.includes("n")) builder.problems.push(`${keyword.value} -n creates a reference that can change any variable`);
  if (args.some((arg) => arg.value === undefined)) builder.problems.push(`${keyword.value} of names only known at run time`);
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
