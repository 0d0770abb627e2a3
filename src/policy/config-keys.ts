// The keys of a configuration object (a settings file, its `permissions`, an MCP server, an agent's front
// matter), checked against what agent-ci reads and what Claude Code documents. A key agent-ci does not know
// that lies within two edits of one it reads (`permisions`, `alow`, `defaultmode`) is a misspelling whose
// silent loss would change the run (a deny rule gone), so it is a configuration error naming the key and
// the one it resembles. A key Claude Code documents that agent-ci does not read, and any other key (Claude
// Code's newer ones among them), is listed for the log and the report, and the run goes on.
import type { IgnoredConfig } from "./workspace-trust.js";

/**
 * At most this many edits (case aside) from a key agent-ci reads, a key is a misspelling of it; one edit for a
 * key of three characters or fewer, where two would change most of it (`all` and `api` are not `ask`).
 */
export const RESEMBLANCE_EDITS = 2;
const SHORT_KEY_CHARS = 3;

/**
 * Damerau–Levenshtein distance in its optimal-string-alignment form, ignoring case: insertions, deletions,
 * substitutions and swaps of two neighbours (`dney` → `deny`) each count one. It costs the product of the two
 * lengths; `resembles` measures a key only against known keys (short) of about its own length.
 */
export function keyDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  let twoBack: number[] = [];
  let back = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const row = [i];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let d = Math.min((back[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (back[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        d = Math.min(d, (twoBack[j - 2] ?? 0) + 1);
      row.push(d);
    }
    twoBack = back;
    back = row;
  }
  return back[t.length] ?? 0;
}

/** The first of `known` that `key` is a misspelling of (RESEMBLANCE_EDITS, case aside); undefined if none. */
export function resembles(key: string, known: readonly string[]): string | undefined {
  return known.find((k) => {
    const edits = k.length <= SHORT_KEY_CHARS ? 1 : RESEMBLANCE_EDITS;
    return Math.abs(k.length - key.length) <= edits && keyDistance(key, k) <= edits;
  });
}

/** What agent-ci knows of one kind of object. */
export interface KeyRules {
  /** Where the object sits, for messages: "" for the top level, else e.g. `permissions`, `MCP server "fs"`. */
  where: string;
  /** The keys agent-ci reads (its schema's): a key within RESEMBLANCE_EDITS of one is a misspelling. */
  read: readonly string[];
  /** Keys taken without a word and never a misspelling's target: nothing in the run depends on them. */
  accepted?: readonly string[];
  /** The keys Claude Code documents for it; those agent-ci reads may be among them. */
  documented: readonly string[];
  /**
   * Documented keys agent-ci refuses rather than ignores, with why: those that narrow what the agent may
   * do, which agent-ci cannot honour (running without them would give the agent more than was written).
   */
  refused?: Readonly<Record<string, string>>;
}

/** A key agent-ci will not run with. */
export interface KeyProblem {
  key: string;
  reason: string;
}

export interface KeyCheck {
  /** Misspellings of keys agent-ci reads, then refused keys: the first is the configuration error. */
  problems: KeyProblem[];
  /** The keys left unused, for the log and the report (IgnoredConfig without its source). */
  ignored: Array<Omit<IgnoredConfig, "source">>;
}

/** Keys named in a message: quoted, control characters escaped, long ones cut. */
const MAX_KEY_CHARS = 80;
const quote = (key: string): string =>
  JSON.stringify(key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key);

/** Keys listed by name in one entry; the rest are counted. */
const MAX_LISTED_KEYS = 20;

function listed(keys: readonly string[], name: (key: string) => string = (key) => key): string {
  const shown = keys.slice(0, MAX_LISTED_KEYS).map(name).join(", ");
  return keys.length > MAX_LISTED_KEYS ? `${shown} and ${keys.length - MAX_LISTED_KEYS} more` : shown;
}

const plural = (n: number, one: string, many: string): string => (n === 1 ? one : many);

/** The message of a misspelt key, one wording wherever it is found. */
export function misspeltKeyReason(key: string, like: string, where: string): string {
  const at = where ? ` in ${where}` : " at the top level";
  return (
    `unknown key ${quote(key)}${at}: did you mean ${quote(like)}? ` +
    "agent-ci stops rather than run without what a misspelt key says (keys are case-sensitive)"
  );
}

/** The object's keys by what agent-ci makes of them (those it reads or accepts are left out). */
function sortKeys(value: object, rules: KeyRules) {
  const known = new Set([...rules.read, ...(rules.accepted ?? [])]);
  const documented = new Set(rules.documented);
  const sorted = {
    misspelt: [] as KeyProblem[],
    refused: [] as string[],
    unused: [] as string[],
    unknown: [] as string[],
  };
  for (const key of Object.keys(value)) {
    if (known.has(key)) continue;
    if (rules.refused && Object.hasOwn(rules.refused, key)) sorted.refused.push(key);
    else if (documented.has(key)) sorted.unused.push(key);
    else {
      const like = resembles(key, rules.read);
      if (like === undefined) sorted.unknown.push(key);
      else sorted.misspelt.push({ key, reason: misspeltKeyReason(key, like, rules.where) });
    }
  }
  return sorted;
}

/**
 * Checks the keys of a parsed object (a non-object has none: its schema says what is wrong with it). Linear in
 * the number of keys: each is compared with the few keys agent-ci reads, and only the listed unknown ones with
 * every documented key (for a hint).
 */
export function checkKeys(value: unknown, rules: KeyRules): KeyCheck {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { problems: [], ignored: [] };
  const { misspelt, refused, unused, unknown } = sortKeys(value, rules);
  const where = rules.where ? ` in ${rules.where}` : "";
  const problems = [
    ...misspelt,
    ...refused.map((key) => ({ key, reason: `${quote(key)}${where}: ${rules.refused?.[key]}` })),
  ];
  const ignored: KeyCheck["ignored"] = [];
  if (unknown.length) {
    const hinted = (key: string) => {
      const like = resembles(key, rules.documented);
      return like === undefined ? quote(key) : `${quote(key)} (like ${like})`;
    };
    const them = plural(unknown.length, "it", "them");
    ignored.push({
      text: listed(unknown, hinted),
      reason: `unknown ${plural(unknown.length, "key", "keys")}${where}, not used: agent-ci does not know ${them} (a newer Claude Code key, or a misspelling)`,
      severity: "warning",
    });
  }
  if (unused.length)
    ignored.push({
      text: listed(unused),
      reason: `Claude Code ${plural(unused.length, "key", "keys")}${where} that agent-ci does not use`,
      severity: "info",
    });
  return { problems, ignored };
}
