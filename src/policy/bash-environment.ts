/**
 * Environment variables on a command line (`FOO=1 cmd`, `env FOO=1 cmd`, `export FOO`): the ones
 * that make programs load or run something else, and the ones known to be harmless.
 */

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
