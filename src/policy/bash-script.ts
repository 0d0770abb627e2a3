/**
 * What a command line is once parsed (the simple commands bash would run, with their words, assignments
 * and redirects, and the problems found), and the checks made on the line before anything parses it.
 */
export const MAX_COMMAND_CHARS = 100_000;
export const MAX_NESTING = 100;

export interface BashWord {
  /** The value after quote removal; `undefined` when bash only knows it at run time. */
  readonly value: string | undefined;
  /** The source text. */
  readonly text: string;
  /** Has unquoted `*`, `?` or `[`: bash may expand it into other names. */
  readonly glob: boolean;
}

export interface BashAssignment {
  readonly name: string;
  readonly value: BashWord | undefined;
  readonly text: string;
}

export type RedirectKind = "write" | "read" | "duplicate";

export interface BashRedirect {
  readonly operator: string;
  readonly kind: RedirectKind;
  readonly target: BashWord | undefined;
  readonly text: string;
}

export interface BashStdin {
  readonly kind: "heredoc" | "herestring";
  /** The text bash feeds to the command, when it is fixed. */
  readonly body: string | undefined;
}

/** `syntax` is `[[ ]]` / `(( ))`; `redirect-only` is a redirect on a group or with no command. */
export type RawCommandKind = "command" | "declaration" | "assignment" | "syntax" | "redirect-only";

export interface RawCommand {
  readonly kind: RawCommandKind;
  readonly text: string;
  readonly assignments: readonly BashAssignment[];
  readonly words: readonly BashWord[];
  readonly redirects: readonly BashRedirect[];
  readonly stdin: BashStdin | undefined;
  /** Inside a loop or function body: it may run repeatedly and after commands written later. */
  readonly repeated: boolean;
}

export interface ScriptProblem {
  readonly reason: string;
  readonly text: string;
}

export interface ParsedScript {
  readonly commands: readonly RawCommand[];
  readonly problems: readonly ScriptProblem[];
  /** The walk stopped at `maxCommands`. */
  readonly truncated: boolean;
}

export interface ParseScriptOptions {
  readonly homeDir: string;
  readonly maxCommands: number;
}

const NAMED_CHARACTERS: Readonly<Record<number, string>> = {
  0x0d: "carriage return",
  0x00: "NUL byte",
  0x1b: "escape character",
  0x7f: "delete character",
  0xa0: "no-break space",
  0xad: "soft hyphen",
  0x200b: "zero-width space",
  0x200c: "zero-width non-joiner",
  0x200d: "zero-width joiner",
  0x2028: "line separator",
  0x2029: "paragraph separator",
  0x202e: "right-to-left override",
  0x2066: "left-to-right isolate",
  0xfeff: "zero-width no-break space (BOM)",
};

/** Control, format (zero-width, bidi), unusual space, private-use and unassigned characters. */
const SUSPICIOUS_CHARACTER = /[\p{Cc}\p{Cf}\p{Zs}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}]/u;

function describeCharacter(codePoint: number): string {
  const hex = `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;
  const name = NAMED_CHARACTERS[codePoint];
  return name === undefined ? hex : `${name} (${hex})`;
}

/**
 * Line-level checks made before parsing: size, invisible or control characters (bash and a reader
 * see different words — R2, R7), and bracket nesting (C15). Any of these denies the line in every
 * mode. Returns the reason, or undefined.
 */
export function lineRejection(source: string): string | undefined {
  if (source.length > MAX_COMMAND_CHARS) {
    return `the command is ${source.length} characters long; agent-ci checks commands up to ${MAX_COMMAND_CHARS} characters`;
  }
  for (const char of source) {
    const codePoint = char.codePointAt(0) as number;
    if (codePoint === 0x09 || codePoint === 0x0a || codePoint === 0x20) continue;
    if (SUSPICIOUS_CHARACTER.test(char)) {
      return `the command contains a ${describeCharacter(codePoint)}, which could make it read differently from how bash runs it`;
    }
  }
  let depth = 0;
  let deepest = 0;
  for (const char of source) {
    if (char === "(" || char === "{" || char === "[") deepest = Math.max(deepest, ++depth);
    else if (char === ")" || char === "}" || char === "]") depth = Math.max(0, depth - 1);
  }
  if (deepest > MAX_NESTING) {
    return `the command nests brackets ${deepest} deep; agent-ci checks up to ${MAX_NESTING} levels`;
  }
  return undefined;
}
