// The one redaction pass: known secret values (and their common encodings) and common token formats become
// `***` in everything written or printed; `scanForSecrets` reports secrets in a patch without removing them.
// Best-effort, as GitHub's masking is: run it on assembled text (whole strings), never on stream chunks.
import type { SecretFinding } from "./schema.js";
import { parseGitDiff } from "./diff-parse.js";

export const REDACTED = "***";
/** Known values shorter than this are not used as patterns (they would blank out ordinary words). */
export const MIN_SECRET_LENGTH = 6;
/** Encoded fragments (misaligned base64) shorter than this are not used. */
const MIN_FRAGMENT_LENGTH = 8;

export interface TokenPattern {
  /** Finding kind, e.g. github_token. */
  kind: string;
  /**
   * Global regex. Either the whole match is the secret, or group 1 is context kept as is and the rest is the
   * secret (`keepPrefix`). Every pattern starts with a literal or a bounded class: no leading lookbehinds, which
   * V8 tries at every position (quadratic on a long base64 blob).
   */
  regex: RegExp;
  keepPrefix?: boolean;
  /** Also reported by scanForSecrets (high-confidence formats only: a finding blocks posting a patch). */
  scan: boolean;
  /**
   * Characters the token goes on with. A pattern's open-ended runs are bounded (at TOKEN_RUN_MAX: V8 keeps a
   * backtrack entry per character, and an unbounded run over megabytes overflows its stack); a match that
   * reaches the bound is extended here, one pass, so a long token is still redacted whole.
   */
  continues?: RegExp;
  /**
   * A literal every match contains. The pattern then runs only on windows around its occurrences, `before`
   * characters before and `after` after: a pattern that would otherwise try a bounded prefix at every
   * position of a long text.
   */
  anchor?: { literal: string; before: number; after: number };
}

/** Longest run an open-ended part of a token pattern matches before `continues` takes over. */
const TOKEN_RUN_MAX = 4096;
const RUN = `{%d,${TOKEN_RUN_MAX}}`;
const run = (min: number) => RUN.replace("%d", String(min));

const B64TOKEN = String.raw`[A-Za-z0-9\-._~+/]`;
const QUOTE = String.raw`\\?["']?`;
const B64_CONTINUES = /[A-Za-z0-9\-._~+/=]/y;

/** Common token formats. No left word boundary: a token right after an ANSI code (`\x1b[0mghp_…`) still matches. */
export const TOKEN_PATTERNS: readonly TokenPattern[] = [
  {
    kind: "private_key",
    regex:
      /-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    scan: true,
  },
  {
    kind: "jwt",
    regex: new RegExp(
      String.raw`eyJ[A-Za-z0-9_-]${run(8)}\.eyJ[A-Za-z0-9_-]${run(8)}\.[A-Za-z0-9_-]${run(0)}`,
      "g",
    ),
    continues: /[A-Za-z0-9_-]/y,
    // Without it, every "eyJ" in a long run of token characters would scan that run for a "." that is not there.
    anchor: { literal: ".eyJ", before: 3 + TOKEN_RUN_MAX, after: 4 + TOKEN_RUN_MAX + 1 + TOKEN_RUN_MAX },
    scan: true,
  },
  { kind: "github_token", regex: /(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,255}/g, scan: true },
  { kind: "github_token", regex: /github_pat_[A-Za-z0-9_]{20,255}/g, scan: true },
  {
    kind: "anthropic_key",
    regex: new RegExp(String.raw`sk-ant-[A-Za-z0-9_-]${run(20)}`, "g"),
    continues: /[A-Za-z0-9_-]/y,
    scan: true,
  },
  { kind: "aws_access_key_id", regex: /(?:AKIA|ASIA)[A-Z0-9]{16}/g, scan: true },
  {
    kind: "aws_secret_access_key",
    // aws_secret_access_key=…, "SecretAccessKey": "…" (STS's JSON), <SecretAccessKey>…</…> (its XML), awsSecretKey.
    regex: new RegExp(
      String.raw`((?:aws_?secret_?(?:access_?)?key|secret_?access_?key)${QUOTE}\s*[:=>]\s*${QUOTE})[A-Za-z0-9/+=]{40}`,
      "gi",
    ),
    keepPrefix: true,
    scan: true,
  },
  {
    kind: "aws_session_token",
    // STS session tokens start with these base64 headers (v2 regional tokens, then the older global ones).
    regex: new RegExp(String.raw`(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdz)[A-Za-z0-9/+=]${run(20)}`, "g"),
    continues: /[A-Za-z0-9/+=]/y,
    scan: true,
  },
  {
    kind: "aws_session_token",
    regex: new RegExp(
      String.raw`((?:aws_?)?session_?token${QUOTE}\s*[:=>]\s*${QUOTE}|x-amz-security-token${QUOTE}\s*[:=]\s*${QUOTE})[A-Za-z0-9/+=]${run(16)}`,
      "gi",
    ),
    keepPrefix: true,
    continues: /[A-Za-z0-9/+=]/y,
    scan: false,
  },
  {
    kind: "google_access_token",
    regex: new RegExp(String.raw`ya29\.[A-Za-z0-9_-]${run(20)}`, "g"),
    continues: /[A-Za-z0-9_.-]/y,
    scan: true,
  },
  {
    kind: "slack_token",
    regex: new RegExp(String.raw`xox[abprs]-[A-Za-z0-9-]${run(10)}`, "g"),
    continues: /[A-Za-z0-9-]/y,
    scan: true,
  },
  { kind: "npm_token", regex: /npm_[A-Za-z0-9]{36}/g, scan: true },
  { kind: "google_api_key", regex: /AIza[0-9A-Za-z_-]{35}/g, scan: true },
  {
    kind: "authorization_header",
    regex: new RegExp(
      String.raw`(authorization${QUOTE}\s*[:=]\s*${QUOTE}(?:bearer|basic|token|bot|digest)\s+)${B64TOKEN}${run(4)}={0,3}`,
      "gi",
    ),
    keepPrefix: true,
    continues: B64_CONTINUES,
    scan: false,
  },
  {
    kind: "bearer_token",
    regex: new RegExp(String.raw`(bearer\s+)(?=${B64TOKEN}${run(0)}\d)${B64TOKEN}${run(16)}={0,3}`, "gi"),
    keepPrefix: true,
    continues: B64_CONTINUES,
    scan: false,
  },
  {
    kind: "api_key_header",
    regex: new RegExp(
      String.raw`((?:x-api-key|x-auth-token|private-token)${QUOTE}\s*[:=]\s*${QUOTE})${B64TOKEN}${run(8)}={0,3}`,
      "gi",
    ),
    keepPrefix: true,
    continues: B64_CONTINUES,
    scan: false,
  },
  {
    kind: "url_credentials",
    regex: /([a-z][a-z0-9+.-]{0,30}:\/\/[^\s:@/"'<>]{0,256}:)[^\s@/"'<>]{3,256}(?=@)/gi,
    keepPrefix: true,
    anchor: { literal: "://", before: 31, after: 3 + 256 + 1 + 256 + 1 },
    scan: false,
  },
];

export interface RedactorOptions {
  /** Known secret values: API key, tokens, values the user marks secret. Empty and short values are ignored. */
  secrets?: readonly (string | null | undefined)[];
}

export interface Redactor {
  /** Replaces every known value (and encoding) and token-shaped string with `***`. */
  redact(text: string): string;
  /**
   * Redacts lines as one text (a private key spread over lines is found) and returns as many lines as it was
   * given: a secret spanning lines becomes `***` on each of them. For numbered views such as a diff.
   */
  redactLines(lines: readonly string[]): string[];
  /** A copy of a JSON-like value with every string (keys too) redacted. */
  redactDeep<T>(value: T): T;
  /** Known values not used as patterns because they were shorter than MIN_SECRET_LENGTH. */
  readonly ignoredShortSecrets: number;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Base64 of `bytes` as it appears inside a longer base64 stream, for each of the three alignments. */
function base64Fragments(bytes: Buffer, encoding: "base64" | "base64url"): string[] {
  return [0, 1, 2].map((prefix) => {
    const encoded = Buffer.concat([Buffer.alloc(prefix), bytes]).toString(encoding);
    const skip = prefix === 0 ? 0 : 4;
    const secretBytesAfterSkip = prefix === 0 ? bytes.length : bytes.length - (3 - prefix);
    return encoded.slice(skip, skip + 4 * Math.floor(Math.max(0, secretBytesAfterSkip) / 3));
  });
}

/** The forms of one known value that are redacted: raw, base64 (aligned or not), URL-encoded, hex, JSON-escaped, reversed. */
export function secretVariants(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const urlEncoded = encodeURIComponent(secret);
  const whole = [
    secret,
    bytes.toString("base64"),
    bytes.toString("base64").replace(/=+$/, ""),
    bytes.toString("base64url"),
    urlEncoded,
    urlEncoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
    bytes.toString("hex"),
    bytes.toString("hex").toUpperCase(),
    JSON.stringify(secret).slice(1, -1),
    [...secret].reverse().join(""),
  ].filter((variant) => variant.length >= MIN_SECRET_LENGTH);
  const fragments = [...base64Fragments(bytes, "base64"), ...base64Fragments(bytes, "base64url")].filter(
    (fragment) => fragment.length >= MIN_FRAGMENT_LENGTH,
  );
  return [...new Set([...whole, ...fragments])];
}

function knownValuesRegex(secrets: readonly string[]): RegExp | undefined {
  const variants = [...new Set(secrets.flatMap(secretVariants))].sort((a, b) => b.length - a.length);
  if (variants.length === 0) return undefined;
  return new RegExp(variants.map(escapeRegExp).join("|"), "g");
}

function usableSecrets(secrets: RedactorOptions["secrets"]): { used: string[]; short: number } {
  const given = [
    ...new Set((secrets ?? []).filter((secret): secret is string => typeof secret === "string")),
  ];
  const nonEmpty = given.filter((secret) => secret.trim().length > 0);
  const used = nonEmpty.filter((secret) => secret.length >= MIN_SECRET_LENGTH);
  return { used, short: nonEmpty.length - used.length };
}

/** The replacement for one secret: `***`, or `***` on each line of a secret that spans lines. */
function replacement(secret: string, keepLines: boolean): string {
  return keepLines
    ? secret
        .split("\n")
        .map(() => REDACTED)
        .join("\n")
    : REDACTED;
}

/** [start, end) of a secret in a text. */
type Range = [number, number];

/**
 * Each token pattern's own copy to search with (a global regex keeps its place in `lastIndex`; a search sets
 * it before each use and runs to the end, so one copy serves every call).
 */
const SEARCHES = TOKEN_PATTERNS.map((pattern) => new RegExp(pattern.regex.source, pattern.regex.flags));

/** Where known values and token formats occur in `text`. */
function secretRanges(text: string, known: RegExp | undefined): Range[] {
  const ranges: Range[] = [];
  if (known)
    for (const match of text.matchAll(known)) ranges.push([match.index, match.index + match[0].length]);
  for (const [i, pattern] of TOKEN_PATTERNS.entries()) {
    const regex = SEARCHES[i]!;
    for (const [offset, part] of searchedParts(text, pattern)) {
      regex.lastIndex = 0;
      for (let match = regex.exec(part); match; match = regex.exec(part)) {
        const skip = pattern.keepPrefix ? (match[1]?.length ?? 0) : 0;
        const start = offset + match.index;
        const end = continuedEnd(text, start + match[0].length, pattern.continues);
        if (match[0].length > skip) ranges.push([start + skip, end]);
        // The search goes on after the whole token, so a long one is scanned once, not again from each bound.
        regex.lastIndex = Math.max(end - offset, match.index + 1);
      }
    }
  }
  return ranges;
}

/**
 * Where a pattern is run: the whole text, or the windows around its anchor's occurrences, overlapping windows
 * merged (so each character is searched once), as [offset, text].
 */
function searchedParts(text: string, pattern: TokenPattern): Array<[number, string]> {
  const anchor = pattern.anchor;
  if (!anchor) return [[0, text]];
  const windows: Range[] = [];
  for (let at = text.indexOf(anchor.literal); at !== -1; at = text.indexOf(anchor.literal, at + 1)) {
    const start = Math.max(0, at - anchor.before);
    const end = Math.min(text.length, at + anchor.after);
    const last = windows.at(-1);
    if (last && start <= last[1]) last[1] = end;
    else windows.push([start, end]);
  }
  return windows.map(([start, end]): [number, string] => [start, text.slice(start, end)]);
}

/** `end`, moved past every following character of the token's kind. */
function continuedEnd(text: string, end: number, continues: RegExp | undefined): number {
  if (!continues) return end;
  let at = end;
  for (;;) {
    continues.lastIndex = at;
    if (!continues.test(text)) return at;
    at += 1;
  }
}

const ANSI_SEQUENCE = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[@-_]/g;

/**
 * Secrets that an ANSI code splits (`ghp_ab\x1b[0mcd…`): found in the text without the codes, then mapped back
 * so that the range covers the codes inside it too. Only used where the text as it is showed nothing (a token
 * format would otherwise run on past a colour code into the next word).
 */
function secretRangesAcrossAnsi(text: string, known: RegExp | undefined): Range[] {
  if (!text.includes("\u001b")) return [];
  // origin[i]: where the stripped text's i-th character is in `text`.
  const origin = new Int32Array(text.length);
  const parts: string[] = [];
  let length = 0;
  let last = 0;
  const keep = (end: number): void => {
    for (let i = last; i < end; i++) origin[length++] = i;
    parts.push(text.slice(last, end));
  };
  for (const match of text.matchAll(ANSI_SEQUENCE)) {
    keep(match.index);
    last = match.index + match[0].length;
  }
  keep(text.length);
  const stripped = parts.join("");
  return secretRanges(stripped, known).map(([start, end]): Range => [
    origin[start] ?? 0,
    (origin[end - 1] ?? 0) + 1,
  ]);
}

function mergeRanges(ranges: Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const merged: Range[] = [];
  for (const [start, end] of sorted) {
    const previous = merged.at(-1);
    if (previous && start <= previous[1]) previous[1] = Math.max(previous[1], end);
    else merged.push([start, end]);
  }
  return merged;
}

/** The ranges of `ranges` that overlap none of `taken` (sorted, disjoint): one sweep over both. */
function withoutOverlaps(ranges: Range[], taken: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const kept: Range[] = [];
  let t = 0;
  for (const range of sorted) {
    while (t < taken.length && taken[t]![1] <= range[0]) t += 1;
    const next = taken[t];
    if (!next || next[0] >= range[1]) kept.push(range);
  }
  return kept;
}

function replaceRanges(text: string, ranges: readonly Range[], keepLines: boolean): string {
  if (ranges.length === 0) return text;
  let out = "";
  let last = 0;
  for (const [start, end] of ranges) {
    out += text.slice(last, start) + replacement(text.slice(start, end), keepLines);
    last = end;
  }
  return out + text.slice(last);
}

export function createRedactor(options: RedactorOptions = {}): Redactor {
  const { used, short } = usableSecrets(options.secrets);
  const known = knownValuesRegex(used);

  const redactText = (text: string, keepLines: boolean): string => {
    const direct = mergeRanges(secretRanges(text, known));
    const split = withoutOverlaps(secretRangesAcrossAnsi(text, known), direct);
    return replaceRanges(text, mergeRanges([...direct, ...split]), keepLines);
  };

  const redact = (text: string): string => redactText(text, false);
  const redactLines = (lines: readonly string[]): string[] => {
    const out = redactText(lines.join("\n"), true).split("\n");
    return out.length === lines.length ? out : lines.map((line) => redactText(line, false));
  };
  const redactDeep = <T>(value: T): T => deepMap(value, redact, new WeakMap()) as T;

  return { redact, redactLines, redactDeep, ignoredShortSecrets: short };
}

function deepMap(value: unknown, redact: (text: string) => string, seen: WeakMap<object, unknown>): unknown {
  if (typeof value === "string") return redact(value);
  if (typeof value !== "object" || value === null) return value;
  const copied = seen.get(value);
  if (copied !== undefined) return copied;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const item of value) out.push(deepMap(item, redact, seen));
    return out;
  }
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const [key, item] of Object.entries(value)) out[redact(key)] = deepMap(item, redact, seen);
  return out;
}

export interface ScanOptions {
  /** Known secret values to look for as well (reported as kind `known_secret`). */
  secrets?: RedactorOptions["secrets"];
}

/**
 * Secrets in the lines a patch adds, as findings (file, line in the new file, kind). The patch is not changed:
 * a finding is for a person (or the Action's posting gate) to act on.
 */
export function scanForSecrets(patchText: string, options: ScanOptions = {}): SecretFinding[] {
  const known = knownValuesRegex(usableSecrets(options.secrets).used);
  const checks = [
    ...(known ? [{ kind: "known_secret", regex: known }] : []),
    ...TOKEN_PATTERNS.filter((pattern) => pattern.scan),
  ];
  const findings: SecretFinding[] = [];
  const seen = new Set<string>();
  for (const file of parseGitDiff(patchText).files) {
    for (const hunk of file.hunks) {
      for (const line of hunk.lines) {
        if (line.type !== "add") continue;
        for (const check of checks) {
          if (line.text.search(check.regex) === -1) continue;
          const key = `${file.path}\0${line.newLine}\0${check.kind}`;
          if (seen.has(key)) continue;
          seen.add(key);
          findings.push({ file: file.path, line: line.newLine, kind: check.kind });
        }
      }
    }
  }
  return findings;
}
