// The agent phase of one run, in stages, each a function of the stages before it:
//   prepare   — the policy, what the model is told, the agents and the model's credentials, before any container;
//   open      — the sandbox, with the earlier run's changes when resuming;
//   services  — what the tools are bound to: MCP servers, hooks, the budget, subagents, the tool set;
//   converse  — the agent loop.
// Each stage leaves what the record needs in the phase as it goes, so a run that fails at any stage is still
// recorded as far as it got (finishRun in run.ts).
import { isStdio, type McpServerConfig } from "../../mcp/config.js";
import { maxMcpOutputTokens } from "../../mcp/result.js";
import type { PermissionMode } from "../../policy/schema.js";
import { describeIgnored } from "../../policy/workspace-trust.js";
import { reviewJsonSchema } from "../../review/findings.js";
import { reviewPrompt, reviewTarget } from "../../review/task.js";
import { DockerSandbox } from "../../sandbox/docker-sandbox.js";
import { createSkillTool } from "../../tools/skill.js";
import type { AnyTool } from "../../tools/types.js";
import type { WebServices } from "../../tools/web-services.js";
import { createWebFetchTool } from "../../tools/web-fetch.js";
import { createWebSearchTool } from "../../tools/web-search.js";
import { AGENT_CI_VERSION } from "../../version.js";
import { newLoopState, runAgentLoop } from "../loop/agent-loop.js";
import { checkAgentModes, loadAgents, type LoadedAgents } from "../agents/agents.js";
import type { AnthropicDriver } from "../model/anthropic-driver.js";
import { anthropicCredential, CREDENTIAL_SOURCES } from "../model/credentials.js";
import type { RunConfig } from "../config.js";
import { COMPACT_AT_FRACTION, ContextManager, contextWindowOf } from "../loop/context.js";
import { ModelApiError, type Driver } from "../model/driver.js";
import type { EventSink, StreamEvent } from "../loop/events.js";
import { startHooks } from "../hooks/hooks.js";
import { prepareModelContext, type ModelContext } from "../instructions/memory/model-context.js";
import { ToolPipeline, type ToolHooks } from "../loop/pipeline.js";
import { preparePolicy, type PreparedPolicy } from "./policy-setup.js";
import { warmUpPolicy } from "./policy-warm-up.js";
import { apiContextEditFor } from "../model/pricing.js";
import { checkCloudCredentials, PROVIDER_GAPS, PROVIDER_NAMES } from "../model/providers.js";
import {
  comparePolicy,
  continueWorkspace,
  DEFAULT_RESUME_PROMPT,
  restoreMessages,
  startResume,
} from "../resume/resume.js";
import { RunBudget } from "../loop/run-budget.js";
import { runSandboxOptions } from "./sandbox-options.js";
import { callProgress } from "../progress.js";
import { type AgentPhase, type RunContext, timed } from "./run-context.js";
import { applyInstructions, startMcp, webServices } from "./run-services.js";
import { loadScript, ScriptDriver } from "../model/script-driver.js";
import { readSchema, StructuredOutputSpec } from "../model/structured-output.js";
import { SubagentRunner } from "../agents/subagents.js";
import { RunToolSet, webToolsOff } from "../loop/tool-set.js";
import { blockEventLoopForTests } from "./watchdog.js";

/** What the run settled before any container: its configuration, policy, model and what the model is told. */
export interface Prepared {
  config: RunConfig;
  policy: PreparedPolicy;
  mode: PermissionMode;
  structured?: StructuredOutputSpec;
  told: ModelContext;
  agents: LoadedAgents;
  driver: Driver;
  web: WebServices;
  mcpServers: readonly McpServerConfig[];
}

/** What the main loop and every subagent run with, built once. */
export interface RunServices {
  sandbox: DockerSandbox;
  hooks?: ToolHooks;
  budget: RunBudget;
  subagents: SubagentRunner;
  toolSet: RunToolSet;
}

/** The agent phase: its stages in order. */
export async function runAgentPhase(
  ctx: RunContext,
  phase: AgentPhase,
  deadline: number,
  signal: AbortSignal,
): Promise<void> {
  const prepared = await prepare(ctx, phase, deadline, signal);
  const sandbox = await openSandbox(ctx, phase, prepared, signal);
  const services = await startServices(ctx, phase, prepared, sandbox, deadline, signal);
  await converse(ctx, phase, prepared, services);
}

async function prepare(
  ctx: RunContext,
  phase: AgentPhase,
  deadline: number,
  signal: AbortSignal,
): Promise<Prepared> {
  if (ctx.mcpConfigError) throw ctx.mcpConfigError;
  const { log } = ctx;
  if (ctx.config.resume) {
    const { resume, checkout } = await startResume(
      ctx.config.resume,
      ctx.config.workspace,
      ctx.config.resumeNeedsPublishedCommit,
      ctx.redactor.redact,
      log,
    );
    ctx.resume = resume;
    ctx.config = { ...ctx.config, workspace: checkout };
  }
  // A resumed run's policy is its own configuration only; the earlier record's is compared, never adopted.
  const policy = await preparePolicy(ctx.config);
  phase.policy = policy;
  if (ctx.resume) comparePolicy(ctx.resume, policy.summary, log);
  const config = applyInstructions(ctx);
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
  for (const ignored of agents.ignored) log(describeIgnored(ignored));
  const driver = await makeDriver(config, deadline, log, ctx.io.onSecret, signal);
  for (const ignored of ctx.mcpConfig?.ignored ?? []) log(describeIgnored(ignored));
  const web = webServices(ctx, driver);
  return {
    config,
    policy,
    mode,
    structured,
    told,
    agents,
    driver,
    web,
    mcpServers: ctx.mcpConfig?.servers ?? [],
  };
}

async function openSandbox(
  ctx: RunContext,
  phase: AgentPhase,
  { config, policy, mode, mcpServers }: Prepared,
  signal: AbortSignal,
): Promise<DockerSandbox> {
  const { runId, log } = ctx;
  log(
    `agent-ci ${AGENT_CI_VERSION}: run ${runId}, mode ${mode}, ${config.script ? "script" : `model ${config.model}${config.provider === "anthropic" ? "" : ` on ${PROVIDER_NAMES[config.provider]}`}`}`,
  );
  const sandbox = await DockerSandbox.start({
    ...runSandboxOptions(config),
    runId,
    workspaceDir: config.workspace,
    readOnlyWorkspace: mode === "plan",
    excludeFromCopy: policy.excludeFromCopy,
    // Stdio MCP servers and hooks run as users of their own in the agent's group (docs/hooks.md).
    sharedWorkspace: mcpServers.some(isStdio) || policy.policy.hooks.length > 0,
    services: mcpServers.length,
    progress: log,
    startRecord: phase.start,
    whileStarting: () => warmUpPolicy(policy.engine),
  });
  phase.sandbox = sandbox;
  log(`sandbox ready in ${Math.round(sandbox.timings.readyMs)} ms (${sandbox.copy.files} files copied)`);
  blockEventLoopForTests();
  signal.throwIfAborted();
  if (ctx.resume) await continueWorkspace(ctx.resume, sandbox, ctx.state, mode === "plan");
  return sandbox;
}

async function startServices(
  ctx: RunContext,
  phase: AgentPhase,
  prepared: Prepared,
  sandbox: DockerSandbox,
  deadline: number,
  signal: AbortSignal,
): Promise<RunServices> {
  const { config, policy, mode } = prepared;
  const { runId, log } = ctx;
  if (prepared.mcpServers.length) phase.mcp = await startMcp(ctx, sandbox);
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
  const subagents = startSubagents(ctx, prepared, { sandbox, hooks, budget }, () => toolSet.enabled);
  phase.subagents = subagents;
  const toolSet = runToolSet(ctx, phase, prepared, subagents);
  return { sandbox, hooks, budget, subagents, toolSet };
}

/** The subagent runner: the run's sandbox, gate, hooks, driver and budget, with the parent's tools as ceiling. */
function startSubagents(
  ctx: RunContext,
  { config, policy, mode, driver, agents, told }: Prepared,
  { sandbox, hooks, budget }: Pick<RunServices, "sandbox" | "hooks" | "budget">,
  parentTools: () => readonly AnyTool[],
): SubagentRunner {
  const { runId, events, log } = ctx;
  return new SubagentRunner({
    agents: agents.agents,
    parentTools,
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
    progress: callProgress(ctx.io.progress ? log : undefined, ctx.io.onProgress, ctx.redactor.redact),
    modelContext: told,
  });
}

/** The run's tool set: the static tools, Task and its kin, Skill, the web tools and the MCP servers' tools. */
function runToolSet(
  ctx: RunContext,
  phase: AgentPhase,
  { config, policy, mode, structured, web }: Prepared,
  subagents: SubagentRunner,
): RunToolSet {
  const skills = ctx.instructions?.catalogue.skills ?? [];
  const toolSet = new RunToolSet({
    mode,
    gate: policy.gate,
    bound: [
      ...subagents.tools(),
      ...(skills.length ? [createSkillTool(skills)] : []),
      createWebFetchTool(web),
      createWebSearchTool(web),
    ],
    off: webToolsOff({
      offline: web.offline,
      providerGap: config.script ? undefined : PROVIDER_GAPS[config.provider].WebSearch,
      mode,
      rules: policy.policy.rules,
    }),
    mcp: phase.mcp,
    maxMcpOutputTokens: maxMcpOutputTokens(),
    extraApiTools: structured ? [structured.tool] : [],
  });
  phase.tools = toolSet;
  phase.mcp?.onToolsChanged(() => toolSet.refresh());
  for (const r of toolSet.refused)
    ctx.log(`MCP server ${r.server}: its tool ${r.tool} is not offered: ${r.reason}`);
  return toolSet;
}

async function converse(
  ctx: RunContext,
  phase: AgentPhase,
  prepared: Prepared,
  services: RunServices,
): Promise<void> {
  const { config, policy, structured, told, driver } = prepared;
  const { sandbox, hooks, budget, toolSet } = services;
  const { runId, events, loop } = ctx;
  events.emit(initEvent(ctx, phase, prepared, services));
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
  const progress = callProgress(
    ctx.io.progress ? ctx.log : undefined,
    ctx.io.onProgress,
    ctx.redactor.redact,
  );
  await timed(ctx, "calls", () =>
    runAgentLoop(
      { driver, pipeline, sandbox, events, budget, runId, runStart: ctx.runStart, progress },
      conversation,
    ),
  );
  if (loop.exit !== "completed")
    phase.failure = { reason: loop.exit, kind: loop.exit, message: loop.detail ?? loop.exit };
}

/** The stream's `system/init` event: what the run starts with, as Claude Code's stream-json says it. */
function initEvent(
  ctx: RunContext,
  phase: AgentPhase,
  { config, mode }: Prepared,
  { sandbox, toolSet }: Pick<RunServices, "sandbox" | "toolSet">,
): StreamEvent {
  return {
    type: "system",
    subtype: "init",
    session_id: ctx.runId,
    apiKeySource:
      !config.script && config.provider === "anthropic" && anthropicCredential(config)?.kind === "api_key"
        ? "ANTHROPIC_API_KEY"
        : "none",
    cwd: sandbox.root,
    model: config.script ? "script" : config.model,
    tools: toolSet.enabled.map((t) => t.name),
    mcp_servers: (phase.mcp?.servers ?? []).map((s) => ({ name: s.name, status: s.status })),
    permissionMode: mode,
    agent_ci_version: AGENT_CI_VERSION,
  };
}

/** The model's driver, its credentials checked before any container starts. */
async function makeDriver(
  config: RunConfig,
  deadline: number,
  log: (line: string) => void,
  onSecret: ((value: string) => void) | undefined,
  signal: AbortSignal,
): Promise<Driver> {
  if (config.script) return new ScriptDriver(loadScript(config.script));
  // The model API's SDK is loaded by a run that calls a model; a scripted run loads none.
  const { AnthropicDriver } = await import("../model/anthropic-driver.js");
  const driver = new AnthropicDriver({
    credential: anthropicCredential(config),
    onSecret,
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
  await checkModelAccess(config, driver, log, signal);
  return driver;
}

/** Bad or missing credentials are found before a container starts (M5). */
async function checkModelAccess(
  config: RunConfig,
  driver: AnthropicDriver,
  log: (line: string) => void,
  signal: AbortSignal,
): Promise<void> {
  if (config.provider === "anthropic") {
    // Checked with the client the run then uses (a federated token is exchanged once).
    const credential = anthropicCredential(config);
    if (credential) log(`Anthropic API: signing in with ${CREDENTIAL_SOURCES[credential.kind]}`);
    await driver.checkCredentials({ model: config.model, signal });
    return;
  }
  // A cloud provider has no cheap call that checks its credentials without a model.
  await checkCloudCredentials(config).catch((error: Error) => {
    throw new ModelApiError(`${PROVIDER_NAMES[config.provider]}: ${error.message}`, undefined, "auth");
  });
}

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

/** The compiled --output-schema, or undefined; a schema that cannot be used is a config error before any container. */
function structuredOutputSpec(config: RunConfig): StructuredOutputSpec | undefined {
  if (config.outputSchema === undefined) return undefined;
  const { schema, name } = readSchema(config.outputSchema);
  return new StructuredOutputSpec(schema, name);
}
