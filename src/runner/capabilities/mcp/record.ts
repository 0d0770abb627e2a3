// MCP servers: configured, started, lost, ignored, and the tools that were not offered.
import { describeIgnored } from "../../../policy/workspace-trust.js";
import type { Warning } from "../../../report/index.js";
import type { McpConfigResult } from "../../../mcp/mcp-config.js";
import type { McpManager } from "../../../mcp/manager.js";
import type { RecordSection } from "../../record/section.js";

/** The section, from the run's MCP state as it is when the record is built. */
export const mcpSection =
  (state: () => { manager?: McpManager; loaded?: McpConfigResult }): RecordSection =>
  (p) => {
    const { manager: mcp, loaded: mcpConfig } = state();
    const { tools, redactor } = p;
    const warnings: Warning[] = [];
    for (const s of mcp?.servers ?? []) {
      if (s.status === "connected" && !s.restarts) continue;
      const tail = s.stderrTail?.trim() ? ` Its stderr ended with: ${s.stderrTail.trim().slice(-1000)}` : "";
      warnings.push({
        kind: "mcp_server",
        severity: "warning",
        message:
          s.status === "connected"
            ? `MCP server ${s.name} was lost and restarted (${s.error ?? "its connection closed"}).${tail}`
            : `MCP server ${s.name} ${s.restarts ? "was lost" : "did not start"}: ${s.error ?? "unknown error"}; the run went on without it.${tail}`,
      });
    }
    for (const i of mcpConfig?.ignored ?? [])
      warnings.push({
        kind: "mcp_config_ignored",
        severity: i.severity ?? "info",
        message: describeIgnored(i),
      });
    for (const r of tools?.refused ?? [])
      warnings.push({
        kind: "mcp_tool_refused",
        severity: "warning",
        message: `MCP server ${r.server}: its tool ${r.tool} was not offered: ${r.reason}`,
      });
    if (!mcp && !mcpConfig?.ignored.length) return { fields: {}, warnings };
    return {
      fields: {
        mcp: {
          servers: (mcp?.servers ?? []).map((s) => ({
            name: s.name,
            kind: s.kind,
            status: s.status,
            source: s.source,
            startMs: s.startMs,
            restarts: s.restarts,
            tools: (tools?.enabled ?? []).filter((t) => t.mcp?.server === s.name).map((t) => t.name),
            error: s.error === undefined ? undefined : redactor.redact(s.error),
            stderrTail: s.stderrTail === undefined ? undefined : redactor.redact(s.stderrTail),
          })),
          ignored: (mcpConfig?.ignored ?? []).map(({ source, text, reason }) => ({
            source: text ? `${source} (${text})` : source,
            reason,
          })),
          refusedTools: tools?.refused ?? [],
        },
      },
      warnings,
    };
  };
