/**
 * Claude Code Bash rule specifiers (`npm test`, `npm run test:*`, `git diff *`) compiled into
 * matchers over a simple command's argv after the shell has unquoted it.
 *
 * Matching is token-wise: argv elements are joined with NUL, which no bash word can contain, so
 * `rm "a b"` never matches `Bash(rm a b)` and a quoted argument cannot fake a word boundary. A word the
 * shell computes at run time (`$X`, `$(…)`) is the DYNAMIC_ARG sentinel, which a `*` covers and no
 * literal does. Allow rules need a definite match; deny rules also catch commands that *could* match
 * once the dynamic words are known, and they compare flag sets rather than flag spelling (R8).
 */

import { basename } from "./bash-args.js";

export const ARG_SEPARATOR = "\u0000";
export const DYNAMIC_ARG = "\u0001";

/** One argv element: its value after unquoting, or `undefined` when only known at run time. */
export type ArgValue = string | undefined;

type PatternPart = { readonly kind: "literal"; readonly text: string } | { readonly kind: "star" };
type PatternToken = readonly PatternPart[];

export interface SemanticPattern {
  readonly program: string;
  readonly positionals: readonly string[];
  readonly flags: ReadonlySet<string>;
  /** A trailing `:*` or ` *`: more arguments may follow. */
  readonly open: boolean;
}

export interface BashPattern {
  readonly form: "any" | "exact" | "prefix" | "wildcard";
  readonly regex: RegExp;
  /** Literal matching-string text before the first wildcard. */
  readonly head: string;
  readonly hasWildcard: boolean;
  /** `X:*` and `X *`: X alone matches too, and anything after a word boundary. */
  readonly optionalTail: boolean;
  /** Literal tokens when the specifier has no inner wildcard (used by R8 flag semantics). */
  readonly semantic: SemanticPattern | undefined;
}

const STAR_REGEX = "[\\s\\S]*";
const SEPARATOR_REGEX = "\\u0000";

/** Splits a specifier into shell-like words, keeping unquoted `*` as wildcards. */
function tokenizeSpecifier(spec: string): PatternToken[] {
  const tokens: PatternToken[] = [];
  let parts: PatternPart[] = [];
  let literal = "";
  let inToken = false;
  const flushLiteral = (): void => {
    if (literal !== "") parts.push({ kind: "literal", text: literal });
    literal = "";
  };
  const flushToken = (): void => {
    flushLiteral();
    if (inToken) tokens.push(parts);
    parts = [];
    inToken = false;
  };
  for (let i = 0; i < spec.length; i++) {
    const char = spec[i] as string;
    if (char === " " || char === "\t") {
      flushToken();
      continue;
    }
    inToken = true;
    if (char === "'") {
      const end = spec.indexOf("'", i + 1);
      if (end === -1) throw new Error("unbalanced single quote");
      literal += spec.slice(i + 1, end);
      i = end;
      continue;
    }
    if (char === '"') {
      let j = i + 1;
      for (; j < spec.length && spec[j] !== '"'; j++) {
        const next = spec[j + 1];
        if (spec[j] === "\\" && next !== undefined && '"\\$`'.includes(next)) {
          literal += next;
          j++;
          continue;
        }
        literal += spec[j];
      }
      if (j >= spec.length) throw new Error("unbalanced double quote");
      i = j;
      continue;
    }
    if (char === "\\") {
      const next = spec[i + 1];
      if (next === undefined) throw new Error("trailing backslash");
      literal += next;
      i++;
      continue;
    }
    if (char === "*") {
      flushLiteral();
      parts.push({ kind: "star" });
      continue;
    }
    literal += char;
  }
  flushToken();
  return tokens;
}

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function tokenRegex(token: PatternToken): string {
  return token.map((part) => (part.kind === "star" ? STAR_REGEX : escapeRegex(part.text))).join("");
}

function literalToken(token: PatternToken): string | undefined {
  if (token.some((part) => part.kind === "star")) return undefined;
  return token.map((part) => (part.kind === "literal" ? part.text : "")).join("");
}

function headOf(tokens: readonly PatternToken[]): string {
  let head = "";
  for (const [index, token] of tokens.entries()) {
    if (index > 0) head += ARG_SEPARATOR;
    for (const part of token) {
      if (part.kind === "star") return head;
      head += part.text;
    }
  }
  return head;
}

/**
 * Compiles a Bash rule specifier. Throws an Error whose message is the reason when the specifier is
 * malformed; `parseRule` turns it into a PolicyConfigError naming the rule.
 */
export function compileBashPattern(spec: string): BashPattern {
  const trimmed = spec.trim();
  if (trimmed === "*") {
    return {
      form: "any",
      regex: /^[\s\S]*$/,
      head: "",
      hasWildcard: true,
      optionalTail: false,
      semantic: undefined,
    };
  }
  const legacy = trimmed.endsWith(":*");
  const body = legacy ? trimmed.slice(0, -2).trimEnd() : trimmed;
  if (body.includes(":*"))
    throw new Error("`:*` is only valid at the end of a Bash rule (legacy prefix form)");
  if (body.includes("**")) throw new Error("`**` is path-glob syntax; Bash rules match commands, not paths");
  const tokens = tokenizeSpecifier(body);
  if (tokens.length === 0) throw new Error("empty command pattern");
  const starCount = tokens.flat().filter((part) => part.kind === "star").length;
  if (legacy && starCount > 0) throw new Error("a legacy `:*` prefix rule cannot also contain `*` wildcards");

  if (legacy) {
    const base = tokens.map(tokenRegex).join(SEPARATOR_REGEX);
    return {
      form: "prefix",
      regex: new RegExp(`^${base}(?:${SEPARATOR_REGEX}${STAR_REGEX})?$`),
      head: headOf(tokens),
      hasWildcard: true,
      optionalTail: true,
      semantic: semanticOf(tokens, true),
    };
  }
  if (starCount === 0) {
    return {
      form: "exact",
      regex: new RegExp(`^${tokens.map(tokenRegex).join(SEPARATOR_REGEX)}$`),
      head: headOf(tokens),
      hasWildcard: false,
      optionalTail: false,
      semantic: semanticOf(tokens, false),
    };
  }
  // Claude Code: `Bash(ls *)` also matches `ls` alone, when that trailing word is the only wildcard.
  const last = tokens[tokens.length - 1] as PatternToken;
  const trailingOnly = tokens.length > 1 && starCount === 1 && last.length === 1 && last[0]?.kind === "star";
  if (trailingOnly) {
    const leading = tokens.slice(0, -1);
    return {
      form: "wildcard",
      regex: new RegExp(
        `^${leading.map(tokenRegex).join(SEPARATOR_REGEX)}(?:${SEPARATOR_REGEX}${STAR_REGEX})?$`,
      ),
      head: headOf(leading),
      hasWildcard: true,
      optionalTail: true,
      semantic: semanticOf(leading, true),
    };
  }
  return {
    form: "wildcard",
    regex: new RegExp(`^${tokens.map(tokenRegex).join(SEPARATOR_REGEX)}$`),
    head: headOf(tokens),
    hasWildcard: true,
    optionalTail: false,
    semantic: undefined,
  };
}

/** The string a pattern's regex is run against. */
export function matchingString(argv: readonly ArgValue[]): string {
  return argv.map((arg) => (arg === undefined ? DYNAMIC_ARG : arg)).join(ARG_SEPARATOR);
}

/** Allow semantics: the argv as it is definitely matches. */
export function patternMatches(pattern: BashPattern, argv: readonly ArgValue[]): boolean {
  return pattern.regex.test(matchingString(argv));
}

/**
 * Deny semantics: the argv matches, or could match once its dynamic words are known, or matches the
 * rule's program and flag set when flags are spelled differently (`rm -fr` for `rm -rf:*`).
 */
export function patternMayMatch(pattern: BashPattern, argv: readonly ArgValue[]): boolean {
  if (patternMatches(pattern, argv)) return true;
  const firstDynamic = argv.indexOf(undefined);
  if (firstDynamic !== -1 && isViablePrefix(pattern, argv.slice(0, firstDynamic))) return true;
  return pattern.semantic !== undefined && semanticMatches(pattern.semantic, argv);
}

function isViablePrefix(pattern: BashPattern, known: readonly ArgValue[]): boolean {
  const prefix = known.length === 0 ? "" : matchingString(known) + ARG_SEPARATOR;
  if (pattern.head.startsWith(prefix)) return true;
  if (!pattern.hasWildcard) return false;
  if (pattern.optionalTail) return prefix.startsWith(pattern.head + ARG_SEPARATOR);
  return prefix.startsWith(pattern.head);
}

/**
 * Long spellings and synonyms of the flags deny rules are usually written with. Anything not listed
 * is compared as spelled — the documented limit of R8.
 */
const FLAG_ALIASES: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  rm: { "--recursive": ["-r"], "-R": ["-r"], "--force": ["-f"], "--dir": ["-d"], "--verbose": ["-v"] },
  cp: {
    "--recursive": ["-r"],
    "-R": ["-r"],
    "--force": ["-f"],
    "-a": ["-a", "-r"],
    "--archive": ["-a", "-r"],
  },
  mv: { "--force": ["-f"] },
  ln: { "--symbolic": ["-s"], "--force": ["-f"] },
  chmod: { "--recursive": ["-R"] },
  chown: { "--recursive": ["-R"] },
  chgrp: { "--recursive": ["-R"] },
  git: { "--force": ["-f"], "--force-with-lease": ["-f"], "--force-if-includes": ["-f"], "--delete": ["-d"] },
};

interface NormalizedArgs {
  readonly positionals: readonly string[];
  readonly flags: ReadonlySet<string>;
  readonly dynamic: boolean;
}

function normalizeArgs(program: string, args: readonly ArgValue[]): NormalizedArgs {
  const aliases = FLAG_ALIASES[program] ?? {};
  const positionals: string[] = [];
  const flags = new Set<string>();
  const addFlag = (flag: string): void => {
    for (const name of aliases[flag] ?? [flag]) flags.add(name);
  };
  let endOfOptions = false;
  for (const arg of args) {
    if (arg === undefined) return { positionals, flags, dynamic: true };
    if (endOfOptions || arg === "-" || !arg.startsWith("-")) {
      positionals.push(arg);
      continue;
    }
    if (arg === "--") {
      endOfOptions = true;
      continue;
    }
    if (arg.startsWith("--")) {
      addFlag(arg.split("=")[0] as string);
      continue;
    }
    if (/^-[A-Za-z]+$/.test(arg)) {
      for (const letter of arg.slice(1)) addFlag(`-${letter}`);
      continue;
    }
    addFlag(arg);
  }
  return { positionals, flags, dynamic: false };
}

function semanticOf(tokens: readonly PatternToken[], open: boolean): SemanticPattern | undefined {
  const literals = tokens.map(literalToken);
  if (literals.some((value) => value === undefined)) return undefined;
  const [program, ...args] = literals as string[];
  if (program === undefined || !args.some((arg) => arg.startsWith("-") && arg !== "-" && arg !== "--")) {
    return undefined;
  }
  const normalized = normalizeArgs(program, args);
  return { program, positionals: normalized.positionals, flags: normalized.flags, open };
}

function semanticMatches(pattern: SemanticPattern, argv: readonly ArgValue[]): boolean {
  const [name, ...args] = argv;
  if (name === undefined || (name !== pattern.program && basename(name) !== pattern.program)) return false;
  const command = normalizeArgs(pattern.program, args);
  if (command.dynamic) {
    // Unknown words could supply any flag: deny while the known words are compatible.
    const shared = Math.min(command.positionals.length, pattern.positionals.length);
    return command.positionals.slice(0, shared).every((value, index) => value === pattern.positionals[index]);
  }
  const flagsCovered = [...pattern.flags].every((flag) => command.flags.has(flag));
  if (!flagsCovered) return false;
  if (pattern.open) {
    return pattern.positionals.every((value, index) => command.positionals[index] === value);
  }
  return (
    command.positionals.length === pattern.positionals.length &&
    pattern.positionals.every((value, index) => command.positionals[index] === value) &&
    command.flags.size === pattern.flags.size
  );
}
