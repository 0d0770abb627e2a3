// The capabilities through their one shape (src/runner/capabilities/): each run's parts made from its
// configuration, what the sandbox must give them all, why the first turn waits, the config check before any
// container, their close in the reverse of their start, each keeping its own state for the record, and those
// an entry gives (telemetry) told once the record is written, and the one that runs the run around the
// stages (attempts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseRunConfig } from "../../../src/runner/config.js";
import {
  CAPABILITIES,
  capabilitiesFor,
  type Capability,
  type CapabilityRun,
  capabilitySecrets,
  checkCapabilities,
  closeCapabilities,
  firstTurnWaits,
  recordedCapabilities,
  runAround,
  sandboxNeeds,
  serviceSlots,
} from "../../../src/runner/capabilities/index.js";
import type { PreparedPolicy } from "../../../src/runner/run/policy-setup.js";
import { ConfigError } from "../../../src/errors.js";

function runsWith(mcpConfig: string[]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-capabilities-"));
  const script = path.join(dir, "script.json");
  fs.writeFileSync(script, JSON.stringify({ turns: [] }));
  return capabilitiesFor(parseRunConfig({ workspace: dir, script, mcpConfig }));
}

const policyWithHooks = (hooks: number) =>
  ({ policy: { hooks: new Array(hooks).fill({}) } }) as unknown as PreparedPolicy;

describe("the capabilities", () => {
  it("each make a part of their own for every run, in their order", () => {
    const first = runsWith([]);
    const second = runsWith([]);
    expect(first).toHaveLength(CAPABILITIES.length);
    first.forEach((run, i) => expect(run).not.toBe(second[i]));
  });

  it("ask the sandbox together: a shared workspace for stdio servers or hooks, a slot per MCP server", () => {
    const servers = JSON.stringify({
      mcpServers: { local: { command: "srv" }, remote: { type: "http", url: "https://mcp.example/" } },
    });
    expect(sandboxNeeds(runsWith([servers]), policyWithHooks(0))).toEqual({
      sharedWorkspace: true,
      services: 2,
    });
    expect(serviceSlots(runsWith([servers]))).toBe(2);
    expect(sandboxNeeds(runsWith([]), policyWithHooks(1))).toEqual({ sharedWorkspace: true, services: 0 });
    expect(sandboxNeeds(runsWith([]), policyWithHooks(0))).toEqual({
      sharedWorkspace: false,
      services: 0,
    });
  });

  it("give the secrets their configuration holds", () => {
    const token = ["server", "token", "value"].join("-");
    const servers = JSON.stringify({ mcpServers: { local: { command: "srv", env: { TOKEN: token } } } });
    expect(capabilitySecrets(runsWith([servers]))).toContain(token);
    expect(capabilitySecrets(runsWith([]))).toEqual([]);
  });

  it("say why the first turn waits only when something in it starts in the sandbox", () => {
    const servers = JSON.stringify({ mcpServers: { local: { command: "srv" } } });
    expect(firstTurnWaits(runsWith([servers]))).toEqual([
      "the MCP servers' tools are part of the first request, and the servers start in the sandbox",
    ]);
    expect(firstTurnWaits(runsWith([]))).toEqual([]);
  });

  it("end the run with a bad MCP configuration before anything is made", () => {
    expect(() => checkCapabilities(runsWith(["{ not json"]))).toThrow(
      expect.objectContaining({ name: "ConfigError" }),
    );
    expect(() => checkCapabilities(runsWith([]))).not.toThrow();
  });

  it("close in the reverse of their start, one after another", async () => {
    const order: string[] = [];
    const closing = (name: string): CapabilityRun => ({
      close: async (log) => {
        order.push(`${name} begins`);
        await Promise.resolve();
        log(`${name} closed`);
        order.push(`${name} ends`);
      },
    });
    const lines: string[] = [];
    await closeCapabilities([closing("first"), {}, closing("second")], (line) => lines.push(line));
    expect(order).toEqual(["second begins", "second ends", "first begins", "first ends"]);
    expect(lines).toEqual(["second closed", "first closed"]);
  });

  it("close a run's parts that never started without a line", async () => {
    const lines: string[] = [];
    await closeCapabilities(runsWith([]), (line) => lines.push(line));
    expect(lines).toEqual([]);
  });

  it("take those an entry gives after their own, told once the record is written; an error of one is a line", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-capabilities-"));
    const script = path.join(dir, "script.json");
    fs.writeFileSync(script, JSON.stringify({ turns: [] }));
    const config = parseRunConfig({ workspace: dir, script, prompt: "the task" });
    const told: string[] = [];
    const given = (name: string, fails = false): Capability => ({
      name,
      options: [],
      forRun: (run) => ({
        recorded: async ({ exitReason, secrets }) => {
          told.push(`${name}: ${run.prompt} ${exitReason} ${secrets.join(",")}`);
          if (fails) throw new Error(`${name} could not send`);
        },
      }),
    });
    const runs = capabilitiesFor(config, [given("first", true), given("second")]);
    expect(runs).toHaveLength(CAPABILITIES.length + 2);
    const lines: string[] = [];
    const ended = { exitReason: "completed" as const, report: undefined, outDir: dir, secrets: ["s"] };
    await recordedCapabilities(runs, ended, (line) => lines.push(line));
    expect(told).toEqual(["first: the task completed s", "second: the task completed s"]);
    expect(lines).toEqual(["agent-ci: first could not send"]);
  });

  it("run the run around the stages only with more than one attempt; the attempts' file is read before any run", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-capabilities-"));
    const script = path.join(dir, "script.json");
    fs.writeFileSync(script, JSON.stringify({ turns: [] }));
    const runs: string[] = [];
    const given = {
      io: { stdout: () => undefined, stderr: () => undefined, progress: false },
      cancel: new AbortController().signal,
      secrets: [],
      one: async () => {
        runs.push("one");
        throw new Error("no run in this test");
      },
    };
    const one = parseRunConfig({ workspace: dir, script });
    expect(one.attempts).toBe(1);
    expect(runAround(capabilitiesFor(one), given)).toBeUndefined();
    const missing = path.join(dir, "no-hints.txt");
    const two = parseRunConfig({ workspace: dir, script, attempts: 2, attemptPrompts: missing });
    const whole = runAround(capabilitiesFor(two), given);
    expect(whole).toBeInstanceOf(Promise);
    await expect(whole).rejects.toThrow(new ConfigError(`--attempt-prompts ${missing}: no such file`));
    expect(runs).toEqual([]);
  });
});
