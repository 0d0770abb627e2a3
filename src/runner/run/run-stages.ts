// The agent phase of one run, in stages, each a function of the stages before it:
//   prepare   — the policy, what the model is told, the agents and the model's credentials, before any container;
//   ask ahead — the first model turn, sent while the sandbox opens when nothing in it needs the sandbox;
//   open      — the sandbox, with the earlier run's changes when resuming;
//   services  — what the tools are bound to: MCP servers, hooks, the budget, subagents, the tool set;
//   converse  — the agent loop.
// Each stage leaves what the record needs in the phase as it goes, so a run that fails at any stage is still
// recorded as far as it got (finishRun in run.ts).
import { setupCacheLine } from "../../report/index.js";
import { isStdio, type McpServerConfig } from "../../mcp/config.js";
import { maxMcpOutputTokens } from "../../mcp/result.js";
import type { PermissionMode } from "../../policy/schema.js";
import { describeIgnored } from "../../policy/workspace-trust.js";
import { reviewJsonSchema } from "../../review/findings.js";
import { reviewPrompt, reviewTarget } from "../../review/task.js";
import { DockerSandbox, type EngineStart } from "../../sandbox/docker-sandbox.js";
import { userImage } from "../../sandbox/image.js";
import { chooseNode, describeNodeChoice, type NodeChoice } from "../../sandbox/node/choose.js";
import { createSkillTool } from "../../tools/skill.js";
import type { AnyTool } from "../../tools/types.js";
import type { WebServices } from "../../tools/web-services.js";
import { createWebFetchTool } from "../../tools/web-fetch.js";
import { createWebSearchTool } from "../../tools/web-search.js";
import { AGENT_CI_VERSION } from "../../version.js";
import type Anthropic from "@anthropic-ai/sdk";
import { createTaskTool } from "../../tools/task.js";
import { firstTurnRequest, newLoopState, runAgentLoop, type Conversation } from "../loop/agent-loop.js";
import { checkAgentModes, loadAgents, type LoadedAgents } from "../agents/agents.js";
import type { AnthropicDriver } from "../model/anthropic-driver.js";
import { anthropicCredential, CREDENTIAL_SOURCES } from "../model/credentials.js";
import type { RunConfig } from "../config.js";
import { ModelApiError, type Driver } from "../model/driver.js";
import type { StreamEvent } from "../loop/events.js";
import { startHooks } from "../hooks/hooks.js";
import { takeGitSnapshot } from "../instructions/memory/git-snapshot.js";
import { prepareModelContext, type ModelContext } from "../instructions/memory/model-context.js";
import { ToolPipeline } from "../loop/pipeline.js";
import { preparePolicy, type PreparedPolicy } from "./policy-setup.js";
import { modelProvider } from "../model/providers.js";
import {
  comparePolicy,
  continueWorkspace,
  DEFAULT_RESUME_PROMPT,
  restoreMessages,
  startResume,
} from "../resume/resume.js";
import { RunBudget } from "../loop/run-budget.js";
import { runSandboxOptions } from "./sandbox-options.js";
import { type AgentPhase, type RunContext, timed } from "./run-context.js";
import { applyInstructions, contextFor, runServices, startMcp, webServices } from "./run-services.js";
import type { RunServices } from "../loop/services.js";
import { loadScript, ScriptDriver } from "../model/script-driver.js";
import { readSchema, StructuredOutputSpec } from "../model/structured-output.js";
import { SubagentRunner } from "../agents/subagents.js";
import { RunToolSet, type RunToolSetOptions, webToolsOff } from "../loop/tool-set.js";
import { FirstTurnAhead, overlapBlocker, taskDefinitionOnly } from "./first-turn.js";
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
  /** The Bash tool's Node.js and why (undefined: a user image's own). */
  node: NodeChoice | undefined;
}

/** What the services stage started: the run's services, its subagents and its tool set. */
export interface Started {
  services: RunServices;
  subagents: SubagentRunner;
  toolSet: RunToolSet;
}

/** What the agent phase runs under: the run's deadline and cancel, and the watchdog's start. */
export interface PhaseLimits {
  deadline: number;
  signal: AbortSignal;
  /** Resolves once the watchdog watches (run.ts): the agent is handed the sandbox no earlier. */
  watching: Promise<void>;
}

/** The agent phase: its stages in order. */
export async function runAgentPhase(
  ctx: RunContext,
  phase: AgentPhase,
  { deadline, signal, watching }: PhaseLimits,
): Promise<void> {
  // The engine is reached and the images made ready while the run prepares: they need only its configuration.
  // A configuration error still ends the run first; images being made are waited for, never left half made.
  const { image, imageRegistry, runtime } = ctx.config;
  const begun = DockerSandbox.begin({
    image,
    imageRegistry,
    runtime,
    progress: ctx.log,
    startRecord: phase.start,
  });
  let ahead: FirstTurnAhead | undefined;
  try {
    const prepared = await prepare(ctx, phase, deadline, signal);
    // The first turn is asked once the engine answers: a run with no engine makes no model call.
    await begun.reached;
    ahead = askAhead(ctx, phase, prepared, signal);
    const sandbox = await openSandbox(ctx, phase, prepared, { signal, begun, watching });
    const started = await startServices(ctx, phase, prepared, sandbox, deadline, signal);
    await converse(ctx, phase, prepared, started, ahead);
  } finally {
    ahead?.drop("the run ended before its first turn");
    await begun.drop();
  }
}

/** The first model turn, asked now when its request needs nothing of the sandbox (first-turn.ts). */
function askAhead(
  ctx: RunContext,
  phase: AgentPhase,
  prepared: Prepared,
  signal: AbortSignal,
): FirstTurnAhead | undefined {
  const blocker = overlapBlocker(prepared.config, prepared.mcpServers.length);
  if (blocker) {
    phase.firstTurn = { overlapped: false, reason: blocker };
    if (!prepared.config.script) ctx.log(`the first model turn waits for the sandbox: ${blocker}`);
    return undefined;
  }
  const task = createTaskTool(taskDefinitionOnly(prepared.agents.agents));
  const tools = new RunToolSet(toolSetOptions(ctx, prepared, [task])).api;
  const request = firstTurnRequest(mainConversation(ctx, prepared, tools));
  const ahead = new FirstTurnAhead(prepared.driver, request, signal, ctx.log);
  phase.firstTurn = ahead.record;
  return ahead;
}

async function prepare(
  ctx: RunContext,
  phase: AgentPhase,
  deadline: number,
  signal: AbortSignal,
): Promise<Prepared> {
  if (ctx.mcpConfigError) throw ctx.mcpConfigError;
  const { log } = ctx;
  // The model API's SDK, the largest module a run loads, is read while the run prepares (no call is made before
  // the checks below); a scripted run loads none.
  const driverModule = ctx.config.script ? undefined : import("../model/anthropic-driver.js");
  driverModule?.catch(() => undefined);
  if (ctx.config.resume) await resumeFrom(ctx, ctx.config.resume);
  // The repository's state is read by host git beside the policy's setup (for what the model is told).
  const snapshot = takeGitSnapshot(ctx.config.workspace, { subjects: !ctx.config.untrustedHistory });
  // A resumed run's policy is its own configuration only; the earlier record's is compared, never adopted.
  const policy = preparePolicy(ctx.config);
  phase.policy = policy;
  if (ctx.resume) comparePolicy(ctx.resume, policy.summary, log);
  const config = applyInstructions(ctx);
  log(runHeader(ctx.runId, config, policy.policy.mode));
  for (const ignored of policy.policy.ignored) log(describeIgnored(ignored));
  const choosing = chooseRunNode(config);
  if (config.task === "review" && config.reviewBase)
    ctx.review = reviewTarget(config.workspace, config.reviewBase, config.reviewHead);
  const structured = ctx.review
    ? await StructuredOutputSpec.compile(reviewJsonSchema(), "review")
    : await structuredOutputSpec(config);
  const mode = policy.policy.mode;
  // What the model is told (memory, git snapshot, environment): taken before the container starts.
  const told = prepareModelContext(config, mode, structured, await snapshot);
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
  const node = await choosing;
  if (node) log(describeNodeChoice(node));
  const driver = await makeDriver(config, { deadline, log, onSecret: ctx.io.onSecret, signal, driverModule });
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
    node,
  };
}

/**
 * The Bash tool's Node.js (sandbox/node/choose.ts), resolved against the npm registry while the rest of the run
 * is prepared; a pin that names none ends the run before any model request.
 */
function chooseRunNode(config: RunConfig): Promise<NodeChoice | undefined> {
  const choosing = chooseNode({
    workspace: config.workspace,
    option: config.nodeVersion,
    runnerVersion: config.runnerNodeVersion,
    defaultImage: userImage(config.image) === undefined,
  });
  choosing.catch(() => undefined);
  return choosing;
}

/** A resumed run: the earlier record read and checked, and the workspace its checkout (resume.ts). */
async function resumeFrom(ctx: RunContext, record: string): Promise<void> {
  const { resume, checkout } = await startResume(
    record,
    ctx.config.workspace,
    ctx.config.resumeNeedsPublishedCommit,
    ctx.redactor.redact,
    ctx.log,
  );
  ctx.resume = resume;
  ctx.config = { ...ctx.config, workspace: checkout };
}

/** The run's first progress line: what runs, in which mode, with which model. */
function runHeader(runId: string, config: RunConfig, mode: PermissionMode): string {
  const model = config.script ? "script" : modelProvider(config.provider).describe(config.model);
  return `agent-ci ${AGENT_CI_VERSION}: run ${runId}, mode ${mode}, ${model}`;
}

async function openSandbox(
  ctx: RunContext,
  phase: AgentPhase,
  { config, policy, mcpServers, node }: Prepared,
  { signal, begun, watching }: Pick<PhaseLimits, "signal" | "watching"> & { begun: EngineStart },
): Promise<DockerSandbox> {
  const { runId, log } = ctx;
  const sandbox = await DockerSandbox.start({
    ...runSandboxOptions(config, runId),
    node,
    runId,
    workspaceDir: config.workspace,
    readOnlyWorkspace: policy.container.workspaceReadOnly,
    excludeFromCopy: policy.excludeFromCopy,
    // Stdio MCP servers and hooks run as users of their own in the agent's group (docs/hooks.md).
    sharedWorkspace: mcpServers.some(isStdio) || policy.policy.hooks.length > 0,
    services: mcpServers.length,
    progress: log,
    startRecord: phase.start,
    // The Bash parser's load is the policy's one slow part; it waits for no container, so it runs now.
    whileStarting: () => void policy.loadParser().catch(() => undefined),
    begun,
  });
  phase.sandbox = sandbox;
  await Promise.all([policy.loadParser(), watching]);
  log(`sandbox ready in ${Math.round(sandbox.timings.readyMs)} ms (${sandbox.copy.files} files copied)`);
  if (sandbox.setupCache) log(setupCacheLine(sandbox.setupCache));
  blockEventLoopForTests();
  signal.throwIfAborted();
  if (ctx.resume) await continueWorkspace(ctx.resume, sandbox, ctx.state, policy.container.workspaceReadOnly);
  return sandbox;
}

async function startServices(
  ctx: RunContext,
  phase: AgentPhase,
  prepared: Prepared,
  sandbox: DockerSandbox,
  deadline: number,
  signal: AbortSignal,
): Promise<Started> {
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
  const services = runServices(ctx, {
    sandbox,
    policy,
    hooks,
    budget,
    driver: prepared.driver,
  });
  const subagents = new SubagentRunner(services, {
    agents: prepared.agents.agents,
    parentTools: () => toolSet.enabled,
    told: prepared.told,
  });
  phase.subagents = subagents;
  const toolSet = runToolSet(ctx, phase, prepared, subagents);
  return { services, subagents, toolSet };
}

/** The run's tool set: the static tools, Task and its kin, Skill, the web tools and the MCP servers' tools. */
function runToolSet(
  ctx: RunContext,
  phase: AgentPhase,
  prepared: Prepared,
  subagents: SubagentRunner,
): RunToolSet {
  const toolSet = new RunToolSet({
    ...toolSetOptions(ctx, prepared, subagents.tools()),
    mcp: phase.mcp,
  });
  phase.tools = toolSet;
  phase.mcp?.onToolsChanged(() => toolSet.refresh());
  for (const r of toolSet.refused)
    ctx.log(`MCP server ${r.server}: its tool ${r.tool} is not offered: ${r.reason}`);
  return toolSet;
}

/** The tool set's options but the MCP servers, with the given Task tools. */
function toolSetOptions(
  ctx: RunContext,
  { config, policy, mode, structured, web }: Prepared,
  taskTools: readonly AnyTool[],
): RunToolSetOptions {
  const skills = ctx.instructions?.catalogue.skills ?? [];
  return {
    mode,
    gate: policy.gate,
    bound: [
      ...taskTools,
      ...(skills.length ? [createSkillTool(skills)] : []),
      createWebFetchTool(web),
      createWebSearchTool(web),
    ],
    off: webToolsOff({
      offline: web.offline,
      providerGap: config.script ? undefined : modelProvider(config.provider).gaps.WebSearch,
      mode,
      rules: policy.policy.rules,
    }),
    maxMcpOutputTokens: maxMcpOutputTokens(),
    extraApiTools: structured ? [structured.tool] : [],
  };
}

async function converse(
  ctx: RunContext,
  phase: AgentPhase,
  prepared: Prepared,
  { services, toolSet }: Started,
  askedAhead: FirstTurnAhead | undefined,
): Promise<void> {
  const { told } = prepared;
  const { sandbox, budget } = services;
  const { events, loop } = ctx;
  events.emit(initEvent(ctx, phase, prepared, { sandbox, toolSet }));
  const pipeline = new ToolPipeline({
    allTools: toolSet.all,
    enabledTools: toolSet.enabled,
    sandbox,
    state: services.state,
    gate: services.gate,
    hooks: services.hooks,
    outputs: services.outputs,
    runStart: services.runStart,
    disabledReason: (tool) => toolSet.disabledReason(tool),
    memory: told.main.memory,
  });
  const conversation = newLoopState(mainConversation(ctx, prepared, toolSet.api), budget, loop);
  phase.conversation = conversation;
  await timed(ctx, "calls", () => runAgentLoop({ ...services, pipeline, askedAhead }, conversation));
  if (loop.exit !== "completed")
    phase.failure = { reason: loop.exit, kind: loop.exit, message: loop.detail ?? loop.exit };
}

/** What the main conversation starts with: the system prompt, memory, git snapshot and task, and its tools. */
function mainConversation(
  ctx: RunContext,
  { config, told, structured }: Prepared,
  tools: Anthropic.Tool[],
): Conversation {
  return {
    system: told.system,
    preamble: told.main.preamble,
    prompt: ctx.review
      ? reviewPrompt(ctx.review, config.prompt)
      : (config.prompt ?? "Run the scripted tool calls."),
    restored: ctx.resume
      ? restoreMessages(ctx.resume.record.conversation.messages, config.prompt ?? DEFAULT_RESUME_PROMPT)
      : undefined,
    tools,
    maxTurns: config.maxTurns,
    maxTokens: config.maxTokens,
    context: contextFor(config, ctx.events, ctx.runId, ctx.runStart),
    structuredOutput: structured,
  };
}

/** The stream's `system/init` event: what the run starts with, as Claude Code's stream-json says it. */
function initEvent(
  ctx: RunContext,
  phase: AgentPhase,
  { config, mode }: Prepared,
  { sandbox, toolSet }: { sandbox: { root: string }; toolSet: RunToolSet },
): StreamEvent {
  return {
    type: "system",
    subtype: "init",
    session_id: ctx.runId,
    apiKeySource:
      !config.script &&
      modelProvider(config.provider).anthropicSignIn &&
      anthropicCredential(config)?.kind === "api_key"
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
  {
    deadline,
    log,
    onSecret,
    signal,
    driverModule,
  }: {
    deadline: number;
    log: (line: string) => void;
    onSecret: ((value: string) => void) | undefined;
    signal: AbortSignal;
    /** The driver's module, being loaded since the run began preparing. */
    driverModule: Promise<typeof import("../model/anthropic-driver.js")> | undefined;
  },
): Promise<Driver> {
  if (config.script) return new ScriptDriver(loadScript(config.script));
  const { AnthropicDriver } = await (driverModule ?? import("../model/anthropic-driver.js"));
  const driver = new AnthropicDriver({
    credential: anthropicCredential(config),
    onSecret,
    baseURL: config.baseURL,
    ...(modelProvider(config.provider).anthropicSignIn
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
  const provider = modelProvider(config.provider);
  if (provider.anthropicSignIn) {
    // Checked with the client the run then uses (a federated token is exchanged once).
    const credential = anthropicCredential(config);
    if (credential) log(`Anthropic API: signing in with ${CREDENTIAL_SOURCES[credential.kind]}`);
    await driver.checkCredentials({ model: config.model, signal });
    return;
  }
  // A cloud provider has no cheap call that checks its credentials without a model.
  await provider.checkCredentials?.(config).catch((error: Error) => {
    throw new ModelApiError(`${provider.name}: ${error.message}`, undefined, "auth");
  });
}

/** The compiled --output-schema, or undefined; a schema that cannot be used is a config error before any container. */
async function structuredOutputSpec(config: RunConfig): Promise<StructuredOutputSpec | undefined> {
  if (config.outputSchema === undefined) return undefined;
  const { schema, name } = readSchema(config.outputSchema);
  return StructuredOutputSpec.compile(schema, name);
}
