// The subagents Task calls ran, the agent definitions that were ignored, and those stopped at the end.
import { describeIgnored } from "../../../policy/workspace-trust.js";
import type { Warning } from "../../../report/index.js";
import type { LoadedAgents } from "../../agents/agents.js";
import type { SubagentRunner } from "../../agents/subagents.js";
import type { RecordSection } from "../../record/section.js";

/** The section, from the run's subagent state as it is when the record is built. */
export const subagentsSection =
  (state: () => { loaded?: LoadedAgents; runner?: SubagentRunner; stopped?: string[] }): RecordSection =>
  (p) => {
    const { redactor } = p;
    const { loaded, runner, stopped } = state();
    const subagents = (runner?.runs ?? []).map((r) => ({
      agentId: r.agentId,
      toolUseId: r.toolUseId,
      type: r.type,
      description: redactor.redact(r.description),
      model: r.model,
      permissionMode: r.mode,
      background: r.background,
      status: r.status,
      detail: (r.loop.detail ?? r.error) ? redactor.redact(r.loop.detail ?? r.error ?? "") : undefined,
      tools: r.tools,
      turns: r.loop.turns.length,
      toolUses: r.loop.calls.length,
      usage: r.loop.usage,
      costUsd: r.loop.costUsd,
      startOffsetMs: r.startOffsetMs,
      durationMs: r.durationMs,
    }));
    const warnings: Warning[] = [
      ...(loaded?.ignored ?? []).map((i) => ({
        kind: "agents_ignored",
        severity: i.severity ?? "info",
        message: describeIgnored(i),
      })),
      ...(stopped ?? []).map((agent) => ({
        kind: "subagent_stopped",
        severity: "warning" as const,
        message: `The background subagent ${agent} was still running when the run ended; it was stopped.`,
      })),
    ];
    return { fields: subagents.length ? { subagents } : {}, warnings };
  };
