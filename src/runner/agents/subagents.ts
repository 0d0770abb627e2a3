// The subagent runner: a Task call runs the same agent loop again with another state — its own messages,
// system prompt, tool set, read-before-edit record and context management — on the run's sandbox, through a
// pipeline with the run's permission gate and hooks, drawing on the run's one budget. The parent's rules are
// the ceiling: the tool set is the intersection of the agent's declared tools and the parent's, every call
// is decided by the parent's policy in the parent's mode, and an agent in a narrower mode (Explore and Plan
// in plan; a definition's `permissionMode`) is held to that mode's decision on top. No subagent gets Task,
// so the tree is one level deep.
import { isReadOnlyMode } from "../../policy/modes.js";
import type { PermissionMode } from "../../policy/schema.js";
import { apiToolDefinitions, FILE_WRITING_TOOLS } from "../../tools/index.js";
import {
  createTaskTool,
  type SubagentLauncher,
  type SubagentOutcome,
  type SubagentRequest,
} from "../../tools/task.js";
import type { BackgroundAgent } from "../../tools/background-tasks.js";
import type { AnyTool } from "../../tools/types.js";
import {
  agentMode,
  agentTypeLines,
  resolveAgentModel,
  TASK_TOOL,
  unknownAgentMessage,
  type AgentDefinition,
} from "./agents.js";
import { newLoopResult, newLoopState, runAgentLoop, type LoopResult } from "../loop/agent-loop.js";
import {
  ToolPipeline,
  type NestedMemory,
  type PermissionGate,
  type ToolCallRecord,
} from "../loop/pipeline.js";
import type { RunServices } from "../loop/services.js";
import { subagentSystemPrompt } from "../instructions/system-prompt.js";

/** At most this many subagents work at once; more Task calls wait for a free slot (RELIABILITY A2). */
export const MAX_CONCURRENT_SUBAGENTS = 8;

/** Tools a subagent never gets: it cannot start subagents (nor see the parent's background agents: its state has none). */
const PARENT_ONLY_TOOLS = new Set([TASK_TOOL]);

/** One subagent of the run, for the record. */
export interface SubagentRun {
  agentId: string;
  /** The Task call that started it. */
  toolUseId: string;
  type: string;
  description: string;
  model: string;
  /** The mode its calls are decided in (the parent's or narrower). */
  mode: PermissionMode;
  background: boolean;
  /** Offset from the run's start, ms. */
  startOffsetMs: number;
  durationMs?: number;
  /** running until its loop returns; then its loop's exit, or `failed` when its loop threw. */
  status: "running" | LoopResult["exit"] | "failed" | "stopped";
  /** Filled as it goes, so a run that ends mid-subagent keeps its turns and calls. */
  loop: LoopResult;
  tools: string[];
  error?: string;
}

/** The run's model context as a subagent needs it (memory/model-context.ts implements it). */
export interface SubagentModelContext {
  readonly environmentText: string;
  forAgent(agent: AgentDefinition): { preamble: string[]; memory: NestedMemory };
}

/** What a subagent runner has of its own, beside the run's services. */
export interface SubagentRunnerOptions {
  agents: readonly AgentDefinition[];
  /** The parent's enabled tools (after its mode): a subagent's ceiling (Task and its kin are taken out). */
  parentTools: () => readonly AnyTool[];
  /** What each subagent is told besides its system prompt (memory, git snapshot, environment facts). */
  told?: SubagentModelContext;
}

interface BackgroundEntry {
  run: SubagentRun;
  done: Promise<void>;
  stop: AbortController;
  stoppedByTool?: boolean;
}

/** A slot gate: `acquire` resolves when fewer than `size` holders are inside. */
class Slots {
  private used = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly size: number) {}
  async acquire(signal: AbortSignal): Promise<() => void> {
    if (this.used >= this.size) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        this.waiting.push(() => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        });
      });
    }
    this.used += 1;
    return () => {
      this.used -= 1;
      this.waiting.shift()?.();
    };
  }
}

/** The tokens of its last turn, as Claude Code counts a subagent's: the size its conversation reached. */
function tokensOf(loop: LoopResult): number {
  const usage = loop.turns.at(-1)?.usage;
  if (!usage) return 0;
  return usage.inputTokens + usage.outputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens;
}

/** The Task tool's description: the agent types the model may start, and how to use them. */
export function taskDescription(agents: readonly AgentDefinition[]): string {
  return [
    "Launch a subagent to handle a complex, multi-step task on its own: it works in the same sandbox under the same permissions, with its own conversation, and returns one report.",
    "",
    "Available agent types and the tools they have access to:",
    agentTypeLines(agents),
    "",
    "Give subagent_type to select one. The agent does not see your conversation: put everything it needs in the prompt, and say what it should report back. Its report is for you; tell the user what matters in it.",
    "When you launch several agents for independent work, send the Task calls in a single message so they run concurrently.",
  ].join("\n");
}

export class SubagentRunner implements SubagentLauncher {
  readonly runs: SubagentRun[] = [];
  private readonly slots = new Slots(MAX_CONCURRENT_SUBAGENTS);
  private readonly background = new Map<string, BackgroundEntry>();
  private seq = 0;

  private readonly options: SubagentRunnerOptions & RunServices;

  /** Every subagent runs with the run's services (sandbox, gate, hooks, budget, driver, events). */
  constructor(services: RunServices, own: SubagentRunnerOptions) {
    this.options = { ...services, ...own };
  }

  /** The run's Task tool, bound to this runner. */
  tools(): AnyTool[] {
    return [createTaskTool(this)];
  }

  description(): string {
    return taskDescription(this.options.agents);
  }

  unknownType(type: string): string | undefined {
    return this.find(type) ? undefined : unknownAgentMessage(type, this.options.agents);
  }

  private find(type: string): AgentDefinition | undefined {
    return this.options.agents.find((a) => a.name === type);
  }

  /**
   * The subagent's tools: its declared ones that the parent has, or all of the parent's; never Task, and in
   * plan mode no file-writing tool.
   */
  toolsFor(agent: AgentDefinition): AnyTool[] {
    const plan = isReadOnlyMode(agentMode(agent, this.options.mode));
    const parent = this.options
      .parentTools()
      .filter((t) => !PARENT_ONLY_TOOLS.has(t.name) && !(plan && FILE_WRITING_TOOLS.has(t.name)));
    if (!agent.tools) return parent;
    const declared = new Set(agent.tools);
    return parent.filter((t) => declared.has(t.name) || t.aliases?.some((a) => declared.has(a)));
  }

  private newAgentId(): string {
    this.seq += 1;
    return `a${this.options.runId
      .replace(/[^a-z0-9]/gi, "")
      .slice(-6)
      .toLowerCase()}${this.seq}`;
  }

  async run(request: SubagentRequest): Promise<SubagentOutcome> {
    const release = await this.slots.acquire(request.signal);
    try {
      const run = this.begin(request, false);
      await this.execute(run, request, request.signal);
      return this.outcome(run);
    } finally {
      release();
    }
  }

  start(request: SubagentRequest): string {
    const run = this.begin(request, true);
    const stop = new AbortController();
    // A background agent outlives the Task call, not the run: the run's end or a KillShell aborts it.
    const signal = AbortSignal.any([request.signal, stop.signal]);
    const done = (async () => {
      const release = await this.slots.acquire(signal).catch(() => undefined);
      if (!release) {
        run.status = "stopped";
        return;
      }
      try {
        await this.execute(run, request, signal);
      } catch {
        // Recorded on the run; a background agent's fault never ends the parent's turn.
      } finally {
        release();
      }
    })();
    const entry: BackgroundEntry = { run, done, stop };
    this.background.set(run.agentId, entry);
    // TaskOutput and KillShell find it in the run's background tasks, beside the shells.
    this.options.state.background.addAgent(run.agentId, this.backgroundAgent(entry));
    return run.agentId;
  }

  private begin(request: SubagentRequest, background: boolean): SubagentRun {
    const agent = this.find(request.type) as AgentDefinition;
    const run: SubagentRun = {
      agentId: this.newAgentId(),
      toolUseId: request.toolUseId,
      type: agent.name,
      description: request.description,
      model: resolveAgentModel(request.model ?? agent.model, this.options.model),
      mode: agentMode(agent, this.options.mode),
      background,
      startOffsetMs: Math.round(performance.now() - this.options.runStart),
      status: "running",
      loop: newLoopResult(),
      tools: this.toolsFor(agent).map((t) => t.name),
    };
    this.runs.push(run);
    return run;
  }

  private async execute(run: SubagentRun, request: SubagentRequest, signal: AbortSignal): Promise<void> {
    const o = this.options;
    const agent = this.find(run.type) as AgentDefinition;
    const tools = this.toolsFor(agent);
    const { mode } = run;
    const started = performance.now();
    const state = o.state.forAgent();
    const told = o.told?.forAgent(agent);
    const pipeline = new ToolPipeline({
      allTools: o.parentTools(),
      enabledTools: tools,
      sandbox: o.sandbox,
      state,
      gate: mode === o.mode ? o.gate : bothGates(o.gate, o.gateIn(mode)),
      hooks: o.hooks,
      outputs: o.outputs,
      runStart: o.runStart,
      disabledReason: `it is not among the ${run.type} agent's tools; continue with the tools you have`,
      agent: { type: run.type, parentToolUseId: run.toolUseId },
      memory: told?.memory,
    });
    const driver =
      o.driver.forAgent?.({
        type: run.type,
        description: run.description,
        prompt: request.prompt,
        model: run.model,
      }) ?? o.driver;
    o.progress?.(`→ ${run.type} subagent: ${run.description}`);
    try {
      const conversation = newLoopState(
        {
          spender: { agent: run.type, parentToolUseId: run.toolUseId },
          system: subagentSystemPrompt({
            agentPrompt: agent.prompt,
            mode,
            network: o.network,
            allowedDomains: o.allowedDomains,
            tools: run.tools,
            environment: o.told?.environmentText,
          }),
          prompt: request.prompt,
          preamble: told?.preamble,
          tools: apiToolDefinitions(tools),
          maxTurns: Math.min(request.maxTurns ?? o.maxTurns, o.maxTurns),
          maxTokens: o.maxTokens,
          signal,
          context: o.context(),
        },
        o.budget,
        run.loop,
      );
      const progress = o.progress
        ? (line: string, call?: ToolCallRecord) => o.progress?.(`  ${line}`, call)
        : undefined;
      await runAgentLoop({ ...o, driver, pipeline, progress }, conversation);
      run.status = run.loop.exit;
    } catch (e) {
      run.error = (e as Error)?.message ?? String(e);
      // Cut short from outside (the run's cancel or wall clock, KillShell): a background agent was stopped, a
      // foreground one ended with the run; only a fault of its own is `failed`.
      run.status = !signal.aborted
        ? "failed"
        : run.background
          ? "stopped"
          : o.budget.reached()?.exit === "timeout"
            ? "timeout"
            : "cancelled";
      throw e;
    } finally {
      run.durationMs = Math.round(performance.now() - started);
      for (const call of run.loop.calls) {
        call.parentToolUseId ??= run.toolUseId;
        call.agent ??= run.type;
      }
    }
  }

  private outcome(run: SubagentRun): SubagentOutcome {
    const agent = this.find(run.type) as AgentDefinition;
    const used: string[] = [];
    for (const call of run.loop.calls) if (!used.includes(call.tool)) used.push(call.tool);
    return {
      agentId: run.agentId,
      report: run.loop.finalText,
      toolsUsed: used,
      toolUses: run.loop.calls.length,
      tokens: tokensOf(run.loop),
      durationMs: run.durationMs ?? 0,
      usageFooter: agent.usageFooter,
      stoppedEarly: run.loop.exit === "completed" ? undefined : run.loop.detail,
    };
  }

  /** Every subagent call, for the record (each carries its parent's tool-use id and agent type). */
  calls(): ToolCallRecord[] {
    return this.runs.flatMap((r) => r.loop.calls);
  }

  /**
   * Background agents still working when the run ends are stopped, and the record says so: those running
   * now, and those the run's own cancel or wall clock already cut short (not the ones KillShell stopped).
   */
  async stopBackground(): Promise<string[]> {
    const stopped: string[] = [];
    for (const [id, entry] of this.background) {
      const cutShort = entry.run.status === "stopped" && !entry.stoppedByTool;
      if (entry.run.status !== "running" && !cutShort) continue;
      entry.stop.abort(new Error("the run ended"));
      await entry.done;
      entry.run.status = "stopped";
      stopped.push(`${id} (${entry.run.type}: ${entry.run.description})`);
    }
    return stopped;
  }

  /** A background agent as TaskOutput and KillShell see it. */
  private backgroundAgent(entry: BackgroundEntry): BackgroundAgent {
    const { run } = entry;
    return {
      type: run.type,
      description: run.description,
      get status() {
        return run.status;
      },
      done: entry.done,
      stop: () => {
        entry.stoppedByTool = true;
        entry.stop.abort(new Error("stopped by KillShell"));
        void entry.done.then(() => (run.status = "stopped"));
      },
      outcome: () => this.outcome(run),
    };
  }
}

/** A call passes only when both gates allow it; the first refusal is the answer. */
function bothGates(first: PermissionGate, second: PermissionGate): PermissionGate {
  return {
    decide(request) {
      const decision = first.decide(request);
      return decision.behavior === "deny" ? decision : second.decide(request);
    },
  };
}
