// What a run hands its record: everything the run made and how it ended. Each section of report.json
// (sections.ts, and each capability's) reads the parts it owns from here.
import type { EgressConnection, ExitReason, Redactor, RunPhaseName, SideCall } from "../../report/index.js";
import type { McpConfigResult } from "../../mcp/config.js";
import type { McpManager } from "../../mcp/manager.js";
import type { StartRecord } from "../../sandbox/phase-clock.js";
import type { DockerSandbox } from "../../sandbox/docker-sandbox.js";
import type { RunState } from "../../tools/state.js";
import type { LoopResult } from "../loop/agent-loop.js";
import type { LoadedAgents } from "../agents/agents.js";
import type { RunConfig } from "../config.js";
import type { Catalogue } from "../instructions/instructions.js";
import type { ModelContext } from "../instructions/memory/model-context.js";
import type { ToolCallRecord } from "../loop/pipeline.js";
import type { PreparedPolicy } from "../run/policy-setup.js";
import type { RunResume } from "../resume/resume.js";
import type { PatchOut } from "../run/sandbox-record.js";
import type { SubagentRunner } from "../agents/subagents.js";
import type { RunToolSet } from "../loop/tool-set.js";
import type { VerifyResult } from "../run/verify.js";
import type { FirstTurnRecord } from "../run/first-turn.js";

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
  /** Whether the first model turn was asked while the sandbox opened. */
  firstTurn?: FirstTurnRecord;
  /** output.json, when the structured result was written. */
  structuredPath?: string;
  mcp?: McpManager;
  tools?: RunToolSet;
  mcpConfig?: McpConfigResult;
  resume?: RunResume;
  secrets: readonly string[];
  instructions?: RunInstructions;
  modelContext?: ModelContext;
  sideCalls: SideCall[];
  webLedger: EgressConnection[];
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
