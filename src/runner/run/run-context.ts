// What every stage of one run shares (its identity, where it writes, how it logs and redacts, what the
// loop and the tools' services fill as it goes), and how the agent phase left things for the run's end.
import type { RunProgress } from "../progress.js";
import type { EgressConnection, Redactor, RunPhaseName, SideCall } from "../../report/index.js";
import type { StartRecord } from "../../sandbox/phase-clock.js";
import type { DockerSandbox } from "../../sandbox/docker-sandbox.js";
import type { McpConfigResult } from "../../mcp/config.js";
import type { McpManager } from "../../mcp/manager.js";
import type { RunState } from "../../tools/state.js";
import type { LoopResult } from "../loop/agent-loop.js";
import type { LoadedAgents } from "../agents/agents.js";
import type { SubagentRunner } from "../agents/subagents.js";
import type { RunConfig } from "../config.js";
import type { EventSink } from "../loop/events.js";
import type { PreparedPolicy } from "./policy-setup.js";
import type { RunBudget } from "../loop/run-budget.js";
import type { RunToolSet } from "../loop/tool-set.js";
import type { RunFailure, RunInstructions, TimedPhase } from "../record/index.js";
import type { ReviewTarget } from "../../review/task.js";
import type { LoopState } from "../loop/agent-loop.js";
import type { RunResume } from "../resume/resume.js";
import type { ModelContext } from "../instructions/memory/model-context.js";
import type { FirstTurnRecord } from "./first-turn.js";

export interface RunIO {
  /** One line of machine output (json / stream-json). */
  stdout(line: string): void;
  /** Progress and messages for people. */
  stderr(line: string): void;
  /** Print a progress line per tool call (a TTY). */
  progress: boolean;
  /** Told as the run passes a phase or makes a tool call (the Action's progress comment). */
  onProgress?: (progress: RunProgress) => void;
  /** How often a model turn still under way is told, as a line and as progress (default TURN_TICK_MS, 30 s). */
  turnTickMs?: number;
  /**
   * Told each secret the run knows, to mask it: those of its configuration before it prints anything, then each
   * credential it obtains on the host while it runs (an exchanged access token).
   */
  onSecret?: (value: string) => void;
}

/** What every stage of one run shares: its identity, where it writes, and how it logs and redacts. */
export interface RunContext {
  config: RunConfig;
  io: RunIO;
  runId: string;
  outDir: string;
  patchPath: string;
  startedAt: Date;
  runStart: number;
  redactor: Redactor;
  log: (line: string) => void;
  events: EventSink;
  state: RunState;
  /** Filled by the loop as it goes: a run that ends by an error keeps every turn and call made so far. */
  loop: LoopResult;
  /** Review mode: what is reviewed (set before the sandbox starts). */
  review?: ReviewTarget;
  /** The run's money, denials and wall clock, once the agent starts work. */
  budget?: RunBudget;
  /** Model calls made for tools (WebFetch's reader, WebSearch), and the fetches WebFetch made. */
  sideCalls: SideCall[];
  webLedger: EgressConnection[];
  /** The run's skills and slash commands, and the command its prompt started with. */
  instructions?: RunInstructions;
  /** The MCP servers configured (read before the redactor: their env and headers are secrets). */
  mcpConfig?: McpConfigResult;
  /** A bad MCP configuration: the run ends with it as a config error (with its record). */
  mcpConfigError?: Error;
  /** Every known secret: the run's own and the MCP servers' values. */
  secrets: string[];
  /** The run's own phases after the sandbox's start (calls, patch, verify, teardown), as they end. */
  phases: TimedPhase[];
  /** With --resume: the run it continues (set once its record was read and its base checked out). */
  resume?: RunResume;
}

/** Runs `step` as the run's phase `name`, recording its time whether it succeeds or throws. */
export async function timed<T>(ctx: RunContext, name: RunPhaseName, step: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await step();
  } finally {
    ctx.phases.push({ name, start, end: performance.now() });
  }
}

/** How the agent phase left things, for finishRun. */
export interface AgentPhase {
  sandbox?: DockerSandbox;
  /** What the sandbox's start made and timed, complete or not: the record of a start that failed. */
  start: StartRecord;
  policy?: PreparedPolicy;
  mcp?: McpManager;
  tools?: RunToolSet;
  failure?: RunFailure;
  /** The run's agent types, and the subagents it ran (for the record). */
  agents?: LoadedAgents;
  subagents?: SubagentRunner;
  /** Background subagents the end of the run stopped. */
  stoppedAgents?: string[];
  /** The main conversation, for its record (conversation.jsonl). */
  conversation?: LoopState;
  /** What the model is told (system prompt, memory, git snapshot), for the record's `context`. */
  modelContext?: ModelContext;
  /** Whether the first model turn was asked while the sandbox opened (first-turn.ts). */
  firstTurn?: FirstTurnRecord;
}
