// What a run hands its record: everything the run made and how it ended. Each section of report.json
// (sections.ts) reads the parts it owns from here; each capability's part of the run (`capabilities`) keeps its
// own state and gives its section, and what the run's own sections need of it through neutral hooks.
import type {
  EgressConnection,
  ExitReason,
  Redactor,
  RunPhaseName,
  RunReportInput,
  Warning,
} from "../../report/index.js";
import type { StartRecord } from "../../sandbox/phase-clock.js";
import type { DockerSandbox } from "../../sandbox/docker-sandbox.js";
import type { RunState } from "../../tools/state.js";
import type { LoopResult } from "../loop/agent-loop.js";
import type { RunConfig } from "../config.js";
import type { Catalogue } from "../instructions/instructions.js";
import type { ToolCallRecord } from "../loop/pipeline.js";
import type { TurnUsage } from "../model/driver.js";
import type { PreparedPolicy } from "../run/policy-setup.js";
import type { RunResume } from "../resume/resume.js";
import type { PatchOut } from "../run/sandbox-record.js";
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

/** One part of report.json, the run's own or a capability's: the fields it owns and the warnings it raises. */
export interface SectionRecord {
  fields: Partial<Omit<RunReportInput, "warnings">>;
  warnings?: Warning[];
}

export type RecordSection = (parts: ReportParts) => SectionRecord;

/** What the record reads of a capability's part of the run (capabilities/capability.ts's CapabilityRun). */
export interface CapabilityPart {
  /** Its part of report.json, from its own state and the run's parts. */
  readonly section?: RecordSection;
  /** Calls its children made (a Task call's subagent): each listed after the call that started it. */
  readonly childCalls?: () => readonly ToolCallRecord[];
  /** What it spent beside the main conversation (subagents, the web tools' model calls): in the run's totals. */
  readonly spent?: () => readonly { usage: TurnUsage; costUsd: number }[];
  /** Connections it made from the host for the sandbox's tools (WebFetch's fetches): in the egress ledger. */
  readonly connections?: () => readonly EgressConnection[];
  /** Who made an egress connection, where it knows better than the sidecar (an MCP server in the sandbox). */
  readonly attribute?: (caller: string | undefined, startedAt: string) => string | undefined;
}

export interface ReportParts {
  readonly config: RunConfig;
  readonly runId: string;
  readonly startedAt: Date;
  readonly runStart: number;
  readonly exitReason: ExitReason;
  readonly failure?: RunFailure;
  readonly sandbox?: DockerSandbox;
  readonly start: StartRecord;
  readonly phases: TimedPhase[];
  readonly policy?: PreparedPolicy;
  readonly loop: LoopResult;
  readonly state: RunState;
  readonly patch: PatchOut;
  readonly verify?: VerifyResult;
  readonly redactor: Redactor;
  /** Files of the run's output that could not be written (the report says so, in case it can be). */
  readonly outputErrors: string[];
  /** Whether the first model turn was asked while the sandbox opened. */
  readonly firstTurn?: FirstTurnRecord;
  /** output.json, when the structured result was written. */
  readonly structuredPath?: string;
  readonly tools?: RunToolSet;
  readonly resume?: RunResume;
  readonly secrets: readonly string[];
  readonly instructions?: RunInstructions;
  /** The run's capabilities, each with its own state (capabilities/index.ts), in their order. */
  readonly capabilities: readonly CapabilityPart[];
}

/** The run's calls as a tree in a list: each Task call followed by its subagent's calls. */
export function allCalls(loop: LoopResult, capabilities: readonly CapabilityPart[]): ToolCallRecord[] {
  const children = new Map<string, ToolCallRecord[]>();
  for (const call of capabilities.flatMap((c) => c.childCalls?.() ?? [])) {
    const parent = call.parentToolUseId ?? "";
    children.set(parent, [...(children.get(parent) ?? []), call]);
  }
  return loop.calls.flatMap((call) => [call, ...(children.get(call.id) ?? [])]);
}
