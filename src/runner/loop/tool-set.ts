// The run's tool set, built in one place: the static tools (ALL_TOOLS) and the tools made per run by
// factories over run services (Task and the background-task tools; Skill; WebFetch and WebSearch; MCP
// servers' tools), filtered by the mode and by what the run allows (a run without a network has no web
// tools; WebSearch is offered only by rule): a call to a tool that is off gets why. The set is live: when a server's
// tool list changes (list_changed, a restart) `refresh` rebuilds it in place, so the pipeline and the next
// model request see the new tools.
import type Anthropic from "@anthropic-ai/sdk";
import type { McpManager } from "../../mcp/manager.js";
import { LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL } from "../../mcp/names.js";
import type { RefusedMcpTool } from "../../mcp/tools.js";
import { isReadOnlyMode } from "../../policy/modes.js";
import type { ParsedRule, PermissionMode } from "../../policy/schema.js";
import { WORKSPACE_ROOT } from "../../sandbox/sandbox.js";
import { ALL_TOOLS, apiToolDefinitions, FILE_WRITING_TOOLS } from "../../tools/index.js";
import type { AnyTool } from "../../tools/types.js";
import type { PermissionGate } from "./pipeline.js";
import { maxMcpOutputTokens } from "../../mcp/result.js";

export interface RunToolSetOptions {
  mode: PermissionMode;
  /**
   * Asked in plan mode: an MCP tool is offered there only when read-only-hinted and allowed by a rule; asked
   * in every mode which servers the resource tools may name.
   */
  gate: PermissionGate;
  /** Tools bound to run services other than MCP (Task, Skill, WebFetch, WebSearch). */
  bound?: readonly AnyTool[];
  /** Bound tools this run leaves out, each with why (the network setting, a missing rule). */
  off?: ReadonlyMap<string, string>;
  mcp?: McpManager;
  /** The largest MCP tool result, in tokens (default: MAX_MCP_OUTPUT_TOKENS, as Claude Code reads it). */
  maxMcpOutputTokens?: number;
  /** Tools that are not agent-ci's own but go to the API too (StructuredOutput). */
  extraApiTools?: Anthropic.Tool[];
}

/**
 * The web tools a run leaves out, each with why: both where the run has no network to reach, WebSearch
 * where the provider cannot run it, or where no allow rule names it (bypassPermissions offers it).
 */
export function webToolsOff(options: {
  offline?: string;
  providerGap?: string;
  mode: PermissionMode;
  rules: readonly ParsedRule[];
}): Map<string, string> {
  const off = new Map<string, string>();
  const searchAllowed =
    options.mode === "bypassPermissions" ||
    options.rules.some((r) => r.behavior === "allow" && r.tool === "WebSearch");
  if (options.offline) for (const name of ["WebFetch", "WebSearch"]) off.set(name, options.offline);
  else if (options.providerGap) off.set("WebSearch", options.providerGap);
  else if (!searchAllowed)
    off.set("WebSearch", "WebSearch is offered only when an allow rule names it, e.g. --allow WebSearch");
  return off;
}

export class RunToolSet {
  /** Every tool the run knows (for "not available in this mode" versus "no such tool"). */
  readonly all: AnyTool[] = [];
  /** The tools offered to the model and run by the pipeline. */
  readonly enabled: AnyTool[] = [];
  /** What the API gets (enabled tools, then the extra ones). */
  readonly api: Anthropic.Tool[] = [];
  refused: RefusedMcpTool[] = [];

  constructor(private readonly options: RunToolSetOptions) {
    this.refresh();
  }

  /** Why a tool the run knows is not offered, for the pipeline's answer to a call of it. */
  disabledReason(tool: string): string | undefined {
    const off = this.options.off?.get(tool);
    if (off) return off;
    return isReadOnlyMode(this.options.mode) && FILE_WRITING_TOOLS.has(tool)
      ? "plan mode is read-only"
      : undefined;
  }

  /** The policy lets the resource tools reach this server (no rule of the server's denies them). */
  private resourcesAllowed(server: string): boolean {
    return [LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL].some(
      (tool) =>
        this.options.gate.decide({ tool, input: { server }, readOnly: true, cwd: WORKSPACE_ROOT })
          .behavior === "allow",
    );
  }

  /** Rebuilds the lists in place (the pipeline and the loop hold these arrays). */
  refresh(): void {
    const { mode, mcp } = this.options;
    const own = [...ALL_TOOLS, ...(this.options.bound ?? [])];
    const builtIn = new Set(own.map((t) => t.name));
    const fromMcp = mcp
      ? mcp.tools(builtIn, {
          maxOutputTokens: this.options.maxMcpOutputTokens ?? maxMcpOutputTokens(),
          resourcesAllowed: (server) => this.resourcesAllowed(server),
        })
      : { tools: [], refused: [] };
    this.refused = fromMcp.refused;
    const all = [...own, ...fromMcp.tools];
    const enabled = all.filter((t) => {
      if (this.options.off?.has(t.name)) return false;
      if (!isReadOnlyMode(mode)) return true;
      if (FILE_WRITING_TOOLS.has(t.name)) return false;
      if (!t.mcp) return true;
      const decision = this.options.gate.decide({
        tool: t.name,
        input: {},
        readOnly: t.mcp.readOnlyHint,
        cwd: WORKSPACE_ROOT,
      });
      return t.mcp.readOnlyHint && decision.behavior === "allow";
    });
    this.all.splice(0, this.all.length, ...all);
    this.enabled.splice(0, this.enabled.length, ...enabled);
    this.api.splice(
      0,
      this.api.length,
      ...apiToolDefinitions(enabled),
      ...(this.options.extraApiTools ?? []),
    );
  }
}
