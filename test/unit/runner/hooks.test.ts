/**
 * PreToolUse / PostToolUse hooks with real child processes: blocking by exit code 2 and by JSON,
 * the stdin payload, timeouts, crashes (an error result, never a throw) and matchers.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileHookMatcher, type PolicyHook } from "../../../src/policy/index.js";
import { runHooks, type HookRunInput } from "../../../src/runner/hooks.js";

let dir: string;

async function script(name: string, body: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

const hook = (command: string, extra: Partial<PolicyHook> = {}): PolicyHook => ({
  event: "PreToolUse",
  matcher: "Bash",
  command,
  timeoutSeconds: undefined,
  source: "cli",
  ...extra,
});

const input = (hooks: PolicyHook[], extra: Partial<HookRunInput> = {}): HookRunInput => ({
  event: "PreToolUse",
  toolName: "Bash",
  toolInput: { command: "rm -rf ." },
  sessionId: "run-1",
  cwd: "/workspace",
  hooks,
  hostCwd: dir,
  ...extra,
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-ci-hooks-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("hooks", () => {
  it("exit code 2 blocks, with stderr as the reason for the model", async () => {
    const guard = await script("exit2.sh", 'cat > /dev/null; echo "no rm -rf here" >&2; exit 2');
    const summary = await runHooks(input([hook(guard)]));
    expect(summary.blocked).toBe(true);
    expect(summary.reason).toBe("no rm -rf here");
    expect(summary.results[0]).toMatchObject({ outcome: "block", exitCode: 2, source: "cli" });
  });

  it('JSON {"decision":"block"} on stdout blocks', async () => {
    const guard = await script(
      "json.sh",
      `cat > /dev/null; printf '%s' '{"decision":"block","reason":"json says no"}'`,
    );
    const summary = await runHooks(input([hook(guard)]));
    expect(summary).toMatchObject({ blocked: true, reason: "json says no" });
  });

  it("hookSpecificOutput.permissionDecision deny or ask blocks", async () => {
    const deny = await script(
      "specific.sh",
      `cat > /dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"needs a human"}}'`,
    );
    expect(await runHooks(input([hook(deny)]))).toMatchObject({ blocked: true, reason: "needs a human" });
  });

  it("exit 0 with plain output or an allow verdict does not block", async () => {
    const quiet = await script("ok.sh", "cat > /dev/null; echo looks fine");
    const approve = await script("approve.sh", `cat > /dev/null; echo '{"decision":"approve"}'`);
    const summary = await runHooks(input([hook(quiet), hook(approve)]));
    expect(summary.blocked).toBe(false);
    expect(summary.results.map((result) => result.outcome)).toEqual(["ok", "ok"]);
    expect(summary.results[0]?.stdout).toContain("looks fine");
  });

  it("sends the event as JSON on stdin", async () => {
    const out = join(dir, "payload.json");
    const capture = await script("capture.sh", `cat > ${JSON.stringify(out)}`);
    await runHooks(
      input([hook(capture, { event: "PostToolUse" })], {
        event: "PostToolUse",
        toolResponse: { exitCode: 0 },
      }),
    );
    expect(JSON.parse(await readFile(out, "utf8"))).toEqual({
      session_id: "run-1",
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "rm -rf ." },
      tool_response: { exitCode: 0 },
      cwd: "/workspace",
    });
  });

  it("a timeout is an error result, and the hook's processes are killed", async () => {
    const marker = join(dir, "after-sleep");
    // A sleep with a duration no other process uses, so that `ps` can tell whether it survived, and longer
    // than this test may take: runHooks returns only because the timeout fired, not because the hook ended
    // or let go of its output.
    const slow = await script("slow.sh", `sleep 300.0417; touch ${JSON.stringify(marker)}`);
    const summary = await runHooks(input([hook(slow, { timeoutSeconds: 0.3 })]));
    expect(summary.blocked).toBe(false);
    expect(summary.results[0]).toMatchObject({ outcome: "timeout" });
    expect(summary.results[0]?.reason).toContain("timed out after 0.3s");
    const processes = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" });
    expect(processes).not.toContain("sleep 300.0417");
    expect(processes).not.toContain(slow);
    expect(existsSync(marker)).toBe(false);
  }, 15_000);

  it("uses the default timeout from the run when the hook sets none", async () => {
    const slow = await script("slow-default.sh", "sleep 5");
    const summary = await runHooks(input([hook(slow)], { defaultTimeoutMs: 200 }));
    expect(summary.results[0]?.outcome).toBe("timeout");
  });

  it.each([
    ["a non-zero exit", "cat > /dev/null; echo broken >&2; exit 3", /exited with code 3: broken/],
    ["a crash by signal", "kill -9 $$", /code 137|killed by SIGKILL/],
    ["a missing command", "cat > /dev/null; definitely-not-a-command-xyz", /exited with code 127/],
  ])("%s is an error result, not a throw, and does not block", async (name, body, reason) => {
    const broken = await script(`${name.replace(/\W+/g, "-")}.sh`, body);
    const summary = await runHooks(input([hook(broken)]));
    expect(summary.blocked).toBe(false);
    expect(summary.results[0]?.outcome).toBe("error");
    expect(summary.results[0]?.reason).toMatch(reason);
  });

  it("failClosed turns errors and timeouts into blocks", async () => {
    const broken = await script("broken.sh", "exit 1");
    const summary = await runHooks(input([hook(broken)], { failClosed: true }));
    expect(summary.blocked).toBe(true);
  });

  it("a hook that never reads a large payload does not break the run", async () => {
    const ignoring = await script("ignore-stdin.sh", "exit 0");
    const summary = await runHooks(
      input([hook(ignoring)], { toolInput: { content: "x".repeat(2_000_000) } }),
    );
    expect(summary.results[0]?.outcome).toBe("ok");
  });

  it("runs matching hooks of the event only, and joins the reasons of several blocks", async () => {
    const first = await script("first.sh", "echo first >&2; exit 2");
    const second = await script("second.sh", "echo second >&2; exit 2");
    const other = await script("other.sh", "echo other >&2; exit 2");
    const hooks = [
      hook(first, { matcher: "Bash|Edit" }),
      hook(second, { matcher: "*" }),
      hook(other, { matcher: "Read" }),
      hook(other, { event: "PostToolUse" }),
    ];
    const summary = await runHooks(input(hooks));
    expect(summary.results).toHaveLength(2);
    expect(summary.reason).toBe("first\nsecond");
    expect((await runHooks(input(hooks, { toolName: "Glob" }))).results).toHaveLength(1);
  });

  it("returns quickly when nothing matches", async () => {
    expect(await runHooks(input([hook("exit 2", { matcher: "Edit" })]))).toEqual({
      blocked: false,
      reason: undefined,
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
