// Grep and Glob through the pipeline over a real sandbox: output modes, ordering by mtime, pagination,
// caps, the saved whole output of a cut result, and confinement to the workspace.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OUTPUTS_DIR } from "../../src/sandbox/sandbox.js";
import { resultOf, startHarness, textOf, type ToolHarness } from "../support/tool-harness.js";

const FILES = {
  "proj/src/app.ts":
    "import { helper } from './util';\n// TODO: refactor this\nexport function main() {\n  const value = helper(1);\n  console.log('value', value);\n  return value;\n}\n// todo lowercase\n",
  "proj/src/util.js":
    "export function helper(x) {\n  // TODO implement\n  return x + 1;\n}\nconst foo = 1;\nconst bar = foo\n  + 2;\n",
  "proj/src/tool.py": "def helper():\n    # TODO: python todo\n    return 42\n\ndef other():\n    pass\n",
  "proj/docs/guide.md": "# Guide\nThis guide has a TODO item.\n-flag option described here\nfoo\nbar\n",
  "proj/notes.txt": "nothing to see\n",
  "proj/.hidden/secret.txt": "TODO hidden\n",
  "bin/data.bin": Buffer.concat([
    Buffer.from("needle in binary\n"),
    Buffer.from([0, 1, 2, 0]),
    Buffer.from("needle again\n"),
  ]),
  "bin/text.txt": "needle in text\n",
  "glob/b.txt": "b\n",
  "glob/a.txt": "a\n",
  "glob/c.md": "c\n",
  "glob/sub/d.txt": "d\n",
  "loop/file.txt": "in loop\n",
  "loop/self": { symlink: "." },
  "loop/up": { symlink: ".." },
  "etc-link": { symlink: "/etc" },
  ...Object.fromEntries(
    Array.from({ length: 120 }, (_, i) => [`many/f${String(i + 1).padStart(3, "0")}.txt`, "x\n"]),
  ),
};

const MTIMES: Record<string, string> = {
  "proj/src/app.ts": "2024-01-01T00:00:50Z",
  "proj/src/util.js": "2024-01-01T00:00:40Z",
  "proj/src/tool.py": "2024-01-01T00:00:30Z",
  "proj/docs/guide.md": "2024-01-01T00:00:20Z",
  "proj/notes.txt": "2024-01-01T00:00:10Z",
  "proj/.hidden/secret.txt": "2024-01-01T00:01:00Z",
  "glob/b.txt": "2024-01-01T00:00:10Z",
  "glob/a.txt": "2024-01-01T00:00:20Z",
  "glob/c.md": "2024-01-01T00:00:30Z",
  "glob/sub/d.txt": "2024-01-01T00:00:05Z",
};

describe("Grep and Glob (real sandbox)", () => {
  let h: ToolHarness;
  const grep = (input: Record<string, unknown>) => h.call("Grep", input);
  const glob = (input: Record<string, unknown>) => h.call("Glob", input);

  beforeAll(async () => {
    h = await startHarness(FILES, { git: true });
    const touches = Object.entries(MTIMES).map(([f, t]) => `touch -d '${t}' '${f}'`);
    // many/f001 is the oldest, f120 the newest.
    touches.push(
      'i=0; for f in many/*.txt; do i=$((i+1)); touch -d "2024-02-01 00:00:00 UTC + $i seconds" "$f"; done',
    );
    touches.push("mkdir -p big && seq -f 'match %g' 1 10000 > big/matches.txt");
    await h.sh(touches.join(" && "));
  });
  afterAll(async () => {
    await h?.dispose();
  });

  describe("Grep", () => {
    it("lists files with matches newest first, hidden files included, paths relative to the workspace", async () => {
      const r = await grep({ pattern: "TODO", path: "proj" });
      expect(resultOf(r)).toEqual({
        isError: false,
        text: "Found 5 files\nproj/.hidden/secret.txt\nproj/src/app.ts\nproj/src/util.js\nproj/src/tool.py\nproj/docs/guide.md",
      });
    });

    it("says No files found when nothing matches", async () => {
      expect(resultOf(await grep({ pattern: "ZZZ_NOPE" }))).toEqual({
        isError: false,
        text: "No files found",
      });
    });

    it("shows matching lines with line numbers by default in content mode", async () => {
      const r = await grep({ pattern: "TODO", path: "proj/src", output_mode: "content" });
      expect(textOf(r)).toBe(
        "proj/src/app.ts:2:// TODO: refactor this\nproj/src/tool.py:2:    # TODO: python todo\nproj/src/util.js:2:  // TODO implement",
      );
    });

    it("drops line numbers with -n false and matches case-insensitively with -i", async () => {
      const r = await grep({
        pattern: "todo",
        path: "proj/src/app.ts",
        output_mode: "content",
        "-n": false,
        "-i": true,
      });
      expect(textOf(r)).toBe("// TODO: refactor this\n// todo lowercase");
    });

    it("shows context with -C, -A and -B, groups separated by --", async () => {
      const c = await grep({ pattern: "helper", path: "proj", output_mode: "content", "-C": 1 });
      expect(textOf(c)).toBe(
        "proj/src/app.ts:1:import { helper } from './util';\nproj/src/app.ts-2-// TODO: refactor this\nproj/src/app.ts-3-export function main() {\n" +
          "proj/src/app.ts:4:  const value = helper(1);\nproj/src/app.ts-5-  console.log('value', value);\n--\n" +
          "proj/src/tool.py:1:def helper():\nproj/src/tool.py-2-    # TODO: python todo\n--\n" +
          "proj/src/util.js:1:export function helper(x) {\nproj/src/util.js-2-  // TODO implement",
      );
      const a = await grep({ pattern: "def other", path: "proj", output_mode: "content", "-A": 1 });
      expect(textOf(a)).toBe("proj/src/tool.py:5:def other():\nproj/src/tool.py-6-    pass");
      const b = await grep({ pattern: "def other", path: "proj", output_mode: "content", "-B": 2 });
      expect(textOf(b)).toBe(
        "proj/src/tool.py-3-    return 42\nproj/src/tool.py-4-\nproj/src/tool.py:5:def other():",
      );
    });

    it("counts matches per file with a total", async () => {
      const r = await grep({ pattern: "TODO|helper", path: "proj", output_mode: "count" });
      expect(textOf(r)).toBe(
        "proj/.hidden/secret.txt:1\nproj/docs/guide.md:1\nproj/src/app.ts:3\nproj/src/tool.py:2\nproj/src/util.js:2\n\nFound 9 total occurrences across 5 files.",
      );
    });

    it("counts matching lines, as ripgrep's --count, not matches", async () => {
      // app.ts has "value" five times on three lines.
      const r = await grep({ pattern: "value", path: "proj/src", output_mode: "count" });
      expect(textOf(r)).toBe("proj/src/app.ts:3\n\nFound 3 total occurrences across 1 file.");
    });

    it("gives the count summary also when nothing matches", async () => {
      const r = await grep({ pattern: "ZZZ_NOPE", path: "proj", output_mode: "count" });
      expect(resultOf(r)).toEqual({
        isError: false,
        text: "No matches found\n\nFound 0 total occurrences across 0 files.",
      });
    });

    it("says No entries at this offset, with the pagination note, when the offset is past the last entry", async () => {
      expect(textOf(await grep({ pattern: "TODO", path: "proj", offset: 10 }))).toBe(
        "No entries at this offset. [Showing results with pagination = offset: 10]",
      );
      expect(
        textOf(
          await grep({ pattern: "TODO", path: "proj/src", output_mode: "content", offset: 3, head_limit: 5 }),
        ),
      ).toBe("No entries at this offset. [Showing results with pagination = limit: 5, offset: 3]");
      expect(textOf(await grep({ pattern: "TODO", path: "proj/src", output_mode: "count", offset: 3 }))).toBe(
        "No entries at this offset\n\nFound 3 total occurrences across 3 files. with pagination = offset: 3",
      );
      // Nothing matched at all: still the plain answer.
      expect(textOf(await grep({ pattern: "ZZZ_NOPE", path: "proj", offset: 10 }))).toBe("No files found");
    });

    it("prints a single file's lines without the file name, as ripgrep does", async () => {
      const r = await grep({ pattern: "TODO", path: "proj/src/tool.py", output_mode: "content" });
      expect(resultOf(r)).toEqual({ isError: false, text: "2:    # TODO: python todo" });
      const c = await grep({
        pattern: "helper",
        path: "/workspace/proj/src/util.js",
        output_mode: "content",
        "-A": 1,
      });
      expect(textOf(c)).toBe("1:export function helper(x) {\n2-  // TODO implement");
    });

    it("takes -o (only the matching part) and context (as -C) from newer Claude Code versions", async () => {
      const o = await grep({ pattern: "TODO:? \\w+", path: "proj/src", output_mode: "content", "-o": true });
      expect(textOf(o)).toBe(
        "proj/src/app.ts:2:TODO: refactor\nproj/src/tool.py:2:TODO: python\nproj/src/util.js:2:TODO implement",
      );
      const withContext = await grep({
        pattern: "other",
        path: "proj/src",
        output_mode: "content",
        context: 1,
      });
      const withC = await grep({ pattern: "other", path: "proj/src", output_mode: "content", "-C": 1 });
      expect(textOf(withContext)).toBe(
        "proj/src/tool.py-4-\nproj/src/tool.py:5:def other():\nproj/src/tool.py-6-    pass",
      );
      expect(textOf(withContext)).toBe(textOf(withC));
    });

    it("filters by glob and by type", async () => {
      expect(textOf(await grep({ pattern: "TODO", path: "proj", glob: "*.{ts,py}" }))).toBe(
        "Found 2 files\nproj/src/app.ts\nproj/src/tool.py",
      );
      expect(textOf(await grep({ pattern: "TODO", path: "proj", type: "py" }))).toBe(
        "Found 1 file\nproj/src/tool.py",
      );
    });

    it("paginates with head_limit and offset in every mode, and says so", async () => {
      expect(textOf(await grep({ pattern: "TODO", path: "proj", head_limit: 1 }))).toBe(
        "Found 1 file limit: 1\nproj/.hidden/secret.txt",
      );
      expect(textOf(await grep({ pattern: "TODO", path: "proj", head_limit: 2, offset: 1 }))).toBe(
        "Found 2 files limit: 2, offset: 1\nproj/src/app.ts\nproj/src/util.js",
      );
      const content = await grep({
        pattern: "TODO",
        path: "proj/src",
        output_mode: "content",
        head_limit: 1,
        offset: 1,
      });
      expect(textOf(content)).toBe(
        "proj/src/tool.py:2:    # TODO: python todo\n\n[Showing results with pagination = limit: 1, offset: 1]",
      );
      // The totals are before pagination: three files match, two are shown.
      const count = await grep({ pattern: "TODO", path: "proj/src", output_mode: "count", head_limit: 2 });
      expect(textOf(count)).toBe(
        "proj/src/app.ts:1\nproj/src/tool.py:1\n\nFound 3 total occurrences across 3 files. with pagination = limit: 2",
      );
    });

    it("matches across lines only with multiline", async () => {
      const multi = await grep({
        pattern: "foo\\n  \\+ 2",
        path: "proj",
        multiline: true,
        output_mode: "content",
      });
      expect(textOf(multi)).toBe("proj/src/util.js:6:const bar = foo\nproj/src/util.js:7:  + 2;");
      const dotall = await grep({ pattern: "helper.*implement", path: "proj/src/util.js", multiline: true });
      expect(textOf(dotall)).toBe("Found 1 file\nproj/src/util.js");
      expect(textOf(await grep({ pattern: "helper.*implement", path: "proj/src/util.js" }))).toBe(
        "No files found",
      );
    });

    it("bounds 10,000 matching lines, keeping the whole output in the sandbox and on the host", async () => {
      const r = await grep({ pattern: "match", path: "big", output_mode: "content" });
      const shown = textOf(r);
      expect(r.isError).toBe(false);
      expect(r.truncated).toBe(true);
      expect(shown.length).toBeLessThanOrEqual(20_000);
      expect(shown.startsWith("big/matches.txt:1:match 1\n")).toBe(true);
      expect(shown.endsWith("big/matches.txt:10000:match 10000")).toBe(true);
      expect(r.fullOutputPath).toBe(`${OUTPUTS_DIR}/${r.id}.txt`);
      expect(shown).toContain(`The full output is saved at ${r.fullOutputPath}`);

      const saved = await h.call("Read", { file_path: r.fullOutputPath, offset: 5000, limit: 2 });
      expect(resultOf(saved)).toEqual({
        isError: false,
        text: "5000\tbig/matches.txt:5000:match 5000\n5001\tbig/matches.txt:5001:match 5001",
      });
      const host = fs.readFileSync(path.join(h.outputDir, "tool-outputs", `${r.id}.txt`), "utf8");
      expect(host.split("\n")).toHaveLength(10_000);
    });

    it("answers an invalid regex with an error the model can act on", async () => {
      const r = await grep({ pattern: "foo(", path: "proj" });
      expect(r.isError).toBe(true);
      expect(r.stage).toBe("call");
      expect(textOf(r)).toMatch(/^<tool_use_error>ripgrep failed: regex parse error/);
    });

    it("treats a pattern that starts with - as a pattern, not a flag", async () => {
      const r = await grep({ pattern: "-flag", path: "proj", output_mode: "content" });
      expect(textOf(r)).toBe("proj/docs/guide.md:3:-flag option described here");
      const rf = await grep({ pattern: "--files", path: "proj" });
      expect(resultOf(rf)).toEqual({ isError: false, text: "No files found" });
    });

    it("skips binary files", async () => {
      expect(textOf(await grep({ pattern: "needle", path: "bin" }))).toBe("Found 1 file\nbin/text.txt");
    });

    it("never searches .git or follows a symlink out of the workspace", async () => {
      expect(textOf(await grep({ pattern: "Unnamed repository" }))).toBe("No files found");
      expect(textOf(await grep({ pattern: "^root:" }))).toBe("No files found");
    });

    it("refuses a search path outside the workspace before running anything", async () => {
      for (const p of ["/", "/etc", "..", "../../etc", "/workspace/etc-link", "etc-link/"]) {
        const r = await grep({ pattern: "root", path: p });
        expect(r.isError, p).toBe(true);
        expect(r.errorKind, p).toBe("outside_workspace");
        expect(r.stage, p).toBe("validate");
      }
    });

    it("says a missing path does not exist", async () => {
      const r = await grep({ pattern: "x", path: "no/such/dir" });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/does not exist/);
    });

    it("checks the working directory it searches: gone, or swapped for a symlink out of the workspace", async () => {
      const before = h.state.cwd;
      try {
        await h.sh("mkdir -p gone swapped");
        h.state.cwd = "/workspace/gone";
        await h.sh("rmdir gone");
        for (const r of [await grep({ pattern: "root" }), await glob({ pattern: "*" })]) {
          expect(r.isError).toBe(true);
          expect(textOf(r)).toMatch(/\/workspace\/gone does not exist/);
        }
        h.state.cwd = "/workspace/swapped";
        await h.sh("rmdir swapped && ln -s /etc swapped");
        for (const r of [await grep({ pattern: "root" }), await glob({ pattern: "passwd" })]) {
          expect(r.isError).toBe(true);
          expect(textOf(r)).toMatch(/outside/);
          expect(textOf(r)).not.toMatch(/passwd|root:/);
        }
      } finally {
        h.state.cwd = before;
        await h.sh("rm -f swapped");
      }
    });

    it("answers bad input at parse", async () => {
      for (const input of [
        {},
        { pattern: "" },
        { pattern: "x", output_mode: "lines" },
        { pattern: "x", "-C": -1 },
        { pattern: "x", bogus: 1 },
      ]) {
        expect((await grep(input)).stage, JSON.stringify(input)).toBe("parse");
      }
    });
  });

  describe("Glob", () => {
    it("lists matches oldest first, relative to the working directory", async () => {
      expect(resultOf(await glob({ pattern: "glob/**/*.txt" }))).toEqual({
        isError: false,
        text: "glob/sub/d.txt\nglob/b.txt\nglob/a.txt",
      });
    });

    it("caps at 100 results with a notice", async () => {
      const r = await glob({ pattern: "many/*.txt" });
      const lines = textOf(r).split("\n");
      expect(lines).toHaveLength(101);
      expect(lines[0]).toBe("many/f001.txt");
      expect(lines[99]).toBe("many/f100.txt");
      expect(lines[100]).toBe(
        "(Showing 100 of 120 matching files; 20 more are not listed. Narrow the pattern or path to see the rest.)",
      );
    });

    it("searches under the path parameter, absolute or relative", async () => {
      expect(textOf(await glob({ pattern: "*.md", path: "/workspace/glob" }))).toBe("glob/c.md");
      expect(textOf(await glob({ pattern: "**/*.txt", path: "glob" }))).toBe(
        "glob/sub/d.txt\nglob/b.txt\nglob/a.txt",
      );
    });

    it("matches an absolute pattern as such, not under the search path", async () => {
      expect(resultOf(await glob({ pattern: "/workspace/glob/**/*.txt" }))).toEqual({
        isError: false,
        text: "glob/sub/d.txt\nglob/b.txt\nglob/a.txt",
      });
      expect(textOf(await glob({ pattern: "/workspace/glob/*.md", path: "/workspace/proj" }))).toBe(
        "glob/c.md",
      );
      const outside = await glob({ pattern: "/etc/**/*.conf" });
      expect(outside.isError).toBe(true);
      expect(outside.errorKind).toBe("outside_workspace");
    });

    it("refuses a path that is a file", async () => {
      const r = await glob({ pattern: "*.txt", path: "glob/a.txt" });
      expect(resultOf(r)).toEqual({
        isError: true,
        text: "<tool_use_error>Path is not a directory: glob/a.txt</tool_use_error>",
      });
    });

    it("includes hidden files and says No files found when nothing matches", async () => {
      expect(textOf(await glob({ pattern: "**/secret.txt" }))).toBe("proj/.hidden/secret.txt");
      expect(resultOf(await glob({ pattern: "**/*.rs" }))).toEqual({
        isError: false,
        text: "No files found",
      });
    });

    it("keeps a ../** pattern inside the workspace", async () => {
      const r = await glob({ pattern: "../**" });
      expect(r.isError).toBe(false);
      expect(textOf(r)).toBe("No files found");
    });

    it("refuses a path outside the workspace", async () => {
      for (const p of ["/", "/etc", "../..", "/workspace/../tmp", "etc-link"]) {
        const r = await glob({ pattern: "**/*", path: p });
        expect(r.isError, p).toBe(true);
        expect(r.errorKind, p).toBe("outside_workspace");
      }
    });

    it("terminates on a symlinked directory loop, without following it", async () => {
      const r = await glob({ pattern: "**/*", path: "loop" });
      expect(r.isError).toBe(false);
      expect(textOf(r).split("\n")).toContain("loop/file.txt");
      expect(textOf(r)).not.toContain("loop/self/");
      expect(textOf(r)).not.toContain("loop/up/");
    });
  });
});
