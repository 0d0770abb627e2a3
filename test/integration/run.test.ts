// runAgent end to end on the real engine: a scripted fix whose patch applies to a pristine copy, the real
// SDK against the fake Messages API, every exit reason with its patch and record, the API key kept out of
// the container and every output, and --verify on a good and a bad patch.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterEach, describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { runAgent, type RunOutcome } from "../../src/runner/run.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { fake, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.js";
import { applyToCopy, makeWorkspace } from "../support/workspace.js";
import { quietIo, tempOut } from "../support/run-io.js";

const docker = new Docker();
const FAKE_KEY = "sk-ant-api03-FAKEKEYfakekeyFAKEKEY0123456789abcdefABCDEF-xyzAA";
const EXAMPLE = path.resolve("examples/buggy-calc");

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function script(turns: unknown[], final?: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-script-")), "script.json");
  fs.writeFileSync(file, JSON.stringify({ turns, final }));
  return file;
}

/** Runs the agent; `onLine` sees each stdout line (a stream-json event) as it is written. */
async function run(
  input: Partial<RunConfigInput>,
  cancel?: AbortSignal,
  onLine?: (line: string) => void,
): Promise<{ outcome: RunOutcome; lines: string[]; logs: string[] }> {
  const lines: string[] = [];
  const logs: string[] = [];
  const config = parseRunConfig({
    workspace: EXAMPLE,
    out: tempOut(),
    mode: "bypassPermissions",
    ...input,
  } as RunConfigInput);
  const stdout = (line: string) => {
    lines.push(line);
    onLine?.(line);
  };
  const outcome = await runAgent(config, quietIo({ stdout, stderr: (l) => logs.push(l) }), cancel);
  return { outcome, lines, logs };
}

/** The events a run wrote to events.jsonl, parsed. */
function eventsOf(outcome: RunOutcome): Array<Record<string, unknown>> {
  return fs
    .readFileSync(path.join(outcome.outDir, "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** What every run must leave: a patch file, a valid report, events, and no container. */
async function expectRecord(outcome: RunOutcome) {
  expect(fs.existsSync(outcome.patchPath)).toBe(true);
  const report = parseReport(fs.readFileSync(path.join(outcome.outDir, "report.json"), "utf8"));
  expect(report.exitReason).toBe(outcome.exitReason);
  for (const name of ["report.md", "report.html", "events.jsonl"])
    expect(fs.existsSync(path.join(outcome.outDir, name))).toBe(true);
  const ids = report.toolCalls.map((c) => c.id);
  expect(new Set(ids).size).toBe(ids.length);
  const left = await docker.listContainers({
    all: true,
    filters: { label: [`${LABEL_RUN}=${outcome.runId}`] },
  });
  expect(left).toEqual([]);
  return report;
}

describe("runAgent", () => {
  it("fixes the example with a script; the patch applies to a pristine copy and the tests pass there", async () => {
    const { outcome } = await run({
      script: path.join(EXAMPLE, "fix.script.json"),
      mode: "acceptEdits",
      allow: ["Bash(npm test)"],
    });
    expect(outcome.exitReason).toBe("completed");
    expect(outcome.exitCode).toBe(0);
    const report = await expectRecord(outcome);
    expect(report.outcome).toBe("changes");
    expect(report.patch.files.map((f) => f.path)).toEqual(["src/calc.js"]);
    const copy = applyToCopy(EXAMPLE, fs.readFileSync(outcome.patchPath));
    expect(fs.readFileSync(path.join(copy, "src/calc.js"), "utf8")).toContain("return sum / values.length;");
    // The host's example was never touched.
    expect(fs.readFileSync(path.join(EXAMPLE, "src/calc.js"), "utf8")).toContain("values.length - 1");
  });

  it("streams Claude Code's stream-json shape: init, assistant tool_use, user tool_result, result", async () => {
    const { outcome, lines } = await run({
      script: script([[{ name: "Bash", input: { command: "echo hello" } }]]),
      outputFormat: "stream-json",
    });
    const events = lines.map(
      (l) =>
        JSON.parse(l) as {
          type: string;
          subtype?: string;
          message?: { content: Array<{ type: string; content?: unknown }> };
        },
    );
    expect(events.map((e) => e.type)).toEqual(["system", "assistant", "user", "assistant", "result"]);
    expect(events[2]?.message?.content[0]).toMatchObject({ type: "tool_result", content: "hello" });
    expect(events.at(-1)).toMatchObject({ type: "result", subtype: "success", exit_reason: "completed" });
    expect(events.at(-1)).not.toHaveProperty("errors");
    const file = fs.readFileSync(path.join(outcome.outDir, "events.jsonl"), "utf8").trim().split("\n");
    expect(file).toEqual(lines);
  });

  it("gives the fields Claude Code's SDK message types have: a uuid per message, apiKeySource and mcp_servers in init", async () => {
    const { outcome } = await run({ script: script([[{ name: "Bash", input: { command: "true" } }]]) });
    const events = eventsOf(outcome);
    const uuids = events.map((e) => e.uuid);
    for (const uuid of uuids)
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(uuids).size).toBe(events.length);
    expect(events[0]).toMatchObject({
      type: "system",
      subtype: "init",
      apiKeySource: "none",
      mcp_servers: [],
      session_id: outcome.runId,
    });
  });

  it("runs the real SDK against the fake Messages API and keeps the key out of the container and every output", async () => {
    const api = await startFakeAnthropic({
      apiKey: FAKE_KEY,
      turns: [
        fake.toolUse("Bash", {
          command:
            "env; cat /proc/1/environ /proc/self/environ | tr '\\0' '\\n'; grep -rl sk-ant- /workspace /tmp /etc 2>/dev/null | head; echo done-probing",
        }),
        fake.toolUses([
          { name: "Read", input: { file_path: "/workspace/src/calc.js" } },
          { name: "Grep", input: { pattern: "average" } },
        ]),
        fake.toolUse("Edit", {
          file_path: "/workspace/src/calc.js",
          old_string: "(values.length - 1)",
          new_string: "values.length",
        }),
        fake.text(`Fixed it. (echoing a key for the redaction test: ${FAKE_KEY})`),
      ],
    });
    servers.push(api);
    const { outcome, lines, logs } = await run({
      apiKey: FAKE_KEY,
      baseURL: api.url,
      prompt: "Fix the average bug.",
      outputFormat: "stream-json",
    });
    expect(outcome.exitReason).toBe("completed");
    const report = await expectRecord(outcome);
    expect(report.toolCalls.map((c) => c.tool)).toEqual(["Bash", "Read", "Grep", "Edit"]);
    expect(report.toolCalls[0]?.resultPreview).toContain("done-probing");
    // The container never saw the key: the probe's output (sent to the model) does not contain it.
    const probe = api.messagesRequests()[1]?.body.messages.at(-1);
    expect(JSON.stringify(probe)).toContain("done-probing");
    expect(JSON.stringify(probe)).not.toContain(FAKE_KEY);
    // Nothing written or printed holds it.
    for (const name of fs.readdirSync(outcome.outDir)) {
      const file = path.join(outcome.outDir, name);
      if (fs.statSync(file).isFile()) expect(fs.readFileSync(file, "utf8")).not.toContain(FAKE_KEY);
    }
    expect([...lines, ...logs].join("\n")).not.toContain(FAKE_KEY);
    // Parallel tool calls came back in one user message, in order.
    const third = api.messagesRequests()[2]?.body.messages.at(-1);
    expect(JSON.stringify(third)).toMatch(/tool_result[\s\S]*tool_result/);
  });

  it("B20 keeps an oversized output whole in tool-outputs/, redacted as report.json is", async () => {
    // A secret the run was given and a token-shaped string, assembled here: in the head the model and the
    // report's preview see, and again in the middle only the saved whole output holds.
    const secret = `b20-${crypto.randomBytes(12).toString("hex")}`;
    const token = `ghp_${crypto
      .randomBytes(27)
      .toString("base64")
      .replace(/[^A-Za-z0-9]/g, "x")}`;
    const filler = "filler line\n".repeat(2_000);
    const text = `key ${secret} token ${token}\n${filler}middle ${secret} ${token}\n${filler}end\n`;
    const ws = makeWorkspace({ "big.txt": text });
    const { outcome } = await run({
      workspace: ws,
      secrets: [secret],
      script: script([[{ name: "Bash", input: { command: "cat big.txt" } }]]),
    });
    const report = await expectRecord(outcome);
    const [call] = report.toolCalls;
    expect(call?.truncated).toBe(true);
    expect(call?.resultPreview.startsWith("key *** token ***\n")).toBe(true);
    const saved = fs.readFileSync(path.join(outcome.outDir, call?.fullOutputPath ?? ""), "utf8");
    const redacted = text.replaceAll(secret, "***").replaceAll(token, "***");
    expect(saved).toBe(redacted.trimEnd());
    for (const file of fs.readdirSync(outcome.outDir, { recursive: true })) {
      const where = path.join(outcome.outDir, String(file));
      if (!fs.statSync(where).isFile()) continue;
      const written = fs.readFileSync(where, "utf8");
      expect(written.includes(secret), String(file)).toBe(false);
      expect(written.includes(token), String(file)).toBe(false);
    }
  });

  it("ends with max_turns and still writes the patch and the record", async () => {
    const turns = Array.from({ length: 5 }, (_, i) => [
      { name: "Write", input: { file_path: `/workspace/out${i}.txt`, content: `${i}\n` } },
    ]);
    const { outcome } = await run({ script: script(turns), maxTurns: 2 });
    expect(outcome.exitReason).toBe("max_turns");
    expect(outcome.exitCode).toBe(5);
    expect(eventsOf(outcome).at(-1)).toMatchObject({
      type: "result",
      subtype: "error_max_turns",
      is_error: true,
      errors: [expect.any(String)],
    });
    const report = await expectRecord(outcome);
    expect(report.outcome).toBe("stopped");
    expect(report.patch.files.map((f) => f.path).sort()).toEqual(["out0.txt", "out1.txt"]);
  });

  it("ends with budget when the model's spending reaches --max-budget-usd", async () => {
    const api = await startFakeAnthropic({
      apiKey: FAKE_KEY,
      handler: () =>
        fake.toolUse("Bash", { command: "true" }, { usage: { input_tokens: 400_000, output_tokens: 1000 } }),
    });
    servers.push(api);
    const { outcome } = await run({ apiKey: FAKE_KEY, baseURL: api.url, prompt: "loop", maxBudgetUsd: 2 });
    expect(outcome.exitReason).toBe("budget");
    const events = eventsOf(outcome);
    expect(events[0]).toMatchObject({ type: "system", apiKeySource: "ANTHROPIC_API_KEY" });
    expect(events.at(-1)).toMatchObject({ type: "result", subtype: "error_max_budget_usd", is_error: true });
    const report = await expectRecord(outcome);
    expect(report.costUsd).toBeGreaterThanOrEqual(2);
  });

  it("ends with max_denials when the model keeps making denied calls", async () => {
    const turns = Array.from({ length: 10 }, () => [
      { name: "Bash", input: { command: "curl http://example.com" } },
    ]);
    const { outcome } = await run({ script: script(turns), mode: "default", maxDenials: 3 });
    expect(outcome.exitReason).toBe("max_denials");
    const report = await expectRecord(outcome);
    expect(report.denials.length).toBe(3);
  });

  it("ends with timeout at the wall-clock limit, killing the running command", async () => {
    // The limit counts from the run's start, sandbox start included (seconds on a loaded machine).
    const { outcome, logs } = await run({
      script: script([
        [{ name: "Write", input: { file_path: "/workspace/kept.txt", content: "kept\n" } }],
        [{ name: "Bash", input: { command: "sleep 60" } }],
      ]),
      timeoutMs: 20_000,
    });
    expect(outcome.exitReason).toBe("timeout");
    expect(eventsOf(outcome).at(-1)).toMatchObject({
      type: "result",
      subtype: "error_during_execution",
      exit_reason: "timeout",
      errors: [expect.any(String)],
    });
    const report = await expectRecord(outcome);
    expect(
      report.patch.files.map((f) => f.path),
      logs.join("\n"),
    ).toEqual(["kept.txt"]);
  });

  it("ends with cancelled when aborted mid-call, keeping the work done so far", async () => {
    const cancel = new AbortController();
    // Cancelled as soon as the second turn asks for its Bash call: the Write's tool_result is in by then.
    const { outcome, lines } = await run(
      {
        script: script([
          [{ name: "Write", input: { file_path: "/workspace/kept.txt", content: "kept\n" } }],
          [{ name: "Bash", input: { command: "sleep 60" } }],
        ]),
        outputFormat: "stream-json",
      },
      cancel.signal,
      (line) => {
        const event = JSON.parse(line) as {
          type: string;
          message?: { content?: Array<{ type: string; name?: string }> };
        };
        if (
          event.type === "assistant" &&
          event.message?.content?.some((b) => b.type === "tool_use" && b.name === "Bash")
        )
          cancel.abort(new Error("SIGINT"));
      },
    );
    expect(lines.some((l) => l.includes('"tool_result"'))).toBe(true);
    expect(outcome.exitReason).toBe("cancelled");
    expect(outcome.exitCode).toBe(130);
    const report = await expectRecord(outcome);
    expect(report.patch.files.map((f) => f.path)).toEqual(["kept.txt"]);
  });

  it("ends with api_error on a bad key before any container starts", async () => {
    const api = await startFakeAnthropic({ apiKey: FAKE_KEY });
    servers.push(api);
    const { outcome } = await run({
      apiKey: "sk-ant-api03-WRONGwrongWRONGwrong0123456789",
      baseURL: api.url,
      prompt: "x",
    });
    expect(outcome.exitReason).toBe("api_error");
    expect(outcome.exitCode).toBe(4);
    const report = await expectRecord(outcome);
    expect(report.image).toBeUndefined();
    expect(JSON.stringify(report)).not.toContain("WRONGwrong");
  });

  it("ends with api_error when the API keeps failing mid-run, keeping the patch", async () => {
    const api = await startFakeAnthropic({
      apiKey: FAKE_KEY,
      turns: [
        fake.toolUse("Write", { file_path: "/workspace/kept.txt", content: "kept\n" }),
        fake.unauthorized("key revoked"),
      ],
    });
    servers.push(api);
    const { outcome } = await run({ apiKey: FAKE_KEY, baseURL: api.url, prompt: "x" });
    expect(outcome.exitReason).toBe("api_error");
    const report = await expectRecord(outcome);
    expect(report.patch.files.map((f) => f.path)).toEqual(["kept.txt"]);
  });

  it("ends with engine_error when no engine answers, before any model call", async () => {
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = "unix:///nonexistent/docker.sock";
    try {
      const { outcome } = await run({ script: path.join(EXAMPLE, "fix.script.json") });
      expect(outcome.exitReason).toBe("engine_error");
      expect(outcome.exitCode).toBe(3);
      expect(outcome.error).toMatch(/no Docker engine answers/);
      const report = parseReport(fs.readFileSync(path.join(outcome.outDir, "report.json"), "utf8"));
      expect(report.toolCalls).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
  });

  it("ends with config_error on a script that is not a script", async () => {
    const bad = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bad-")), "bad.json");
    fs.writeFileSync(bad, '{"turns": "nope"}');
    const { outcome } = await run({ script: bad });
    expect(outcome.exitReason).toBe("config_error");
    expect(outcome.exitCode).toBe(2);
    await expectRecord(outcome);
  });

  // Two runs and two verify containers, each running npm test: minutes on a loaded 2-core machine.
  it(
    "verifies a good patch in a fresh container, and reports a failing one",
    { timeout: 240_000 },
    async () => {
      const good = await run({ script: path.join(EXAMPLE, "fix.script.json"), verify: "npm test" });
      expect(good.outcome.exitCode).toBe(0);
      expect(good.outcome.report?.verify).toMatchObject({ applied: true, exitCode: 0 });
      // Every phase of the run in the order they began, each tool call inside the calls phase.
      const phases = good.outcome.report?.phases ?? [];
      expect(phases.map((p) => p.name)).toEqual([
        "engine",
        "images",
        "container",
        "start",
        "copy-in",
        "checks",
        "baseline",
        "calls",
        "patch",
        "teardown",
        "verify",
      ]);
      const calls = phases.find((p) => p.name === "calls")!;
      for (const call of good.outcome.report?.toolCalls ?? []) {
        expect(call.startOffsetMs).toBeGreaterThanOrEqual(calls.startOffsetMs);
        expect(call.startOffsetMs + call.durationMs).toBeLessThanOrEqual(
          calls.startOffsetMs + calls.durationMs + 1,
        );
      }
      const bad = await run({
        script: script([
          [
            {
              name: "Write",
              input: { file_path: "/workspace/src/calc.js", content: "export const broken = ;\n" },
            },
          ],
        ]),
        verify: "npm test",
        mode: "bypassPermissions",
      });
      expect(bad.outcome.exitReason).toBe("completed");
      expect(bad.outcome.exitCode).toBe(6);
      const report = await expectRecord(bad.outcome);
      expect(report.outcome).toBe("verify_failed");
      expect(report.verify?.exitCode).not.toBe(0);
    },
  );

  it("keeps files a Read deny rule covers out of the verify container too", async () => {
    const ws = makeWorkspace({ "a.txt": "one\n", ".env": "TOKEN=kept-out-of-verify\n" }, { git: true });
    const { outcome } = await run({
      workspace: ws,
      deny: ["Read(.env)"],
      script: script([[{ name: "Write", input: { file_path: "/workspace/b.txt", content: "two\n" } }]]),
      verify: "test -e .env && echo present || echo absent",
    });
    const report = await expectRecord(outcome);
    expect(report.verify).toMatchObject({ applied: true, exitCode: 0 });
    expect(report.verify?.outputTail.trim()).toBe("absent");
  });

  it("verifies a run that changed nothing: no patch to apply, the command runs on the tree as it was", async () => {
    const { outcome } = await run({
      script: script([[{ name: "Read", input: { file_path: "/workspace/package.json" } }]]),
      verify: "npm test",
    });
    const report = await expectRecord(outcome);
    expect(report.patch.files).toEqual([]);
    expect(report.verify).toMatchObject({ applied: true });
    expect(report.verify?.exitCode).not.toBe(0); // the example's bug is still there
  });

  it("replays a recorded report's calls with --script report.json", { timeout: 180_000 }, async () => {
    const first = await run({ script: path.join(EXAMPLE, "fix.script.json") });
    const again = await run({ script: path.join(first.outcome.outDir, "report.json") });
    expect(again.outcome.exitReason).toBe("completed");
    expect(fs.readFileSync(again.outcome.patchPath, "utf8")).toBe(
      fs.readFileSync(first.outcome.patchPath, "utf8"),
    );
  });

  it("works on a workspace that is its own git repository, basing the patch on its HEAD", async () => {
    const ws = makeWorkspace({ "a.txt": "one\n" }, { git: true });
    const { outcome } = await run({
      workspace: ws,
      script: script([[{ name: "Bash", input: { command: "echo two >> a.txt && git status --short" } }]]),
    });
    const report = await expectRecord(outcome);
    // The commit the copy was taken from, read with the copy's listing.
    expect(report.workspace.baseCommit).toBe(
      execFileSync("git", ["rev-parse", "HEAD"], { cwd: ws, encoding: "utf8" }).trim(),
    );
    expect(
      fs.readFileSync(path.join(applyToCopy(ws, fs.readFileSync(outcome.patchPath)), "a.txt"), "utf8"),
    ).toBe("one\ntwo\n");
  });
});
