// Patch parsing and stats: git headers (new, deleted, renamed, binary, quoted paths), line numbers, sha256.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseGitDiff, unquoteGitPath } from "../../../src/report/diff-parse.js";
import { callPatch, summarizePatch } from "../../../src/report/patch.js";
import { SMALL_FIX_PATCH } from "./support/report-builders.js";

const MIXED = [
  "diff --git a/old name.txt b/new name.txt",
  "similarity index 90%",
  "rename from old name.txt",
  "rename to new name.txt",
  "index 1..2 100644",
  "--- a/old name.txt",
  "+++ b/new name.txt",
  "@@ -1,2 +1,2 @@",
  " same",
  "-before",
  "+after",
  "\\ No newline at end of file",
  "diff --git a/gone.js b/gone.js",
  "deleted file mode 100644",
  "index 3..0000000",
  "--- a/gone.js",
  "+++ /dev/null",
  "@@ -1 +0,0 @@",
  "-bye",
  "diff --git a/logo.png b/logo.png",
  "new file mode 100644",
  "index 0000000..4",
  "GIT binary patch",
  "literal 5",
  "McmZQzWMXFk00Ld",
  "",
  "literal 0",
  "HcmV?d00001",
  "",
  'diff --git "a/caf\\303\\251.txt" "b/caf\\303\\251.txt"',
  "index 5..6 100644",
  '--- "a/caf\\303\\251.txt"',
  '+++ "b/caf\\303\\251.txt"',
  "@@ -10,3 +10,4 @@ heading",
  " ten",
  "+++ a line that starts with two plus signs",
  " eleven",
  "-- removed line starting with dashes",
  "+new",
  "diff --git a/script.sh b/script.sh",
  "old mode 100644",
  "new mode 100755",
  "",
].join("\n");

describe("parseGitDiff", () => {
  it("reads status, paths and counts of each file", () => {
    const files = parseGitDiff(MIXED).files.map(({ hunks: _hunks, ...file }) => file);
    expect(files).toEqual([
      {
        path: "new name.txt",
        oldPath: "old name.txt",
        status: "renamed",
        binary: false,
        added: 1,
        removed: 1,
      },
      { path: "gone.js", status: "deleted", binary: false, added: 0, removed: 1 },
      {
        path: "logo.png",
        status: "added",
        binary: true,
        mode: "100644",
        binaryBytes: 5,
        added: 0,
        removed: 0,
      },
      { path: "café.txt", status: "modified", binary: false, added: 2, removed: 1 },
      { path: "script.sh", status: "modified", binary: false, mode: "100755", added: 0, removed: 0 },
    ]);
  });

  it("numbers lines and keeps '+++'/'--' content lines inside a hunk as content", () => {
    const cafe = parseGitDiff(MIXED).files[3]!;
    expect(cafe.hunks[0]!.lines).toEqual([
      { type: "ctx", text: "ten", oldLine: 10, newLine: 10 },
      { type: "add", text: "++ a line that starts with two plus signs", newLine: 11 },
      { type: "ctx", text: "eleven", oldLine: 11, newLine: 12 },
      { type: "del", text: "- removed line starting with dashes", oldLine: 12 },
      { type: "add", text: "new", newLine: 13 },
    ]);
  });

  it("keeps the no-newline note with its hunk", () => {
    const renamed = parseGitDiff(MIXED).files[0]!;
    expect(renamed.hunks[0]!.lines.at(-1)).toEqual({ type: "note", text: "\\ No newline at end of file" });
  });

  it("reads a plain unified diff without git headers", () => {
    const plain =
      "--- a/x.txt\t2025-01-01\n+++ b/x.txt\t2025-01-02\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/y.txt\n@@ -0,0 +1 @@\n+y\n";
    expect(
      parseGitDiff(plain).files.map((file) => [file.path, file.status, file.added, file.removed]),
    ).toEqual([
      ["x.txt", "modified", 1, 1],
      ["y.txt", "added", 1, 0],
    ]);
  });

  it("returns no files for an empty patch", () => {
    expect(parseGitDiff("").files).toEqual([]);
  });

  it("unquotes git's C-style paths", () => {
    expect(unquoteGitPath('"a/tab\\there \\"q\\" \\303\\244"')).toBe('a/tab\there "q" ä');
    expect(unquoteGitPath("plain")).toBe("plain");
  });
});

describe("summarizePatch", () => {
  it("gives the stats the report carries", () => {
    const summary = summarizePatch(SMALL_FIX_PATCH);
    expect(summary).toMatchObject({
      added: 7,
      removed: 1,
      bytes: Buffer.byteLength(SMALL_FIX_PATCH),
      sha256: createHash("sha256").update(SMALL_FIX_PATCH).digest("hex"),
      empty: false,
      secretFindings: [],
    });
    expect(
      summary.files.map((file) => `${file.status} ${file.path} +${file.added} -${file.removed}`),
    ).toEqual(["modified src/calc.js +1 -1", "modified test/calc.test.js +3 -0", "added CHANGELOG.md +3 -0"]);
  });

  it("accepts bytes and marks an empty patch", () => {
    const summary = summarizePatch(new Uint8Array());
    expect(summary).toMatchObject({ files: [], added: 0, removed: 0, bytes: 0, empty: true });
    expect(summary.sha256).toBe(createHash("sha256").update("").digest("hex"));
  });
});

describe("callPatch", () => {
  it("is the structured patch of one edit", () => {
    expect(callPatch("src/a.ts", "a\nb\nc\n", "a\nB\nc\n")).toEqual({
      file: "src/a.ts",
      hunks: [{ oldStart: 1, oldLines: 3, newStart: 1, newLines: 3, lines: [" a", "-b", "+B", " c"] }],
    });
  });

  it("treats a created file as an edit of nothing", () => {
    const patch = callPatch("new.txt", null, "hello\n");
    expect(patch.hunks[0]).toMatchObject({ oldLines: 0, newStart: 1, newLines: 1, lines: ["+hello"] });
  });
});
