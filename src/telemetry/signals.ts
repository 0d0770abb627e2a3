// A run's record (report.json, redacted) told as Claude Code tells a session: one `agent_ci.run` span for the
// run, its sandbox phases under it, and per conversation (one, or one per attempt) a `claude_code.interaction`
// with an `llm_request` per model turn and a `tool` → `tool.execution` per call (a subagent's calls under its
// Task call's execution); the events as log records tied to those spans; the metrics as counters.
// Every string passes the run's redactor once more on its way out (`clean`), and prompts and tool inputs
// are sent only when OTEL_LOG_USER_PROMPTS / OTEL_LOG_TOOL_DETAILS ask for them.
import crypto from "node:crypto";
import {
  type Attributes,
  type AttributeValue,
  type Context,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { Logger } from "@opentelemetry/api-logs";
import type { Meter } from "@opentelemetry/api";
import type { RunReport, ToolCall, Turn } from "../report/index.js";
import { costUsd } from "../runner/model/pricing.js";
import type { Providers } from "./sdk-providers.js";
import type { TelemetrySettings } from "./settings.js";
import {
  CODE_EDIT_TOOLS,
  type AgentCiEvent,
  type ClaudeCodeEvent,
  decisionSource,
  languageOf,
  METRICS,
  NOT_LOGGED,
  SPANS,
} from "./vocabulary.js";
import { AGENT_CI_VERSION } from "../version.js";

/** What the run's face knows that the record does not: the prompt and where the run came from. */
export interface RunOrigin {
  prompt?: string;
  repository?: string;
  event?: string;
  pullRequest?: number;
  issue?: number;
}

/** The run's record, and each attempt's when it ran several (report.attempts). */
export interface RunRecord {
  report: RunReport;
  attempts: RunReport[];
}

const SCOPE = { name: "agent-ci", version: AGENT_CI_VERSION };

export class RunSignals {
  private readonly logger?: Logger;
  private readonly meter?: Meter;
  private sequence = 0;

  constructor(
    private readonly providers: Providers,
    private readonly settings: TelemetrySettings,
    private readonly origin: RunOrigin,
    private readonly redact: (text: string) => string,
  ) {
    this.logger = providers.logger?.getLogger(`${SCOPE.name}.events`, SCOPE.version);
    this.meter = providers.meter?.getMeter(SCOPE.name, SCOPE.version);
  }

  /** The whole run: its span, its phases, each conversation, its own events and the metrics. */
  record({ report, attempts }: RunRecord): void {
    const tracer = this.providers.tracer?.getTracer(`${SCOPE.name}.tracing`, SCOPE.version);
    const t0 = Date.parse(report.startedAt);
    const base = this.common(report);
    const run = tracer?.startSpan(
      SPANS.run,
      { startTime: new Date(t0), attributes: this.clean({ ...base, ...this.runAttributes(report) }) },
      ROOT_CONTEXT,
    );
    const runCtx = run ? trace.setSpan(ROOT_CONTEXT, run) : ROOT_CONTEXT;
    const conversations = attempts.length ? attempts : [report];
    for (const [i, one] of conversations.entries()) {
      const at = Date.parse(one.startedAt);
      const ctx = attempts.length ? this.attemptContext(runCtx, one, i + 1) : runCtx;
      this.phases(one, ctx, at);
      this.conversation(one, ctx, at);
      this.metrics(one);
    }
    this.runEvents(report, runCtx, t0);
    this.meter
      ?.createCounter(METRICS.runs.name, { description: METRICS.runs.description, unit: METRICS.runs.unit })
      .add(1, this.clean({ ...base, ...pick(this.runAttributes(report), RUN_COUNT_ATTRIBUTES) }));
    if (run) {
      if (report.outcome === "error")
        run.setStatus({ code: SpanStatusCode.ERROR, message: report.exitReason });
      run.end(new Date(Date.parse(report.endedAt)));
    }
  }

  /** Attributes on every signal, as Claude Code repeats its resource attributes and session.id on each. */
  private common(report: RunReport): Attributes {
    const { repository, event, pullRequest, issue } = this.origin;
    return {
      ...this.settings.resourceAttributes,
      "session.id": report.runId,
      "agent_ci.run_id": report.runId,
      ...(repository ? { "agent_ci.repository": repository } : {}),
      ...(event ? { "agent_ci.event": event } : {}),
      ...(pullRequest !== undefined ? { "agent_ci.pull_request.number": pullRequest } : {}),
      ...(issue !== undefined ? { "agent_ci.issue.number": issue } : {}),
    };
  }

  private runAttributes(report: RunReport): Attributes {
    const verify = report.verify;
    return {
      "agent_ci.outcome": report.outcome,
      "agent_ci.exit_reason": report.exitReason,
      "agent_ci.cost_usd": report.costUsd,
      "agent_ci.permission_mode": report.policy.mode,
      ...(report.error ? { "agent_ci.error.kind": report.error.kind } : {}),
      ...(verify
        ? {
            "agent_ci.verify.result": !verify.applied
              ? "not_applied"
              : verify.exitCode === 0
                ? "passed"
                : "failed",
            ...(verify.exitCode !== null ? { "agent_ci.verify.exit_code": verify.exitCode } : {}),
          }
        : {}),
      "agent_ci.patch.files": report.patch.files.length,
      "agent_ci.patch.lines_added": report.patch.added,
      "agent_ci.patch.lines_removed": report.patch.removed,
      ...(report.attempts ? { "agent_ci.attempts": report.attempts.length } : {}),
      ...(report.chosen ? { "agent_ci.attempt.chosen": report.chosen.attempt } : {}),
    };
  }

  /** An attempt's own span under the run's: its conversation and phases nest under it. */
  private attemptContext(runCtx: Context, report: RunReport, attempt: number): Context {
    const tracer = this.providers.tracer?.getTracer(`${SCOPE.name}.tracing`, SCOPE.version);
    if (!tracer) return runCtx;
    const span = tracer.startSpan(
      "agent_ci.attempt",
      {
        startTime: new Date(Date.parse(report.startedAt)),
        attributes: this.clean({
          ...this.common(report),
          "agent_ci.attempt": attempt,
          ...this.runAttributes(report),
        }),
      },
      runCtx,
    );
    span.end(new Date(Date.parse(report.endedAt)));
    return trace.setSpan(runCtx, span);
  }

  /** The sandbox's phases (engine … teardown) as spans under the run. */
  private phases(report: RunReport, parent: Context, t0: number): void {
    const tracer = this.providers.tracer?.getTracer(`${SCOPE.name}.tracing`, SCOPE.version);
    for (const phase of report.phases ?? []) {
      tracer
        ?.startSpan(
          `${SPANS.phasePrefix}${phase.name}`,
          {
            startTime: new Date(t0 + phase.startOffsetMs),
            attributes: this.clean({
              ...this.common(report),
              "agent_ci.phase": phase.name,
              duration_ms: Math.round(phase.durationMs),
            }),
          },
          parent,
        )
        .end(new Date(t0 + phase.startOffsetMs + phase.durationMs));
    }
  }

  /** One conversation: the interaction span, its turns and calls, and Claude Code's events for them. */
  private conversation(report: RunReport, parent: Context, t0: number): void {
    const tracer = this.providers.tracer?.getTracer(`${SCOPE.name}.tracing`, SCOPE.version);
    const base = { ...this.common(report), "gen_ai.provider.name": "anthropic" };
    const conversationId = report.runId;
    const promptId = crypto.randomUUID();
    const prompt = this.origin.prompt ?? "";
    const lastTurn = report.turns.at(-1);
    const end = lastTurn ? t0 + lastTurn.startOffsetMs + lastTurn.durationMs : Date.parse(report.endedAt);
    const start = Math.min(
      report.turns[0] ? t0 + report.turns[0].startOffsetMs : end,
      report.toolCalls[0] ? t0 + report.toolCalls[0].startOffsetMs : end,
    );
    const interaction = tracer?.startSpan(
      SPANS.interaction,
      {
        startTime: new Date(start),
        attributes: this.clean({
          ...base,
          "span.type": "interaction",
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.conversation.id": conversationId,
          user_prompt: this.settings.logUserPrompts ? prompt : NOT_LOGGED,
          user_prompt_length: prompt.length,
          "interaction.sequence": 1,
          "interaction.duration_ms": Math.round(end - start),
        }),
      },
      parent,
    );
    const ctx = interaction ? trace.setSpan(parent, interaction) : parent;
    const turn = { report, ctx, t0, base, conversationId, promptId };
    this.event("user_prompt", ctx, start, {
      ...this.common(report),
      "prompt.id": promptId,
      prompt_length: prompt.length,
      ...(this.settings.logUserPrompts ? { prompt } : {}),
    });
    for (const t of report.turns) this.llmRequest(turn, t);
    const byTask = new Map<string, Context>();
    for (const call of report.toolCalls) {
      const callParent = call.parentToolUseId ? (byTask.get(call.parentToolUseId) ?? ctx) : ctx;
      const execution = this.toolCall(turn, call, callParent);
      if (execution) byTask.set(call.id, execution);
    }
    this.apiError(report, ctx, end);
    this.assistantResponse(report, ctx, end, promptId);
    interaction?.end(new Date(end));
  }

  private llmRequest(c: ConversationFacts, t: Turn): void {
    const tracer = this.providers.tracer?.getTracer(`${SCOPE.name}.tracing`, SCOPE.version);
    const model = c.report.model.name;
    const start = c.t0 + t.startOffsetMs;
    const usage = {
      input_tokens: t.usage.inputTokens,
      output_tokens: t.usage.outputTokens,
      cache_read_tokens: t.usage.cacheReadInputTokens,
      cache_creation_tokens: t.usage.cacheCreationInputTokens,
    };
    const span = tracer?.startSpan(
      SPANS.llmRequest,
      {
        startTime: new Date(start),
        attributes: this.clean({
          ...c.base,
          "span.type": "llm_request",
          model,
          "gen_ai.system": "anthropic",
          "gen_ai.request.model": model,
          "llm_request.context": "interaction",
          "gen_ai.conversation.id": c.conversationId,
          duration_ms: Math.round(t.durationMs),
          ...usage,
          success: true,
          attempt: t.attempts,
          ...(t.stopReason
            ? { stop_reason: t.stopReason, "gen_ai.response.finish_reasons": [t.stopReason] }
            : {}),
        }),
      },
      c.ctx,
    );
    span?.addEvent("gen_ai.request.attempt", { attempt: t.attempts }, new Date(start));
    span?.end(new Date(start + t.durationMs));
    const cost = c.report.model.driver === "anthropic" ? costUsd(model, t.usage).usd : 0;
    this.event("api_request", c.ctx, start + t.durationMs, {
      ...this.common(c.report),
      "prompt.id": c.promptId,
      model,
      ...usage,
      cost_usd: cost,
      cost_usd_micros: Math.round(cost * 1_000_000),
      duration_ms: Math.round(t.durationMs),
      query_source: "main",
    });
  }

  /** A call's `tool` span, its decision and result events; returns the execution's context (a Task's children). */
  private toolCall(c: ConversationFacts, call: ToolCall, parent: Context): Context | undefined {
    const tracer = this.providers.tracer?.getTracer(`${SCOPE.name}.tracing`, SCOPE.version);
    const start = c.t0 + call.startOffsetMs;
    const end = start + call.durationMs;
    const details = this.settings.logToolDetails;
    const input = JSON.stringify(call.input ?? {});
    const blockedByHook = (call.hooks ?? []).some((h) => h.event === "PreToolUse" && h.outcome === "block");
    const allowed = call.decision?.behavior === "allow" && !blockedByHook;
    const ids = { tool_use_id: call.id, "gen_ai.tool.call.id": call.id };
    const span = tracer?.startSpan(
      SPANS.tool,
      {
        startTime: new Date(start),
        attributes: this.clean({
          ...c.base,
          "span.type": "tool",
          tool_name: call.tool,
          tool_name_safe: call.mcp ? "mcp_tool" : call.tool,
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": call.tool,
          "gen_ai.conversation.id": c.conversationId,
          ...ids,
          duration_ms: Math.round(call.durationMs),
          ...(call.agent ? { "agent_ci.agent": call.agent } : {}),
          ...(details ? toolDetailAttributes(call.input) : {}),
        }),
      },
      parent,
    );
    const spanCtx = span ? trace.setSpan(parent, span) : parent;
    this.decision(c, call, spanCtx, start, blockedByHook);
    let executionCtx: Context | undefined;
    if (allowed) {
      const execution = tracer?.startSpan(
        SPANS.toolExecution,
        {
          startTime: new Date(start),
          attributes: this.clean({
            ...c.base,
            "span.type": "tool.execution",
            "gen_ai.conversation.id": c.conversationId,
            ...ids,
            duration_ms: Math.round(call.durationMs),
            success: !call.isError,
          }),
        },
        spanCtx,
      );
      if (call.isError)
        execution?.setStatus({ code: SpanStatusCode.ERROR, message: call.errorKind ?? "error" });
      execution?.end(new Date(end));
      executionCtx = execution ? trace.setSpan(spanCtx, execution) : spanCtx;
      this.event("tool_result", c.ctx, end, {
        ...this.common(c.report),
        "prompt.id": c.promptId,
        tool_name: call.tool,
        tool_use_id: call.id,
        success: !call.isError,
        duration_ms: Math.round(call.durationMs),
        ...(call.isError && call.errorKind ? { error: call.errorKind } : {}),
        ...(details && typeof (call.input as { command?: unknown } | undefined)?.command === "string"
          ? { tool_parameters: JSON.stringify(toolParameters(call.input)) }
          : {}),
        ...(details ? { tool_input: input } : {}),
        tool_input_size_bytes: String(Buffer.byteLength(input)),
        tool_result_size_bytes: String(call.resultChars),
        ...(call.agent ? { "agent_ci.agent": call.agent } : {}),
      });
    }
    span?.end(new Date(end));
    return executionCtx;
  }

  private decision(
    c: ConversationFacts,
    call: ToolCall,
    ctx: Context,
    at: number,
    blockedByHook: boolean,
  ): void {
    const decision = call.decision;
    const accepted = decision?.behavior === "allow" && !blockedByHook;
    const source = decisionSource(decision, blockedByHook);
    this.event("tool_decision", ctx, at, {
      ...this.common(c.report),
      "prompt.id": c.promptId,
      decision: accepted ? "accept" : "reject",
      source,
      tool_name: call.tool,
      tool_use_id: call.id,
      tool_source: call.mcp ? "mcp" : "builtin",
      permission_mode: c.report.policy.mode,
      ...(decision?.decidedBy ? { "agent_ci.decision.decided_by": decision.decidedBy } : {}),
      ...(decision?.rule
        ? {
            "agent_ci.decision.rule": decision.rule.text,
            "agent_ci.decision.rule_source": decision.rule.source,
          }
        : {}),
      ...(this.settings.logToolDetails
        ? { tool_parameters: JSON.stringify(toolParameters(call.input)) }
        : {}),
    });
    if (CODE_EDIT_TOOLS.has(call.tool))
      this.meter
        ?.createCounter(METRICS.codeEditDecision.name, {
          description: METRICS.codeEditDecision.description,
          unit: METRICS.codeEditDecision.unit,
        })
        .add(
          1,
          this.clean({
            ...this.common(c.report),
            decision: accepted ? "accept" : "reject",
            source,
            tool_name: call.tool,
            language: languageOf((call.input as { file_path?: unknown } | undefined)?.file_path),
          }),
        );
  }

  private apiError(report: RunReport, ctx: Context, at: number): void {
    if (report.exitReason !== "api_error") return;
    this.event("api_error", ctx, at, {
      ...this.common(report),
      model: report.model.name,
      error: report.error?.message ?? "api_error",
      ...(report.error ? { "agent_ci.error.kind": report.error.kind } : {}),
    });
  }

  private assistantResponse(report: RunReport, ctx: Context, at: number, promptId: string): void {
    const text = [...report.turns].reverse().find((t) => t.text)?.text;
    if (text === undefined) return;
    this.event("assistant_response", ctx, at, {
      ...this.common(report),
      "prompt.id": promptId,
      response_length: text.length,
      ...(this.settings.logUserPrompts ? { response: text } : { response: NOT_LOGGED }),
      model: report.model.name,
      query_source: "main",
    });
  }

  /** agent-ci's own events: each egress connection, verify, the patch's findings, the run's end. */
  private runEvents(report: RunReport, ctx: Context, t0: number): void {
    const base = this.common(report);
    for (const c of report.egress?.connections ?? [])
      this.event("egress_connection", ctx, Date.parse(c.startedAt), {
        ...base,
        "agent_ci.egress.host": c.host,
        "agent_ci.egress.port": c.port,
        "agent_ci.egress.kind": c.kind,
        "agent_ci.egress.decision": c.decision,
        "agent_ci.egress.bytes_up": c.bytesUp,
        "agent_ci.egress.bytes_down": c.bytesDown,
        ...(c.reason ? { "agent_ci.egress.reason": c.reason } : {}),
        ...(c.caller ? { tool_use_id: c.caller } : {}),
      });
    if (report.verify)
      this.event("verify", ctx, Date.parse(report.endedAt), {
        ...base,
        "agent_ci.verify.applied": report.verify.applied,
        ...(report.verify.exitCode !== null ? { "agent_ci.verify.exit_code": report.verify.exitCode } : {}),
        "agent_ci.verify.result": this.runAttributes(report)["agent_ci.verify.result"] ?? "not_run",
        duration_ms: Math.round(report.verify.durationMs),
        ...(report.verify.changedInputs
          ? { "agent_ci.verify.changed_inputs": report.verify.changedInputs }
          : {}),
      });
    for (const f of report.patch.secretFindings)
      this.event("patch_finding", ctx, Date.parse(report.endedAt), {
        ...base,
        "agent_ci.finding.kind": f.kind,
        "agent_ci.finding.file": f.file,
        ...(f.line !== undefined ? { "agent_ci.finding.line": f.line } : {}),
      });
    this.event("run_end", ctx, Math.max(t0, Date.parse(report.endedAt)), {
      ...base,
      ...this.runAttributes(report),
      duration_ms: Math.round(report.durationMs),
    });
  }

  /** The six metrics of Claude Code for one conversation, and the egress bytes. */
  private metrics(report: RunReport): void {
    const meter = this.meter;
    if (!meter) return;
    const counter = (m: { name: string; unit: string; description: string }) =>
      meter.createCounter(m.name, { description: m.description, unit: m.unit });
    const base = this.common(report);
    const model = report.model.name;
    counter(METRICS.session).add(
      1,
      this.clean({ ...base, start_type: report.resumedFrom ? "resume" : "fresh" }),
    );
    counter(METRICS.lines).add(report.patch.added, this.clean({ ...base, type: "added", model }));
    counter(METRICS.lines).add(report.patch.removed, this.clean({ ...base, type: "removed", model }));
    const usage = report.usage;
    const sourced = { ...base, model, query_source: "main" };
    counter(METRICS.cost).add(report.costUsd, this.clean(sourced));
    for (const [type, value] of [
      ["input", usage.inputTokens],
      ["output", usage.outputTokens],
      ["cacheRead", usage.cacheReadInputTokens],
      ["cacheCreation", usage.cacheCreationInputTokens],
    ] as const)
      counter(METRICS.tokens).add(value, this.clean({ ...sourced, type }));
    counter(METRICS.activeTime).add(report.durationMs / 1000, this.clean({ ...base, type: "cli" }));
    for (const c of report.egress?.connections ?? []) {
      const attrs = { ...base, "agent_ci.egress.host": c.host, "agent_ci.egress.decision": c.decision };
      counter(METRICS.egressBytes).add(c.bytesUp, this.clean({ ...attrs, direction: "up" }));
      counter(METRICS.egressBytes).add(c.bytesDown, this.clean({ ...attrs, direction: "down" }));
    }
  }

  /** A log record as Claude Code writes an event: body claude_code.<name> (or agent_ci.<name>), event.* attributes. */
  private event(
    name: ClaudeCodeEvent | AgentCiEvent,
    ctx: Context,
    at: number,
    attributes: Attributes,
  ): void {
    if (!this.logger) return;
    const own = (["egress_connection", "verify", "run_end", "patch_finding"] as string[]).includes(name);
    const full = own ? `agent_ci.${name}` : name;
    this.logger.emit({
      eventName: full,
      body: own ? full : `claude_code.${name}`,
      timestamp: new Date(at),
      context: ctx,
      attributes: this.clean({
        ...attributes,
        "event.name": full,
        "event.timestamp": new Date(at).toISOString(),
        "event.sequence": this.sequence++,
      }),
    });
  }

  /** Every string (keys and values) through the run's redactor. */
  private clean(attributes: Attributes): Attributes {
    const out: Attributes = {};
    for (const [key, value] of Object.entries(attributes)) {
      if (value === undefined) continue;
      out[this.redact(key)] = this.cleanValue(value);
    }
    return out;
  }

  private cleanValue(value: AttributeValue): AttributeValue {
    if (typeof value === "string") return this.redact(value);
    if (Array.isArray(value))
      return value.map((v) => (typeof v === "string" ? this.redact(v) : v)) as AttributeValue;
    return value;
  }
}

/** The run counter's attributes: few values each, so a time series per outcome, not per run. */
const RUN_COUNT_ATTRIBUTES = [
  "agent_ci.outcome",
  "agent_ci.exit_reason",
  "agent_ci.permission_mode",
  "agent_ci.verify.result",
] as const;

function pick(attributes: Attributes, keys: readonly string[]): Attributes {
  return Object.fromEntries(Object.entries(attributes).filter(([k]) => keys.includes(k)));
}

interface ConversationFacts {
  report: RunReport;
  ctx: Context;
  t0: number;
  base: Attributes;
  conversationId: string;
  promptId: string;
}

/** The input's facts Claude Code puts on the tool span with OTEL_LOG_TOOL_DETAILS: the path, the command. */
function toolDetailAttributes(input: unknown): Attributes {
  const i = (input ?? {}) as Record<string, unknown>;
  const out: Attributes = {};
  if (typeof i.file_path === "string") out.file_path = i.file_path;
  if (typeof i.command === "string") {
    out.full_command = i.command;
    const argv0 = i.command.trim().split(/\s+/)[0];
    if (argv0) out.bash_argv0 = argv0;
  }
  return out;
}

/** tool_parameters as Claude Code writes them for Bash (bash_command, full_command, description). */
function toolParameters(input: unknown): Record<string, unknown> {
  const i = (input ?? {}) as Record<string, unknown>;
  if (typeof i.command !== "string") return i;
  return {
    bash_command: i.command.trim().split(/\s+/)[0] ?? "",
    full_command: i.command,
    ...(typeof i.description === "string" ? { description: i.description } : {}),
  };
}
