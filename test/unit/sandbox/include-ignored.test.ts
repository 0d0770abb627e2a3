// Which git-ignored files the copy-in takes (--include-ignored / include_ignored), and how what it leaves
// out is summarised for the report. Pure matching and grouping, plus the listing on a real git repository.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ignoredPathMatcher,
  listWorkspace,
  MAX_IGNORED_PATHS_LISTED,
  normalizeIgnoredPattern,
  summarizeIgnored,
} from "../../../src/sandbox/copy/archive.js";
import { parseActionInputs, INPUT_DEFAULTS, type InputName } from "../../../src/action/inputs.js";
import { parseRunConfig } from "../../../src/runner/config.js";
import { makeWorkspace } from "../../support/workspace.js";

describe("ignoredPathMatcher", () => {
  const cases: Array<[string[], string, boolean]> = [
    [["node_modules"], "node_modules/tape/index.js", true],
    [["node_modules"], "packages/web/node_modules/a/b.js", true],
    [["node_modules/"], "node_modules/x.js", true],
    [["./node_modules"], "node_modules/x.js", true],
    [["node_modules"], "src/node_modules_helper.js", false],
    [[".venv"], ".venv/lib/python3.11/site-packages/six.py", true],
    [["*.pyc"], "pkg/__pycache__/m.cpython-311.pyc", true],
    [["/build"], "build/out.o", true],
    [["/build"], "sub/build/out.o", false],
    [["vendor/cache"], "vendor/cache/gems/a.gem", true],
    [["vendor/cache"], "other/vendor/cache/a.gem", false],
    [["packages/*/node_modules"], "packages/web/node_modules/a.js", true],
    [["node_modules", ".venv"], ".venv/bin/python", true],
    [["node_modules"], "dist/app.js", false],
  ];
  for (const [patterns, file, expected] of cases) {
    it(`${patterns.join(",")} ${expected ? "takes" : "leaves"} ${file}`, () => {
      expect(ignoredPathMatcher(patterns)(file)).toBe(expected);
    });
  }

  it("is linear in the path: a 1 MB path of one character with no slash, and 100,000 levels", () => {
    const match = ignoredPathMatcher(["node_modules", "a/b"]);
    expect(match("x".repeat(1 << 20))).toBe(false);
    expect(match(Array.from({ length: 100_000 }, () => "d").join("/"))).toBe(false);
  });

  it("refuses patterns that select nothing or everything, saying why", () => {
    expect(() => normalizeIgnoredPattern("  ")).toThrow(/not a path pattern/);
    expect(() => normalizeIgnoredPattern("/")).toThrow(/not a path pattern/);
    expect(() => normalizeIgnoredPattern("!node_modules")).toThrow(/negated patterns are not supported/);
  });
});

describe("summarizeIgnored", () => {
  it("groups by the outermost ignored directory, biggest first, and bounds the list", () => {
    const files = [
      ...Array.from({ length: 5 }, (_, i) => `node_modules/a/f${i}.js`),
      "node_modules/b.js",
      "web/node_modules/x.js",
      "debug.log",
    ];
    const summary = summarizeIgnored(files, new Set(["node_modules/", "web/node_modules/", "debug.log"]));
    expect(summary).toEqual({
      files: 8,
      paths: [
        { path: "node_modules/", files: 6 },
        { path: "debug.log", files: 1 },
        { path: "web/node_modules/", files: 1 },
      ],
      morePaths: 0,
    });
    const many = Array.from({ length: 50 }, (_, i) => `log${i}.txt`);
    const bounded = summarizeIgnored(many, new Set(many));
    expect(bounded?.paths).toHaveLength(MAX_IGNORED_PATHS_LISTED);
    expect(bounded?.morePaths).toBe(50 - MAX_IGNORED_PATHS_LISTED);
    expect(summarizeIgnored([], new Set())).toBeUndefined();
  });
});

describe("listWorkspace on a git repository with ignored dependencies", () => {
  const workspace = () =>
    makeWorkspace(
      {
        ".gitignore": "node_modules/\n.venv/\n*.log\n",
        "index.js": "require('dep');\n",
        "node_modules/dep/index.js": "module.exports = 1;\n",
        "node_modules/dep/package.json": '{"name":"dep"}\n',
        ".venv/bin/python": "#!/bin/sh\n",
        "build.log": "noise\n",
      },
      { git: true },
    );

  it("leaves ignored files out and says which, by default", async () => {
    const listing = await listWorkspace(workspace());
    expect(listing.paths).toContain("index.js");
    expect(
      listing.paths.filter((p) => p.startsWith("node_modules") || p.startsWith(".venv") || p === "build.log"),
    ).toEqual([]);
    expect(await listing.ignoredLeftOut).toEqual({
      files: 4,
      paths: [
        { path: "node_modules/", files: 2 },
        { path: ".venv/", files: 1 },
        { path: "build.log", files: 1 },
      ],
      morePaths: 0,
    });
  });

  it("takes only the ignored paths that match, with their parent directories first", async () => {
    const listing = await listWorkspace(workspace(), ["node_modules"]);
    const dep = listing.paths.indexOf("node_modules/dep/index.js");
    expect(dep).toBeGreaterThan(listing.paths.indexOf("node_modules/dep"));
    expect(listing.paths.indexOf("node_modules/dep")).toBeGreaterThan(listing.paths.indexOf("node_modules"));
    expect(listing.paths).not.toContain("build.log");
    expect(await listing.ignoredLeftOut).toEqual({
      files: 2,
      paths: [
        { path: ".venv/", files: 1 },
        { path: "build.log", files: 1 },
      ],
      morePaths: 0,
    });
  });

  it("reads the commit checked out with the work tree's top", async () => {
    const ws = workspace();
    const listing = await listWorkspace(ws);
    expect(listing.baseCommit).toBe(
      execFileSync("git", ["rev-parse", "HEAD"], { cwd: ws, encoding: "utf8" }).trim(),
    );
  });

  it("has no commit on an unborn branch, and still copies the history", async () => {
    const ws = makeWorkspace({ "a.txt": "a\n" });
    execFileSync("git", ["init", "-q"], { cwd: ws });
    const listing = await listWorkspace(ws);
    expect(listing.isGitRepo).toBe(true);
    expect(listing.baseCommit).toBeUndefined();
    expect(listing.paths).toEqual(expect.arrayContaining(["a.txt", ".git", ".git/HEAD"]));
  });

  it("takes every ignored file with true, leaving nothing to report", async () => {
    const listing = await listWorkspace(workspace(), true);
    expect(listing.paths).toEqual(
      expect.arrayContaining(["node_modules/dep/index.js", ".venv/bin/python", "build.log"]),
    );
    expect(await listing.ignoredLeftOut).toBeUndefined();
  });
});

describe("listWorkspace on a git worktree (its .git is a file naming a directory elsewhere)", () => {
  it("copies the files without the history instead of failing on the .git file", async () => {
    const main = makeWorkspace({ ".gitignore": "node_modules/\n", "a.js": "1;\n" }, { git: true });
    const worktree = `${main}-wt`;
    execFileSync("git", ["worktree", "add", "-q", "-b", "side", worktree], { cwd: main, stdio: "pipe" });
    fs.mkdirSync(path.join(worktree, "node_modules/dep"), { recursive: true });
    fs.writeFileSync(path.join(worktree, "node_modules/dep/index.js"), "2;\n");
    const listing = await listWorkspace(worktree, ["node_modules"]);
    expect(listing.isGitRepo).toBe(false);
    expect(listing.paths).not.toContain(".git");
    expect(listing.paths).toEqual(expect.arrayContaining(["a.js", "node_modules/dep/index.js"]));
  });
});

describe("the option's spellings", () => {
  const inputs = (include_ignored: string) =>
    parseActionInputs((name: InputName) =>
      name === "include_ignored" ? include_ignored : INPUT_DEFAULTS[name],
    );

  it("Action: false, true, or a list of patterns; a bad pattern names the input", () => {
    expect(inputs("").include_ignored).toBe(false);
    expect(inputs("false").include_ignored).toBe(false);
    expect(inputs("TRUE").include_ignored).toBe(true);
    expect(inputs("node_modules, .venv/").include_ignored).toEqual(["node_modules", ".venv"]);
    expect(inputs("node_modules\n./vendor/cache\n").include_ignored).toEqual([
      "node_modules",
      "vendor/cache",
    ]);
    expect(() => inputs("!node_modules")).toThrow(/include_ignored: .*negated patterns/);
  });

  it("RunConfig: a boolean or at least one pattern", () => {
    const base = { workspace: ".", script: "s.json" };
    expect(parseRunConfig(base).includeIgnored).toBe(false);
    expect(parseRunConfig({ ...base, includeIgnored: ["node_modules/"] }).includeIgnored).toEqual([
      "node_modules",
    ]);
    expect(() => parseRunConfig({ ...base, includeIgnored: [] })).toThrow(/includeIgnored/);
    expect(() => parseRunConfig({ ...base, includeIgnored: [" "] })).toThrow(/not a path pattern/);
  });
});
