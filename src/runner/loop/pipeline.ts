// The tool pipeline (docs/how-it-works.md): every call goes enabled → parse → validateInput (with the workspace
// gate) → permission → PreToolUse hook → call → PostToolUse hook → map result. A stage that stops a call
// answers with `is_error: true` and a message the model can act on; only infrastructure faults (the
// sandbox is gone) end the run. Concurrency-safe calls of one turn run in parallel batches; results keep
// the calls' order, one per tool_use id.
import type Anthropic from "@anthropic-ai/sdk";
import type { StructuredPatch } from "diff";
import { z } from "zod";
import type { CallDecision } from "../../policy/schema.js";
import { writeToolOutput, type Redactor } from "../../report/index.js";
import type { HookRun, WebFacts } from "../../report/schema.js";
import {
  EngineError,
  OUTPUTS_DIR,
  SandboxFsError,
  SandboxGoneError,
  type Sandbox,
} from "../../sandbox/sandbox.js";
import { plainError, toolError } from "../../tools/define-tool.js";
import { ModelApiError } from "../model/driver.js";
import { outsideWorkspace, resolveInWorkspace } from "../../tools/paths.js";
import type { RunState } from "../../tools/state.js";
import type { AnyTool, ToolContent, ToolErrorKind, ToolResult } from "../../tools/types.js";

export interface PermissionRequest {
  tool: string;
  input: Record<string, unknown>;
  readOnly: boolean;
  /** Canonical container paths the call reads or writes (symlinks resolved inside the container). */
  paths?: string[];
  cwd: string;
}

export type PermissionDecision = CallDecision;

/** The permission stage. The policy engine implements it; `allowAll` stands in where no policy applies. */
export interface PermissionGate {
  decide(request: PermissionRequest): PermissionDecision;
}

export const allowAll: PermissionGate = {
  decide: () => ({ behavior: "allow", reason: "no policy", decidedBy: "mode" }),
};

/** One hook's run, for the report (its schema: report/schema.ts). */
export type HookRunRecord = HookRun;

export interface HookOutcome {
  blocked: boolean;
  /** What the model is told when a hook blocked (the PreToolUse error result; after a PostToolUse result). */
  reason?: string;
  /** A hook that failed (crashed, timed out): reported, never fatal. */
  error?: string;
  /** Each hook that ran. */
  runs?: HookRunRecord[];
}

export interface ToolHooks {
  pre(tool: string, input: Record<string, unknown>, toolUseId: string): Promise<HookOutcome>;
  post(
    tool: string,
    input: Record<string, unknown>,
    toolUseId: string,
    result: ToolResult,
  ): Promise<HookOutcome>;
}

/** A conversation's nested memory: what a read or edit of a file newly reaches, to send beside its result. */
export interface NestedMemory {
  afterTool(tool: string, containerPath: string, toolUseId: string): Anthropic.TextBlockParam[];
}

export interface ToolCallRequest {
  id: string;
  name: string;
  input: unknown;
  /** The model's input was not a JSON object (the driver says why): answered as a parse error. */
  inputError?: string;
}

export interface ToolCallRecord {
  id: string;
  turn: number;
  index: number;
  tool: string;
  input: unknown;
  decision?: PermissionDecision;
  /** What the permission stage was asked about (canonical paths, working directory), for replays. */
  paths?: string[];
  cwd?: string;
  readOnly?: boolean;
  startOffsetMs: number;
  durationMs: number;
  exitCode?: number | null;
  resultChars: number;
  truncated: boolean;
  fullOutputPath?: string;
  isError: boolean;
  errorKind?: ToolErrorKind;
  stage: "enabled" | "parse" | "validate" | "permission" | "hook" | "call";
  title?: string;
  patch?: StructuredPatch;
  hookErrors?: string[];
  /** The hooks that ran around the call. */
  hooks?: HookRunRecord[];
  /** An MCP server's tool: its server and its own name there. */
  mcp?: { server: string; tool: string };
  /** The tool_result content exactly as sent to the model. */
  content: ToolContent;
  /** Text blocks sent after the tool results of the same message (a skill's instructions). */
  followUp?: Anthropic.TextBlockParam[];
  /** WebFetch and WebSearch: what was fetched or searched (redacted by the tool). */
  web?: WebFacts;
  /** A subagent's call: the Task call that started the subagent. */
  parentToolUseId?: string;
  /** A subagent's call: its agent type. */
  agent?: string;
}

/** Where cut outputs are kept whole on the host (`<dir>/tool-outputs/<id>.txt`), and the run's redactor they pass. */
export interface SavedOutputs {
  dir: string;
  redactor: Redactor;
}

export interface PipelineOptions {
  /** Every tool agent-ci knows, and the ones enabled in this run (plan mode drops Edit and Write). */
  allTools: readonly AnyTool[];
  enabledTools: readonly AnyTool[];
  sandbox: Sandbox;
  state: RunState;
  gate?: PermissionGate;
  hooks?: ToolHooks;
  /** Where cut outputs are kept whole on the host, redacted as the report is. */
  outputs?: SavedOutputs;
  /** The run's start (performance.now()), for offsets in the record. */
  runStart?: number;
  /** Why the run disabled a tool (the mode, the network), for its error text. */
  disabledReason?: string | ((tool: string) => string | undefined);
  /** A subagent's pipeline: its calls are recorded under the Task call that started it. */
  agent?: { type: string; parentToolUseId: string };
  /** Nested memory (CLAUDE.md below the workspace root, matching rules), sent beside the results that reach it. */
  memory?: NestedMemory;
}

/** The tool a call names, by its name or one of its aliases. */
export function findTool(tools: readonly AnyTool[], name: string): AnyTool | undefined {
  return tools.find((t) => t.name === name || t.aliases?.includes(name));
}

type Stage = ToolCallRecord["stage"];
/** Ends a call at a stage with its result (and what was decided on the way). */
type Finish = (stage: Stage, result: ToolResult, extra?: Partial<ToolCallRecord>) => Promise<ToolCallRecord>;

/** The call's input as the tool's schema reads it, or the error that asks the model to call again. */
function parseInput(tool: AnyTool, call: ToolCallRequest): { input: Record<string, unknown> } | ToolResult {
  if (call.inputError)
    return toolError(
      "invalid_input",
      `InputValidationError: the input was not a JSON object (${call.inputError}). Call ${tool.name} again with a JSON object as its input.`,
    );
  const parsed = tool.inputSchema.safeParse(call.input);
  if (parsed.success) return { input: parsed.data as Record<string, unknown> };
  return toolError(
    "invalid_input",
    `InputValidationError: ${tool.name} failed due to the following issues:\n${z.prettifyError(parsed.error)}\nRewrite the input to match the tool's schema and call it again.`,
  );
}

const safeFileName = (id: string) => id.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 120) || "call";

function contentChars(content: ToolContent): number {
  if (typeof content === "string") return content.length;
  return content.reduce((n, block) => n + (block.type === "text" ? block.text.length : 0), 0);
}

/** The text of a result, images and documents as placeholders (for the report's preview). */
export function contentText(content: ToolContent): string {
  if (typeof content === "string") return content;
  return content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");
}

export class ToolPipeline {
  private readonly gate: PermissionGate;
  private readonly runStart: number;

  constructor(private readonly options: PipelineOptions) {
    this.gate = options.gate ?? allowAll;
    this.runStart = options.runStart ?? performance.now();
  }

  /** Runs one assistant turn's tool calls; one result per call, in the calls' order. */
  async runTurn(turn: number, calls: ToolCallRequest[], signal: AbortSignal): Promise<ToolCallRecord[]> {
    const records: ToolCallRecord[] = new Array(calls.length);
    let index = 0;
    while (index < calls.length) {
      const batch = [index];
      if (this.concurrencySafe(calls[index]!)) {
        while (index + batch.length < calls.length && this.concurrencySafe(calls[index + batch.length]!))
          batch.push(index + batch.length);
      }
      const done = await Promise.all(batch.map((i) => this.runOne(turn, i, calls[i]!, signal)));
      done.forEach((record, k) => (records[batch[k]!] = record));
      index += batch.length;
    }
    return records;
  }

  /** Anthropic tool_result blocks for the next user message. */
  static toolResults(records: ToolCallRecord[]): Anthropic.ToolResultBlockParam[] {
    return records.map((r) => ({
      type: "tool_result",
      tool_use_id: r.id,
      content: r.content,
      ...(r.isError ? { is_error: true } : {}),
    }));
  }

  /** The user message answering a turn: its tool results, then any text the calls add after them. */
  static userContent(
    records: ToolCallRecord[],
  ): Array<Anthropic.ToolResultBlockParam | Anthropic.TextBlockParam> {
    return [...ToolPipeline.toolResults(records), ...records.flatMap((r) => r.followUp ?? [])];
  }

  /**
   * What every record of a call by this pipeline carries besides its outcome: the agent that made it and,
   * for an MCP tool, its server and tool. Also for the calls the loop answers itself (interrupted ones).
   */
  callerFacts(toolName: string): Pick<ToolCallRecord, "parentToolUseId" | "agent" | "mcp"> {
    const { agent, enabledTools } = this.options;
    const mcp = findTool(enabledTools, toolName)?.mcp;
    return {
      ...(agent ? { parentToolUseId: agent.parentToolUseId, agent: agent.type } : {}),
      ...(mcp ? { mcp: { server: mcp.server, tool: mcp.tool } } : {}),
    };
  }

  private concurrencySafe(call: ToolCallRequest): boolean {
    const tool = findTool(this.options.enabledTools, call.name);
    if (!tool) return true; // answered with an error without touching the sandbox
    const parsed = tool.inputSchema.safeParse(call.input);
    return parsed.success && tool.isConcurrencySafe(parsed.data);
  }

  private async runOne(
    turn: number,
    index: number,
    call: ToolCallRequest,
    signal: AbortSignal,
  ): Promise<ToolCallRecord> {
    const started = performance.now();
    const base = {
      id: call.id,
      turn,
      index,
      tool: call.name,
      input: call.input,
      startOffsetMs: Math.round(started - this.runStart),
      ...this.callerFacts(call.name),
    };
    const finish: Finish = (stage, result, extra = {}) =>
      this.recordCall(base, started, stage === "call" ? tool : undefined, stage, result, extra);

    // 1. enabled
    const tool = findTool(this.options.enabledTools, call.name);
    if (!tool) return finish("enabled", this.unavailable(call.name));

    // 2. parse
    const parsed = parseInput(tool, call);
    if ("output" in parsed) return finish("parse", parsed);
    const { input } = parsed;
    const ctx = {
      sandbox: this.options.sandbox,
      state: this.options.state,
      toolUseId: call.id,
      signal,
      calledAs: call.name,
    };

    try {
      // 3. validateInput: the workspace gate first (P1-P3: nothing runs for a path outside), then the tool's checks.
      const paths = await this.workspacePaths(tool, input);
      if (!Array.isArray(paths)) return finish("validate", paths);
      const invalid = await tool.validateInput?.(input, ctx);
      if (invalid) return finish("validate", invalid);

      // 4. permission
      const asked = { paths, cwd: this.options.state.cwd, readOnly: tool.isReadOnly(input) };
      const decision = this.gate.decide({ tool: tool.name, input, ...asked });
      if (decision.behavior === "deny") {
        return finish("permission", toolError("permission_denied", `Permission denied: ${decision.reason}`), {
          decision,
          ...asked,
        });
      }

      // 5. hooks around the call
      return await this.callWithHooks(tool, input, ctx, { decision, ...asked }, finish);
    } catch (e) {
      // A subagent's model call that failed after its retries ends the run, as the parent's would.
      if (e instanceof SandboxGoneError || e instanceof EngineError || e instanceof ModelApiError) throw e;
      if (signal.aborted) throw e;
      // A tool's own fault is this call's error, never the run's end.
      const message =
        e instanceof SandboxFsError ? e.message : `internal error in ${tool.name}: ${(e as Error).message}`;
      return finish("call", { output: message, isError: true, kind: "sandbox_error", title: message });
    }
  }

  /** A call's record: its stage, timing, decision and the result as the model gets it. */
  private async recordCall(
    base: Omit<ToolCallRecord, "stage" | "durationMs" | "resultChars" | "truncated" | "isError" | "content">,
    started: number,
    tool: AnyTool | undefined,
    stage: Stage,
    result: ToolResult,
    extra: Partial<ToolCallRecord>,
  ): Promise<ToolCallRecord> {
    const mapped = tool
      ? await this.mapResult(base.id, tool, result)
      : { content: result.output, truncated: false, fullOutputPath: undefined };
    return {
      ...base,
      ...extra,
      stage,
      durationMs: Math.round(performance.now() - started),
      exitCode: result.metadata?.exitCode,
      resultChars: contentChars(result.output),
      truncated: mapped.truncated,
      fullOutputPath: mapped.fullOutputPath,
      isError: Boolean(result.isError),
      errorKind: result.kind,
      title: result.title,
      patch: result.metadata?.patch,
      content: mapped.content,
      ...(result.followUp?.length ? { followUp: result.followUp } : {}),
      ...(result.metadata?.web ? { web: result.metadata.web as WebFacts } : {}),
    };
  }

  /** Why a tool is not offered: not in this run (with why, and what is), or no such tool. */
  private unavailable(name: string): ToolResult {
    const known = findTool(this.options.allTools, name) !== undefined;
    const available = this.options.enabledTools.map((t) => t.name).join(", ");
    const reason = this.options.disabledReason;
    const why = typeof reason === "function" ? reason(name) : reason;
    const message = known
      ? `Error: ${name} is not available in this run${why ? ` (${why})` : ""}. Available tools: ${available}`
      : `Error: No such tool available: ${name}`;
    return toolError(known ? "disabled_tool" : "unknown_tool", message);
  }

  /** The path the call names, inside the workspace and resolved in the sandbox; or the error that refuses it. */
  private async workspacePaths(
    tool: AnyTool,
    input: Record<string, unknown>,
  ): Promise<string[] | ToolResult> {
    const given = tool.targetPath?.(input);
    if (given === undefined) return [];
    const gate = resolveInWorkspace(given, this.options.state.cwd, { allowOutputs: tool.isReadOnly(input) });
    if (!gate.ok) return gate.error;
    try {
      return [await this.options.sandbox.resolvePath(gate.path)];
    } catch (e) {
      if (e instanceof SandboxFsError && e.code === "EOUTSIDE") return outsideWorkspace(given);
      throw e;
    }
  }

  /** The call between its PreToolUse and PostToolUse hooks, with nested memory the file it touched brings. */
  private async callWithHooks(
    tool: AnyTool,
    input: Record<string, unknown>,
    ctx: Parameters<AnyTool["call"]>[1],
    asked: Pick<ToolCallRecord, "decision"> & { paths: string[]; cwd: string; readOnly: boolean },
    finish: Finish,
  ): Promise<ToolCallRecord> {
    const hookErrors: string[] = [];
    const hookRuns: HookRunRecord[] = [];
    const hookFacts = () => ({
      ...(hookErrors.length ? { hookErrors } : {}),
      ...(hookRuns.length ? { hooks: hookRuns } : {}),
    });
    const pre = await this.options.hooks?.pre(tool.name, input, ctx.toolUseId);
    if (pre?.error) hookErrors.push(pre.error);
    hookRuns.push(...(pre?.runs ?? []));
    if (pre?.blocked) {
      // Claude Code's words: the hook's reason is the call's error result, not wrapped.
      return finish("hook", plainError("hook_blocked", pre.reason ?? "Blocked by a PreToolUse hook"), {
        ...asked,
        ...hookFacts(),
      });
    }
    const result = await tool.call(input, ctx);
    const post = await this.options.hooks?.post(tool.name, input, ctx.toolUseId, result);
    if (post?.error) hookErrors.push(post.error);
    hookRuns.push(...(post?.runs ?? []));
    if (post?.blocked) {
      // The result stands; the hook's objection reaches the model as text after it (Claude Code's way).
      const text = post.reason ?? "A PostToolUse hook objected";
      result.followUp = [...(result.followUp ?? []), { type: "text", text }];
    }
    const nested =
      result.isError || !asked.paths[0]
        ? []
        : this.options.memory?.afterTool(tool.name, asked.paths[0], ctx.toolUseId);
    if (nested?.length) result.followUp = [...(result.followUp ?? []), ...nested];
    return finish("call", result, { ...asked, ...hookFacts() });
  }

  /** Stage 6: cut output over the tool's limit, keep the whole in the sandbox and the output folder. */
  private async mapResult(
    id: string,
    tool: AnyTool | undefined,
    result: ToolResult,
  ): Promise<{ content: ToolContent; truncated: boolean; fullOutputPath?: string }> {
    const limit = tool?.maxResultSizeChars ?? Number.POSITIVE_INFINITY;
    if (typeof result.output !== "string" || result.output.length <= limit)
      return { content: result.output, truncated: false };
    const full = result.output;
    const name = `${safeFileName(id)}.txt`;
    const containerPath = `${OUTPUTS_DIR}/${name}`;
    await this.options.sandbox.writeFile(containerPath, full, { confine: false });
    const outputs = this.options.outputs;
    if (outputs) await writeToolOutput(outputs.dir, name, full, outputs.redactor);
    const notice = `\n\n... [output truncated: ${full.length} characters in all, ${limit} shown. The full output is saved at ${containerPath}; Read it with offset and limit, or Grep it] ...\n\n`;
    const keep = Math.max(0, limit - notice.length);
    const head = Math.ceil(keep / 2);
    const content = full.slice(0, head) + notice + full.slice(full.length - (keep - head));
    return { content, truncated: true, fullOutputPath: containerPath };
  }
}
