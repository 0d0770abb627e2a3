// The one shape every capability of a run has (MCP, hooks, subagents, web, memory, the setup cache): the
// options it reads, and the hooks at the run's stage points it takes part in. The stages (run/run-stages.ts)
// and the run's end (run.ts) call every capability through this shape, iterating CAPABILITIES (index.ts), and
// name none of them; a new capability is a folder here and one line in index.ts.
import type { McpManager } from "../../mcp/manager.js";
import type { OptionName } from "../../options/table.js";
import type { DockerSandbox } from "../../sandbox/docker-sandbox.js";
import type { RunConfig } from "../config.js";
import type { ToolHooks } from "../loop/pipeline.js";
import type { ReportParts } from "../record/index.js";
import type { RecordSection } from "../record/section.js";
import type { PreparedPolicy } from "../run/policy-setup.js";
import type { AgentPhase, RunContext } from "../run/run-context.js";

/** What a capability needs the sandbox to give it when it starts. */
export interface SandboxNeeds {
  /** Processes of their own in the agent's group (stdio MCP servers, hooks: docs/hooks.md). */
  readonly sharedWorkspace?: boolean;
  /** Service containers' slots beside the agent's (one per MCP server). */
  readonly services?: number;
}

/** What a capability's start is given: the run, its configuration, its policy and its sandbox. */
export interface StartGiven {
  readonly ctx: RunContext;
  /** The configuration the run goes on with (AgentPhase's). */
  readonly config: RunConfig;
  readonly policy: PreparedPolicy;
  readonly sandbox: DockerSandbox;
}

/** What the capabilities started for the run's services and tool set. */
export interface StartedParts {
  /** The MCP servers, connected: their tools join the tool set. */
  readonly mcp?: McpManager;
  /** The hooks the tool pipeline runs around each call. */
  readonly hooks?: ToolHooks;
}

/** What closing a capability leaves for the record. */
export type Closed = Partial<Pick<ReportParts, "stoppedAgents">>;

export interface Capability {
  /** As the Capabilities table of docs/ARCHITECTURE.md names it. */
  readonly name: string;
  /** The options (options/table.ts) that set it. */
  readonly options: readonly OptionName[];
  /** Before anything of the run is made: throws a config error that ends the run before any container. */
  readonly prepare?: (ctx: RunContext) => void;
  /** What the sandbox must give it, known from the configuration and the policy. */
  readonly sandboxNeeds?: (ctx: RunContext, policy: PreparedPolicy) => SandboxNeeds;
  /**
   * Why the run's first request needs what this capability starts in the sandbox (its tools are in it): the
   * first turn then waits for the sandbox instead of being asked while it opens (run/first-turn.ts).
   */
  readonly firstTurnWaits?: (ctx: RunContext) => string | undefined;
  /** Once the sandbox is ready, before the agent is handed it. */
  readonly opened?: (sandbox: DockerSandbox, log: (line: string) => void) => void;
  /** Its part of the run started in the sandbox, before the run's services are made; may throw a config error. */
  readonly start?: (given: StartGiven) => Promise<StartedParts>;
  /** At the run's end, on every way out, before the patch is taken (what it wrote is in the patch). */
  readonly close?: (phase: AgentPhase, log: (line: string) => void) => Promise<Closed>;
  /** After the container is gone and before the record is built: work it left going that the record tells. */
  readonly settle?: (phase: AgentPhase) => Promise<void>;
  /** Its part of report.json. */
  readonly section?: RecordSection;
}
