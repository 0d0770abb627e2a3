// MCP servers (docs/mcp.md): a bad configuration ends the run before any container, stdio servers run as users
// of their own in the agent's group and remote ones through service slots, and the servers are closed at the
// run's end before the patch is taken.
import { ConfigError } from "../../../errors.js";
import { isStdio, loadMcpConfig, type McpConfigResult } from "../../../mcp/mcp-config.js";
import { describeIgnored } from "../../../policy/workspace-trust.js";
import type { McpManager } from "../../../mcp/manager.js";
import type { DockerSandbox } from "../../../sandbox/docker-sandbox.js";
import type { RunContext } from "../../run/run-context.js";
import type { Capability } from "../capability.js";
import { mcpSection } from "./record.js";

export const mcp: Capability = {
  name: "mcp",
  options: ["mcp_config", "strict_mcp", "trust_workspace_settings"],
  forRun: (config) => {
    // Read before the run's redactor: the servers' env and headers are secrets. A bad configuration is kept for
    // the run's first check to throw (with its record).
    let loaded: McpConfigResult | undefined;
    let error: Error | undefined;
    try {
      loaded = loadMcpConfig({
        configs: config.mcpConfig,
        workspace: config.workspace,
        trustWorkspace: config.trustWorkspaceSettings,
      });
    } catch (e) {
      error = new ConfigError((e as Error).message);
    }
    const servers = loaded?.servers ?? [];
    let manager: McpManager | undefined;
    return {
      secrets: loaded?.secrets ?? [],
      services: servers.length,
      check: () => {
        if (error) throw error;
      },
      firstTurnWaits: () =>
        servers.length
          ? "the MCP servers' tools are part of the first request, and the servers start in the sandbox"
          : undefined,
      modelReady: ({ ctx }) => {
        for (const ignored of loaded?.ignored ?? []) ctx.log(describeIgnored(ignored));
      },
      sharedWorkspace: () => servers.some(isStdio),
      start: async ({ ctx, sandbox }) => {
        if (!servers.length) return {};
        manager = await startMcp(ctx, servers, sandbox);
        const started = manager;
        return {
          toolSource: started,
          servers: () => started.servers.map((s) => ({ name: s.name, status: s.status })),
        };
      },
      close: async (log) => {
        await manager
          ?.close()
          .catch((e: unknown) => log(`closing the MCP servers failed: ${(e as Error).message}`));
      },
      attribute: (caller, startedAt) => (manager ? manager.attributeConnection(caller, startedAt) : caller),
      section: mcpSection(() => ({ manager, loaded })),
    };
  },
};

/**
 * Connects the run's MCP servers, all at once (stdio ones in the sandbox). One that fails is a warning and
 * the run goes on without it; with --strict-mcp it ends the run as a config error.
 */
async function startMcp(
  ctx: RunContext,
  servers: McpConfigResult["servers"],
  sandbox: DockerSandbox,
): Promise<McpManager> {
  // The MCP SDK is loaded only by a run that has servers.
  const { McpManager } = await import("../../../mcp/manager.js");
  const manager = new McpManager({ servers, host: sandbox, log: ctx.log });
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
