/**
 * Small helpers for reading a command's arguments the way its program does: option parsing with
 * attached and separate values, positional arguments, short-flag clusters.
 */
import type { BashWord } from "./bash-script.js";

export const basename = (name: string): string => name.slice(name.lastIndexOf("/") + 1);

export const staticWord = (value: string, text = value): BashWord => ({ value, text, glob: false });

export interface OptionSpec {
  /** Options without a value. A name ending in `=` is matched as a prefix (`--signal=…`). */
  readonly flags?: readonly string[];
  /** Options taking the next word as value (or an attached `-s9` / `--signal=9`). */
  readonly values?: readonly string[];
}

export interface ParsedOptions {
  readonly rest: readonly BashWord[];
  readonly present: ReadonlyMap<string, BashWord | undefined>;
}

export function parseOptions(
  program: string,
  args: readonly BashWord[],
  spec: OptionSpec,
): ParsedOptions | string {
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

export interface PositionalSpec {
  /** Options followed by N value words. */
  readonly values?: Readonly<Record<string, number>>;
}

export function positionals(args: readonly BashWord[], spec: PositionalSpec = {}): BashWord[] {
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

export const shortFlagClusters = (values: readonly string[]): string =>
  values
    .filter((value) => /^-[A-Za-z0-9]+$/.test(value))
    .map((value) => value.slice(1))
    .join("");

export const hasLongOption = (values: readonly string[], names: readonly string[]): boolean =>
  values.some((value) => names.some((name) => value === name || value.startsWith(`${name}=`)));
