// One run, end to end (DESIGN.md): config → policy → sandbox → driver loop → patch → report → teardown.
// Whatever ends the run, the patch and the record are written (as far as the container still answers),
// with an exit reason, and the container is removed. The CLI and the Action both call `runAgent`.
import fs from "node:fs";
import path from "node:path";
import {
  atomicWriteFile,
  capText,
  createRedactor,
  deriveOutcome,
  summarizeCall,
  RESULT_PREVIEW_MAX_CHARS,
  summarizePatch,
  TURN_TEXT_MAX_CHARS,
  writeReportFiles,
  writeReportFilesSync,
} from "../report/index.js";
import type {
  EgressConnection,
  Redactor,
  RunReportInput,
  ExitReason,
  RunReport,
  RunPhaseName,
  SideCall,
} from "../report/index.js";
import { CallDecisionSchema } from "../policy/schema.js";
import { WorkspaceError } from "../sandbox/archive.js";
import type { StartRecord } from "../sandbox/assemble.js";
import { DockerSandbox, newRunId, runEngineObjects } from "../sandbox/docker-sandbox.js";
import { EngineError, SandboxGoneError } from "../sandbox/sandbox.js";
import { loadCatalogue, type Catalogue, type Instruction } from "./instructions.js";
import { expandSlashCommand } from "./slash-command.js";
import { createSkillTool } from "../tools/skill.js";
import { WORKSPACE_ROOT } from "../sandbox/sandbox.js";
import { isStdio, loadMcpConfig, type McpConfigResult } from "../mcp/config.js";
import { McpManager } from "../mcp/manager.js";
import { maxMcpOutputTokens } from "../mcp/result.js";
import { RunState } from "../tools/state.js";
import type { AnyTool } from "../tools/types.js";
import { addUsage, newLoopResult, newLoopState, runAgentLoop, type LoopResult } from "./agent-loop.js";
import { loadAgents, type LoadedAgents } from "./agents.js";
import { SubagentRunner } from "./subagents.js";
import { AnthropicDriver, checkApiKey } from "./anthropic-driver.js";
import { ConfigError } from "../errors.js";
import { gitSync } from "../host-git.js";
import { readCaCert, type RunConfig, runEgressOptions } from "./config.js";
import { COMPACT_AT_FRACTION, ContextManager, contextWindowOf } from "./context.js";
import { ModelApiError, type Driver } from "./driver.js";
import { apiContextEditFor, costUsd, WEB_SEARCH_USD } from "./pricing.js";
import { apiUsage, EventSink, RESULT_SUBTYPES } from "./events.js";
import { contentText, ToolPipeline, type ToolCallRecord } from "./pipeline.js";
import { preparePolicy, type PreparedPolicy } from "./policy-setup.js";
import { RunBudget } from "./run-budget.js";
import { loadScript, ScriptDriver, ScriptError } from "./script-driver.js";
import { readSchema, StructuredOutputSpec } from "./structured-output.js";
import { RunToolSet } from "./tool-set.js";
import { reviewJsonSchema } from "../review/findings.js";
import {
  placeReview,
  reviewPrompt,
  reviewTarget,
  type ReviewPlacement,
  type ReviewTarget,
} from "../review/task.js";
import { systemPrompt } from "./system-prompt.js";
import {
  networkDecision,
  refusalFor,
  offlineReason,
  trustedCas,
  type WebServices,
} from "../tools/web-services.js";
import { createWebFetchTool } from "../tools/web-fetch.js";
import { createWebSearchTool } from "../tools/web-search.js";
import { exportPatch, type PatchOut, sandboxRecord } from "./sandbox-record.js";
import { runVerify, type VerifyResult } from "./verify.js";
import { blockEventLoopForTests, Watchdog, type WatchdogCause } from "./watchdog.js";
import { AGENT_CI_VERSION } from "../version.js";

/** Process exit codes, one per kind of ending (documented in the README). */
export const EXIT_CODES: Record<ExitReason | "verify_failed" | "output_error", number> = {
  completed: 0,
  /** The run's own ending was fine, but the patch or the record could not be written (a full disk). */
  output_error: 1,
  config_error: 2,
  engine_error: 3,
  api_error: 4,
  max_turns: 5,
  budget: 5,
  timeout: 5,
  context_window: 5,
  max_denials: 5,
  verify_failed: 6,
  schema_invalid: 7,
  cancelled: 130,
};

export interface RunIO {
  /** One line of machine output (json / stream-json). */
  stdout(line: string): void;
  /** Progress and messages for people. */
  stderr(line: string): void;
  /** Print a progress line per tool call (a TTY). */
  progress: boolean;
}

export interface RunOutcome {
  runId: string;
  exitReason: ExitReason;
  exitCode: number;
  outDir: string;
  patchPath: string;
  reportPath?: string;
  report?: RunReport;
  error?: string;
  /** The valid structured result, redacted (as in output.json). */
  structuredOutput?: Record<string, unknown>;
  /** Review mode: the findings placed on the diff (inline) or for the summary. */
  review?: ReviewPlacement;
}

/** How a run failed: its exit reason, the error class, and a message for people. */
type RunFailure = { reason: ExitReason; kind: string; message: string };

function classify(error: unknown, signal: AbortSignal, timedOut: () => boolean): RunFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (timedOut())
    return { reason: "timeout", kind: "Timeout", message: "the run's wall-clock limit was reached" };
  if (signal.aborted)
    return { reason: "cancelled", kind: "Cancelled", message: "the run was cancelled (SIGINT/SIGTERM)" };
  if (
    error instanceof ConfigError ||
    error instanceof ScriptError ||
    error instanceof WorkspaceError ||
    (error as Error)?.name === "PolicyConfigError"
  ) {
    return { reason: "config_error", kind: (error as Error).name, message };
  }
  if (error instanceof ModelApiError)
    return { reason: "api_error", kind: `ModelApiError/${error.kind}`, message };
  if (error instanceof EngineError || error instanceof SandboxGoneError)
    return { reason: "engine_error", kind: (error as Error).name, message };
  return { reason: "engine_error", kind: (error as Error)?.name ?? "Error", message };
}

function hostBaseCommit(workspace: string): string | undefined {
  try {
    return gitSync(["rev-parse", "HEAD"], { cwd: workspace }).trim();
  } catch {
    return undefined;
  }
}

/** Known secret values: never in the container, and `***` in everything written or printed. */
function knownSecrets(config: RunConfig): string[] {
  const fromEnv = [
    "ANTHROPIC_API_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
  ]
    .map((name) => process.env[name])
    .filter((v): v is string => Boolean(v));
  return [config.apiKey ?? "", ...config.secrets, ...fromEnv].filter(Boolean);
}

function makeDriver(config: RunConfig, deadline: number, log: (line: string) => void): Driver {
  if (config.script) return new ScriptDriver(loadScript(config.script));
  return new AnthropicDriver({
    apiKey: config.apiKey ?? "",
    baseURL: config.baseURL,
    model: config.model,
    maxTokens: config.maxTokens,
    thinkingBudget: config.thinkingBudget,
    wallClockDeadline: deadline,
    logger: log,
  });
}

function contextFor(config: RunConfig, events: EventSink, runId: string, runStart: number): ContextManager {
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

const DEFAULT_OUT_PARENT = "agent-ci-out";
/** The structured result's file in the output folder. */
export const STRUCTURED_OUTPUT_FILE = "output.json";

function passThroughEnv(names: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/**
 * ./agent-ci-out/<run-id>, in a folder that ignores itself (as pytest's cache does): it sits inside the
 * user's repository, and a later `git add -A` must not pick up reports.
 */
function defaultOutDir(runId: string): string {
  const parent = path.resolve(DEFAULT_OUT_PARENT);
  fs.mkdirSync(parent, { recursive: true });
  const ignore = path.join(parent, ".gitignore");
  if (!fs.existsSync(ignore))
    fs.writeFileSync(ignore, "# Written by agent-ci: its run outputs are not part of the repository.\n*\n");
  return path.join(parent, runId);
}

/** What every stage of one run shares: its identity, where it writes, and how it logs and redacts. */
interface RunContext {
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
  instructions?: { catalogue: Catalogue; command?: { name: string; args: string; model?: string } };
  /** The MCP servers configured (read before the redactor: their env and headers are secrets). */
  mcpConfig?: McpConfigResult;
  /** A bad MCP configuration: the run ends with it as a config error (with its record). */
  mcpConfigError?: Error;
  /** Every known secret: the run's own and the MCP servers' values. */
  secrets: string[];
  /** The run's own phases after the sandbox's start (calls, patch, verify, teardown), as they end. */
  phases: TimedPhase[];
}

/** A phase of the run, in performance.now() time. */
interface TimedPhase {
  name: RunPhaseName;
  start: number;
  end: number;
}

/** Runs `step` as the run's phase `name`, recording its time whether it succeeds or throws. */
async function timed<T>(ctx: RunContext, name: RunPhaseName, step: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await step();
  } finally {
    ctx.phases.push({ name, start, end: performance.now() });
  }
}

/** How the agent phase left things, for finishRun. */
interface AgentPhase {
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
}

export async function runAgent(
  config: RunConfig,
  io: RunIO,
  cancel: AbortSignal = new AbortController().signal,
): Promise<RunOutcome> {
  const runId = newRunId();
  const outDir = config.out ? path.resolve(config.out) : defaultOutDir(runId);
  fs.mkdirSync(outDir, { recursive: true });
  let mcpConfig: McpConfigResult | undefined;
  let mcpConfigError: Error | undefined;
  try {
    mcpConfig = loadMcpConfig({
      configs: config.mcpConfig,
      workspace: config.workspace,
      trustWorkspace: config.trustWorkspaceSettings,
    });
  } catch (e) {
    mcpConfigError = new ConfigError((e as Error).message);
  }
  const secrets = [...knownSecrets(config), ...(mcpConfig?.secrets ?? [])];
  const redactor: Redactor = createRedactor({ secrets });
  const ctx: RunContext = {
    config,
    io,
    runId,
    outDir,
    patchPath: path.join(outDir, "patch.diff"),
    startedAt: new Date(),
    runStart: performance.now(),
    redactor,
    log: (line: string) => io.stderr(redactor.redact(line)),
    events: new EventSink(
      path.join(outDir, "events.jsonl"),
      redactor.redact,
      config.outputFormat === "stream-json" ? io.stdout : undefined,
    ),
    state: new RunState(),
    loop: newLoopResult(),
    sideCalls: [],
    webLedger: [],
    mcpConfig,
    mcpConfigError,
    secrets,
    phases: [],
  };
  const deadline = Date.now() + config.timeoutMs;

  // One signal for everything in flight: the caller's cancel, or the wall clock.
  const controller = new AbortController();
  let timedOut = false;
  const onCancel = () => controller.abort(cancel.reason ?? new Error("cancelled"));
  cancel.addEventListener("abort", onCancel, { once: true });
  if (cancel.aborted) onCancel();
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error("timeout"));
  }, config.timeoutMs);

  const phase: AgentPhase = { start: { phases: [] } };
  // When the loop does not answer at the deadline, the watchdog removes the container and, on this thread,
  // writes the record from what the loop has filled so far, then exits with the timeout code.
  const watchdog = new Watchdog({
    deadline,
    engineObjects: runEngineObjects(runId),
    emergencyExit: (cause) => emergencyExit(ctx, phase, cause),
  });
  try {
    // From here a signal the blocked main thread cannot handle still ends the run.
    const { watchingSignals } = await watchdog.ready;
    if (!watchingSignals)
      ctx.log(
        "the watchdog cannot watch SIGINT/SIGTERM in this Node version: a signal reaches the run only while its event loop answers",
      );
    await runAgentPhase(ctx, phase, deadline, controller.signal);
  } catch (e) {
    phase.failure = classify(e, controller.signal, () => timedOut);
    ctx.log(`run ended: ${phase.failure.reason}: ${phase.failure.message}`);
  } finally {
    clearTimeout(timer);
    cancel.removeEventListener("abort", onCancel);
  }
  return finishRun(ctx, phase, watchdog, cancel);
}

/**
 * The watchdog's way out, on this thread, inside whatever blocked it: the record from what the loop has filled
 * so far (an empty patch: none can be exported from a blocked loop, and the container is gone), the result
 * event, then exit with the code of the cause (5 for the wall clock, 130 for a signal).
 */
function emergencyExit(ctx: RunContext, phase: AgentPhase, cause: WatchdogCause): never {
  const exitReason: ExitReason = cause.kind === "timeout" ? "timeout" : "cancelled";
  const why =
    cause.kind === "timeout" ? "the run's wall-clock limit was reached" : `the run received ${cause.signal}`;
  const message = `${why} while the event loop did not answer; the watchdog ended the run`;
  const patch: PatchOut = {
    text: "",
    bytes: Buffer.alloc(0),
    note: "no patch: the watchdog stopped a run whose event loop was blocked, and removed the container",
    excluded: [],
  };
  try {
    fs.writeFileSync(ctx.patchPath, patch.bytes);
    const failure = { reason: exitReason, kind: "Watchdog", message };
    const report = buildReport({ ...ctx, ...phase, exitReason, failure, patch, outputErrors: [] });
    writeReportFilesSync(ctx.outDir, report, { patchText: "", redactor: ctx.redactor });
  } catch (e) {
    ctx.log(`the watchdog could not write the record: ${(e as Error).message}`);
  }
  const { loop } = ctx;
  ctx.events.emit({
    type: "result",
    subtype: RESULT_SUBTYPES[exitReason],
    session_id: ctx.runId,
    is_error: true,
    errors: [message],
    exit_reason: exitReason,
    duration_ms: Math.round(performance.now() - ctx.runStart),
    duration_api_ms: Math.round(loop.apiMs),
    num_turns: loop.turns.length,
    result: message,
    total_cost_usd: loop.costUsd,
    usage: apiUsage(loop.usage),
    permission_denials: [],
    patch_path: ctx.patchPath,
    report_path: path.join(ctx.outDir, "report.json"),
  });
  ctx.events.close();
  ctx.log(`agent-ci: ${message}`);
  process.exit(EXIT_CODES[exitReason]);
}

/** Policy, driver, sandbox and the agent loop; what it set up goes into `phase` as it goes. */
async function runAgentPhase(
  ctx: RunContext,
  phase: AgentPhase,
  deadline: number,
  signal: AbortSignal,
): Promise<void> {
  if (ctx.mcpConfigError) throw ctx.mcpConfigError;
  const policy = await preparePolicy(ctx.config, ctx.runId);
  phase.policy = policy;
  const config = applyInstructions(ctx);
  const { runId, log, events } = ctx;
  if (config.task === "review" && config.reviewBase)
    ctx.review = reviewTarget(config.workspace, config.reviewBase, config.reviewHead);
  const structured = ctx.review
    ? new StructuredOutputSpec(reviewJsonSchema(), "review")
    : structuredOutputSpec(config);
  const mode = policy.policy.mode;
  // Agent definitions are checked before any container or model call: a bad one is a config error.
  const agents = loadAgents({
    workspace: config.workspace,
    agentsDirs: config.agentsDir,
    agentsJson: config.agents,
    trustWorkspace: config.trustWorkspaceSettings,
  });
  phase.agents = agents;
  for (const note of agents.ignored) log(note);
  const driver = makeDriver(config, deadline, log);
  if (driver instanceof AnthropicDriver) {
    // A bad key is found before a container starts (M5).
    await checkApiKey({ apiKey: config.apiKey ?? "", baseURL: config.baseURL, model: config.model, signal });
  }
  for (const ignored of ctx.mcpConfig?.ignored ?? []) log(`${ignored.source} ignored: ${ignored.reason}`);
  const mcpServers = ctx.mcpConfig?.servers ?? [];
  const web = webServices(ctx, driver);
  const searchAllowed =
    mode === "bypassPermissions" ||
    policy.policy.rules.some((r) => r.behavior === "allow" && r.tool === "WebSearch");
  const webOff = new Map<string, string>();
  if (web.offline) for (const name of ["WebFetch", "WebSearch"]) webOff.set(name, web.offline);
  else if (!searchAllowed)
    webOff.set("WebSearch", "WebSearch is offered only when an allow rule names it, e.g. --allow WebSearch");
  const skills = ctx.instructions?.catalogue.skills ?? [];
  log(
    `agent-ci ${AGENT_CI_VERSION}: run ${runId}, mode ${mode}, ${config.script ? "script" : `model ${config.model}`}`,
  );
  const sandbox = await DockerSandbox.start({
    runId,
    workspaceDir: config.workspace,
    image: config.image,
    imageRegistry: config.imageRegistry,
    network: config.network,
    setup: config.setup,
    egress: runEgressOptions(config),
    caCertPem: config.caCert === undefined ? undefined : readCaCert(config.caCert),
    memoryBytes: config.memory,
    nanoCpus: config.cpus ? Math.round(config.cpus * 1e9) : undefined,
    workspaceSizeBytes: config.workspaceSize,
    readOnlyWorkspace: mode === "plan",
    env: passThroughEnv(config.env),
    includeIgnored: config.includeIgnored,
    excludeFromCopy: policy.excludeFromCopy,
    allowWeakHardening: config.allowWeakHardening,
    sharedWorkspace: mcpServers.some(isStdio),
    progress: log,
    startRecord: phase.start,
  });
  phase.sandbox = sandbox;
  log(`sandbox ready in ${Math.round(sandbox.timings.readyMs)} ms (${sandbox.copy.files} files copied)`);
  blockEventLoopForTests();
  signal.throwIfAborted();
  if (mcpServers.length) phase.mcp = await startMcp(ctx, sandbox);
  const budget = new RunBudget(
    { maxBudgetUsd: config.maxBudgetUsd, deadline, maxDenials: config.maxDenials },
    signal,
  );
  ctx.budget = budget;
  const subagents = new SubagentRunner({
    agents: agents.agents,
    parentTools: (): readonly AnyTool[] => toolSet.enabled,
    sandbox,
    state: ctx.state,
    gate: policy.gate,
    readOnlyGate: policy.readOnlyGate,
    hooks: policy.hooks,
    mode,
    network: config.network,
    allowedDomains: config.allowDomain,
    driver,
    parentModel: config.script ? "script" : config.model,
    maxTokens: config.maxTokens,
    budget,
    maxTurns: config.maxTurns,
    events,
    runId,
    runStart: ctx.runStart,
    outputDir: ctx.outDir,
    context: () => contextFor(config, events, runId, ctx.runStart),
    progress: ctx.io.progress ? log : undefined,
  });
  phase.subagents = subagents;
  const toolSet = new RunToolSet({
    mode,
    gate: policy.gate,
    bound: [
      ...subagents.tools(),
      ...(skills.length ? [createSkillTool(skills)] : []),
      createWebFetchTool(web),
      createWebSearchTool(web),
    ],
    off: webOff,
    mcp: phase.mcp,
    maxMcpOutputTokens: maxMcpOutputTokens(),
    extraApiTools: structured ? [structured.tool] : [],
  });
  phase.tools = toolSet;
  phase.mcp?.onToolsChanged(() => toolSet.refresh());
  for (const r of toolSet.refused)
    log(`MCP server ${r.server}: its tool ${r.tool} is not offered: ${r.reason}`);
  const tools = toolSet.enabled.map((t) => t.name);
  events.emit({
    type: "system",
    subtype: "init",
    session_id: runId,
    apiKeySource: config.script || !config.apiKey ? "none" : "ANTHROPIC_API_KEY",
    cwd: sandbox.root,
    model: config.script ? "script" : config.model,
    tools,
    mcp_servers: (phase.mcp?.servers ?? []).map((s) => ({ name: s.name, status: s.status })),
    permissionMode: mode,
    agent_ci_version: AGENT_CI_VERSION,
  });
  const pipeline = new ToolPipeline({
    allTools: toolSet.all,
    enabledTools: toolSet.enabled,
    sandbox,
    state: ctx.state,
    gate: policy.gate,
    hooks: policy.hooks,
    outputDir: ctx.outDir,
    runStart: ctx.runStart,
    disabledReason: (tool) => toolSet.disabledReason(tool),
  });
  const { loop } = ctx;
  const conversation = newLoopState(
    {
      system: systemPrompt({
        mode,
        network: config.network,
        allowedDomains: config.allowDomain,
        tools,
        append:
          [structured?.instruction(), config.systemPromptAppend].filter(Boolean).join("\n\n") || undefined,
      }),
      prompt: ctx.review
        ? reviewPrompt(ctx.review, config.prompt)
        : (config.prompt ?? "Run the scripted tool calls."),
      tools: toolSet.api,
      maxTurns: config.maxTurns,
      maxTokens: config.maxTokens,
      context: contextFor(config, events, runId, ctx.runStart),
      structuredOutput: structured,
    },
    budget,
    loop,
  );
  await timed(ctx, "calls", () =>
    runAgentLoop(
      {
        driver,
        pipeline,
        sandbox,
        events,
        budget,
        runId,
        runStart: ctx.runStart,
        progress: ctx.io.progress ? log : undefined,
      },
      conversation,
    ),
  );
  if (loop.exit !== "completed")
    phase.failure = { reason: loop.exit, kind: loop.exit, message: loop.detail ?? loop.exit };
}

/**
 * The web tools' services for this run: the egress decision for its network setting, the CAs of --ca-cert,
 * the ledger, redaction, and side calls charged to the run's budget and listed in the record.
 */
function webServices(ctx: RunContext, driver: Driver): WebServices {
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
function applyInstructions(ctx: RunContext): RunConfig {
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
async function startMcp(ctx: RunContext, sandbox: DockerSandbox): Promise<McpManager> {
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

/** The compiled --output-schema, or undefined; a schema that cannot be used is a config error before any container. */
function structuredOutputSpec(config: RunConfig): StructuredOutputSpec | undefined {
  if (config.outputSchema === undefined) return undefined;
  const { schema, name } = readSchema(config.outputSchema);
  return new StructuredOutputSpec(schema, name);
}

/**
 * output.json: the agent's valid object, redacted like everything else written. Undefined when there is none;
 * a write error goes to `outputErrors`.
 */
async function writeStructuredOutput(
  ctx: RunContext,
  outputErrors: string[],
): Promise<{ path?: string; value?: Record<string, unknown> }> {
  const found = ctx.loop.structured?.value;
  if (!found) return {};
  const value = ctx.redactor.redactDeep(found);
  try {
    await atomicWriteFile(
      path.join(ctx.outDir, STRUCTURED_OUTPUT_FILE),
      `${JSON.stringify(value, null, 2)}\n`,
    );
    return { path: STRUCTURED_OUTPUT_FILE, value };
  } catch (e) {
    outputErrors.push(`${STRUCTURED_OUTPUT_FILE} could not be written: ${(e as Error).message}`);
    return { value };
  }
}

/**
 * After the loop, on every way out: the patch as far as the container still answers, the container removed,
 * then the patch file, --verify, the record and the result event. The container goes before anything is
 * written on the host, so that a failed write (a full disk) cannot keep it.
 */
async function finishRun(
  ctx: RunContext,
  phase: AgentPhase,
  watchdog: Watchdog,
  cancel: AbortSignal,
): Promise<RunOutcome> {
  const { config, runId, outDir, patchPath, redactor, log, events, loop } = ctx;
  const { sandbox, policy } = phase;
  let failure = phase.failure;
  // Background subagents do not outlive the run: stopped (and recorded) before the patch is taken.
  phase.stoppedAgents = await phase.subagents?.stopBackground();
  for (const agent of phase.stoppedAgents ?? [])
    log(`stopped the background subagent ${agent}: the run ended`);
  // The servers end before the patch is taken (what they wrote is in it) and before the container goes.
  await phase.mcp
    ?.close()
    .catch((e: unknown) => log(`closing the MCP servers failed: ${(e as Error).message}`));
  const patch = sandbox
    ? await timed(ctx, "patch", () => exportPatch(sandbox, policy, log))
    : await exportPatch(sandbox, policy, log);
  if (sandbox && patch.note && !failure) {
    // The agent finished, but its work could not be exported (a command wiped agent-ci's baseline under /tmp,
    // say): that is not "no changes", and the exit code must say so.
    failure = { reason: "engine_error", kind: "PatchExportError", message: patch.note };
  }
  if (sandbox)
    await timed(ctx, "teardown", () =>
      sandbox.dispose().catch((e: unknown) => log(`removing the container failed: ${(e as Error).message}`)),
    );
  // The container is gone and the loop answered: from here the run ends by itself (--verify has its own limit).
  await watchdog.stop();
  const outputErrors: string[] = [];
  try {
    await atomicWriteFile(patchPath, patch.bytes);
  } catch (e) {
    outputErrors.push(`the patch could not be written to ${patchPath}: ${(e as Error).message}`);
  }
  if (events.writeError)
    outputErrors.push(`events.jsonl could not be written completely: ${events.writeError.message}`);
  const structured = await writeStructuredOutput(ctx, outputErrors);
  const structuredPath = structured.path;
  const review = ctx.review && structured.value ? placeReview(ctx.review, structured.value) : undefined;
  if (review)
    log(
      `review: ${review.inline.length} finding(s) on lines of the diff, ${review.outside.length} outside it`,
    );
  for (const message of outputErrors) log(message);

  const verify =
    config.verify &&
    sandbox &&
    policy &&
    failure?.reason !== "engine_error" &&
    failure?.reason !== "cancelled"
      ? await timed(ctx, "verify", () =>
          runVerify({
            runId,
            config,
            imageName: sandbox.image.name,
            patch: patch.bytes,
            log,
            signal: cancel,
            excludeFromCopy: policy.excludeFromCopy,
          }).catch((e: unknown): VerifyResult => {
            log(`verify could not run: ${(e as Error).message}`);
            return {
              command: config.verify ?? "",
              applied: false,
              exitCode: null,
              outputTail: redactor.redact((e as Error).message),
              durationMs: 0,
            };
          }),
        )
      : undefined;

  const exitReason: ExitReason = failure?.reason ?? "completed";
  const report = buildReport({
    ...ctx,
    ...phase,
    sandbox,
    policy,
    mcp: phase.mcp,
    tools: phase.tools,
    exitReason,
    failure,
    patch,
    verify,
    outputErrors,
    structuredPath,
  });
  const written = await writeReportFiles(outDir, report, { patchText: patch.text, redactor }).catch(
    (e: unknown) => {
      log(`writing the report failed: ${(e as Error).message}`);
      outputErrors.push(`the report could not be written: ${(e as Error).message}`);
      return undefined;
    },
  );
  const reportPath = written?.paths.json;
  const verifyFailed = verify !== undefined && (!verify.applied || verify.exitCode !== 0);
  const reasonCode =
    exitReason === "completed" && verifyFailed ? EXIT_CODES.verify_failed : EXIT_CODES[exitReason];
  const exitCode = reasonCode === 0 && outputErrors.length ? EXIT_CODES.output_error : reasonCode;
  events.emit({
    type: "result",
    subtype: RESULT_SUBTYPES[exitReason],
    session_id: runId,
    is_error: exitCode !== 0,
    ...(exitReason === "completed" ? {} : { errors: [failure?.message ?? exitReason] }),
    exit_reason: exitReason,
    duration_ms: Math.round(performance.now() - ctx.runStart),
    duration_api_ms: Math.round(loop.apiMs),
    num_turns: loop.turns.length,
    result: loop.finalText || failure?.message || "",
    total_cost_usd: report.costUsd,
    usage: apiUsage(report.usage),
    permission_denials: allCalls(loop, phase.subagents)
      .filter((c) => c.decision?.behavior === "deny")
      .map((c) => ({ tool_name: c.tool, tool_use_id: c.id, tool_input: c.input })),
    ...(structured.value ? { structured_output: structured.value } : {}),
    patch_path: patchPath,
    report_path: reportPath,
  });
  events.close();
  // The message may quote a credential (a DOCKER_HOST with a password, an API error echoing the key): the
  // CLI and the Action print it, so it is redacted like everything else written or printed (S8).
  const error = failure?.message ?? (outputErrors.length ? outputErrors.join("; ") : undefined);
  return {
    runId,
    exitReason,
    exitCode,
    outDir,
    patchPath,
    reportPath,
    report: written?.report,
    error: error === undefined ? undefined : redactor.redact(error),
    structuredOutput: structured.value,
    review,
  };
}

/** The run's calls as a tree in a list: each Task call followed by its subagent's calls. */
function allCalls(loop: LoopResult, subagents: SubagentRunner | undefined): ToolCallRecord[] {
  const children = new Map<string, ToolCallRecord[]>();
  for (const call of subagents?.calls() ?? []) {
    const parent = call.parentToolUseId ?? "";
    children.set(parent, [...(children.get(parent) ?? []), call]);
  }
  return loop.calls.flatMap((call) => [call, ...(children.get(call.id) ?? [])]);
}

interface ReportParts {
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
  secrets: string[];
  instructions?: RunContext["instructions"];
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

function instructionsRecord(found: RunContext["instructions"]): RunReportInput["instructions"] {
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

function buildReport(p: ReportParts): RunReportInput {
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
      path: path.basename(config.workspace),
      repo: config.repo,
      baseCommit: hostBaseCommit(config.workspace),
      ...recorded.copy,
    },
    image: recorded.image,
    hardening: recorded.hardening,
    policy: policy?.summary ?? { mode, rules: [], ignored: [] },
    model: {
      driver: config.script ? "script" : "anthropic",
      name: config.script ? "script" : config.model,
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
  };
}
