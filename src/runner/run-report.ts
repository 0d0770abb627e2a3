// The run's record: report.json's content built from what the run made and how it ended — the calls as a
// tree (each Task call followed by its subagent's), the sandbox's part, the phases, the warnings, the
// totals of every conversation and side call. Pure assembly: it writes nothing.
import path from "node:path";
import {
  capText,
  deriveOutcome,
  summarizeCall,
  RESULT_PREVIEW_MAX_CHARS,
  summarizePatch,
  TURN_TEXT_MAX_CHARS,
} from "../report/index.js";
import type {
  EgressConnection,
  Redactor,
  RunReportInput,
  ExitReason,
  RunPhaseName,
  SideCall,
} from "../report/index.js";
import { CallDecisionSchema } from "../policy/schema.js";
import type { StartRecord } from "../sandbox/assemble.js";
import { DockerSandbox } from "../sandbox/docker-sandbox.js";
import { type Catalogue, type Instruction } from "./instructions.js";
import type { ModelContext } from "./memory/model-context.js";
import { type McpConfigResult } from "../mcp/config.js";
import type { McpManager } from "../mcp/manager.js";
import { RunState } from "../tools/state.js";
import { addUsage, type LoopResult } from "./agent-loop.js";
import { type LoadedAgents } from "./agents.js";
import { SubagentRunner } from "./subagents.js";
import { gitSync } from "../host-git.js";
import { type RunConfig } from "./config.js";
import { contentText, type ToolCallRecord } from "./pipeline.js";
import { type PreparedPolicy } from "./policy-setup.js";
import { RunToolSet } from "./tool-set.js";
import { type PatchOut, sandboxRecord } from "./sandbox-record.js";
import { type VerifyResult } from "./verify.js";
import type { RunResume } from "./run-context.js";
import { AGENT_CI_VERSION } from "../version.js";

/** Process exit codes, one per kind of ending (documented in the README). */
/** How a run failed: its exit reason, the error class, and a message for people. */
export type RunFailure = { reason: ExitReason; kind: string; message: string };

/** A phase of the run, in performance.now() time. */
export interface TimedPhase {
  name: RunPhaseName;
  start: number;
  end: number;
}

/** The run's skills and slash commands, and the command its prompt started with. */
export interface RunInstructions {
  catalogue: Catalogue;
  command?: { name: string; args: string; model?: string };
}

function hostBaseCommit(workspace: string): string | undefined {
  try {
    return gitSync(["rev-parse", "HEAD"], { cwd: workspace }).trim();
  } catch {
    return undefined;
  }
}

/** The run's calls as a tree in a list: each Task call followed by its subagent's calls. */
export function allCalls(loop: LoopResult, subagents: SubagentRunner | undefined): ToolCallRecord[] {
  const children = new Map<string, ToolCallRecord[]>();
  for (const call of subagents?.calls() ?? []) {
    const parent = call.parentToolUseId ?? "";
    children.set(parent, [...(children.get(parent) ?? []), call]);
  }
  return loop.calls.flatMap((call) => [call, ...(children.get(call.id) ?? [])]);
}

export interface ReportParts {
  config: RunConfig;
  runId: string;
  startedAt: Date;
  runStart: number;
  exitReason: ExitReason;
  failure?: RunFailure;
  sandbox?: DockerSandbox;
  start: StartRecord;
  phases: TimedPhase[];
  policy?: PreparedPolicy;
  loop: LoopResult;
  state: RunState;
  agents?: LoadedAgents;
  subagents?: SubagentRunner;
  stoppedAgents?: string[];
  patch: PatchOut;
  verify?: VerifyResult;
  redactor: Redactor;
  /** Files of the run's output that could not be written (the report says so, in case it can be). */
  outputErrors: string[];
  /** output.json, when the structured result was written. */
  structuredPath?: string;
  mcp?: McpManager;
  tools?: RunToolSet;
  mcpConfig?: McpConfigResult;
  resume?: RunResume;
  secrets: string[];
  instructions?: RunInstructions;
  modelContext?: ModelContext;
  sideCalls: SideCall[];
  webLedger: EgressConnection[];
}

/** The ledger with WebFetch's fetches, which run without a sidecar too (`--network on`). */
function withFetches(
  egress: RunReportInput["egress"],
  fetches: EgressConnection[],
): RunReportInput["egress"] {
  if (!fetches.length) return egress;
  return egress
    ? { ...egress, connections: [...egress.connections, ...fetches] }
    : { allowed: [], allowedHosts: [], privateHosts: [], connections: fetches };
}

function instructionsRecord(found: RunInstructions | undefined): RunReportInput["instructions"] {
  if (!found) return undefined;
  const { catalogue, command } = found;
  if (
    !catalogue.skills.length &&
    !catalogue.commands.length &&
    !catalogue.ignored.length &&
    !catalogue.problems.length
  )
    return undefined;
  const entry = (i: Instruction) => ({
    name: i.name,
    origin: i.origin,
    ...(i.allowedTools.length ? { allowedTools: i.allowedTools } : {}),
  });
  return {
    skills: catalogue.skills.map(entry),
    commands: catalogue.commands.map(entry),
    ignored: catalogue.ignored,
    problems: catalogue.problems,
    command,
  };
}

/** The sandbox's start steps and the run's own phases, from the run's start, in the order they began. */
function recordedPhases(p: ReportParts): RunReportInput["phases"] {
  const origin = p.start.origin ?? p.runStart;
  const offset = (at: number) => Math.max(0, Math.round(at - p.runStart));
  const phases = [
    ...p.start.phases.map((s) => ({
      name: s.phase,
      startOffsetMs: offset(origin + s.startMs),
      durationMs: Math.round(s.durationMs),
    })),
    ...p.phases.map((s) => ({
      name: s.name,
      startOffsetMs: offset(s.start),
      durationMs: Math.round(s.end - s.start),
    })),
  ];
  return phases.length ? phases.sort((a, b) => a.startOffsetMs - b.startOffsetMs) : undefined;
}

export function buildReport(p: ReportParts): RunReportInput {
  const { config, sandbox, policy, loop } = p;
  const patch = summarizePatch(p.patch.bytes, { secrets: p.secrets });
  const warnings: RunReportInput["warnings"] = [];
  const mode = policy?.policy.mode ?? config.mode ?? "default";
  if (mode === "bypassPermissions") {
    warnings.push({
      kind: "bypass_permissions",
      severity: "critical",
      message: "**bypassPermissions**: rule checks were skipped; only the sandbox and protected paths held.",
    });
  }
  if (config.network === "on")
    warnings.push({
      kind: "network_on",
      severity: "warning",
      message: "The sandbox had network access for the whole run.",
    });
  if (sandbox?.hardening.missing.length) {
    warnings.push({
      kind: "weak_hardening",
      severity: "critical",
      message: `The engine did not apply: ${sandbox.hardening.missing.join("; ")}`,
    });
  }
  if (p.patch.note) warnings.push({ kind: "patch", severity: "warning", message: p.patch.note });
  for (const s of p.mcp?.servers ?? []) {
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
  for (const i of p.mcpConfig?.ignored ?? [])
    warnings.push({
      kind: "mcp_config_ignored",
      severity: "info",
      message: `${i.source} was ignored: ${i.reason}`,
    });
  for (const r of p.tools?.refused ?? [])
    warnings.push({
      kind: "mcp_tool_refused",
      severity: "warning",
      message: `MCP server ${r.server}: its tool ${r.tool} was not offered: ${r.reason}`,
    });
  for (const message of p.outputErrors)
    warnings.push({ kind: "output_write", severity: "critical", message });
  for (const x of p.patch.excluded)
    warnings.push({
      kind: "patch_excluded",
      severity: "warning",
      message: `${x.path} was changed but left out of the patch: ${x.reason}`,
    });
  for (const w of loop.warnings) warnings.push({ kind: "loop", severity: "info", message: w });
  for (const message of p.agents?.ignored ?? [])
    warnings.push({ kind: "agents_ignored", severity: "info", message });
  for (const agent of p.stoppedAgents ?? [])
    warnings.push({
      kind: "subagent_stopped",
      severity: "warning",
      message: `The background subagent ${agent} was still running when the run ended; it was stopped.`,
    });
  if (p.resume?.policyChanges.length)
    warnings.push({
      kind: "resume_policy_changed",
      severity: "warning",
      message: `This run's policy differs from that of run ${p.resume.record.report.runId}, which it continues: ${p.resume.policyChanges.join("; ")}. The earlier policy is not adopted: this run's own configuration decides. Both are in the report (policy, resumedFrom.earlierPolicy).`,
    });
  if (loop.contextFallback)
    warnings.push({
      kind: "context_management_fallback",
      severity: "warning",
      message: loop.contextFallback,
    });
  for (const [kind, list] of [
    ["skill", p.instructions?.catalogue.skills ?? []],
    ["command", p.instructions?.catalogue.commands ?? []],
  ] as const) {
    for (const item of list.filter((i) => i.allowedTools.length))
      warnings.push({
        kind: "instruction_allowed_tools",
        severity: "info",
        message: `The ${kind} ${item.name} asks for allowed-tools ${item.allowedTools.join(", ")}: not applied, a ${kind} never widens the run's policy.`,
      });
  }
  for (const folder of p.instructions?.catalogue.ignored ?? [])
    warnings.push({
      kind: "instructions_ignored",
      severity: "info",
      message: `The workspace's ${folder} was ignored: it could come from the change under review; pass --trust-workspace-settings to use it.`,
    });
  if (patch.secretFindings.length) {
    warnings.push({
      kind: "secret_in_patch",
      severity: "critical",
      message: `The patch contains ${patch.secretFindings.length} possible secret(s); review before applying or posting it.`,
    });
  }
  const outputsPrefix = "/tmp/agent-ci-outputs/";
  const calls = allCalls(loop, p.subagents);
  const toolCalls = calls.map((c, index) => ({
    id: c.id,
    turn: c.turn,
    index,
    tool: c.tool,
    title: c.title,
    input: c.input,
    // Parsing drops the engine's extra fields (the mode, kept once in the report's policy).
    decision: c.decision ? CallDecisionSchema.parse(c.decision) : undefined,
    startOffsetMs: c.startOffsetMs,
    durationMs: c.durationMs,
    exitCode: typeof c.exitCode === "number" ? c.exitCode : undefined,
    resultChars: c.resultChars,
    truncated: c.truncated,
    fullOutputPath: c.fullOutputPath?.startsWith(outputsPrefix)
      ? `tool-outputs/${c.fullOutputPath.slice(outputsPrefix.length)}`
      : c.fullOutputPath,
    isError: c.isError,
    errorKind: c.errorKind,
    // Redacted whole, then cut: a secret across the cut would no longer match the patterns.
    resultPreview: capText(p.redactor.redact(contentText(c.content)), RESULT_PREVIEW_MAX_CHARS),
    web: c.web ? p.redactor.redactDeep(c.web) : undefined,
    mcp: c.mcp,
    hooks: c.hooks ? p.redactor.redactDeep(c.hooks) : undefined,
    patch: c.patch
      ? {
          file: c.patch.newFileName ?? c.patch.oldFileName ?? "",
          hunks: c.patch.hunks.map(({ oldStart, oldLines, newStart, newLines, lines }) => ({
            oldStart,
            oldLines,
            newStart,
            newLines,
            lines,
          })),
        }
      : undefined,
    ...(c.parentToolUseId ? { parentToolUseId: c.parentToolUseId, agent: c.agent } : {}),
  }));
  const denials = calls
    .filter((c) => c.decision?.behavior === "deny")
    .map((c) => ({
      callId: c.id,
      tool: c.tool,
      summary: summarizeCall(c.tool, c.input),
      reason: c.decision?.reason ?? "",
      rule: c.decision?.rule,
      ...(c.agent ? { agent: c.agent } : {}),
      narrowestAllowRule: policy?.narrowestAllowRule(c) ?? null,
    }));
  // A start that failed after the sandbox was built (its setup, say) records what it had all the same.
  const recorded = sandboxRecord(sandbox ?? p.start.parts, policy?.enforcedAt ?? []);
  const runs = p.subagents?.runs ?? [];
  // The run's totals: every conversation's, and the side calls its tools made (WebFetch, WebSearch).
  const usage = [...runs.map((r) => r.loop.usage), ...p.sideCalls.map((c) => c.usage)].reduce(
    addUsage,
    loop.usage,
  );
  const costUsd = [...runs.map((r) => r.loop.costUsd), ...p.sideCalls.map((c) => c.costUsd)].reduce(
    (sum, c) => sum + c,
    loop.costUsd,
  );
  const subagents = runs.map((r) => ({
    agentId: r.agentId,
    toolUseId: r.toolUseId,
    type: r.type,
    description: p.redactor.redact(r.description),
    model: r.model,
    permissionMode: r.mode,
    background: r.background,
    status: r.status,
    detail: (r.loop.detail ?? r.error) ? p.redactor.redact(r.loop.detail ?? r.error ?? "") : undefined,
    tools: r.tools,
    turns: r.loop.turns.length,
    toolUses: r.loop.calls.length,
    usage: r.loop.usage,
    costUsd: r.loop.costUsd,
    startOffsetMs: r.startOffsetMs,
    durationMs: r.durationMs,
  }));
  const endedAt = new Date();
  return {
    schemaVersion: 1,
    runId: p.runId,
    agentCiVersion: AGENT_CI_VERSION,
    startedAt: p.startedAt.toISOString(),
    endedAt: endedAt.toISOString(),
    durationMs: Math.round(performance.now() - p.runStart),
    exitReason: p.exitReason,
    outcome: deriveOutcome({ exitReason: p.exitReason, patch, verify: p.verify }),
    error:
      p.failure && p.failure.reason !== "completed"
        ? { kind: p.failure.kind, message: p.redactor.redact(p.failure.message) }
        : undefined,
    workspace: {
      path: path.basename(p.resume?.workspace ?? config.workspace),
      repo: config.repo,
      baseCommit: p.resume ? p.resume.record.baseCommit : hostBaseCommit(config.workspace),
      ...recorded.copy,
    },
    image: recorded.image,
    hardening: recorded.hardening,
    policy: policy?.summary ?? { mode, rules: [], ignored: [] },
    model: {
      driver: config.script ? "script" : "anthropic",
      name: config.script ? "script" : config.model,
      provider: config.script ? undefined : config.provider,
      maxTokens: config.maxTokens,
      thinkingBudget: config.thinkingBudget,
    },
    limits: { maxTurns: config.maxTurns, maxBudgetUsd: config.maxBudgetUsd, timeoutMs: config.timeoutMs },
    phases: recordedPhases(p),
    toolCalls,
    turns: loop.turns.map(({ costUsd: _cost, ...t }) => ({
      ...t,
      text: t.text ? capText(p.redactor.redact(t.text), TURN_TEXT_MAX_CHARS) : undefined,
    })),
    compactions: loop.compactions.length ? loop.compactions : undefined,
    usage,
    costUsd,
    ...(subagents.length ? { subagents } : {}),
    patch,
    verify: p.verify,
    denials,
    todos: p.state.todos.length ? p.state.todos : undefined,
    warnings,
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
    egress: withFetches(
      recorded.egress && {
        ...recorded.egress,
        connections: recorded.egress.connections.map((e) => ({
          ...e,
          caller: p.mcp ? p.mcp.attributeConnection(e.caller, e.startedAt) : e.caller,
        })),
      },
      p.webLedger,
    ),
    sideCalls: p.sideCalls.length ? p.sideCalls : undefined,
    instructions: instructionsRecord(p.instructions),
    context: p.modelContext?.record(),
    mcp:
      p.mcp || p.mcpConfig?.ignored.length
        ? {
            servers: (p.mcp?.servers ?? []).map((s) => ({
              name: s.name,
              kind: s.kind,
              status: s.status,
              source: s.source,
              startMs: s.startMs,
              restarts: s.restarts,
              tools: (p.tools?.enabled ?? []).filter((t) => t.mcp?.server === s.name).map((t) => t.name),
              error: s.error === undefined ? undefined : p.redactor.redact(s.error),
              stderrTail: s.stderrTail === undefined ? undefined : p.redactor.redact(s.stderrTail),
            })),
            ignored: p.mcpConfig?.ignored ?? [],
            refusedTools: p.tools?.refused ?? [],
          }
        : undefined,
    resumedFrom: p.resume && {
      runId: p.resume.record.report.runId,
      record: p.resume.record.given,
      exitReason: p.resume.record.report.exitReason,
      baseCommit: p.resume.record.baseCommit,
      restoredMessages: p.resume.record.conversation.messages.length,
      restoredReads: p.resume.restoredReads,
      earlierPolicy: p.resume.policyChanges.length ? p.resume.record.report.policy : undefined,
      publishedCommit: p.resume.publishedCommit,
    },
  };
}
