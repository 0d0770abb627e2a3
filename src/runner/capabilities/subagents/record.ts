// The subagents Task calls ran, the agent definitions that were ignored, and those stopped at the end.
import { describeIgnored } from "../../../policy/workspace-trust.js";
import type { Warning } from "../../../report/index.js";
import type { RecordSection } from "../../record/section.js";

export const subagentsSection: RecordSection = (p) => {
  const { redactor } = p;
  const subagents = (p.subagents?.runs ?? []).map((r) => ({
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
    ...(p.agents?.ignored ?? []).map((i) => ({
      kind: "agents_ignored",
      severity: i.severity ?? "info",
      message: describeIgnored(i),
    })),
    ...(p.stoppedAgents ?? []).map((agent) => ({
      kind: "subagent_stopped",
      severity: "warning" as const,
      message: `The background subagent ${agent} was still running when the run ended; it was stopped.`,
    })),
  ];
  return { fields: subagents.length ? { subagents } : {}, warnings };
};
