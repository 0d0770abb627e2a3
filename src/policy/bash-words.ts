/**
 * Bash's quoting, as the walker (bash-analyze.ts) meets it piece by piece: backslashes outside quotes,
 * escapes inside double quotes and unquoted heredocs, `$'…'`, and how the pieces of one word become its
 * value — `~` expanded, brace expansion and run-time text left without one.
 */
import type { BashWord } from "./bash-script.js";

export interface Piece {
  readonly text: string;
  readonly quoted: boolean;
}

/** Bash's backslash rules outside quotes: `\x` is a quoted x, backslash-newline disappears. */
export function unquotedPieces(text: string, out: Piece[]): void {
  let plain = "";
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char !== "\\") {
      plain += char;
      continue;
    }
    if (plain !== "") out.push({ text: plain, quoted: false });
    plain = "";
    const next = text[i + 1];
    i++;
    if (next !== undefined && next !== "\n") out.push({ text: next, quoted: true });
  }
  if (plain !== "") out.push({ text: plain, quoted: false });
}

/** Inside double quotes only `$`, backtick, `"`, `\` and newline are escapable. */
export function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_match, char: string) => (char === "\n" ? "" : char));
}

/** Unquoted heredoc bodies: like double quotes, except `"` stays escaped. */
export function unescapeHeredoc(text: string): string {
  return text.replace(/\\([$`\\\n])/g, (_match, char: string) => (char === "\n" ? "" : char));
}

const ANSI_C_SIMPLE: Readonly<Record<string, string>> = {
  a: "\u0007",
  b: "\b",
  e: "\u001b",
  E: "\u001b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** Decodes the inside of `$'…'` as bash does (`\x72`, `\162`, `\u0072`, `\cA`, …). */
export function decodeAnsiC(body: string): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const char = body[i] as string;
    if (char !== "\\" || i + 1 >= body.length) {
      out += char;
      continue;
    }
    const next = body[i + 1] as string;
    const simple = ANSI_C_SIMPLE[next];
    if (simple !== undefined) {
      out += simple;
      i++;
      continue;
    }
    const numeric =
      next === "x"
        ? /^x([0-9a-fA-F]{1,2})/.exec(body.slice(i + 1))
        : next === "u"
          ? /^u([0-9a-fA-F]{1,4})/.exec(body.slice(i + 1))
          : next === "U"
            ? /^U([0-9a-fA-F]{1,8})/.exec(body.slice(i + 1))
            : null;
    if (numeric !== null) {
      const codePoint = Number.parseInt(numeric[1] as string, 16);
      out += codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : "";
      i += numeric[0].length;
      continue;
    }
    const octal = /^[0-7]{1,3}/.exec(body.slice(i + 1));
    if (octal !== null) {
      out += String.fromCharCode(Number.parseInt(octal[0], 8) & 0xff);
      i += octal[0].length;
      continue;
    }
    if (next === "c" && i + 2 < body.length) {
      out += String.fromCharCode((body.charCodeAt(i + 2) & 0x1f) >>> 0);
      i += 2;
      continue;
    }
    out += `\\${next}`;
    i++;
  }
  return out;
}

/** Unquoted `{a,b}` / `{1..3}` in the joined pieces: bash turns one word into several. */
function hasBraceExpansion(pieces: readonly Piece[]): boolean {
  let open = false;
  let separator = false;
  for (const piece of pieces) {
    for (let i = 0; i < piece.text.length; i++) {
      const char = piece.text[i];
      if (piece.quoted) continue;
      if (char === "{") {
        open = true;
        separator = false;
      } else if (open && (char === "," || (char === "." && piece.text[i + 1] === "."))) {
        separator = true;
      } else if (open && char === "}" && separator) {
        return true;
      }
    }
  }
  return false;
}

export function finishWord(
  text: string,
  pieces: readonly Piece[],
  isStatic: boolean,
  homeDir: string,
): BashWord {
  if (!isStatic || hasBraceExpansion(pieces)) return { value: undefined, text, glob: false };
  let value = pieces.map((piece) => piece.text).join("");
  const first = pieces[0];
  if (first !== undefined && !first.quoted && first.text.startsWith("~")) {
    const tildeEnd = first.text.indexOf("/");
    const tildeWord = tildeEnd === -1 ? first.text : first.text.slice(0, tildeEnd);
    if (tildeWord !== "~") return { value: undefined, text, glob: false };
    value = homeDir + value.slice(1);
  }
  // bash strings end at NUL; the matcher's sentinel must never come from user text.
  const nul = value.indexOf("\u0000");
  if (nul !== -1) value = value.slice(0, nul);
  if (value.includes("\u0001")) return { value: undefined, text, glob: false };
  const glob = pieces.some((piece) => !piece.quoted && /[*?[]/.test(piece.text));
  return { value, text, glob };
}
