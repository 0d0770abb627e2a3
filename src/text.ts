// Text helpers for output agent-ci does not control (tool output, model text, file contents). Each is one
// forward pass: an anchored regular expression such as /\n+$/ or /[^\n]*\r/ retries from every position
// and turns a long line into minutes of CPU, with the event loop blocked all that time.

/** `text` without its trailing newlines. */
export function trimTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 10) end -= 1;
  return end === text.length ? text : text.slice(0, end);
}

/** The length of the longest run of `char` (one UTF-16 unit) in `text`. */
export function longestRun(text: string, char: string): number {
  const code = char.charCodeAt(0);
  let longest = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    run = text.charCodeAt(i) === code ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

/** A fenced Markdown block that no backtick run in `text` can close. */
export function fencedBlock(text: string, info: string): string {
  const marks = "`".repeat(Math.max(3, longestRun(text, "`") + 1));
  return `${marks}${info}\n${trimTrailingNewlines(text)}\n${marks}`;
}

/**
 * What a terminal shows of each line: a carriage return moves back to the line's start, so only the text after
 * a line's last `\r` stays (a progress bar's final state). `\r\n` is a plain line end; `\r`s at a line's end
 * overwrite nothing.
 */
export function overwrittenByCarriageReturns(text: string): string {
  let nextCr = text.indexOf("\r");
  if (nextCr === -1) return text;
  const lines: string[] = [];
  for (let start = 0; start <= text.length;) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    let contentEnd = end;
    while (contentEnd > start && text.charCodeAt(contentEnd - 1) === 13) contentEnd -= 1;
    let from = start;
    // Carriage returns are visited once each, in order, over the whole text: linear however lines fall.
    while (nextCr !== -1 && nextCr < end) {
      if (nextCr < contentEnd) from = nextCr + 1;
      nextCr = text.indexOf("\r", nextCr + 1);
    }
    lines.push(text.slice(from, contentEnd));
    if (newline === -1) break;
    start = newline + 1;
  }
  return lines.join("\n");
}

/** Control characters other than tab, newline and carriage return, as `\xNN` (NUL becomes `\x00`). */
export function escapeControlCharacters(text: string): string {
  const chunks: string[] = [];
  let parts: string[] = [];
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x1f && code !== 0x7f) continue;
    if (code === 0x09 || code === 0x0a || code === 0x0d) continue;
    if (i > last) parts.push(text.slice(last, i));
    parts.push(CONTROL_ESCAPES[code === 0x7f ? 0x20 : code]!);
    last = i + 1;
    // Joined in slices: one array of millions of tiny strings costs more than the text itself.
    if (parts.length >= 65_536) {
      chunks.push(parts.join(""));
      parts = [];
    }
  }
  if (last === 0) return text;
  parts.push(text.slice(last));
  chunks.push(parts.join(""));
  return chunks.join("");
}

/** `\x00` … `\x1f`, then `\x7f` at index 0x20. */
const CONTROL_ESCAPES = [...Array.from({ length: 0x20 }, (_, code) => code), 0x7f].map(
  (code) => `\\x${code.toString(16).padStart(2, "0")}`,
);

const SIZE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
};

/** A size a user writes, in bytes: "512m", "4g", "1073741824". */
export function parseSize(value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = SIZE_UNITS[(match?.[2] ?? "").toLowerCase()];
  if (!match || unit === undefined) throw new Error(`not a size: ${value} (use e.g. 512m or 4g)`);
  return Math.round(Number(match[1]) * unit);
}
