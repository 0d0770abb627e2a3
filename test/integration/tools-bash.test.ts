// Bash, BashOutput, KillShell and TodoWrite through the pipeline over a real sandbox: rendering as in the
// reference, the persistent working directory, timeouts and floods that kill the whole process tree,
// background shells, exit codes as data, and output made into valid text.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OUTPUTS_DIR } from "../../src/sandbox/sandbox.js";
import { resultOf, startHarness, textOf, type ToolHarness } from "../support/tool-harness.js";

let h: ToolHarness;
beforeAll(async () => {
  h = await startHarness({ "a.txt": "root file\n", "sub/a.txt": "sub file\n", "noexec.sh": "echo hi\n" });
});
afterAll(async () => {
  await h?.dispose();
});

describe("Bash (real sandbox)", () => {
  const bash = (command: string, extra: Record<string, unknown> = {}) =>
    h.call("Bash", { command, ...extra });
  /** How many processes whose command line matches `pattern` (grep -E) are alive in the container. */
  const alive = async (pattern: string) =>
    Number((await h.sh(`ps -eo args | grep -v grep | grep -cE -- '${pattern}' || true`)).trim());

  describe("rendering, as in the reference", () => {
    it.each([
      ["echo hello world", { isError: false, text: "hello world" }],
      ["echo oops >&2; exit 1", { isError: true, text: "Exit code 1\noops" }],
      ["true", { isError: false, text: "(Bash completed with no output)" }],
      ["echo out; echo err >&2", { isError: false, text: "out\nerr" }],
      ["echo warn >&2", { isError: false, text: "warn" }],
      ["printf 'no newline'", { isError: false, text: "no newline" }],
      ["printf 'trailing\\n\\n\\n'", { isError: false, text: "trailing" }],
      // Interleaved in the order written, as a terminal shows them (not all stdout, then all stderr).
      [
        "echo err1 >&2; echo out1; echo err2 >&2; echo out2",
        { isError: false, text: "err1\nout1\nerr2\nout2" },
      ],
      ["echo one; echo two >&2; exit 3", { isError: true, text: "Exit code 3\none\ntwo" }],
      // Blank lines before the first text and whitespace after the last are dropped; inner blanks stay.
      ["printf '\\n\\n  hello  '", { isError: false, text: "  hello" }],
      ["printf ' \\t\\n\\na\\n\\n b \\t\\n \\n'", { isError: false, text: "a\n\n b" }],
      ["printf '\\n\\n   \\n'", { isError: false, text: "(Bash completed with no output)" }],
    ])("%s", async (command, expected) => {
      expect(resultOf(await bash(command))).toEqual(expected);
    });

    it("reports a timeout as the reference does, with exit code 143", async () => {
      const r = await bash("sleep 5; echo finished", { timeout: 1000 });
      expect(resultOf(r)).toEqual({ isError: true, text: "Exit code 143\nCommand timed out after 1s" });
      expect(r.errorKind).toBe("timed_out");
    });
  });

  describe("working directory", () => {
    it("persists between calls, as in the reference", async () => {
      expect(textOf(await bash("mkdir -p deep/dir && cd deep/dir"))).toBe("(Bash completed with no output)");
      expect(textOf(await bash("pwd"))).toBe("/workspace/deep/dir");
      expect(textOf(await bash("cd .. && pwd"))).toBe("/workspace/deep");
      expect(textOf(await bash("pwd"))).toBe("/workspace/deep");
      expect(h.state.cwd).toBe("/workspace/deep");
      await bash("cd /workspace");
    });

    it("does not keep other shell state between calls", async () => {
      await bash("export AGENT_TEST_VAR=1; alias ll='ls -l'");
      expect(textOf(await bash("echo ${AGENT_TEST_VAR:-unset}; type ll 2>&1 | head -1"))).toMatch(
        /^unset\n.*not found/,
      );
    });

    it("resets the cwd to /workspace with a notice after cd /, so a relative Read resolves in the workspace", async () => {
      await bash("cd sub");
      expect(h.state.cwd).toBe("/workspace/sub");
      const r = await bash("cd / && echo left");
      expect(textOf(r)).toBe("left\nShell cwd was reset to /workspace");
      expect(h.state.cwd).toBe("/workspace");
      expect(textOf(await h.call("Read", { file_path: "a.txt" }))).toBe("1\troot file\n2\t");
      expect(textOf(await bash("pwd"))).toBe("/workspace");
    });

    it("resolves relative tool paths against a persisted cwd inside the workspace", async () => {
      await bash("cd sub");
      expect(textOf(await h.call("Read", { file_path: "a.txt" }))).toBe("1\tsub file\n2\t");
      const missing = await h.call("Read", { file_path: "nope.txt" });
      expect(textOf(missing)).toBe(
        "File does not exist. Note: your current working directory is /workspace/sub.",
      );
      await bash("cd /workspace");
    });

    it("falls back to /workspace when the persisted cwd was removed", async () => {
      await bash("mkdir -p gone && cd gone");
      await h.sh("rmdir /workspace/gone");
      expect(textOf(await bash("pwd"))).toBe("/workspace");
      expect(h.state.cwd).toBe("/workspace");
    });
  });

  describe("commands that would hang or flood", () => {
    it("times out a never-ending command and kills its whole process tree", async () => {
      const r = await bash("(sleep 310 &) ; while :; do sleep 0.1; done # marker-loop", { timeout: 1500 });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/^Exit code \d+\n[\s\S]*Command timed out after 1500ms/);
      expect(r.exitCode).not.toBe(0);
      expect(await alive("sleep 310")).toBe(0);
      expect(await alive("marker-loop")).toBe(0);
      expect(textOf(await bash("echo next call works"))).toBe("next call works");
    });

    it("cuts a command that prints 100 MB and kills it", async () => {
      const r = await bash("yes flood-marker-line | head -c 100000000; echo not-reached", {
        timeout: 120_000,
      });
      const text = textOf(r);
      expect(r.isError).toBe(true);
      expect(r.truncated).toBe(true);
      expect(text.length).toBeLessThanOrEqual(30_000);
      expect(text.startsWith("Exit code 137\nflood-marker-line\n")).toBe(true);
      expect(text).toContain("Command killed: it printed far more output than can be kept");
      expect(text).not.toContain("not-reached");
      expect(await alive("flood-marker-line")).toBe(0);
    });

    // One line with no newline: the clean-up used to retry a regular expression from every position of it
    // (1 MB took ten minutes, with the event loop held). Linear now: the test timeout is the bound.
    it.each([
      ["1 MB", 1_000_000],
      ["8 MB", 8_000_000],
      ["200 MB", 200_000_000],
    ])("returns a capped result for %s on one line", { timeout: 120_000 }, async (_label, bytes) => {
      const r = await bash(`head -c ${bytes} /dev/zero | tr '\\0' x`, { timeout: 110_000 });
      const text = textOf(r);
      expect(r.truncated).toBe(true);
      expect(text.length).toBeLessThanOrEqual(30_000);
      expect(text).toMatch(/x{1000}/);
      expect(textOf(await bash("echo next call works"))).toBe("next call works");
    });

    // The Bash timeout (default 2 min) is far over the test's: a call that waited for the child fails the test.
    it(
      "returns promptly when a background child holds stdout, and stops that child",
      { timeout: 30_000 },
      async () => {
        const r = await bash("(sleep 320; echo late) & echo started");
        expect(resultOf(r)).toEqual({ isError: false, text: "started" });
        expect(await alive("sleep 320")).toBe(0);
      },
    );

    it(
      "stops a child that left the process group with setsid when the call ends",
      { timeout: 30_000 },
      async () => {
        const r = await bash("setsid sleep 330 & sleep 0.2; echo started");
        expect(textOf(r)).toBe("started");
        expect(await alive("^sleep 330$")).toBe(0);
      },
    );

    it("gives commands an empty stdin", async () => {
      expect(resultOf(await bash("cat", { timeout: 30_000 }))).toEqual({
        isError: false,
        text: "(Bash completed with no output)",
      });
      expect(textOf(await bash('read x; echo "got:[$x] rc=$?"', { timeout: 30_000 }))).toBe("got:[] rc=1");
    });

    it("cuts output over 30,000 characters, keeping head and tail and the whole in a file Read can open", async () => {
      const r = await bash("seq 1 20000");
      const text = textOf(r);
      expect(r.truncated).toBe(true);
      expect(text.length).toBeLessThanOrEqual(30_000);
      expect(text.startsWith("1\n2\n3\n")).toBe(true);
      expect(text.endsWith("19999\n20000")).toBe(true);
      expect(r.fullOutputPath).toBe(`${OUTPUTS_DIR}/${r.id}.txt`);
      const back = await h.call("Read", { file_path: r.fullOutputPath, offset: 12345, limit: 1 });
      expect(textOf(back)).toBe("12345\t12345");
      expect(
        fs.readFileSync(path.join(h.outputDir, "tool-outputs", `${r.id}.txt`), "utf8").split("\n"),
      ).toHaveLength(20_000);
    });
  });

  describe("exit codes are data", () => {
    it.each([
      ["false", 1, /^Exit code 1$/],
      ["ls /nonexistent-dir", 2, /^Exit code 2\nls: cannot access '\/nonexistent-dir'/],
      ["./noexec.sh", 126, /^Exit code 126\n.*Permission denied/],
      ["no-such-command-xyz", 127, /^Exit code 127\n.*no-such-command-xyz: command not found/],
      ["kill -INT $$", 130, /^Exit code 130$/],
      ["kill -KILL $$", 137, /^Exit code 137\n\(killed: SIGKILL/],
      ["kill -TERM $$", 143, /^Exit code 143$/],
      ["exit 255", 255, /^Exit code 255$/],
    ])("%s → %i", async (command, code, pattern) => {
      const r = await bash(command);
      expect(r.isError).toBe(true);
      expect(r.stage).toBe("call");
      expect(r.errorKind).toBe("command_failed");
      expect(r.exitCode).toBe(code);
      expect(textOf(r)).toMatch(pattern);
    });
  });

  describe("output made into valid text", () => {
    it("escapes NUL and control bytes, strips colour codes, replaces invalid UTF-8, keeps what a progress bar ends on", async () => {
      const r = await bash(
        "printf 'a\\000b \\377\\376 c\\001d \\033[31mred\\033[0m\\n'; printf 'progress 10%%\\rprogress 100%%\\n'",
      );
      const text = textOf(r);
      expect(text).not.toContain("\0");
      expect(text).toContain("a\\x00b \uFFFD\uFFFD c\\x01d ");
      expect(text).toContain(" red\n");
      expect(text).not.toContain("\x1b");
      expect(text).not.toContain("[31m");
      expect(text.split("\n")[1]).toBe("progress 100%");
      expect(Buffer.from(text, "utf8").toString("utf8")).toBe(text);
    });

    it("turns CRLF output into LF", async () => {
      expect(textOf(await bash("printf 'one\\r\\ntwo\\r\\n'"))).toBe("one\ntwo");
    });
  });

  describe("input checks", () => {
    it("refuses invisible Unicode in a command before it runs", async () => {
      const r = await bash("echo hi\u200B > invisible.txt");
      expect(r.stage).toBe("validate");
      expect(r.isError).toBe(true);
      expect(await h.sh("ls invisible.txt* 2>/dev/null | wc -l")).toBe("0\n");
    });

    it("answers bad timeouts and unknown keys at parse, and coerces a numeric string", async () => {
      for (const input of [
        { command: "true", timeout: 600_001 },
        { command: "true", timeout: 0 },
        { command: "" },
        { command: "true", shell: "zsh" },
      ]) {
        expect((await h.call("Bash", input)).stage, JSON.stringify(input)).toBe("parse");
      }
      expect(resultOf(await h.call("Bash", { command: "echo ok", timeout: "5000" }))).toEqual({
        isError: false,
        text: "ok",
      });
    });
  });

  describe("background shells", () => {
    const shellId = (text: string) => /with ID: (\S+)\./.exec(text)?.[1] ?? "";
    /** Polls BashOutput until `done(text)` (bounded by the test timeout); returns every output seen. */
    async function pollUntil(
      id: string,
      done: (all: string, last: string) => boolean,
    ): Promise<{ all: string; last: string }> {
      let all = "";
      for (;;) {
        const last = textOf(await h.call("BashOutput", { bash_id: id }));
        all += `${last}\n`;
        if (done(all, last)) return { all, last };
        await new Promise((r) => setTimeout(r, 100));
      }
    }

    it("runs a command in the background, gives new output on each read, and kills it", async () => {
      const started = await bash("for i in 1 2 3; do echo tick $i; sleep 0.1; done; echo ready; sleep 340", {
        run_in_background: true,
      });
      expect(started.isError).toBe(false);
      const id = shellId(textOf(started));
      expect(id).toMatch(/^bash\d+$/);
      expect(textOf(started)).toMatch(/^Command running in background with ID: bash\d+\./);

      const { all, last } = await pollUntil(id, (seen) => seen.includes("ready"));
      expect(all).toMatch(/tick 1[\s\S]*tick 2[\s\S]*tick 3[\s\S]*ready/);
      expect(last).toMatch(/^<status>running<\/status>/);
      const again = textOf(await h.call("BashOutput", { bash_id: id }));
      expect(again).toMatch(/^<status>running<\/status>\n\n<output>\(no new output\)<\/output>/);
      expect(await alive("^sleep 340$")).toBe(1);

      const killed = await h.call("KillShell", { shell_id: id });
      expect(resultOf(killed).text).toMatch(new RegExp(`^Successfully killed shell: ${id}`));
      expect(await alive("^sleep 340$")).toBe(0);
      const after = await h.call("BashOutput", { bash_id: id });
      expect(after.isError).toBe(true);
      expect(after.errorKind).toBe("not_found");
    });

    it("reports a finished background command's status and exit code, and filters lines", async () => {
      const id = shellId(
        textOf(await bash("echo keep-1; echo drop; echo keep-2; exit 3", { run_in_background: true })),
      );
      const { last } = await pollUntil(id, (_all, text) => !text.includes("<status>running</status>"));
      expect(last).toMatch(/^<status>completed<\/status>\n\n<exit_code>3<\/exit_code>/);
      const id4 = shellId(
        textOf(await bash("echo keep-1; echo drop; echo keep-2", { run_in_background: true })),
      );
      let seen = "";
      for (;;) {
        const text = textOf(await h.call("BashOutput", { bash_id: id4, filter: "^keep" }));
        seen += text;
        if (text.includes("<status>completed</status>")) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen).toContain("keep-1");
      expect(seen).toContain("keep-2");
      expect(seen).not.toContain("drop");
    });

    it("answers unknown shell ids and a bad filter with errors", async () => {
      const unknown = await h.call("BashOutput", { bash_id: "bash999" });
      expect(unknown.isError).toBe(true);
      expect(textOf(unknown)).toMatch(/No background shell with ID bash999/);
      expect((await h.call("KillShell", { shell_id: "bash999" })).isError).toBe(true);
      const badFilter = await h.call("BashOutput", { bash_id: "bash1", filter: "([" });
      expect(badFilter.stage).toBe("validate");
      expect(textOf(badFilter)).toMatch(/Invalid filter regular expression/);
    });
  });
});

describe("TodoWrite", () => {
  it("keeps the run's task list for the report", async () => {
    const todos = [
      { content: "Run the tests", status: "completed", activeForm: "Running the tests" },
      { content: "Fix the bug", status: "in_progress", activeForm: "Fixing the bug" },
      { content: "Write docs", status: "pending" },
    ];
    const r = await h.call("TodoWrite", { todos });
    expect(r.isError).toBe(false);
    expect(textOf(r)).toMatch(/^Todos have been modified successfully/);
    expect(h.state.todos.map((t) => t.status)).toEqual(["completed", "in_progress", "pending"]);
    expect(r.title).toBe("3 todos (1 completed)");
  });

  it("refuses two tasks in progress, and bad statuses at parse", async () => {
    const two = await h.call("TodoWrite", {
      todos: [
        { content: "a", status: "in_progress" },
        { content: "b", status: "in_progress" },
      ],
    });
    expect(two.stage).toBe("validate");
    expect(two.isError).toBe(true);
    expect((await h.call("TodoWrite", { todos: [{ content: "a", status: "doing" }] })).stage).toBe("parse");
    expect(h.state.todos).toHaveLength(3);
  });
});
