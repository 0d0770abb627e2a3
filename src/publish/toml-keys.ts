// The keys of a TOML file and the text of their values, enough for the publish gate to compare one table of
// pyproject.toml ([build-system]) or one key of Cargo.toml (package.build) on both sides of a patch. Keys are
// read as TOML defines them (bare, "basic" with escapes, 'literal', dotted, under [table] and [[array]]
// headers), so a key spelled with an escape is the key it names; values are kept as their text, comments,
// whitespace and trailing commas outside strings dropped, so a value compares equal to itself however it is
// laid out (a string spelled another way compares unequal: the caller finds a change where there is none,
// never the other way). Anything
// outside that grammar is not guessed at: the reader gives up (undefined) and the caller treats the file as
// one it cannot read. One pass over the text: linear in its length.

/** One key of the file: its full path (table headers, then the dotted key) and its value's text. */
export interface TomlEntry {
  readonly path: readonly string[];
  readonly value: string;
}

const BARE = /[A-Za-z0-9_-]/;
const ESCAPES: Record<string, string> = {
  b: "\b",
  t: "\t",
  n: "\n",
  f: "\f",
  r: "\r",
  e: "\u001b",
  '"': '"',
  "\\": "\\",
};

class Unreadable extends Error {}

/** The file's keys in order, or undefined when it is not TOML this reader can follow. */
export function tomlEntries(text: string): TomlEntry[] | undefined {
  try {
    return new Reader(text).entries();
  } catch (error) {
    if (error instanceof Unreadable) return undefined;
    throw error;
  }
}

class Reader {
  private i = 0;
  private readonly arrays = new Map<string, number>();

  constructor(private readonly text: string) {}

  entries(): TomlEntry[] {
    const found: TomlEntry[] = [];
    let table: string[] = [];
    for (;;) {
      this.skipBlankLines();
      if (this.i >= this.text.length) return found;
      if (this.text[this.i] === "[") {
        const array = this.text[this.i + 1] === "[";
        this.i += array ? 2 : 1;
        const key = this.key();
        this.expect(array ? "]]" : "]");
        table = key;
        if (array) {
          const id = JSON.stringify(key);
          const index = this.arrays.get(id) ?? 0;
          this.arrays.set(id, index + 1);
          table = [...key, `[${index}]`];
        }
      } else {
        const key = this.key();
        this.expect("=");
        found.push({ path: [...table, ...key], value: this.value() });
      }
      this.endOfLine();
    }
  }

  private fail(): never {
    throw new Unreadable();
  }

  private spaces(): void {
    while (this.text[this.i] === " " || this.text[this.i] === "\t") this.i++;
  }

  private skipBlankLines(): void {
    for (;;) {
      const c = this.text[this.i];
      if (c === " " || c === "\t" || c === "\r" || c === "\n") this.i++;
      else if (c === "#") this.skipComment();
      else return;
    }
  }

  private skipComment(): void {
    const end = this.text.indexOf("\n", this.i);
    this.i = end < 0 ? this.text.length : end;
  }

  private endOfLine(): void {
    this.spaces();
    if (this.text[this.i] === "#") this.skipComment();
    if (this.text[this.i] === "\r") this.i++;
    if (this.i < this.text.length && this.text[this.i] !== "\n") this.fail();
  }

  private expect(token: string): void {
    this.spaces();
    if (!this.text.startsWith(token, this.i)) this.fail();
    this.i += token.length;
  }

  /** A dotted key: bare, "basic" (escapes decoded) or 'literal' parts. */
  private key(): string[] {
    const parts: string[] = [];
    for (;;) {
      this.spaces();
      const c = this.text[this.i];
      if (c === '"') parts.push(this.basicKey());
      else if (c === "'") {
        const end = this.text.indexOf("'", this.i + 1);
        const part = end < 0 ? this.fail() : this.text.slice(this.i + 1, end);
        if (part.includes("\n")) this.fail();
        parts.push(part);
        this.i = end + 1;
      } else {
        const start = this.i;
        while (this.i < this.text.length && BARE.test(this.text[this.i] as string)) this.i++;
        if (this.i === start) this.fail();
        parts.push(this.text.slice(start, this.i));
      }
      this.spaces();
      if (this.text[this.i] !== ".") return parts;
      this.i++;
    }
  }

  private basicKey(): string {
    let out = "";
    for (this.i++; ; this.i++) {
      const c = this.text[this.i];
      if (c === undefined || c === "\n") this.fail();
      if (c === '"') {
        this.i++;
        return out;
      }
      if (c !== "\\") {
        out += c;
        continue;
      }
      const e = this.text[++this.i] ?? this.fail();
      const hex = e === "u" ? 4 : e === "U" ? 8 : e === "x" ? 2 : 0;
      if (hex) {
        const digits = this.text.slice(this.i + 1, this.i + 1 + hex);
        if (!/^[0-9A-Fa-f]+$/.test(digits) || digits.length !== hex) this.fail();
        const code = Number.parseInt(digits, 16);
        if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) this.fail();
        out += String.fromCodePoint(code);
        this.i += hex;
      } else out += ESCAPES[e] ?? this.fail();
    }
  }

  /** A value's text up to the end of its line (or of its array or inline table), strings kept as written. */
  private value(): string {
    this.spaces();
    let out = "";
    let depth = 0;
    // A comma is written when the next token is not the end of its array: a trailing comma changes nothing.
    let comma = false;
    const text = this.text;
    const token = (piece: string, closes = false) => {
      if (comma && !closes) out += ",";
      comma = false;
      out += piece;
    };
    while (this.i < text.length) {
      const c = text[this.i] as string;
      if (c === '"' || c === "'") {
        const start = this.i;
        this.skipString(c);
        token(text.slice(start, this.i));
        continue;
      }
      if (c === "\n" && depth === 0) break;
      if (c === "#") {
        this.skipComment();
        continue;
      }
      if (c === "[" || c === "{") depth++;
      if (c === "]" || c === "}") {
        if (--depth < 0) this.fail();
        token(c, true);
      } else if (c === ",") {
        if (comma) this.fail();
        comma = true;
      } else if (c !== " " && c !== "\t" && c !== "\r" && c !== "\n") token(c);
      this.i++;
    }
    if (depth !== 0 || comma || out === "") this.fail();
    return out;
  }

  /** Past one string, single- or multi-line, basic (backslash escapes) or literal. */
  private skipString(quote: string): void {
    const text = this.text;
    const triple = quote.repeat(3);
    const multi = text.startsWith(triple, this.i);
    this.i += multi ? 3 : 1;
    for (;;) {
      const c = text[this.i];
      if (c === undefined) this.fail();
      if (c === "\\" && quote === '"') {
        this.i += 2;
        continue;
      }
      if (!multi && c === "\n") this.fail();
      if (multi ? text.startsWith(triple, this.i) : c === quote) {
        this.i += multi ? 3 : 1;
        // A multi-line string may end with one or two quotes of its own before the delimiter.
        if (multi) for (let extra = 0; extra < 2 && text[this.i] === quote; extra++) this.i++;
        return;
      }
      this.i++;
    }
  }
}
