// Edit's new_string normalisation, as Claude Code does it, on ordinary and hostile text.
import { describe, expect, it } from "vitest";
import { stripTrailingWhitespace } from "../../../src/tools/edit.js";

describe("stripTrailingWhitespace", () => {
  it.each([
    ["a.py", "x = 1  \n  y = 2\t\n", "x = 1\n  y = 2\n"],
    ["a.py", "crlf  \r\nkept\r\n", "crlf\r\nkept\r\n"],
    ["a.py", "  \n\n", "\n\n"],
    ["README.md", "break  \nnext", "break  \nnext"],
    ["doc.MDX", "a \n", "a \n"],
  ])("%s: %j → %j", (file, input, expected) => {
    expect(stripTrailingWhitespace(file, input)).toBe(expected);
  });

  it("is linear on megabytes of spaces, of newlines, and of one line without a newline", () => {
    const mb = 4 * 1024 * 1024;
    expect(stripTrailingWhitespace("a.txt", " ".repeat(mb) + "x")).toHaveLength(mb + 1);
    expect(stripTrailingWhitespace("a.txt", "x" + " ".repeat(mb))).toBe("x");
    expect(stripTrailingWhitespace("a.txt", "\n".repeat(mb))).toHaveLength(mb);
    expect(stripTrailingWhitespace("a.txt", " \r\n".repeat(mb / 4))).toBe("\r\n".repeat(mb / 4));
  });
});
