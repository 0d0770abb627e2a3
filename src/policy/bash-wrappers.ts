/**
 * Commands that run other commands: wrappers to see through (`timeout`, `env`, `xargs`, `sudo`, …),
 * shells whose `-c` string or stdin is parsed again, and interpreters that run arbitrary code.
 */
import type { BashWord } from "./bash-script.js";
import { parseOptions, staticWord, type OptionSpec } from "./bash-args.js";
import type { PathUse } from "./bash-commands.js";

export interface Unwrapped {
  /** The command the wrapper runs; empty when it runs none (`env` alone prints). */
  readonly inner: readonly BashWord[];
  readonly openArgs?: boolean;
  readonly writes?: readonly PathUse[];
  readonly assignments?: readonly BashWord[];
}

export interface Wrapper {
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

export const ASSIGNMENT_WORD = /^[A-Za-z_][A-Za-z0-9_]*=/;

export const WRAPPERS: Readonly<Record<string, Wrapper>> = {
  // tree-sitter reads the second `!` of `! ! cmd` as a command name; bash negates twice and runs cmd.
  // Words after it that look like assignments are assignments to bash (`! ! LD_PRELOAD=x cmd`).
  "!": {
    transparent: true,
    unwrap(args) {
      let i = 0;
      while (i < args.length && ASSIGNMENT_WORD.test(args[i]?.text ?? "")) i++;
      return { inner: args.slice(i), assignments: args.slice(0, i) };
    },
  },
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
      const writes: PathUse[] =
        output === undefined ? [] : [{ word: output, via: "argument", what: "time -o" }];
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
        flags: [
          "-0",
          "--null",
          "-r",
          "--no-run-if-empty",
          "-t",
          "--verbose",
          "-p",
          "--interactive",
          "-x",
          "--exit",
        ],
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
        flags: [
          "-A",
          "-b",
          "-E",
          "-H",
          "-n",
          "-P",
          "-S",
          "-i",
          "-s",
          "-k",
          "-K",
          "-l",
          "-v",
          "--preserve-env",
        ],
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
      const parsed = parseOptions("chroot", args, {
        flags: ["--skip-chdir"],
        values: ["--userspec", "--groups"],
      });
      if (typeof parsed === "string") return parsed;
      return { inner: parsed.rest.slice(1) };
    },
  },
};

export const SHELLS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "ash",
  "yash",
  "posh",
  "fish",
]);

export const INTERPRETERS =
  /^(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|Rscript|osascript|tclsh|awk|gawk|mawk|nawk|pwsh|powershell|jshell|irb)$/;

export type ShellInvocation =
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
export function parseShellInvocation(program: string, args: readonly BashWord[]): ShellInvocation {
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
    if (value.startsWith("--"))
      return { kind: "problem", reason: `the ${program} option ${value} is not understood` };
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
