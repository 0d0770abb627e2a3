// One run, end to end (DESIGN.md): config → policy → sandbox → driver loop → patch → report → teardown.
// Whatever ends the run, the patch and the record are written (as far as the container still answers),
// with an exit reason, and the container is removed. The CLI and the Action both call `runAgent`.
import fs from "node:fs";
import path from "node:path";
import { atomicWriteFile, createRedactor, writeReportFiles, writeReportFilesSync } from "../report/index.js";
import type { Redactor, ExitReason, RunReport } from "../report/index.js";
import { WorkspaceError } from "../sandbox/archive.js";
import { DockerSandbox, newRunId, runEngineObjects } from "../sandbox/docker-sandbox.js";
import { EngineError, SandboxGoneError } from "../sandbox/sandbox.js";
import { createSkillTool } from "../tools/skill.js";
import { isStdio, loadMcpConfig, type McpConfigResult } from "../mcp/config.js";
import { maxMcpOutputTokens } from "../mcp/result.js";
import { RunState } from "../tools/state.js";
import type { AnyTool } from "../tools/types.js";
import { newLoopResult, newLoopState, runAgentLoop } from "./agent-loop.js";
import { checkAgentModes, loadAgents } from "./agents.js";
import { SubagentRunner } from "./subagents.js";
import { ConfigError } from "../errors.js";
import {
  CLOUD_CREDENTIAL_VARIABLES,
  injectedNames,
  readCaCert,
  type RunConfig,
  runEgressOptions,
  secretFromEnv,
} from "./config.js";
import { checkCloudCredentials, PROVIDER_GAPS, PROVIDER_NAMES } from "./providers.js";
import { COMPACT_AT_FRACTION, ContextManager, contextWindowOf } from "./context.js";
import { ModelApiError, type Driver } from "./driver.js";
import { apiContextEditFor } from "./pricing.js";
import { apiUsage, EventSink, RESULT_SUBTYPES } from "./events.js";
import { ToolPipeline } from "./pipeline.js";
import { preparePolicy } from "./policy-setup.js";
import { RunBudget } from "./run-budget.js";
import { loadScript, ScriptDriver, ScriptError } from "./script-driver.js";
import { readSchema, StructuredOutputSpec } from "./structured-output.js";
import { RunToolSet } from "./tool-set.js";
import { allCalls, buildReport, type RunFailure } from "./run-report.js";
import { type AgentPhase, type RunContext, type RunIO, timed } from "./run-context.js";
import {
  CONVERSATION_FILE,
  conversationRecord,
  DEFAULT_RESUME_PROMPT,
  openResume,
  policyChanges,
  restoreMessages,
} from "./resume.js";

export type { RunIO } from "./run-context.js";
import { startHooks } from "./hooks.js";
import { applyInstructions, startMcp, webServices } from "./run-services.js";
import { reviewJsonSchema } from "../review/findings.js";
import { placeReview, reviewPrompt, reviewTarget, type ReviewPlacement } from "../review/task.js";
import { prepareModelContext } from "./memory/model-context.js";
import { createWebFetchTool } from "../tools/web-fetch.js";
import { createWebSearchTool } from "../tools/web-search.js";
import { exportPatch, type PatchOut } from "./sandbox-record.js";
import { progressListener } from "./progress.js";
import { runVerify, type VerifyResult } from "./verify.js";
import { blockEventLoopForTests, Watchdog, type WatchdogCause } from "./watchdog.js";
import { AGENT_CI_VERSION } from "../version.js";
import { EXIT_CODES } from "./options.js";

export { EXIT_CODES };

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
  /** The agent's own final answer, redacted ("" when it gave none). */
  finalMessage?: string;
}

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

/** Known secret values: never in the container, and `***` in everything written or printed. */
function knownSecrets(config: RunConfig): string[] {
  const fromEnv = [
    "ANTHROPIC_API_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    ...CLOUD_CREDENTIAL_VARIABLES,
  ]
    .map((name) => process.env[name])
    .filter((v): v is string => Boolean(v));
  const aws = config.awsCredentials;
  const cloud = [aws?.accessKeyId, aws?.secretAccessKey, aws?.sessionToken, config.googleAccessToken];
  const injected = injectedNames(config).map((name) => secretFromEnv(name));
  return [config.apiKey ?? "", ...config.secrets, ...fromEnv, ...cloud, ...injected].filter(
    (v): v is string => Boolean(v),
  );
}

async function makeDriver(config: RunConfig, deadline: number, log: (line: string) => void): Promise<Driver> {
  if (config.script) return new ScriptDriver(loadScript(config.script));
  // The model API's SDK is loaded by a run that calls a model; a scripted run loads none.
  const { AnthropicDriver } = await import("./anthropic-driver.js");
  return new AnthropicDriver({
    apiKey: config.apiKey ?? "",
    baseURL: config.baseURL,
    ...(config.provider === "anthropic"
      ? {}
      : {
          cloud: {
            provider: config.provider,
            baseURL: config.baseURL,
            region: config.region,
            projectId: config.projectId,
            awsCredentials: config.awsCredentials,
            googleAccessToken: config.googleAccessToken,
          },
        }),
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
      progressListener(io.onProgress),
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
  try {
    return await finishRun(ctx, phase, watchdog, cancel);
  } finally {
    ctx.resume?.dispose();
  }
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
    if (phase.conversation)
      fs.writeFileSync(path.join(ctx.outDir, CONVERSATION_FILE), conversationText(ctx, phase));
    const failure = { reason: exitReason, kind: "Watchdog", message };
    const report = buildReport({ ...ctx, ...phase, exitReason, failure, patch, outputErrors: [] });
    writeReportFilesSync(ctx.outDir, report, { patchText: "", redactor: ctx.redactor });
  } catch (e) {
    ctx.log(`the watchdog could not write the record: ${(e as Error).message}`);
  }
  ctx.resume?.dispose();
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
  if (ctx.config.resume) await startResume(ctx);
  // A resumed run's policy is its own configuration only; the earlier record's is compared, never adopted.
  const policy = await preparePolicy(ctx.config);
  phase.policy = policy;
  const earlier = ctx.resume?.record.report;
  if (ctx.resume && earlier) {
    ctx.resume.policyChanges = policyChanges(earlier.policy, policy.summary);
    if (ctx.resume.policyChanges.length)
      ctx.log(
        `the policy differs from run ${earlier.runId}'s record: ${ctx.resume.policyChanges.join("; ")}; this run's own policy applies (the report shows both)`,
      );
  }
  const config = applyInstructions(ctx);
  const { runId, log, events } = ctx;
  if (config.task === "review" && config.reviewBase)
    ctx.review = reviewTarget(config.workspace, config.reviewBase, config.reviewHead);
  const structured = ctx.review
    ? new StructuredOutputSpec(reviewJsonSchema(), "review")
    : structuredOutputSpec(config);
  const mode = policy.policy.mode;
  // What the model is told (memory, git snapshot, environment): taken before the container starts.
  const told = prepareModelContext(config, mode, structured);
  phase.modelContext = told;
  // Agent definitions are checked before any container or model call: a bad one is a config error.
  const agents = loadAgents({
    workspace: config.workspace,
    agentsDirs: config.agentsDir,
    agentsJson: config.agents,
    trustWorkspace: config.trustWorkspaceSettings,
  });
  checkAgentModes(agents.agents, mode);
  phase.agents = agents;
  for (const note of agents.ignored) log(note);
  const driver = await makeDriver(config, deadline, log);
  if (!config.script && config.provider === "anthropic") {
    // A bad key is found before a container starts (M5).
    const { checkApiKey } = await import("./anthropic-driver.js");
    await checkApiKey({ apiKey: config.apiKey ?? "", baseURL: config.baseURL, model: config.model, signal });
  } else if (!config.script) {
    // Missing cloud credentials too; the provider has no cheap call that checks them without a model.
    await checkCloudCredentials(config).catch((error: Error) => {
      throw new ModelApiError(`${PROVIDER_NAMES[config.provider]}: ${error.message}`, undefined, "auth");
    });
  }
  for (const ignored of ctx.mcpConfig?.ignored ?? []) log(`${ignored.source} ignored: ${ignored.reason}`);
  const mcpServers = ctx.mcpConfig?.servers ?? [];
  const web = webServices(ctx, driver);
  const searchAllowed =
    mode === "bypassPermissions" ||
    policy.policy.rules.some((r) => r.behavior === "allow" && r.tool === "WebSearch");
  const webOff = new Map<string, string>();
  const gaps = config.script ? {} : PROVIDER_GAPS[config.provider];
  if (web.offline) for (const name of ["WebFetch", "WebSearch"]) webOff.set(name, web.offline);
  else if (gaps.WebSearch) webOff.set("WebSearch", gaps.WebSearch);
  else if (!searchAllowed)
    webOff.set("WebSearch", "WebSearch is offered only when an allow rule names it, e.g. --allow WebSearch");
  const skills = ctx.instructions?.catalogue.skills ?? [];
  log(
    `agent-ci ${AGENT_CI_VERSION}: run ${runId}, mode ${mode}, ${config.script ? "script" : `model ${config.model}${config.provider === "anthropic" ? "" : ` on ${PROVIDER_NAMES[config.provider]}`}`}`,
  );
  const sandbox = await DockerSandbox.start({
    runId,
    workspaceDir: config.workspace,
    image: config.image,
    imageRegistry: config.imageRegistry,
    runtime: config.runtime,
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
    // Stdio MCP servers and hooks run as users of their own in the agent's group (docs/hooks.md).
    sharedWorkspace: mcpServers.some(isStdio) || policy.policy.hooks.length > 0,
    services: mcpServers.length,
    progress: log,
    startRecord: phase.start,
  });
  phase.sandbox = sandbox;
  log(`sandbox ready in ${Math.round(sandbox.timings.readyMs)} ms (${sandbox.copy.files} files copied)`);
  blockEventLoopForTests();
  signal.throwIfAborted();
  if (ctx.resume) await continueWorkspace(ctx, sandbox);
  if (mcpServers.length) phase.mcp = await startMcp(ctx, sandbox);
  const hooks = policy.policy.hooks.length
    ? await startHooks(sandbox, {
        hooks: policy.policy.hooks,
        workspace: config.hookScriptsDir ?? config.workspace,
        sessionId: runId,
        permissionMode: mode,
        log,
      })
    : undefined;
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
    gateIn: policy.gateIn,
    hooks,
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
    modelContext: told,
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
    apiKeySource:
      config.script || config.provider !== "anthropic" || !config.apiKey ? "none" : "ANTHROPIC_API_KEY",
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
    hooks,
    outputDir: ctx.outDir,
    runStart: ctx.runStart,
    disabledReason: (tool) => toolSet.disabledReason(tool),
    memory: told.main.memory,
  });
  const { loop } = ctx;
  const conversation = newLoopState(
    {
      system: told.system,
      preamble: told.main.preamble,
      prompt: ctx.review
        ? reviewPrompt(ctx.review, config.prompt)
        : (config.prompt ?? "Run the scripted tool calls."),
      restored: ctx.resume
        ? restoreMessages(ctx.resume.record.conversation.messages, config.prompt ?? DEFAULT_RESUME_PROMPT)
        : undefined,
      tools: toolSet.api,
      maxTurns: config.maxTurns,
      maxTokens: config.maxTokens,
      context: contextFor(config, events, runId, ctx.runStart),
      structuredOutput: structured,
    },
    budget,
    loop,
  );
  phase.conversation = conversation;
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
 * --resume: the earlier run's record read, and its base commit checked out from the user's repository; the
 * run works on that checkout from here (the sandbox's copy, instructions, verify). A record that cannot be
 * resumed is a ConfigError saying why.
 */
async function startResume(ctx: RunContext): Promise<void> {
  const given = ctx.config.resume ?? "";
  const { record, checkout, publishedCommit } = await openResume(
    given,
    ctx.config.workspace,
    ctx.config.resumeNeedsPublishedCommit,
    ctx.redactor.redact,
  );
  ctx.resume = {
    record,
    workspace: ctx.config.workspace,
    dispose: checkout.dispose,
    restoredReads: 0,
    policyChanges: [],
    publishedCommit,
  };
  ctx.config = { ...ctx.config, workspace: checkout.dir };
  ctx.log(
    `resuming run ${record.report.runId} (${record.report.exitReason}): ${record.conversation.messages.length} messages, base ${record.baseCommit}, ${publishedCommit ? `the record reproduces its published commit ${publishedCommit}` : "never published (no commit of the run to check the record against)"}`,
  );
}

const EARLIER_PATCH = "/tmp/agent-ci-resume.patch";

/**
 * The earlier run's changes, applied in the container after its baseline was taken (so this run's patch is
 * the whole change against the base), and what the model had read whole restored for read-before-edit: the
 * hash it read is checked against the file as it is now, so a file changed since still needs a new Read.
 */
async function continueWorkspace(ctx: RunContext, sandbox: DockerSandbox): Promise<void> {
  const resume = ctx.resume;
  if (!resume) return;
  const { patch, baseCommit } = resume.record;
  if (patch.length) {
    await sandbox.writeFile(EARLIER_PATCH, patch, { confine: false });
    const applied = await sandbox.exec({
      argv: ["git", "apply", "--binary", "--whitespace=nowarn", EARLIER_PATCH],
      timeoutMs: 120_000,
    });
    await sandbox.exec({ argv: ["rm", "-f", EARLIER_PATCH], timeoutMs: 30_000 });
    if (applied.exitCode !== 0) {
      const plan = ctx.config.mode === "plan" ? " (plan mode keeps the workspace read-only)" : "";
      throw new ConfigError(
        `the earlier run's patch does not apply to its base commit ${baseCommit}${plan}: ${applied.stderr.toString("utf8").trim().slice(-800)}`,
      );
    }
  }
  for (const read of resume.record.conversation.reads) {
    ctx.state.reads.set(read.path, {
      sha256: read.sha256,
      mtimeMs: 0,
      size: read.size,
      partial: read.partial,
    });
  }
  resume.restoredReads = resume.record.conversation.reads.length;
}

/** The main conversation's record (conversation.jsonl), redacted. */
function conversationText(ctx: RunContext, phase: AgentPhase): string {
  return conversationRecord({
    runId: ctx.runId,
    messages: phase.conversation?.messages ?? [],
    state: ctx.state,
    redactDeep: ctx.redactor.redactDeep,
  });
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
  if (phase.conversation) {
    try {
      await atomicWriteFile(path.join(outDir, CONVERSATION_FILE), conversationText(ctx, phase));
    } catch (e) {
      outputErrors.push(`${CONVERSATION_FILE} could not be written: ${(e as Error).message}`);
    }
  }
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
      ? await timed(ctx, "verify", () => {
          ctx.io.onProgress?.({ kind: "verifying" });
          return runVerify({
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
          });
        })
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
    finalMessage: redactor.redact(loop.finalText),
  };
}
