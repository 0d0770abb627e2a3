// The capabilities through their one shape (src/runner/capabilities/): what the sandbox must give them all, why
// the first turn waits, the config check before any container, and their close in the reverse of their start.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseRunConfig } from "../../../src/runner/config.js";
import {
  closeCapabilities,
  firstTurnWaits,
  prepareCapabilities,
  sandboxNeeds,
} from "../../../src/runner/capabilities/index.js";
import { newRunContext } from "../../../src/runner/run/new-context.js";
import type { AgentPhase } from "../../../src/runner/run/run-context.js";
import type { PreparedPolicy } from "../../../src/runner/run/policy-setup.js";

function contextWith(mcpConfig: string[]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-capabilities-"));
  const script = path.join(dir, "script.json");
  fs.writeFileSync(script, JSON.stringify({ turns: [] }));
  const config = parseRunConfig({ workspace: dir, script, mcpConfig });
  const io = { stdout: () => {}, stderr: () => {}, progress: false };
  return newRunContext(config, io, { runId: "r", outDir: dir, secrets: [] });
}

const policyWithHooks = (hooks: number) =>
  ({ policy: { hooks: new Array(hooks).fill({}) } }) as unknown as PreparedPolicy;

describe("the capabilities", () => {
  it("ask the sandbox together: a shared workspace for stdio servers or hooks, a slot per MCP server", () => {
    const servers = JSON.stringify({
      mcpServers: { local: { command: "srv" }, remote: { type: "http", url: "https://mcp.example/" } },
    });
    expect(sandboxNeeds(contextWith([servers]), policyWithHooks(0))).toEqual({
      sharedWorkspace: true,
      services: 2,
    });
    expect(sandboxNeeds(contextWith([]), policyWithHooks(1))).toEqual({ sharedWorkspace: true, services: 0 });
    expect(sandboxNeeds(contextWith([]), policyWithHooks(0))).toEqual({
      sharedWorkspace: false,
      services: 0,
    });
  });

  it("say why the first turn waits only when something in it starts in the sandbox", () => {
    const servers = JSON.stringify({ mcpServers: { local: { command: "srv" } } });
    expect(firstTurnWaits(contextWith([servers]))).toEqual([
      "the MCP servers' tools are part of the first request, and the servers start in the sandbox",
    ]);
    expect(firstTurnWaits(contextWith([]))).toEqual([]);
  });

  it("end the run with a bad MCP configuration before anything is made", () => {
    const ctx = contextWith(["{ not json"]);
    expect(() => prepareCapabilities(ctx)).toThrow(expect.objectContaining({ name: "ConfigError" }));
    expect(() => prepareCapabilities(contextWith([]))).not.toThrow();
  });

  it("close in the reverse of their start: background subagents stop before the MCP servers close", async () => {
    const order: string[] = [];
    const phase = {
      mcp: { close: async () => void order.push("mcp") },
      subagents: {
        stopBackground: async () => {
          order.push("subagents");
          return ["agent-1"];
        },
      },
    } as unknown as AgentPhase;
    const lines: string[] = [];
    const closed = await closeCapabilities(phase, (line) => lines.push(line));
    expect(order).toEqual(["subagents", "mcp"]);
    expect(closed.stoppedAgents).toEqual(["agent-1"]);
    expect(lines).toEqual(["stopped the background subagent agent-1: the run ended"]);
  });
});
