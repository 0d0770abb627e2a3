// Edit and Write through the pipeline over a real sandbox: read-before-write against the host-side record,
// Claude Code's refusals, and every byte outside the replaced text kept (line endings, BOM, mode).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultOf, startHarness, textOf, type ToolHarness } from "../support/tool-harness.js";

const CODE = "line one\nfoo bar\nline three\nfoo baz\nend\n";
const UPDATED = (p: string) =>
  `The file ${p} has been updated successfully. (file state is current in your context — no need to Read it back)`;

const FILES = {
  "code.txt": CODE,
  "not-read.txt": CODE,
  "changed.txt": CODE,
  "touched.txt": CODE,
  "missing-old.txt": CODE,
  "dup.txt": CODE,
  "all.txt": CODE,
  "same.txt": CODE,
  "nonempty.txt": "content\n",
  "empty.txt": "",
  "spaces.js": "function  foo( a,b ) {\n\treturn a;\n}\n",
  "curly.txt": "She said “hello” to me.\nIt’s fine.\n",
  "straight.txt": 'say "yes" now\n',
  "crlf.txt": "alpha\r\nbeta\r\ngamma\r\n",
  "mixed.txt": "one\r\ntwo\nthree\r\nfour\n",
  "bom.txt": "\uFEFFname = 1\nother = 2\n",
  "run.sh": { content: "#!/bin/sh\necho old\n", mode: 0o755 },
  "latin1.txt": Buffer.from("caf\xe9\n", "latin1"),
  "nul.txt": Buffer.from("text\0more\n"),
  "no-eol.txt": "first\nlast",
  "patch.txt": "a\nb\nc\nd\ne\nf\ng\nh\n",
  "dir/keep.txt": "x\n",
  "trailing.py": "def f():\n    return 1\n",
  "notes.md": "# Notes\nfirst\n",
  "lines.txt": "keep 1\ndrop me\nkeep 2\n",
  "lines-crlf.txt": "keep 1\r\ndrop me\r\nkeep 2\r\n",
  "relative.txt": "before\n",
  "partial.txt": "p1\np2\np3\np4\n",
  "w-exists.txt": "old\n",
  "w-changed.txt": "old\n",
  "w-mode.sh": { content: "#!/bin/sh\n", mode: 0o755 },
  "outside-link": { symlink: "/tmp/outside-target" },
  "tmp-dir": { symlink: "/tmp" },
  "root-dir": { symlink: "/" },
  "inner-link": { symlink: "dir/keep.txt" },
};

let h: ToolHarness;
beforeAll(async () => {
  h = await startHarness(FILES);
});
afterAll(async () => {
  await h?.dispose();
});

describe("Edit (real sandbox)", () => {
  const bytes = async (rel: string) => (await h.sandbox.readFile(`/workspace/${rel}`))!.data;
  const read = (rel: string) => h.call("Read", { file_path: `/workspace/${rel}` });
  const edit = (rel: string, old_string: string, new_string: string, replace_all?: boolean) =>
    h.call("Edit", {
      file_path: `/workspace/${rel}`,
      old_string,
      new_string,
      ...(replace_all === undefined ? {} : { replace_all }),
    });

  it("replaces a unique string after a Read, with Claude Code's message", async () => {
    await read("code.txt");
    const r = await edit("code.txt", "line three", "line 3");
    expect(resultOf(r)).toEqual({ isError: false, text: UPDATED("/workspace/code.txt") });
    expect((await bytes("code.txt")).toString()).toBe("line one\nfoo bar\nline 3\nfoo baz\nend\n");
  });

  it("needs no second Read for a second Edit of the file it just wrote", async () => {
    const r = await edit("code.txt", "end", "the end");
    expect(r.isError).toBe(false);
    expect((await bytes("code.txt")).toString()).toBe("line one\nfoo bar\nline 3\nfoo baz\nthe end\n");
  });

  it("refuses a file that was not Read in this run", async () => {
    const r = await edit("not-read.txt", "line three", "line 3");
    expect(resultOf(r)).toEqual({
      isError: true,
      text: "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
    });
    expect((await bytes("not-read.txt")).toString()).toBe(CODE);
  });

  it("refuses a file a Bash command changed after the Read, until it is read again", async () => {
    await read("changed.txt");
    const bash = await h.call("Bash", { command: "echo appended >> changed.txt" });
    expect(bash.isError).toBe(false);
    const r = await edit("changed.txt", "line three", "line 3");
    expect(r.isError).toBe(true);
    expect(r.errorKind).toBe("modified_since_read");
    expect(textOf(r)).toMatch(/modified since read.*Read it again/);
    expect((await bytes("changed.txt")).toString()).toBe(`${CODE}appended\n`);
    await read("changed.txt");
    expect((await edit("changed.txt", "line three", "line 3")).isError).toBe(false);
  });

  it("accepts a file whose mtime changed but whose content did not (content hash)", async () => {
    await read("touched.txt");
    await h.call("Bash", { command: "touch -d '2001-01-01' touched.txt" });
    expect((await edit("touched.txt", "end", "fin")).isError).toBe(false);
  });

  it("says the string was not found and leaves the file byte-identical", async () => {
    await read("missing-old.txt");
    const r = await edit("missing-old.txt", "not in file", "x");
    expect(resultOf(r)).toEqual({
      isError: true,
      text: "<tool_use_error>String to replace not found in file.\nString: not in file</tool_use_error>",
    });
    expect((await bytes("missing-old.txt")).toString()).toBe(CODE);
  });

  it("refuses a non-unique string without replace_all, giving the count and the lines", async () => {
    await read("dup.txt");
    const r = await edit("dup.txt", "foo", "qux", false);
    expect(r.isError).toBe(true);
    expect(r.errorKind).toBe("not_unique");
    expect(textOf(r)).toMatch(
      /^<tool_use_error>Found 2 matches of the string to replace, but replace_all is false \(lines 2, 4\)\./,
    );
    expect(textOf(r)).toContain("\nString: foo</tool_use_error>");
    expect((await bytes("dup.txt")).toString()).toBe(CODE);
  });

  it("replaces every occurrence with replace_all", async () => {
    await read("all.txt");
    const r = await edit("all.txt", "foo", "qux", true);
    expect(resultOf(r)).toEqual({
      isError: false,
      text: "The file /workspace/all.txt has been updated. All occurrences were successfully replaced. (file state is current in your context — no need to Read it back)",
    });
    expect((await bytes("all.txt")).toString()).toBe("line one\nqux bar\nline three\nqux baz\nend\n");
    expect(r.title).toMatch(/2 replacements/);
  });

  it("strips whitespace at the end of new_string's lines, except in Markdown", async () => {
    await read("trailing.py");
    expect((await edit("trailing.py", "    return 1", "    x = 1  \t\n    return x   ")).isError).toBe(false);
    expect((await bytes("trailing.py")).toString()).toBe("def f():\n    x = 1\n    return x\n");
    await read("notes.md");
    expect((await edit("notes.md", "first", "line one  \nline two")).isError).toBe(false);
    expect((await bytes("notes.md")).toString()).toBe("# Notes\nline one  \nline two\n");
  });

  it("deletes a whole line with its newline, leaving no blank line", async () => {
    await read("lines.txt");
    expect((await edit("lines.txt", "drop me", "")).isError).toBe(false);
    expect((await bytes("lines.txt")).toString()).toBe("keep 1\nkeep 2\n");
    await read("lines-crlf.txt");
    expect((await edit("lines-crlf.txt", "drop me", "")).isError).toBe(false);
    expect((await bytes("lines-crlf.txt")).toString()).toBe("keep 1\r\nkeep 2\r\n");
  });

  it("echoes the path as the model gave it: a relative file_path stays relative", async () => {
    await h.call("Read", { file_path: "relative.txt" });
    const r = await h.call("Edit", { file_path: "relative.txt", old_string: "before", new_string: "after" });
    expect(resultOf(r)).toEqual({ isError: false, text: UPDATED("relative.txt") });
    const w = await h.call("Write", { file_path: "made/relative-new.txt", content: "x\n" });
    expect(textOf(w)).toBe(
      "File created successfully at: made/relative-new.txt (file state is current in your context — no need to Read it back)",
    );
  });

  it("does not claim the whole file is current after an Edit of a file read only in part", async () => {
    await h.call("Read", { file_path: "/workspace/partial.txt", offset: 2, limit: 1 });
    const r = await edit("partial.txt", "p2", "P2");
    expect(resultOf(r)).toEqual({
      isError: false,
      text: "The file /workspace/partial.txt has been updated successfully.",
    });
    // Still only part of it seen: a second Edit says the same.
    expect(textOf(await edit("partial.txt", "p3", "P3"))).toBe(
      "The file /workspace/partial.txt has been updated successfully.",
    );
    await read("partial.txt");
    expect(textOf(await edit("partial.txt", "p4", "P4"))).toBe(UPDATED("/workspace/partial.txt"));
  });

  it("refuses equal strings at validation, before anything is read", async () => {
    const r = await edit("same.txt", "end", "end");
    expect(resultOf(r)).toEqual({
      isError: true,
      text: "<tool_use_error>No changes to make: old_string and new_string are exactly the same.</tool_use_error>",
    });
    expect(r.stage).toBe("validate");
  });

  it("creates a new file (and its parents) from an empty old_string, saying updated like any Edit", async () => {
    const r = await edit("made/by/edit.txt", "", "fresh\n");
    expect(resultOf(r)).toEqual({ isError: false, text: UPDATED("/workspace/made/by/edit.txt") });
    expect((await bytes("made/by/edit.txt")).toString()).toBe("fresh\n");
  });

  it("refuses an empty old_string on a non-empty file, and fills a 0-byte one", async () => {
    await read("nonempty.txt");
    for (const replace_all of [false, true]) {
      const r = await edit("nonempty.txt", "", "inserted", replace_all);
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/file already exists/);
    }
    expect((await bytes("nonempty.txt")).toString()).toBe("content\n");
    await read("empty.txt");
    expect((await edit("empty.txt", "", "now filled\n")).isError).toBe(false);
    expect((await bytes("empty.txt")).toString()).toBe("now filled\n");
  });

  it("refuses a match that exists only after whitespace normalisation", async () => {
    await read("spaces.js");
    const r = await edit("spaces.js", "function foo(a, b) {\n  return a;\n}", "function foo() {}");
    expect(r.isError).toBe(true);
    expect(r.errorKind).toBe("no_match");
    expect((await bytes("spaces.js")).toString()).toBe(FILES["spaces.js"]);
  });

  it("matches straight quotes against curly ones and keeps the file's curly style, as Claude Code does", async () => {
    await read("curly.txt");
    const a = await edit("curly.txt", 'She said "hello" to me.', 'She said "goodbye" to me.');
    expect(a.isError).toBe(false);
    const b = await edit("curly.txt", "It's fine.", "It's great.");
    expect(b.isError).toBe(false);
    expect((await bytes("curly.txt")).toString()).toBe("She said “goodbye” to me.\nIt’s great.\n");
  });

  it("matches curly quotes typed by the model against straight ones in the file", async () => {
    await read("straight.txt");
    const r = await edit("straight.txt", "say “yes” now", 'say "no" now');
    expect(r.isError).toBe(false);
    expect((await bytes("straight.txt")).toString()).toBe('say "no" now\n');
  });

  it("matches an LF old_string in a CRLF file and keeps CRLF", async () => {
    await read("crlf.txt");
    const r = await edit("crlf.txt", "alpha\nbeta", "ALPHA\nBETA\nextra");
    expect(r.isError).toBe(false);
    expect((await bytes("crlf.txt")).toString()).toBe("ALPHA\r\nBETA\r\nextra\r\ngamma\r\n");
  });

  it("keeps mixed line endings byte for byte outside the edit", async () => {
    await read("mixed.txt");
    expect((await edit("mixed.txt", "three", "THREE")).isError).toBe(false);
    expect((await bytes("mixed.txt")).equals(Buffer.from("one\r\ntwo\nTHREE\r\nfour\n"))).toBe(true);
  });

  it("keeps a UTF-8 BOM", async () => {
    await read("bom.txt");
    expect((await edit("bom.txt", "other = 2", "other = 3")).isError).toBe(false);
    expect((await bytes("bom.txt")).equals(Buffer.from("\uFEFFname = 1\nother = 3\n"))).toBe(true);
  });

  it("keeps the file mode (755 stays 755)", async () => {
    await read("run.sh");
    expect((await edit("run.sh", "echo old", "echo new")).isError).toBe(false);
    const st = await h.sandbox.stat("/workspace/run.sh");
    expect(st!.mode & 0o777).toBe(0o755);
    expect(await h.sh("./run.sh")).toBe("new\n");
  });

  it("keeps a missing final newline, and the patch says so", async () => {
    await read("no-eol.txt");
    const r = await edit("no-eol.txt", "first", "FIRST");
    expect((await bytes("no-eol.txt")).toString()).toBe("FIRST\nlast");
    expect(r.patch!.hunks[0]!.lines).toContain("\\ No newline at end of file");
  });

  it("refuses a Latin-1 file rather than re-encoding it", async () => {
    await read("latin1.txt");
    const r = await edit("latin1.txt", "caf", "coffee");
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/not valid UTF-8/);
    expect((await bytes("latin1.txt")).equals(Buffer.from("caf\xe9\n", "latin1"))).toBe(true);
  });

  it("refuses a binary file as binary (even though Read refused to show it)", async () => {
    expect((await read("nul.txt")).errorKind).toBe("binary_file");
    const r = await edit("nul.txt", "text", "TEXT");
    expect(r.isError).toBe(true);
    expect(r.errorKind).toBe("binary_file");
    expect((await bytes("nul.txt")).equals(Buffer.from("text\0more\n"))).toBe(true);
  });

  it("carries a structured patch for the report", async () => {
    await read("patch.txt");
    const r = await edit("patch.txt", "e\n", "E\nE2\n");
    expect(r.patch).toMatchObject({
      oldFileName: "/workspace/patch.txt",
      newFileName: "/workspace/patch.txt",
    });
    expect(r.patch!.hunks).toEqual([
      {
        oldStart: 2,
        oldLines: 7,
        newStart: 2,
        newLines: 8,
        lines: [" b", " c", " d", "-e", "+E", "+E2", " f", " g", " h"],
      },
    ]);
  });

  it("says a missing file does not exist, and a directory is a directory", async () => {
    const missing = await edit("nope.txt", "a", "b");
    expect(missing.isError).toBe(true);
    expect(missing.errorKind).toBe("not_found");
    expect(textOf(missing)).toMatch(/File does not exist/);
    const dir = await edit("dir", "a", "b");
    expect(dir.isError).toBe(true);
    expect(dir.errorKind).toBe("is_directory");
  });

  it("refuses a file over the edit size cap, even after a windowed Read", async () => {
    await h.sh("yes 'some text' | head -c 17000000 > over-cap.txt");
    expect((await read("over-cap.txt")).isError).toBe(false);
    const r = await edit("over-cap.txt", "some text", "other");
    expect(r.isError).toBe(true);
    expect(r.errorKind).toBe("too_large");
    expect(textOf(r)).toMatch(/files over \d+ bytes are not edited/);
  });

  it("answers schema violations with an error and changes nothing", async () => {
    const cases: unknown[] = [
      { file_path: "/workspace/code.txt", old_string: "a" },
      { file_path: "/workspace/code.txt", old_string: "a", new_string: "b", replace_all: "yes" },
      { file_path: "/workspace/code.txt", old_string: "a", new_string: "b", extra: 1 },
      { file_path: ["/workspace/code.txt"], old_string: "a", new_string: "b" },
      { file_path: "/workspace/code.txt", old_string: "line", new_string: "z".repeat(50 * 1024 * 1024) },
    ];
    const before = await bytes("code.txt");
    for (const input of cases) {
      const r = await h.call("Edit", input);
      expect(r.stage).toBe("parse");
      expect(r.isError).toBe(true);
    }
    expect((await bytes("code.txt")).equals(before)).toBe(true);
  });
});

describe("Write (real sandbox)", () => {
  const bytes = async (rel: string) => (await h.sandbox.readFile(`/workspace/${rel}`))?.data;
  const write = (file_path: string, content: string) => h.call("Write", { file_path, content });

  it("creates a new file and its parent directories without a Read", async () => {
    const r = await write("/workspace/deep/er/new.txt", "hello\nnew file\n");
    expect(resultOf(r)).toEqual({
      isError: false,
      text: "File created successfully at: /workspace/deep/er/new.txt (file state is current in your context — no need to Read it back)",
    });
    expect((await bytes("deep/er/new.txt"))!.toString()).toBe("hello\nnew file\n");
    expect(r.patch!.hunks[0]!.lines).toEqual(["+hello", "+new file"]);
  });

  it("refuses to overwrite a file that was not Read", async () => {
    const r = await write("/workspace/w-exists.txt", "new\n");
    expect(resultOf(r)).toEqual({
      isError: true,
      text: "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
    });
    expect((await bytes("w-exists.txt"))!.toString()).toBe("old\n");
  });

  it("overwrites a file after a Read", async () => {
    await h.call("Read", { file_path: "/workspace/w-exists.txt" });
    const r = await write("/workspace/w-exists.txt", "new\n");
    expect(resultOf(r)).toEqual({ isError: false, text: UPDATED("/workspace/w-exists.txt") });
    expect((await bytes("w-exists.txt"))!.toString()).toBe("new\n");
  });

  it("refuses to overwrite a file that changed since the Read", async () => {
    await h.call("Read", { file_path: "/workspace/w-changed.txt" });
    await h.call("Bash", { command: "echo other > w-changed.txt" });
    const r = await write("/workspace/w-changed.txt", "mine\n");
    expect(r.isError).toBe(true);
    expect(r.errorKind).toBe("modified_since_read");
    expect((await bytes("w-changed.txt"))!.toString()).toBe("other\n");
  });

  it("writes empty content as a 0-byte file", async () => {
    expect((await write("/workspace/zero.txt", "")).isError).toBe(false);
    const st = await h.sandbox.stat("/workspace/zero.txt");
    expect(st).toMatchObject({ type: "file", size: 0 });
  });

  it("keeps the mode of a file it overwrites", async () => {
    await h.call("Read", { file_path: "/workspace/w-mode.sh" });
    await write("/workspace/w-mode.sh", "#!/bin/sh\necho hi\n");
    expect((await h.sandbox.stat("/workspace/w-mode.sh"))!.mode & 0o777).toBe(0o755);
  });

  it("refuses writing through symlinks that point outside, and creates nothing there", async () => {
    for (const target of [
      "/workspace/outside-link",
      "/workspace/tmp-dir/evil.txt",
      "/workspace/root-dir/tmp/evil2.txt",
      "/workspace/root-dir/etc/cron.d/x",
    ]) {
      const r = await write(target, "pwned\n");
      expect(r.isError, target).toBe(true);
      expect(r.errorKind).toBe("outside_workspace");
      expect(r.stage).toBe("validate");
    }
    expect(await h.sh("ls /tmp/outside-target /tmp/evil.txt /tmp/evil2.txt 2>/dev/null | wc -l")).toBe("0\n");
  });

  it("never writes through a symlink, even one that stays inside; it names the target instead (P5)", async () => {
    const before = (await bytes("dir/keep.txt"))!.toString();
    await h.call("Read", { file_path: "/workspace/inner-link" });
    const r = await write("/workspace/inner-link", "via link\n");
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("/workspace/dir/keep.txt");
    expect((await bytes("dir/keep.txt"))!.toString()).toBe(before);
    expect((await h.sandbox.stat("/workspace/inner-link"))!.isSymlink).toBe(true);
  });

  it("answers a parent that is a file with an error, not a crash", async () => {
    const r = await write("/workspace/w-exists.txt/child.txt", "x");
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/EEXIST|ENOTDIR|not a directory/);
    expect((await bytes("w-exists.txt"))!.toString()).toBe("new\n");
  });

  it("refuses a directory, and content over the size cap at parse", async () => {
    const dir = await write("/workspace/dir", "x");
    expect(dir.isError).toBe(true);
    expect(dir.errorKind).toBe("is_directory");
    const huge = await write("/workspace/huge.txt", "z".repeat(50 * 1024 * 1024));
    expect(huge.stage).toBe("parse");
    expect(await bytes("huge.txt")).toBeUndefined();
  });
});
