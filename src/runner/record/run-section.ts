// The run itself: who, when, how it ended, the model and its limits, the conversation and what it cost
// (the main conversation's and what each capability spent beside it: subagents, side calls), the output files that could not be written.
import { capText, TURN_TEXT_MAX_CHARS, type Warning } from "../../report/index.js";
import { AGENT_CI_VERSION } from "../../version.js";
import { addUsage } from "../loop/agent-loop.js";
import type { RecordSection } from "./section.js";

export const runSection: RecordSection = (p) => {
  const { config, loop, redactor } = p;
  const spent = p.capabilities.flatMap((c) => c.spent?.() ?? []);
  const usage = spent.map((s) => s.usage).reduce(addUsage, loop.usage);
  const costUsd = spent.map((s) => s.costUsd).reduce((sum, c) => sum + c, loop.costUsd);
  const warnings: Warning[] = [
    ...p.outputErrors.map((message) => ({ kind: "output_write", severity: "critical" as const, message })),
    ...loop.warnings.map((message) => ({ kind: "loop", severity: "info" as const, message })),
  ];
  if (loop.contextFallback)
    warnings.push({
      kind: "context_management_fallback",
      severity: "warning",
      message: loop.contextFallback,
    });
  return {
    fields: {
      schemaVersion: 1,
      runId: p.runId,
      agentCiVersion: AGENT_CI_VERSION,
      startedAt: p.startedAt.toISOString(),
      endedAt: new Date().toISOString(),
      durationMs: Math.round(performance.now() - p.runStart),
      exitReason: p.exitReason,
      error:
        p.failure && p.failure.reason !== "completed"
          ? { kind: p.failure.kind, message: redactor.redact(p.failure.message) }
          : undefined,
      model: {
        driver: config.script ? "script" : "anthropic",
        name: config.script ? "script" : config.model,
        provider: config.script ? undefined : config.provider,
        maxTokens: config.maxTokens,
        thinkingBudget: config.thinkingBudget,
      },
      limits: { maxTurns: config.maxTurns, maxBudgetUsd: config.maxBudgetUsd, timeoutMs: config.timeoutMs },
      turns: loop.turns.map(({ costUsd: _cost, ...t }) => ({
        ...t,
        text: t.text ? capText(redactor.redact(t.text), TURN_TEXT_MAX_CHARS) : undefined,
      })),
      compactions: loop.compactions.length ? loop.compactions : undefined,
      usage,
      costUsd,
      todos: p.state.todos.length ? p.state.todos : undefined,
      structuredOutput: loop.structured
        ? {
            schema: loop.structured.schema,
            valid: loop.structured.valid,
            attempts: loop.structured.attempts,
            errors:
              loop.structured.valid || loop.structured.errors.length
                ? loop.structured.errors
                : [`the run ended (${p.exitReason}) before the agent returned an object`],
            path: p.structuredPath,
          }
        : undefined,
    },
    warnings,
  };
};
