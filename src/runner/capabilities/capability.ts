// The one shape every capability of a run has (attempts, egress, the setup cache, MCP, hooks, subagents, web,
// memory, and the one an entry adds to each run: telemetry, a room the runner may not import — run.ts's
// RunIO): the options it reads, and its part of one run — an object `forRun` makes for each run, which keeps
// the capability's state for that run (its servers, its runner, its ledger) and takes part in the run's stage
// points through the hooks below. The stages (run/run-stages.ts), the run's end (run.ts) and the record
// (record/) call every capability through this shape, given the run's list (index.ts), and name none of them;
// what they need of one (the tools it adds, the calls its children made, what it spent) they ask through a
// neutral hook. A new capability is a folder here and one line in index.ts.
import type { RunConfig } from "../config.js";
import type { Driver } from "../model/driver.js";
import type { NestedMemory, ToolHooks } from "../loop/pipeline.js";
import type { RunBudget } from "../loop/run-budget.js";
import type { RunServices } from "../loop/services.js";
import type { CapabilityPart } from "../record/parts.js";
import type { PreparedPolicy } from "../run/policy-setup.js";
import type { RunContext, RunIO } from "../run/run-context.js";
import type { RunOutcome } from "../run/outcome.js";
import type { SandboxAsk } from "../run/sandbox-options.js";
import type { McpManager } from "../../mcp/manager.js";
import type { OptionName } from "../../options/table.js";
import type { PermissionMode } from "../../policy/schema.js";
import type { DockerSandbox } from "../../sandbox/docker-sandbox.js";
import type { StartRecord } from "../../sandbox/phase-clock.js";
import type { AnyTool } from "../../tools/types.js";
import type { SubagentModelContext } from "../agents/subagents.js";
export type { SandboxAsk } from "../run/sandbox-options.js";
import type { ExitReason, RunReport } from "../../report/index.js";

/** What the model is told beside the task: the system prompt, and the main conversation's memory and snapshot. */
export interface Told extends SubagentModelContext {
  readonly system: string;
  readonly main: { preamble: string[]; memory: NestedMemory };
}

/** What the run settled before the model: given to the hooks of the prepare stage. */
export interface PrepareGiven {
  readonly ctx: RunContext;
  /** The configuration the run goes on with (a resume's checkout, the prompt's slash command expanded). */
  readonly config: RunConfig;
  readonly mode: PermissionMode;
  /** The structured output's instruction to the model, when the run has one. */
  readonly structured?: { instruction(): string };
}

/** What a capability's start is given: the run, its configuration, its policy and its sandbox. */
export interface StartGiven {
  readonly ctx: RunContext;
  readonly config: RunConfig;
  readonly policy: PreparedPolicy;
  readonly sandbox: DockerSandbox;
}

/** What a capability's start adds to the run's services and tool set (capability-neutral). */
export interface StartedParts {
  /** Tools that come and go while the run goes (an MCP server's): the tool set asks it and refreshes on its change. */
  readonly toolSource?: McpManager;
  /** The hooks the tool pipeline runs around each call. */
  readonly hooks?: ToolHooks;
  /** Servers it started, for the stream's `system/init` event. */
  readonly servers?: () => readonly { name: string; status: string }[];
}

/** What a capability is given once the run's services are made, before the tool set. */
export interface BindGiven {
  readonly ctx: RunContext;
  readonly config: RunConfig;
  readonly services: RunServices;
  readonly budget: RunBudget;
  /** The main conversation's enabled tools, once the tool set is made. */
  readonly parentTools: () => readonly AnyTool[];
  readonly told: Told;
}

/** What a capability is told once the run's record is written: how the run ended, and the secrets it knows. */
export interface RecordedGiven {
  readonly exitReason: ExitReason;
  /** The record as written; none when it could not be written (or no attempt started). */
  readonly report?: RunReport;
  /** The run's output folder (with --attempts, each attempt's record is in its subfolder). */
  readonly outDir: string;
  /** The run's known secret values (its configuration's and its capabilities'): redacted from what it sends. */
  readonly secrets: readonly string[];
}

/** One ordinary run of a configuration through the run's stages, given none of the entry's capabilities. */
export type OneRun = (config: RunConfig, io: RunIO, cancel: AbortSignal) => Promise<RunOutcome>;

/** What a capability that runs the whole run (attempts) is given: the entry's IO and cancel, and one run. */
export interface AroundGiven {
  readonly io: RunIO;
  readonly cancel: AbortSignal;
  readonly one: OneRun;
  /** The run's known secret values: redacted from what it writes of the runs together. */
  readonly secrets: readonly string[];
}

/** One capability's part of one run: its state for the run, and the hooks it takes at the run's stage points. */
export interface CapabilityRun extends CapabilityPart {
  /** Secret values its configuration holds (an MCP server's env and headers): masked and redacted as the run's. */
  readonly secrets?: readonly string[];
  /** Service containers' slots beside the agent's, known from the configuration (one per MCP server). */
  readonly services?: number;
  /**
   * The run made of ordinary runs and a choice between them (attempts' N runs), in place of one run through the
   * stages; undefined: the run is one. The capabilities the entry gives are told once that it is recorded.
   */
  readonly around?: (given: AroundGiven) => Promise<RunOutcome> | undefined;
  /** Before anything of the run is made: throws a config error that ends the run before any container. */
  readonly check?: () => void;
  /**
   * Why the run's first request needs what this capability starts in the sandbox (its tools are in it): the
   * first turn then waits for the sandbox instead of being asked while it opens (run/first-turn.ts).
   */
  readonly firstTurnWaits?: () => string | undefined;
  /**
   * Once the workspace the run goes on with is known (a resume's checkout), before the policy: work it starts
   * on the host beside the run's preparation (memory's git snapshot).
   */
  readonly workspaceKnown?: (config: RunConfig) => void;
  /** What the model is told (one capability tells it: memory), made before any container. */
  readonly tell?: (given: PrepareGiven) => Promise<Told>;
  /** Once the run knows its mode, before the model's driver is made: its own config errors and what it ignored. */
  readonly prepare?: (given: PrepareGiven) => void;
  /** Once the model's driver is made (its credentials checked), before any container. */
  readonly modelReady?: (given: PrepareGiven & { readonly driver: Driver }) => void;
  /**
   * What it asks of the run's sandboxes (the agent's and verify's, made alike) from the configuration: egress's
   * network, its sidecar's settings and the CA it trusts.
   */
  readonly sandbox?: () => SandboxAsk;
  /** Whether it has processes of its own in the agent's group (stdio MCP servers, hooks: docs/hooks.md). */
  readonly sharedWorkspace?: (policy: PreparedPolicy) => boolean;
  /** Once the sandbox is ready, before the agent is handed it. */
  readonly opened?: (sandbox: DockerSandbox, log: (line: string) => void) => void;
  /** Its part of the run started in the sandbox, before the run's services are made; may throw a config error. */
  readonly start?: (given: StartGiven) => Promise<StartedParts>;
  /** Once the run's services are made: what its tools run with from then on. */
  readonly bind?: (given: BindGiven) => void;
  /** The tools it adds to the run's tool set (before `bind`, as the first request describes them). */
  readonly tools?: () => readonly AnyTool[];
  /** Its tools the run leaves out, each with why. */
  readonly toolsOff?: (given: { config: RunConfig; policy: PreparedPolicy }) => ReadonlyMap<string, string>;
  /** At the run's end, on every way out, before the patch is taken (what it wrote is in the patch). */
  readonly close?: (log: (line: string) => void) => Promise<void>;
  /** After the container is gone and before the record is built: work it left going that the record tells. */
  readonly settle?: (start: StartRecord) => Promise<void>;
  /**
   * Once the record is written and the run's outcome settled (with --attempts, once for the whole run, with the
   * chosen record): what it sends of the record (telemetry). Never changes the outcome; resolves in bounded time.
   */
  readonly recorded?: (given: RecordedGiven) => Promise<void>;
}

export interface Capability {
  /** As the Capabilities table of docs/ARCHITECTURE.md names it. */
  readonly name: string;
  /** The options (options/table.ts) that set it. */
  readonly options: readonly OptionName[];
  /** Its part of one run, made from the run's configuration before anything else of the run. */
  readonly forRun: (config: RunConfig) => CapabilityRun;
}
