// Project memory's pure-ish parts on host folders: which files, in which order, their imports (relative,
// recursive to the depth limit, each once, not in code, never outside the tree), conditional rules, nested
// memory as paths reach it, the size cap, and `--print-context` built as a run builds its first request.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseRunConfig } from "../../../src/runner/config.js";
import {
  importsOf,
  MAX_IMPORT_DEPTH,
  MAX_MEMORY_FILE_CHARS,
  MemorySeen,
} from "../../../src/runner/instructions/memory/memory-files.js";
import { memorySources, ModelContext } from "../../../src/runner/instructions/memory/model-context.js";
import { takeGitSnapshot } from "../../../src/runner/instructions/memory/git-snapshot.js";
import { printContext } from "../../../src/runner/instructions/memory/print-context.js";
import { NestedMemoryTracker, startMemory } from "../../../src/runner/instructions/memory/project-memory.js";
import { gitIn, writeFiles } from "../../support/workspace.js";

function tree(files: Record<string, string | { symlink: string }>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-memory-"));
  writeFiles(dir, files);
  return dir;
}

const project = (root: string) => ({ root, revision: "workspace" });
const paths = (files: Array<{ path: string }>) => files.map((f) => f.path);

describe("the start memory", () => {
  it("reads CLAUDE.md, .claude/CLAUDE.md, unconditional rules and CLAUDE.local.md, in Claude Code's order", () => {
    const root = tree({
      "CLAUDE.local.md": "LOCAL\n",
      ".claude/rules/b.md": "B\n",
      ".claude/rules/a.md": "---\ndescription: x\n---\nA\n",
      ".claude/rules/only-src.md": '---\npaths: "src/**"\n---\nSRC\n',
      ".claude/CLAUDE.md": "DOT\n",
      "CLAUDE.md": "ROOT\n",
      "pkg/CLAUDE.md": "NESTED\n",
    });
    const files = startMemory({ project: project(root), user: [] }, new MemorySeen());
    expect(files.map((f) => [f.path, f.kind, f.text])).toEqual([
      ["/workspace/CLAUDE.md", "project", "ROOT\n"],
      ["/workspace/.claude/CLAUDE.md", "project", "DOT\n"],
      ["/workspace/.claude/rules/a.md", "project", "A\n"],
      ["/workspace/.claude/rules/b.md", "project", "B\n"],
      ["/workspace/CLAUDE.local.md", "local", "LOCAL\n"],
    ]);
  });

  it("resolves imports relative to the importing file, recursively, each once, after the file that imports them", () => {
    const root = tree({
      "CLAUDE.md": "Rules: @docs/a.md and @./docs/a.md again, @missing.md, @~/secret.md, @/etc/passwd\n",
      "docs/a.md": "A imports @b.md\n",
      "docs/b.md": "B imports @../CLAUDE.md (a cycle)\n",
    });
    const files = startMemory({ project: project(root), user: [] }, new MemorySeen());
    expect(paths(files)).toEqual(["/workspace/CLAUDE.md", "/workspace/docs/a.md", "/workspace/docs/b.md"]);
    expect(files[1]!.importedBy).toBe("/workspace/CLAUDE.md");
  });

  it("stops at Claude Code's import depth", () => {
    const files: Record<string, string> = { "CLAUDE.md": "@f1.md\n" };
    for (let i = 1; i <= MAX_IMPORT_DEPTH + 2; i += 1) files[`f${i}.md`] = `level ${i} @f${i + 1}.md\n`;
    const got = startMemory({ project: project(tree(files)), user: [] }, new MemorySeen());
    expect(got).toHaveLength(MAX_IMPORT_DEPTH + 1);
  });

  it("ignores @ in code spans and fenced blocks, and e-mail addresses", () => {
    const text = [
      "Use `@not-a.md` and ``@nor-this.md``; mail ada@example.com.",
      "```",
      "@inside-fence.md",
      "```",
      "~~~md",
      "@inside-tilde.md",
      "~~~",
      "But @yes.md and @dir/with\\ space.md",
    ].join("\n");
    expect(importsOf(text, "CLAUDE.md")).toEqual(["yes.md", "dir/with space.md"]);
  });

  it("never reads outside the tree: no .., no absolute host path, no symlink out", () => {
    const outside = tree({ "secret.md": "HOST SECRET\n" });
    const root = tree({
      "CLAUDE.md": "@../x.md @/workspace/../etc.md @link.md @linked-dir/secret.md\n",
      "link.md": { symlink: path.join(outside, "secret.md") },
      "linked-dir": { symlink: outside },
    });
    const files = startMemory({ project: project(root), user: [] }, new MemorySeen());
    expect(paths(files)).toEqual(["/workspace/CLAUDE.md"]);
  });

  it("sends a 60,000-character CLAUDE.md whole and cuts a 5 MB one with a note", () => {
    const whole = "w".repeat(60_000);
    const big = "x".repeat(5 * 1024 * 1024);
    const [small] = startMemory(
      { project: project(tree({ "CLAUDE.md": whole })), user: [] },
      new MemorySeen(),
    );
    expect(small).toMatchObject({ text: whole, chars: 60_000, cut: false });
    const [cut] = startMemory({ project: project(tree({ "CLAUDE.md": big })), user: [] }, new MemorySeen());
    expect(cut!.cut).toBe(true);
    expect(cut!.chars).toBe(big.length);
    expect(cut!.text.startsWith("x".repeat(MAX_MEMORY_FILE_CHARS))).toBe(true);
    expect(cut!.text.slice(MAX_MEMORY_FILE_CHARS)).toMatch(
      /^\n\n\[agent-ci: this memory file has 5242880 bytes/,
    );
  });

  it("puts --memory-file files first, shown by their own path", () => {
    const user = tree({ "mine.md": "MINE\n" });
    const root = tree({ "CLAUDE.md": "ROOT\n" });
    const sources = memorySources({
      workspace: root,
      projectMemory: true,
      memoryFile: [path.join(user, "mine.md")],
    });
    const files = startMemory(sources, new MemorySeen());
    expect(files.map((f) => [f.path, f.kind])).toEqual([
      [path.join(user, "mine.md"), "user"],
      ["/workspace/CLAUDE.md", "project"],
    ]);
    const none = memorySources({ workspace: root, projectMemory: false, memoryFile: [] });
    expect(startMemory(none, new MemorySeen())).toEqual([]);
  });
});

describe("nested memory", () => {
  it("reaches the folders' CLAUDE.md files outer first and matching rules, each once", () => {
    const root = tree({
      "CLAUDE.md": "ROOT\n",
      ".claude/rules/src.md": '---\npaths:\n  - "src/**/*.ts"\n---\nSRC-RULE\n',
      "src/CLAUDE.md": "SRC\n",
      "src/deep/CLAUDE.md": "DEEP\n",
      "src/deep/.claude/rules/local.md": "DEEP-RULE\n",
      "other/CLAUDE.md": "OTHER\n",
    });
    const seen = new MemorySeen();
    startMemory({ project: project(root), user: [] }, seen);
    const tracker = new NestedMemoryTracker(project(root), seen);
    expect(paths(tracker.reached("/workspace/src/deep/a.ts"))).toEqual([
      "/workspace/.claude/rules/src.md",
      "/workspace/src/CLAUDE.md",
      "/workspace/src/deep/CLAUDE.md",
      "/workspace/src/deep/.claude/rules/local.md",
    ]);
    expect(tracker.reached("/workspace/src/deep/b.ts")).toEqual([]);
    expect(tracker.reached("/workspace/CLAUDE.md")).toEqual([]);
    expect(paths(tracker.reached("/workspace/other/x.js"))).toEqual(["/workspace/other/CLAUDE.md"]);
    expect(tracker.reached("/tmp/x")).toEqual([]);
  });

  it("answers only file reads and edits, with one reminder per file, and records them", () => {
    const root = tree({ "pkg/CLAUDE.md": "PKG\n" });
    const context = new ModelContext(
      memorySources({ workspace: root, projectMemory: true, memoryFile: [] }),
      { mode: "default", network: "none" },
    );
    expect(context.main.memory.afterTool("Grep", "/workspace/pkg/a.js", "t1")).toEqual([]);
    expect(context.main.memory.afterTool("Read", "/workspace/pkg/a.js", "t2")).toEqual([
      {
        type: "text",
        text: "<system-reminder>\nContents of /workspace/pkg/CLAUDE.md:\n\nPKG\n\n</system-reminder>",
      },
    ]);
    expect(context.record().memory.files).toEqual([
      {
        path: "/workspace/pkg/CLAUDE.md",
        kind: "project",
        revision: "workspace",
        chars: 4,
        at: "nested",
        toolUseId: "t2",
      },
    ]);
    // Explore and Plan start without the project's memory; a subagent's own conversation tracks its own.
    const explore = context.forAgent({ name: "Explore", omitProjectContext: true });
    expect(explore.preamble).toEqual([]);
    expect(explore.memory.afterTool("Read", "/workspace/pkg/a.js", "t3")).toHaveLength(1);
  });
});

describe("the git snapshot", () => {
  it("runs nothing the repository configures: a clean filter, a hook, an fsmonitor", async () => {
    const root = tree({ ".gitattributes": "*.txt filter=evil\n", "a.txt": "a\n" });
    const marker = path.join(root, "..", `${path.basename(root)}-ran`);
    const git = gitIn(root);
    git("init", "-q", "-b", "main");
    git("add", "-A");
    git("commit", "-qm", "First");
    const evil = `touch ${marker}; cat`;
    git("config", "filter.evil.clean", evil);
    git("config", "core.fsmonitor", evil);
    writeFiles(root, { ".git/hooks/post-index-change": { content: `#!/bin/sh\n${evil}\n`, mode: 0o755 } });
    // The same size and a later mtime: git status must read the file (through its clean filter) to compare.
    fs.writeFileSync(path.join(root, "a.txt"), "b\n");
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(root, "a.txt"), later, later);
    const snapshot = await takeGitSnapshot(root);
    expect(snapshot).toMatchObject({ branch: "main", mainBranch: "main", status: " M a.txt" });
    expect(snapshot?.commits.map((c) => c.replace(/^\S+ /, ""))).toEqual(["First"]);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("is absent for a folder that is not the top of a repository", async () => {
    expect(await takeGitSnapshot(tree({ "a.txt": "a\n" }))).toBeUndefined();
    const outer = tree({ "sub/a.txt": "a\n" });
    gitIn(outer)("init", "-q");
    expect(await takeGitSnapshot(path.join(outer, "sub"))).toBeUndefined();
  });

  it("names the branch HEAD on a repository with no commit yet, and a detached HEAD so too", async () => {
    const root = tree({ "a.txt": "a\n" });
    const git = gitIn(root);
    git("init", "-q", "-b", "main");
    expect(await takeGitSnapshot(root)).toMatchObject({ branch: "HEAD", status: "?? a.txt", commits: [] });
    git("add", "-A");
    git("commit", "-qm", "First");
    git("checkout", "-q", "--detach");
    expect(await takeGitSnapshot(root)).toMatchObject({ branch: "HEAD", status: "" });
  });

  it("names origin's HEAD as the main branch, else main, else master", async () => {
    const root = tree({ "a.txt": "a\n" });
    const git = gitIn(root);
    git("init", "-q", "-b", "master");
    git("add", "-A");
    git("commit", "-qm", "First");
    expect(await takeGitSnapshot(root)).toMatchObject({ branch: "master", mainBranch: "master" });
    git("branch", "main");
    git("checkout", "-q", "-b", "topic");
    expect(await takeGitSnapshot(root)).toMatchObject({ branch: "topic", mainBranch: "main" });
    git("update-ref", "refs/remotes/origin/trunk", "HEAD");
    git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk");
    expect(await takeGitSnapshot(root)).toMatchObject({ branch: "topic", mainBranch: "trunk" });
  });
});

describe("agent-ci run --print-context", () => {
  it("prints the system prompt with the environment facts, then the memory, the git snapshot and the task", async () => {
    const root = tree({ "CLAUDE.md": "Use tabs.\n", "a.txt": "a\n" });
    const git = gitIn(root);
    git("init", "-q", "-b", "main");
    git("add", "-A");
    git("commit", "-qm", "First");
    fs.writeFileSync(path.join(root, "a.txt"), "changed\n");
    const config = parseRunConfig({ workspace: root, prompt: "Fix it", script: "unused.json" });
    const text = await printContext(config);
    expect(text).toMatch(/^=== system prompt ===\nYou are a coding agent/);
    expect(text).toContain(" - Primary working directory: /workspace\n - Is a git repository: true\n");
    expect(text).toMatch(/^Today's date is \d{4}-\d{2}-\d{2}\.$/m);
    expect(text).toContain(
      "Contents of /workspace/CLAUDE.md (project instructions, checked into the codebase):\n\nUse tabs.\n</system-reminder>",
    );
    expect(text).toContain("Current branch: main\n");
    expect(text).toContain("Status:\n M a.txt\n");
    expect(text).toMatch(/Recent commits:\n[0-9a-f]{7,} First\n/);
    expect(text.trimEnd().endsWith("Fix it")).toBe(true);
    const none = await printContext({ ...config, projectMemory: false });
    expect(none).not.toContain("Contents of");
  });
});
