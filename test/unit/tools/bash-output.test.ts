// The Bash tool's output edges, as Claude Code trims them, on ordinary and hostile text.
import { describe, expect, it } from "vitest";
import { trimOutputEdges } from "../../../src/tools/bash.js";

describe("trimOutputEdges", () => {
  it.each([
    ["\n\n  hello  ", "  hello"],
    ["hello\n", "hello"],
    [" \t\n\r\n  \nfirst\n\n  second \n\n", "first\n\n  second"],
    ["  indented first line\n", "  indented first line"],
    ["\n\n\n", ""],
    ["", ""],
    ["a\0b\n", "a\0b"],
  ])("%j → %j", (input, expected) => {
    expect(trimOutputEdges(input)).toBe(expected);
  });

  it("is linear on megabytes of blank lines, spaces, carriage returns and one long line", () => {
    const mb = 4 * 1024 * 1024;
    expect(trimOutputEdges("\n".repeat(mb))).toBe("");
    expect(trimOutputEdges(" \n".repeat(mb / 2) + "x")).toBe("x");
    expect(trimOutputEdges(" ".repeat(mb) + "x" + " ".repeat(mb))).toBe(" ".repeat(mb) + "x");
    expect(trimOutputEdges("\r".repeat(mb) + "\nx")).toBe("x");
    expect(trimOutputEdges("y".repeat(mb))).toHaveLength(mb);
  });
});
