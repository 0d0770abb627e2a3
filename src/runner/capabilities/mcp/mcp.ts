// MCP servers (docs/mcp.md): a bad configuration ends the run before any container, stdio servers run as users
// of their own in the agent's group and remote ones through service slots, and the servers are closed at the
// run's end before the patch is taken.
import { isStdio } from "../../../mcp/config.js";
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
  close: async (phase, log) => {
    await phase.mcp
      ?.close()
      .catch((e: unknown) => log(`closing the MCP servers failed: ${(e as Error).message}`));
    return {};
  },
  section: mcpSection,
};
