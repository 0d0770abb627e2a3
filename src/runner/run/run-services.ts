// The services a run binds its tools to, set up before the loop starts: the skills and slash commands from
// their trusted folders, and the bundle the main loop and every subagent run with.
import path from "node:path";
import { loadCatalogue } from "../instructions/instructions.js";
import { expandSlashCommand } from "../instructions/slash-command.js";
import { WORKSPACE_ROOT } from "../../sandbox/sandbox.js";
import { ConfigError } from "../../errors.js";
import type { RunConfig } from "../config.js";
import { COMPACT_AT_FRACTION, ContextManager, contextWindowOf } from "../loop/context-window.js";
import type { EventSink } from "../loop/events.js";
import { apiContextEditFor } from "../model/pricing.js";
import { callProgress, turnProgress } from "../progress.js";
import { TURN_TICK_MS } from "../loop/turn-ticker.js";
import type { PreparedPolicy } from "./policy-setup.js";
import type { RunContext } from "./run-context.js";
import type { RunServices } from "../loop/services.js";
import type { RunInstructions } from "../record/index.js";

/** The run's skills and slash commands, read from their trusted folders (their problems logged). */
export function loadInstructions(config: RunConfig, log: (line: string) => void): RunInstructions {
  const origin = config.instructionsSource;
  const catalogue = loadCatalogue({
    skillsDirs: config.skillsDir.map((dir) => ({ dir: path.resolve(dir), origin })),
    commandsDirs: config.commandsDir.map((dir) => ({ dir: path.resolve(dir), origin })),
    workspace: config.workspace,
    containerRoot: WORKSPACE_ROOT,
    trustWorkspace: config.trustWorkspaceSettings,
  });
  for (const problem of catalogue.problems) log(`instructions: ${problem}`);
  return { catalogue };
}

/**
 * Expands a slash command the prompt starts with (an unknown one is a config error listing the known ones).
 * Returns the config the run goes on with (the expanded prompt, and the command's `model` when it names one)
 * and the instructions with the command.
 */
export function applyInstructions(
  config: RunConfig,
  instructions: RunInstructions,
  log: (line: string) => void,
): { config: RunConfig; instructions: RunInstructions } {
  const unchanged = { config, instructions };
  if (config.prompt === undefined || config.task === "review") return unchanged;
  const expansion = expandSlashCommand(config.prompt, instructions.catalogue);
  if (expansion.kind === "unknown") throw new ConfigError(expansion.message);
  if (expansion.kind === "none") return unchanged;
  const { command, args, prompt } = expansion.expanded;
  log(
    `prompt: the slash command /${command.name} from ${command.origin === "workspace" ? "the workspace" : command.hostPath}`,
  );
  return {
    config: { ...config, prompt, model: command.model ?? config.model },
    instructions: { ...instructions, command: { name: command.name, args, model: command.model } },
  };
}

/** The run's services, built once: what the main loop and every subagent run with. */
export function runServices(
  ctx: RunContext,
  config: RunConfig,
  started: Pick<RunServices, "sandbox" | "hooks" | "budget" | "driver"> & { policy: PreparedPolicy },
): RunServices {
  const { runId, runStart, events } = ctx;
  const { policy } = started;
  return {
    runId,
    runStart,
    outputs: { dir: ctx.outDir, redactor: ctx.redactor },
    events,
    sandbox: started.sandbox,
    state: ctx.state,
    mode: policy.policy.mode,
    gate: policy.gate,
    gateIn: policy.gateIn,
    hooks: started.hooks,
    budget: started.budget,
    driver: started.driver,
    model: config.script ? "script" : config.model,
    maxTokens: config.maxTokens,
    maxTurns: config.maxTurns,
    context: () => contextFor(config, events, runId, runStart),
    network: config.network,
    allowedDomains: config.allowDomain,
    progress: callProgress(ctx.io.progress ? ctx.log : undefined, ctx.io.onProgress, ctx.redactor.redact),
    turnTicks: turnTicks(ctx),
  };
}

/** A long model turn's line in the log and its progress, every TURN_TICK_MS (or what the caller asked for). */
function turnTicks(ctx: RunContext): RunServices["turnTicks"] {
  const tell = turnProgress(ctx.io.progress ? ctx.log : undefined, ctx.io.onProgress);
  return tell ? { everyMs: ctx.io.turnTickMs ?? TURN_TICK_MS, tell } : undefined;
}

/** A fresh context manager for one conversation: the model's window, where compaction starts, the API's edits. */
export function contextFor(
  config: RunConfig,
  events: EventSink,
  runId: string,
  runStart: number,
): ContextManager {
  const window = config.contextWindow ?? contextWindowOf(config.model);
  const compactAt = config.compactAt ?? Math.floor(window * COMPACT_AT_FRACTION);
  // A scripted run has no API to ask: agent-ci's own clearing.
  const apiEdit = config.script ? undefined : apiContextEditFor(config.model);
  return new ContextManager({
    window,
    compactAt,
    enabled: config.compaction,
    events,
    runId,
    runStart,
    apiEdit,
  });
}
