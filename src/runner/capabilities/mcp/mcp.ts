// MCP servers (docs/mcp.md): a bad configuration ends the run before any container, stdio servers run as users
// of their own in the agent's group and remote ones through service slots, and the servers are closed at the
// run's end before the patch is taken.
import { ConfigError } from "../../../errors.js";
import { isStdio } from "../../../mcp/config.js";
import type { McpManager } from "../../../mcp/manager.js";
import type { DockerSandbox } from "../../../sandbox/docker-sandbox.js";
import type { RunContext } from "../../run/run-context.js";
import type { Capability } from "../capability.js";
import { mcpSection } from "./record.js";

export const mcp: Capability = {
  name: "mcp",
  options: ["mcp_config", "strict_mcp", "trust_workspace_settings"],
  prepare: (ctx) => {
    if (ctx.mcpConfigError) throw ctx.mcpConfigError;
  },
  sandboxNeeds: (ctx) => {
    const servers = ctx.mcpConfig?.servers ?? [];
    return { sharedWorkspace: servers.some(isStdio), services: servers.length };
  },
  firstTurnWaits: (ctx) =>
    ctx.mcpConfig?.servers.length
      ? "the MCP servers' tools are part of the first request, and the servers start in the sandbox"
      : undefined,
  start: async ({ ctx, sandbox }) =>
    ctx.mcpConfig?.servers.length ? { mcp: await startMcp(ctx, sandbox) } : {},
  close: async (phase, log) => {
    await phase.mcp
      ?.close()
      .catch((e: unknown) => log(`closing the MCP servers failed: ${(e as Error).message}`));
    return {};
  },
  section: mcpSection,
};

/**
 * Connects the run's MCP servers, all at once (stdio ones in the sandbox). One that fails is a warning and
 * the run goes on without it; with --strict-mcp it ends the run as a config error.
 */
async function startMcp(ctx: RunContext, sandbox: DockerSandbox): Promise<McpManager> {
  // The MCP SDK is loaded only by a run that has servers.
  const { McpManager } = await import("../../../mcp/manager.js");
  const manager = new McpManager({ servers: ctx.mcpConfig?.servers ?? [], host: sandbox, log: ctx.log });
  await manager.start();
  for (const s of manager.servers)
    if (s.status === "connected")
      ctx.log(`MCP server ${s.name} (${s.kind}) connected in ${s.startMs} ms: ${s.tools.length} tool(s)`);
  const failed = manager.servers.filter((s) => s.status !== "connected");
  if (failed.length && ctx.config.strictMcp) {
    await manager.close();
    throw new ConfigError(
      `--strict-mcp: MCP server(s) did not start: ${failed.map((s) => `${s.name} (${s.error ?? "unknown error"}${s.stderrTail ? `; stderr: ${s.stderrTail.trim().slice(-500)}` : ""})`).join("; ")}`,
    );
  }
  return manager;
}
