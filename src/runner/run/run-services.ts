// The services a run binds its tools to, set up before the loop starts: the web tools' (the egress decision
// for the run's network setting, side calls charged to the budget), the skills and slash commands from
// their trusted folders, the MCP servers, and the bundle the main loop and every subagent run with.
import path from "node:path";
import { DockerSandbox } from "../../sandbox/docker-sandbox.js";
import { loadCatalogue } from "../instructions/instructions.js";
import { expandSlashCommand } from "../instructions/slash-command.js";
import { WORKSPACE_ROOT } from "../../sandbox/sandbox.js";
import type { McpManager } from "../../mcp/manager.js";
import { ConfigError } from "../../errors.js";
import { readCaCert, type RunConfig, runEgressOptions } from "../config.js";
import { type Driver } from "../model/driver.js";
import { costUsd, WEB_SEARCH_USD } from "../model/pricing.js";
import {
  networkDecision,
  refusalFor,
  offlineReason,
  trustedCas,
  type WebServices,
} from "../../tools/web-services.js";
import { COMPACT_AT_FRACTION, ContextManager, contextWindowOf } from "../loop/context.js";
import type { EventSink } from "../loop/events.js";
import { apiContextEditFor } from "../model/pricing.js";
import { callProgress, turnProgress } from "../progress.js";
import { TURN_TICK_MS } from "../loop/turn-ticker.js";
import type { PreparedPolicy } from "./policy-setup.js";
import type { RunContext } from "./run-context.js";
import type { RunServices } from "../loop/services.js";

/**
 * The web tools' services for this run: the egress decision for its network setting, the CAs of --ca-cert,
 * the ledger, redaction, and side calls charged to the run's budget and listed in the record.
 */
export function webServices(ctx: RunContext, driver: Driver): WebServices {
  const { config } = ctx;
  const setting = { network: config.network, egress: runEgressOptions(config) };
  return {
    offline: offlineReason(config.network),
    decide: networkDecision(setting),
    refusal: refusalFor(setting),
    ca: trustedCas(config.caCert === undefined ? undefined : readCaCert(config.caCert)),
    ledger: (entry) => ctx.webLedger.push(entry),
    redact: ctx.redactor.redact,
    smallFastModel: config.smallFastModel,
    searchModel: config.model,
    cache: new Map(),
    now: Date.now,
    async sideCall(callId, request) {
      const answer = await driver.sideCall?.(request);
      if (!answer) return undefined;
      const tokens = costUsd(answer.model === "script" ? request.model : answer.model, answer.usage).usd;
      const cost = (config.script ? 0 : tokens) + answer.webSearchRequests * WEB_SEARCH_USD;
      ctx.budget?.charge({ agent: request.purpose, parentToolUseId: callId }, cost, answer.usage);
      ctx.sideCalls.push({
        callId,
        purpose: request.purpose,
        model: answer.model,
        usage: answer.usage,
        ...(answer.webSearchRequests ? { webSearches: answer.webSearchRequests } : {}),
        costUsd: cost,
      });
      return answer;
    },
  };
}

/**
 * Reads the run's skills and slash commands from their trusted folders and expands a slash command the
 * prompt starts with (an unknown one is a config error listing the known ones). Returns the config the run
 * goes on with: the expanded prompt, and the command's `model` when it names one.
 */
export function applyInstructions(ctx: RunContext): RunConfig {
  const { config } = ctx;
  const origin = config.instructionsSource;
  const catalogue = loadCatalogue({
    skillsDirs: config.skillsDir.map((dir) => ({ dir: path.resolve(dir), origin })),
    commandsDirs: config.commandsDir.map((dir) => ({ dir: path.resolve(dir), origin })),
    workspace: config.workspace,
    containerRoot: WORKSPACE_ROOT,
    trustWorkspace: config.trustWorkspaceSettings,
  });
  ctx.instructions = { catalogue };
  for (const problem of catalogue.problems) ctx.log(`instructions: ${problem}`);
  if (config.prompt === undefined || config.task === "review") return config;
  const expansion = expandSlashCommand(config.prompt, catalogue);
  if (expansion.kind === "unknown") throw new ConfigError(expansion.message);
  if (expansion.kind === "none") return config;
  const { command, args, prompt } = expansion.expanded;
  ctx.instructions.command = { name: command.name, args, model: command.model };
  ctx.log(
    `prompt: the slash command /${command.name} from ${command.origin === "workspace" ? "the workspace" : command.hostPath}`,
  );
  ctx.config = { ...config, prompt, model: command.model ?? config.model };
  return ctx.config;
}

/**
 * Connects the run's MCP servers, all at once (stdio ones in the sandbox). One that fails is a warning and
 * the run goes on without it; with --strict-mcp it ends the run as a config error.
 */
export async function startMcp(ctx: RunContext, sandbox: DockerSandbox): Promise<McpManager> {
  // The MCP SDK is loaded only by a run that has servers.
  const { McpManager } = await import("../../mcp/manager.js");
  const manager = new McpManager({ servers: ctx.mcpConfig?.servers ?? [], host: sandbox, log: ctx.log });
  await manager.start();
  for (const s of manager.servers)
    if (s.status === "connected")
      ctx.log(`MCP server ${s.name} (${s.kind}) connected in ${s.startMs} ms: ${s.tools.length} tool(s)`);
  const failed = manager.servers.filter((s) => s.status !== "connected");
  if (failed.length && ctx.config.strictMcp) {
    await manager.close();
    throw new ConfigError(
      `--strict-mcp: MCP server(s) did not start: ${failed.map((s) => `${s.name} (${s.error ?? "unknown error"}${s.stderrTail ? `; stderr: ${s.stderrTail.trim().slice(-500)}` : ""})`).join("; ")}`,
    );
  }
  return manager;
}

/** The run's services, built once: what the main loop and every subagent run with. */
export function runServices(
  ctx: RunContext,
  started: Pick<RunServices, "sandbox" | "hooks" | "budget" | "driver"> & { policy: PreparedPolicy },
): RunServices {
  const { config, runId, runStart, events } = ctx;
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
