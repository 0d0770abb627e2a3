// The workspace gate with the real sandbox (RELIABILITY P1-P6, P10, P11, T17): every path that resolves
// outside /workspace is refused by every tool at validation, before the tool touches the sandbox; file
// names with shell metacharacters go through every tool as data; the host checkout is never modified.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { resultOf, startHarness, textOf, type ToolHarness } from "../support/tool-harness.js";

const NAMES = [
  "with space.txt",
  `quo"te's.txt`,
  "$(touch pwned).txt",
  "`touch pwned2`.txt",
  "new\nline.txt",
  "-rf.txt",
  "semi;colon&amp.txt",
];

const FILES = {
  "a.txt": "a\n",
  leak: { symlink: "/etc/passwd" },
  "leak-dir": { symlink: "/etc" },
  "proc-link": { symlink: "/proc/self/environ" },
  "dotdot-link": { symlink: "../../.." },
  ...Object.fromEntries(NAMES.map((n, i) => [`names/${n}`, `needle ${i}\n`])),
};

/** The tools that take a path, and the input that points each at `p`. */
const PATH_TOOLS: Array<[string, (p: string) => Record<string, unknown>]> = [
  ["Read", (p) => ({ file_path: p })],
  ["Edit", (p) => ({ file_path: p, old_string: "root", new_string: "toor" })],
  ["Write", (p) => ({ file_path: p, content: "pwned\n" })],
  ["Grep", (p) => ({ pattern: "root", path: p })],
  ["Glob", (p) => ({ pattern: "**/*", path: p })],
];

const OUTSIDE = [
  "../../etc/passwd",
  "../",
  "/etc/shadow",
  "/etc/passwd",
  "/proc/self/environ",
  "/proc/1/environ",
  "/run/secrets/token",
  "/var/run/docker.sock",
  "/workspace-evil/x",
  "/workspace/../workspace2/x",
  "/workspace/../tmp/x",
  "//etc/passwd",
  "/tmp/.agent-ci/baseline.git/config",
  "/tmp/agent-ci-outputs/../.agent-ci/x",
  "leak",
  "/workspace/leak",
  "leak-dir/hostname",
  "proc-link",
  "dotdot-link/etc/passwd",
];

describe("the workspace gate (real sandbox)", () => {
  let h: ToolHarness;

  beforeAll(async () => {
    h = await startHarness(FILES, { git: true });
  });
  afterAll(async () => {
    await h?.dispose();
  });

  /** Runs `fn` and says which sandbox operations it used (the gate's own resolvePath is not counted). */
  async function sandboxUse<T>(fn: () => Promise<T>): Promise<{ value: T; used: string[] }> {
    const spies = (["exec", "readFile", "writeFile", "stat", "startBackground"] as const).map(
      (m) => [m, vi.spyOn(h.sandbox, m)] as const,
    );
    try {
      const value = await fn();
      return { value, used: spies.filter(([, s]) => s.mock.calls.length > 0).map(([m]) => m) };
    } finally {
      spies.forEach(([, s]) => s.mockRestore());
    }
  }

  describe.each(PATH_TOOLS)("%s", (tool, inputFor) => {
    it.each(OUTSIDE)("refuses %s at validation, running nothing", async (p) => {
      const { value: r, used } = await sandboxUse(() => h.call(tool, inputFor(p)));
      expect(r.isError).toBe(true);
      expect(r.errorKind).toBe("outside_workspace");
      expect(r.stage).toBe("validate");
      expect(textOf(r)).toMatch(/outside \/workspace/);
      expect(used).toEqual([]);
    });
  });

  it("names the allowed root in the message", async () => {
    const r = await h.call("Read", { file_path: "../../etc/passwd" });
    expect(resultOf(r)).toEqual({
      isError: true,
      text: "<tool_use_error>Path ../../etc/passwd resolves to /etc/passwd, outside /workspace. Only files under /workspace can be accessed.</tool_use_error>",
    });
  });

  it("created nothing outside the workspace while refusing", async () => {
    expect(await h.sh("ls -d /workspace-evil /workspace2 /tmp/x 2>/dev/null | wc -l")).toBe("0\n");
    expect(await h.sh("grep -c toor /etc/passwd || true")).toBe("0\n");
  });

  it("re-checks symlinks on every call: ln -s /etc x made by Bash, then x/hostname is refused", async () => {
    expect((await h.call("Bash", { command: "ln -s /etc x && ln -s /tmp t && echo made" })).isError).toBe(
      false,
    );
    for (const [tool, inputFor] of PATH_TOOLS) {
      for (const p of ["x/hostname", "/workspace/x/hostname", "x", "t/new.txt"]) {
        const r = await h.call(tool, inputFor(p));
        expect(r.isError, `${tool} ${p}`).toBe(true);
        expect(r.errorKind, `${tool} ${p}`).toBe("outside_workspace");
      }
    }
    expect(await h.sh("ls /tmp/new.txt 2>/dev/null | wc -l")).toBe("0\n");
  });

  it("does not let the shell's cwd leave the workspace through a symlink (cd grants nothing)", async () => {
    const r = await h.call("Bash", { command: "cd x && pwd" });
    expect(textOf(r)).toBe("/workspace/x\nShell cwd was reset to /workspace");
    expect(h.state.cwd).toBe("/workspace");
    expect((await h.call("Read", { file_path: "hostname" })).errorKind).toBe("not_found");
  });

  it("refuses a link into the outputs folder that points out, and Write into the outputs folder", async () => {
    await h.call("Bash", {
      command: "mkdir -p /tmp/agent-ci-outputs && ln -sf /etc/passwd /tmp/agent-ci-outputs/evil.txt",
    });
    const read = await h.call("Read", { file_path: "/tmp/agent-ci-outputs/evil.txt" });
    expect(read.errorKind).toBe("outside_workspace");
    const write = await h.call("Write", { file_path: "/tmp/agent-ci-outputs/planted.txt", content: "x" });
    expect(write.errorKind).toBe("outside_workspace");
  });

  it.each([
    ["", /empty/],
    ["a\0b", /NUL byte/],
    ["x".repeat(5000), /longer than 4096/],
  ])("refuses the strange path %j", async (p, message) => {
    for (const [tool, inputFor] of PATH_TOOLS) {
      const r = await h.call(tool, inputFor(p));
      expect(r.isError, tool).toBe(true);
      expect(r.stage, tool).toBe("validate");
      expect(r.errorKind, tool).toBe("invalid_input");
      expect(textOf(r), tool).toMatch(message);
    }
  });

  it("treats a leading -rf and a quoted $(…) as file names, never as flags or shell", async () => {
    for (const p of [
      "-rf",
      "$(touch /tmp/pwned-path)",
      '"$(touch /tmp/pwned-path)"',
      "`touch /tmp/pwned-path`",
    ]) {
      const read = await h.call("Read", { file_path: p });
      expect(read.isError).toBe(true);
      expect(read.errorKind, p).toBe("not_found");
      const grep = await h.call("Grep", { pattern: "x", path: p });
      expect(grep.isError).toBe(true);
    }
    expect(await h.sh("ls /tmp/pwned-path 2>/dev/null | wc -l")).toBe("0\n");
  });

  describe("file names with spaces, quotes, $(), backticks, newlines and a leading -", () => {
    it.each(NAMES.map((name, i) => [name, i] as const))(
      "%j goes through Read, Edit, Write, Grep and Glob",
      async (name, i) => {
        const file = `/workspace/names/${name}`;
        expect(resultOf(await h.call("Read", { file_path: file }))).toEqual({
          isError: false,
          text: `1\tneedle ${i}\n2\t`,
        });
        expect(
          (await h.call("Edit", { file_path: file, old_string: "needle", new_string: "found" })).isError,
        ).toBe(false);
        expect((await h.sandbox.readFile(file))!.data.toString()).toBe(`found ${i}\n`);

        const grep = await h.call("Grep", { pattern: "^found", path: file });
        expect(resultOf(grep)).toEqual({ isError: false, text: `Found 1 file\nnames/${name}` });
        const content = await h.call("Grep", { pattern: "^found", path: "names", output_mode: "content" });
        expect(textOf(content)).toContain(`names/${name}:1:found ${i}`);

        const written = `/workspace/names/w-${name}`;
        expect((await h.call("Write", { file_path: written, content: "w\n" })).isError).toBe(false);
        expect((await h.sandbox.readFile(written))!.data.toString()).toBe("w\n");

        const glob = await h.call("Glob", { pattern: "names/**" });
        expect(textOf(glob)).toContain(`names/${name}`);
        expect(textOf(glob)).toContain(`names/w-${name}`);
      },
    );

    it("lets Bash handle them when the command quotes them, and nothing in a name ever ran", async () => {
      const r = await h.call("Bash", { command: "cat -- 'names/-rf.txt' 'names/$(touch pwned).txt'" });
      expect(textOf(r)).toBe(
        `found ${NAMES.indexOf("-rf.txt")}\nfound ${NAMES.indexOf("$(touch pwned).txt")}`,
      );
      expect(await h.sh("find / -xdev -name 'pwned*' 2>/dev/null | wc -l")).toBe("0\n");
    });
  });
});
