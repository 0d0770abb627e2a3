/**
 * PreToolUse / PostToolUse hooks' verdicts over what a hook run returned (the runs themselves are in the
 * sandbox: test/integration/hooks.test.ts): blocking by exit code 2 and by JSON, what the model is told in
 * Claude Code's words, the stdin payload, timeouts and crashes (an error result, never a throw), matchers;
 * and the repository scripts a hook command names, taken from the workspace as the run started.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileHookMatcher, type PolicyHook } from "../../../src/policy/index.js";
import { rewriteScripts, scriptWords } from "../../../src/runner/hooks/hook-scripts.js";
import {
  hookInput,
  readHookScripts,
  runHooks,
  type HookEventInput,
  type PreparedHook,
} from "../../../src/runner/hooks/hooks.js";
import type {
  HookExecRequest,
  HookExecResult,
  HookRunner,
} from "../../../src/sandbox/container/hook-host.js";

const hook = (command: string, extra: Partial<PolicyHook> = {}): PreparedHook => ({
  event: "PreToolUse",
  matcher: "Bash",
  command,
  timeoutSeconds: undefined,
  source: "cli",
  run: command,
  scripts: [],
  ...extra,
});

const event = (extra: Partial<HookEventInput> = {}): HookEventInput => ({
  event: "PreToolUse",
  toolName: "Bash",
  toolInput: { command: "rm -rf ." },
  toolUseId: "toolu_1",
  sessionId: "run-1",
  permissionMode: "default",
  ...extra,
});

const ran = (result: Partial<HookExecResult>): HookExecResult => ({
  exitCode: 0,
  signal: null,
  timedOut: false,
  stdout: "",
  stderr: "",
  durationMs: 3,
  ...result,
});

/** A runner that answers each command from a table, and keeps what it was asked. */
function runner(answers: Record<string, Partial<HookExecResult>>): HookRunner & { asked: HookExecRequest[] } {
  const asked: HookExecRequest[] = [];
  return {
    scriptsDir: "/tmp/agent-ci-hooks-x/scripts",
    asked,
    async run(request) {
      asked.push(request);
      return ran(answers[request.script] ?? {});
    },
  };
}

describe("hook verdicts", () => {
  it("exit code 2 blocks; a PreToolUse block is told as Claude Code tells it, stderr as it came", async () => {
    const command = "echo 'Use the test script instead of raw commands.' >&2; exit 2";
    const summary = await runHooks(
      runner({ [command]: { exitCode: 2, stderr: "Use the test script instead of raw commands.\n" } }),
      [hook(command)],
      event(),
    );
    expect(summary.blocked).toBe(true);
    expect(summary.message).toBe(
      `PreToolUse:Bash hook error: [${command}]: Use the test script instead of raw commands.\n`,
    );
    expect(summary.results[0]).toMatchObject({ outcome: "block", exitCode: 2, source: "cli" });
  });

  it('JSON {"decision":"block"} blocks; a PostToolUse block names the command and its reason', async () => {
    const command = "lint";
    const stdout = '{"decision":"block","reason":"Lint failed: fix src/app.js first."}\n';
    const summary = await runHooks(
      runner({ [command]: { stdout } }),
      [hook(command, { event: "PostToolUse" })],
      event({ event: "PostToolUse", toolResponse: { output: "hi" } }),
    );
    expect(summary.message).toBe(
      'PostToolUse:Bash hook blocking error from command: "lint": Lint failed: fix src/app.js first.',
    );
  });

  it("hookSpecificOutput.permissionDecision deny or ask blocks", async () => {
    const stdout =
      '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"needs a human"}}';
    const summary = await runHooks(runner({ ask: { stdout } }), [hook("ask")], event());
    expect(summary).toMatchObject({
      blocked: true,
      message: "PreToolUse:Bash hook error: [ask]: needs a human",
    });
  });

  it("exit 0 with plain output or an allow verdict does not block", async () => {
    const summary = await runHooks(
      runner({ quiet: { stdout: "looks fine" }, approve: { stdout: '{"decision":"approve"}' } }),
      [hook("quiet"), hook("approve")],
      event(),
    );
    expect(summary.blocked).toBe(false);
    expect(summary.results.map((result) => result.outcome)).toEqual(["ok", "ok"]);
  });

  it("sends Claude Code's input on stdin and CLAUDE_PROJECT_DIR, in /workspace's terms", async () => {
    const asked = runner({});
    await runHooks(
      asked,
      [hook("capture", { event: "PostToolUse" })],
      event({ event: "PostToolUse", toolResponse: { output: "ok" }, permissionMode: "acceptEdits" }),
    );
    expect(asked.asked[0]?.env).toEqual({ CLAUDE_PROJECT_DIR: "/workspace" });
    expect(JSON.parse(asked.asked[0]?.input ?? "")).toEqual({
      session_id: "run-1",
      cwd: "/workspace",
      permission_mode: "acceptEdits",
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "rm -rf ." },
      tool_use_id: "toolu_1",
      tool_response: { output: "ok" },
    });
    expect(JSON.parse(hookInput(event()))).not.toHaveProperty("tool_response");
  });

  it("a hook's own timeout, else the run's default, goes to the runner; a timeout is an error result", async () => {
    const asked = runner({ slow: { timedOut: true, exitCode: null, signal: "SIGKILL" } });
    const summary = await runHooks(asked, [hook("slow", { timeoutSeconds: 0.3 }), hook("quick")], event(), {
      defaultTimeoutMs: 200,
    });
    expect(asked.asked.map((r) => r.timeoutMs)).toEqual([300, 200]);
    expect(summary.blocked).toBe(false);
    expect(summary.results[0]).toMatchObject({ outcome: "timeout", reason: "the hook timed out after 0.3s" });
  });

  it.each([
    ["a non-zero exit", { exitCode: 3, stderr: "broken\n" }, /exited with code 3: broken/],
    ["a crash by signal", { exitCode: null, signal: "SIGKILL" }, /killed by SIGKILL/],
    ["a missing command", { exitCode: 127, stderr: "x: not found" }, /exited with code 127/],
    ["a hook that could not start", { exitCode: null, error: "the hooks' helper ended" }, /could not be run/],
  ])("%s is an error result, not a throw, and does not block", async (_name, result, reason) => {
    const summary = await runHooks(runner({ broken: result }), [hook("broken")], event());
    expect(summary.blocked).toBe(false);
    expect(summary.results[0]?.outcome).toBe("error");
    expect(summary.results[0]?.reason).toMatch(reason);
  });

  it("failClosed turns errors and timeouts into blocks", async () => {
    const summary = await runHooks(runner({ broken: { exitCode: 1 } }), [hook("broken")], event(), {
      failClosed: true,
    });
    expect(summary.blocked).toBe(true);
  });

  it("runs matching hooks of the event only, and joins the messages of several blocks", async () => {
    const hooks = [
      hook("first", { matcher: "Bash|Edit" }),
      hook("second", { matcher: "*" }),
      hook("other", { matcher: "Read" }),
      hook("other", { event: "PostToolUse" }),
    ];
    const answers = {
      first: { exitCode: 2, stderr: "first" },
      second: { exitCode: 2, stderr: "second" },
      other: { exitCode: 2, stderr: "other" },
    };
    const summary = await runHooks(runner(answers), hooks, event());
    expect(summary.results).toHaveLength(2);
    expect(summary.message).toBe(
      "PreToolUse:Bash hook error: [first]: first\nPreToolUse:Bash hook error: [second]: second",
    );
    expect((await runHooks(runner(answers), hooks, event({ toolName: "Glob" }))).results).toHaveLength(1);
  });

  it("returns quickly when nothing matches", async () => {
    expect(await runHooks(runner({}), [hook("exit 2", { matcher: "Edit" })], event())).toEqual({
      blocked: false,
      message: undefined,
      results: [],
    });
  });

  it("matches tool names the Claude Code way", () => {
    expect(compileHookMatcher(undefined)("Bash")).toBe(true);
    expect(compileHookMatcher("")("Edit")).toBe(true);
    expect(compileHookMatcher("*")("mcp__x__y")).toBe(true);
    expect(compileHookMatcher("Edit|Write")("Write")).toBe(true);
    expect(compileHookMatcher("Edit|Write")("WriteX")).toBe(false);
    expect(compileHookMatcher("mcp__github__.*")("mcp__github__create_issue")).toBe(true);
    expect(compileHookMatcher("mcp__github__.*")("mcp__gitlab__x")).toBe(false);
    expect(() => compileHookMatcher("Bash(")).toThrow();
  });
});

describe("the scripts a hook command names", () => {
  it.each([
    ['"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh', [".claude/hooks/check.sh"]],
    ['"${CLAUDE_PROJECT_DIR}/.claude/hooks/check.sh" --strict', [".claude/hooks/check.sh"]],
    ["bash .claude/hooks/fmt.sh", [".claude/hooks/fmt.sh"]],
    ['python3 -u "$CLAUDE_PROJECT_DIR/lint.py" src/a.py', ["lint.py"]],
    ["/workspace/scripts/fmt.sh; FOO=1 sh fmt.sh 2>&1 > /tmp/log", ["scripts/fmt.sh", "fmt.sh"]],
    ["cat | ./x.sh && node tools/check.mjs", ["x.sh", "tools/check.mjs"]],
    // Programs on PATH, an interpreter given code, redirection targets, other variables, outside paths.
    ["jq -r .tool_input.file_path | xargs npx prettier --write", []],
    ["python3 -m server; node -e 'x'; bash -c ./y.sh", []],
    ["echo hi > ./out.sh; $HOME/x.sh; ~/y.sh; /workspace/../etc/z; ../up.sh", []],
  ])("%s → %j", (command, rels) => {
    expect(scriptWords(command).map((w) => w.rel)).toEqual(rels);
  });

  it("points each at its copy, quoted, and leaves the rest of the command as written", () => {
    const command = `"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh --x 'a b' && bash fmt.sh`;
    const words = scriptWords(command);
    expect(rewriteScripts(command, words, (rel) => `/tmp/h it's/${rel}`)).toBe(
      `'/tmp/h it'\\''s/.claude/hooks/check.sh' --x 'a b' && bash '/tmp/h it'\\''s/fmt.sh'`,
    );
  });
});

describe("taking the scripts from the workspace as the run starts", () => {
  let workspace: string;
  let outside: string;
  beforeAll(() => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-hook-scripts-"));
    outside = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-hook-outside-"));
    fs.mkdirSync(path.join(workspace, ".claude/hooks"), { recursive: true });
    fs.writeFileSync(path.join(workspace, ".claude/hooks/fmt.sh"), "#!/bin/sh\necho fmt\n");
    fs.writeFileSync(path.join(outside, "host-secret"), "not for the sandbox");
    fs.symlinkSync(path.join(outside, "host-secret"), path.join(workspace, "leak.sh"));
    fs.symlinkSync("fmt.sh", path.join(workspace, ".claude/hooks/alias.sh"));
  });
  afterAll(() => {
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it("copies regular files inside the workspace; a symlink out of it or a missing file is left out", () => {
    const hooks = [
      hook('"$CLAUDE_PROJECT_DIR"/.claude/hooks/fmt.sh'),
      hook("sh leak.sh; ./missing.sh"),
      hook("bash .claude/hooks/alias.sh"),
    ];
    const { plans, scripts, missing } = readHookScripts(hooks, workspace);
    expect(scripts.map((s) => [s.rel, s.content.toString()])).toEqual([
      [".claude/hooks/fmt.sh", "#!/bin/sh\necho fmt\n"],
      [".claude/hooks/alias.sh", "#!/bin/sh\necho fmt\n"],
    ]);
    expect(missing).toEqual(["leak.sh", "missing.sh"]);
    expect(plans.map((p) => p.words.map((w) => w.rel))).toEqual([
      [".claude/hooks/fmt.sh"],
      ["leak.sh", "missing.sh"],
      [".claude/hooks/alias.sh"],
    ]);
  });
});
