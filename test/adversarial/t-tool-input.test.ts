// RELIABILITY T (tool input errors). The tools' semantics row by row (Edit's matching, Read's windows and
// encodings, schema errors) are tested against the real sandbox in test/integration/tools-*.test.ts and are
// mapped below. Tested here, through the CLI with the shared invariants, are the rows where the entry point
// or the host side matters: a binary change's round trip through the patch, huge files and huge inputs,
// outside changes between calls, result caps on search, the saved full output, and parallel calls.
import fs from "node:fs";
import path from "node:path";
import { describe, expect } from "vitest";
import { applyToCopy } from "../support/workspace.js";
import { useHarness, type ScriptCall } from "./harness.js";
import { rowTester, type Row } from "./rows.js";

const EDIT = "test/integration/tools-edit.test.ts";
const READ = "test/integration/tools-read.test.ts";

const ROWS = [
  {
    id: "T1",
    what: "Edit old_string matches 0 times",
    covered: [{ file: EDIT, test: "says the string was not found and leaves the file byte-identical" }],
  },
  {
    id: "T2",
    what: "old_string matches N > 1 times without replace_all",
    covered: [
      { file: EDIT, test: "refuses a non-unique string without replace_all, giving the count and the lines" },
    ],
  },
  {
    id: "T3",
    what: "old_string == new_string",
    covered: [{ file: EDIT, test: "refuses equal strings at validation" }],
  },
  {
    id: "T4",
    what: "empty old_string on a non-empty file",
    covered: [{ file: EDIT, test: "refuses an empty old_string on a non-empty file" }],
  },
  {
    id: "T5",
    what: "missing file, a directory, a missing parent directory",
    covered: [
      { file: EDIT, test: "says a missing file does not exist, and a directory is a directory" },
      { file: EDIT, test: "creates a new file and its parent directories without a Read" },
    ],
  },
  { id: "T6", what: "binary files: Read says binary, Edit refuses, the patch round-trips the bytes" },
  {
    id: "T7",
    what: "Latin-1 or invalid UTF-8 text: never re-encoded, in the tools or in the patch",
    alsoSee: [
      { file: EDIT, test: "refuses a Latin-1 file rather than re-encoding it" },
      { file: READ, test: "shows non-UTF-8 bytes as replacement characters and leaves the file as it was" },
    ],
  },
  {
    id: "T8",
    what: "CRLF file and an LF old_string",
    covered: [{ file: EDIT, test: "matches an LF old_string in a CRLF file and keeps CRLF" }],
  },
  {
    id: "T9",
    what: "BOM, UTF-16, mixed line endings, tabs",
    covered: [
      { file: EDIT, test: "keeps mixed line endings byte for byte outside the edit" },
      { file: EDIT, test: "keeps a UTF-8 BOM" },
    ],
  },
  {
    id: "T10",
    what: "no trailing newline",
    covered: [{ file: EDIT, test: "keeps a missing final newline, and the patch says so" }],
  },
  {
    id: "T11",
    what: "0-byte file",
    covered: [
      { file: READ, test: "gives the empty-file notice for a 0-byte file" },
      { file: EDIT, test: "writes empty content as a 0-byte file" },
    ],
  },
  { id: "T12", what: "a 200 MB file and a 10 MB line: bounded Read windows, Edit refuses over the cap" },
  { id: "T13", what: "Write or Edit with 50 MB of content: rejected at parse, no partial file" },
  { id: "T14", what: "Edit without a Read; the file changed by Bash or an outside actor after the Read" },
  {
    id: "T15",
    what: 'schema violations: missing field, replace_all:"yes", unknown keys, arrays, limit -1, offset 1e12',
    covered: [
      { file: EDIT, test: "answers schema violations with an error and changes nothing" },
      { file: READ, test: "answers bad input with a schema error and reads nothing" },
    ],
    alsoSee: [{ file: "test/adversarial/m-model.test.ts", test: "M7" }],
  },
  { id: "T16", what: "Glob over 10^5 files, Grep with (a+)+$, Grep over binaries" },
  {
    id: "T17",
    what: "file names with spaces, quotes, $(), newlines, a leading -",
    covered: [
      { file: "test/integration/tools-paths.test.ts", test: "goes through Read, Edit, Write, Grep and Glob" },
    ],
    alsoSee: [{ file: "test/adversarial/u-untrusted.test.ts", test: "U5" }],
  },
  { id: "T18", what: "a result over maxResultSizeChars: cut, saved whole, the model told a container path" },
  { id: "T19", what: "parallel calls in one turn, one failing: one tool_result each, in order" },
] as const satisfies readonly Row[];

const h = useHarness();
const { test, checkTable } = rowTester(ROWS);
const bash = (command: string, extra: Record<string, unknown> = {}): ScriptCall => ({
  name: "Bash",
  input: { command, ...extra },
});
const read = (file_path: string, extra: Record<string, unknown> = {}): ScriptCall => ({
  name: "Read",
  input: { file_path, ...extra },
});

const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex");

describe("T: tool input errors through the CLI", () => {
  test(
    "T6",
    "binary files are reported as binary, refused by Edit, and round-trip byte for byte through the patch",
    async () => {
      const sqlite = Buffer.concat([Buffer.from("SQLite format 3\0"), Buffer.alloc(100, 0xfe)]);
      const ws = h.workspace(
        { "img.png": PNG, "data.db": sqlite, "notes.txt": Buffer.from("text\0with NUL\n") },
        { git: true },
      );
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: [
          [read("/workspace/data.db")],
          [read("/workspace/notes.txt")],
          [
            {
              name: "Edit",
              input: { file_path: "/workspace/notes.txt", old_string: "text", new_string: "TEXT" },
            },
          ],
          [bash("printf '\\x00\\xff\\x80tail' >> img.png && head -c 300 /dev/urandom > new.bin && echo ok")],
        ],
      });
      expect(run.call(0).isError).toBe(true);
      expect(run.text(0)).toMatch(/binary/i);
      expect(run.text(1)).toMatch(/binary[\s\S]*\d+ bytes|\d+ bytes[\s\S]*binary/i);
      expect(run.call(2).isError).toBe(true);
      expect(run.patch).toContain("GIT binary patch");
      const copy = applyToCopy(ws, run.patchBytes);
      expect(fs.readFileSync(path.join(copy, "img.png")).subarray(-7)).toEqual(
        Buffer.from([0, 0xff, 0x80, ...Buffer.from("tail")]),
      );
      expect(fs.statSync(path.join(copy, "new.bin")).size).toBe(300);
      fs.rmSync(copy, { recursive: true, force: true });
    },
  );

  test(
    "T7",
    "Latin-1 text changed through Bash reaches the patch byte for byte (no U+FFFD), and Edit refuses it",
    async () => {
      const ws = h.workspace({ "latin1.txt": Buffer.from("caf\xe9\n", "latin1") }, { git: true });
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: [
          [bash("printf 'na\\xefve\\n' >> latin1.txt && printf 'new \\xff\\xfe text\\n' > fresh.txt")],
          [read("/workspace/latin1.txt")],
          [
            {
              name: "Edit",
              input: { file_path: "/workspace/latin1.txt", old_string: "caf", new_string: "CAF" },
            },
          ],
        ],
      });
      expect(run.call(2).isError).toBe(true);
      expect(run.patchBytes.includes(Buffer.from([0xef, 0xbf, 0xbd]))).toBe(false);
      const copy = applyToCopy(ws, run.patchBytes);
      expect(fs.readFileSync(path.join(copy, "latin1.txt"))).toEqual(
        Buffer.from("caf\xe9\nna\xefve\n", "latin1"),
      );
      expect(fs.readFileSync(path.join(copy, "fresh.txt"))).toEqual(
        Buffer.from("new \xff\xfe text\n", "latin1"),
      );
      fs.rmSync(copy, { recursive: true, force: true });
    },
  );

  test(
    "T12",
    "a 200 MB file and a 10 MB line get bounded Read windows; Edit refuses them",
    async () => {
      const ws = h.workspace({ "a.txt": "a\n" });
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: [
          [
            bash(
              "yes 'a line of text that repeats' | head -c 200000000 > big.txt && head -c 10000000 /dev/zero | tr '\\0' x > line.txt && ls -l big.txt line.txt | wc -l",
              { timeout: 120_000 },
            ),
          ],
          [read("/workspace/big.txt")],
          [read("/workspace/big.txt", { offset: 5_000_000, limit: 3 })],
          [read("/workspace/line.txt")],
          [
            {
              name: "Edit",
              input: { file_path: "/workspace/big.txt", old_string: "a line", new_string: "b line" },
            },
          ],
          [bash("rm big.txt line.txt")],
        ],
        args: ["--workspace-size", "1g"],
      });
      expect(run.text(0)).toBe("2");
      const first = run.text(1);
      expect(first.split("\n").filter((l) => /^\s*\d+\t/.test(l)).length).toBe(2000);
      expect(first).toMatch(/offset|more lines|truncated|lines? (of|in) /i);
      expect(run.text(2)).toMatch(/^5000000\ta line of text that repeats/m);
      const line = run.text(3);
      expect(line.length).toBeLessThan(10_000);
      expect(line).toMatch(/truncated|cut|characters/i);
      expect(run.call(4).isError).toBe(true);
      expect(run.report?.patch.empty).toBe(true);
    },
    180_000,
  );

  test(
    "T13",
    "content over the 10 MB input cap in Write or Edit is refused at parse, leaving no file",
    async () => {
      const ws = h.workspace({ "a.txt": "a\n" });
      const huge = "x".repeat(12 * 1024 * 1024);
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        timeoutMs: 170_000,
        turns: [
          [{ name: "Write", input: { file_path: "/workspace/huge.txt", content: huge } }],
          [read("/workspace/a.txt")],
          [{ name: "Edit", input: { file_path: "/workspace/a.txt", old_string: "a", new_string: huge } }],
          [bash("ls; cat a.txt")],
        ],
      });
      expect(run.call(0).errorKind).toBe("invalid_input");
      expect(run.call(2).errorKind).toBe("invalid_input");
      expect(run.text(3)).toBe("a.txt\na");
      expect(run.report?.patch.empty).toBe(true);
      expect(run.text(0)).toMatch(/InputValidationError[\s\S]*content/);
    },
    180_000, // 24 MB of tool input through the scripted model, parsed and recorded
  );

  test(
    "T14",
    "Edit needs a Read first, and a file changed by Bash or by an outside actor since must be read again",
    async () => {
      const ws = h.workspace({ "a.txt": "one\n", "b.txt": "two\n" });
      const run = await h.cli({
        workspace: ws,
        mode: "acceptEdits",
        allow: ["Bash(echo:*)"],
        turns: [
          [{ name: "Edit", input: { file_path: "/workspace/a.txt", old_string: "one", new_string: "ONE" } }],
          [read("/workspace/a.txt"), read("/workspace/b.txt")],
          [bash("echo changed >> a.txt")],
          [{ name: "Edit", input: { file_path: "/workspace/a.txt", old_string: "one", new_string: "ONE" } }],
          {
            mutate: [{ op: "write", path: "b.txt", content: "two, rewritten by a formatter\n" }],
            tools: [
              {
                name: "Edit",
                input: { file_path: "/workspace/b.txt", old_string: "two", new_string: "TWO" },
              },
            ],
          },
          [read("/workspace/a.txt")],
          [{ name: "Edit", input: { file_path: "/workspace/a.txt", old_string: "one", new_string: "ONE" } }],
        ],
      });
      expect(run.call(0).errorKind).toBe("not_read");
      expect(run.text(0)).toMatch(/read it first|has not been read/i);
      expect(run.call(4).errorKind).toBe("modified_since_read");
      expect(run.call(5).errorKind).toBe("modified_since_read");
      expect(run.call(7).isError).toBe(false);
      expect(run.patch).toContain("+ONE");
      expect(run.patch).not.toContain("TWO");
    },
  );

  test(
    "T16",
    "Glob over 100,000 files is capped, a catastrophic regex does not hang, binaries are skipped",
    async () => {
      const ws = h.workspace({
        "a.txt": "a\n",
        "bin/blob.bin": Buffer.concat([Buffer.from("needle"), Buffer.alloc(64, 0)]),
      });
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: [
          [
            bash(
              "mkdir many && seq 1 100000 | sed 's|^|many/|; s|$|.txt|' | xargs touch && ls many | wc -l",
              { timeout: 120_000 },
            ),
          ],
          [{ name: "Glob", input: { pattern: "many/*.txt" } }],
          [bash("python3 -c \"print('a' * 50000 + 'b')\" > evil.txt && echo ok")],
          [{ name: "Grep", input: { pattern: "(a+)+$", path: "evil.txt", output_mode: "count" } }],
          [{ name: "Grep", input: { pattern: "needle", output_mode: "files_with_matches" } }],
          [bash("rm -rf many")],
        ],
        args: ["--workspace-size", "1g"],
      });
      expect(run.text(0)).toBe("100000");
      const glob = run.text(1);
      expect(glob.split("\n").filter((l) => l.startsWith("many/")).length).toBe(100);
      expect(glob).toMatch(/Showing 100 of 100000 matching files/);
      expect(run.call(3).errorKind).not.toBe("timed_out");
      expect(run.text(4)).not.toContain("blob.bin");
    },
    180_000,
  );

  test(
    "T18",
    "an oversized result is cut for the model, saved whole, and named by a container path, never a host path",
    async () => {
      const ws = h.workspace({ "a.txt": "a\n" });
      // Default mode: the notice's path must be usable as it says, by Read and by Grep.
      const run = await h.cli({
        workspace: ws,
        mode: "default",
        allow: ["Bash(seq:*)"],
        turns: [
          [bash("seq 1 40000")],
          [read("/tmp/agent-ci-outputs/toolu_script_0_0.txt", { offset: 39999, limit: 2 })],
          [
            {
              name: "Grep",
              input: {
                pattern: "^39999$",
                path: "/tmp/agent-ci-outputs/toolu_script_0_0.txt",
                output_mode: "count",
              },
            },
          ],
          [{ name: "Write", input: { file_path: "/tmp/agent-ci-outputs/planted.txt", content: "x" } }],
        ],
      });
      const cut = run.text(0);
      expect(run.call(0).truncated).toBe(true);
      expect(cut.length).toBeLessThanOrEqual(30_000);
      expect(cut).toContain("/tmp/agent-ci-outputs/toolu_script_0_0.txt");
      expect(cut).not.toContain(run.outDir);
      expect(run.call(0).fullOutputPath).toBe("tool-outputs/toolu_script_0_0.txt");
      expect(
        fs
          .readFileSync(path.join(run.outDir, "tool-outputs/toolu_script_0_0.txt"), "utf8")
          .trim()
          .split("\n"),
      ).toHaveLength(40000);
      expect(run.text(1)).toMatch(/^39999\t39999\n40000\t40000/);
      expect(run.text(2)).toMatch(/:1\n\nFound 1 total occurrence/);
      // Reading it is allowed; writing there is not.
      expect(run.call(3).errorKind).toBe("outside_workspace");
    },
  );

  test(
    "T19",
    "parallel calls in one turn, one failing, get one tool_result each in the calls' order",
    async () => {
      const ws = h.workspace({ "a.txt": "alpha\n", "b.txt": "beta\n" });
      const run = await h.cli({
        workspace: ws,
        turns: [
          [
            read("/workspace/a.txt"),
            read("/workspace/missing.txt"),
            { name: "Grep", input: { pattern: "beta" } },
            { name: "Glob", input: { pattern: "*.txt" } },
            read("/workspace/b.txt"),
          ],
        ],
      });
      const user = run.events.find((e) => e.type === "user");
      const blocks = (user?.message?.content ?? []) as Array<{ tool_use_id: string; is_error?: boolean }>;
      expect(blocks.map((b) => b.tool_use_id)).toEqual([
        "toolu_script_0_0",
        "toolu_script_0_1",
        "toolu_script_0_2",
        "toolu_script_0_3",
        "toolu_script_0_4",
      ]);
      expect(blocks.map((b) => Boolean(b.is_error))).toEqual([false, true, false, false, false]);
      expect(run.text(0)).toContain("alpha");
      expect(run.text(4)).toContain("beta");
    },
  );

  checkTable();
});
