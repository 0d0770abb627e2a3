// The agent phase of one run, in stages, each a function of the stages before it:
//   prepare   — the policy, what the model is told, the agents and the model's credentials, before any container;
//   ask ahead — the first model turn, sent while the sandbox opens when nothing in it needs the sandbox;
//   open      — the sandbox, with the earlier run's changes when resuming;
//   services  — what the tools are bound to: what the capabilities start, the budget, the tool set;
//   converse  — the agent loop.
// Each stage returns what the stages after it need, and adds what the record and the teardown need to the phase
// so far (PhaseSoFar, a new phase each time) as soon as it is made, before its next step that can fail: a run that
// fails at any stage is still recorded and torn down as far as it got (finishRun in run.ts). The capabilities
// (capabilities/) take part at each stage through their one shape; each keeps its own state for the run.
import type { PermissionMode } from "../../policy/schema.js";
import { describeIgnored } from "../../policy/workspace-trust.js";
import { reviewJsonSchema } from "../../review/findings.js";
import { reviewPrompt, reviewTarget } from "../../review/review-task.js";
import { DockerSandbox, type EngineStart } from "../../sandbox/docker-sandbox.js";
import { userImage } from "../../sandbox/image/image.js";
import { chooseNode, describeNodeChoice, type NodeChoice } from "../../sandbox/node/node-choice.js";
import { createSkillTool } from "../../tools/skill.js";
import { AGENT_CI_VERSION } from "../../version.js";
import type Anthropic from "@anthropic-ai/sdk";
import { firstTurnRequest, newLoopState, runAgentLoop, type Conversation } from "../loop/agent-loop.js";
import type { AnthropicDriver } from "../model/anthropic-driver.js";
import { anthropicCredential, CREDENTIAL_SOURCES } from "../model/credentials.js";
import type { RunConfig } from "../config.js";
import { ModelApiError, type Driver } from "../model/driver.js";
import type { StreamEvent } from "../loop/events.js";
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
import { type AgentPhase, type PhaseSoFar, type RunContext, timed } from "./run-context.js";
import { applyInstructions, contextFor, loadInstructions, runServices } from "./run-services.js";
import type { RunServices } from "../loop/services.js";
import type { RunInstructions } from "../record/index.js";
import type { ReviewTarget } from "../../review/review-task.js";
import type { RunResume } from "../resume/resume.js";
import { loadScript, ScriptDriver } from "../model/script-driver.js";
import { readSchema, StructuredOutputSpec } from "../model/structured-output.js";
import { RunToolSet, type RunToolSetOptions } from "../loop/tool-set.js";
import { FirstTurnAhead, overlapBlocker } from "./first-turn.js";
import { blockEventLoopForTests } from "./watchdog.js";
import {
  bindCapabilities,
  type CapabilityRun,
  capabilityTools,
  capabilityToolsOff,
  checkCapabilities,
  firstTurnWaits,
  modelReady,
  prepareCapabilities,
  sandboxNeeds,
  sandboxAsks,
  sandboxOpened,
  startCapabilities,
  type StartedParts,
  tell,
  type Told,
  workspaceKnown,
} from "../capabilities/index.js";

/** What the run settled before any container: its configuration, policy, model and what the model is told. */
export interface Prepared {
  /** The run's capabilities, each keeping its own state for the run (capabilities/index.ts). */
  readonly capabilities: readonly CapabilityRun[];
  /** The configuration the run goes on with (a resume's checkout, the prompt's slash command expanded). */
  readonly config: RunConfig;
  /** With --resume: the run it continues. */
  readonly resume?: RunResume;
  readonly policy: PreparedPolicy;
  readonly instructions: RunInstructions;
  /** Review mode: what is reviewed. */
  readonly review?: ReviewTarget;
  readonly mode: PermissionMode;
  readonly structured?: StructuredOutputSpec;
  /** What the model is told (system prompt, memory, git snapshot). */
  readonly told: Told;
  readonly driver: Driver;
  /** The Bash tool's Node.js and why (undefined: a user image's own). */
  readonly node: NodeChoice | undefined;
}

/** What the services stage started: what the capabilities started, the run's services and its tool set. */
export interface Started {
  readonly parts: StartedParts;
  readonly services: RunServices;
  readonly toolSet: RunToolSet;
}

/** What the agent phase runs under: the run's deadline and cancel, and the watchdog's start. */
export interface PhaseLimits {
  readonly deadline: number;
  readonly signal: AbortSignal;
  /** Resolves once the watchdog watches (run.ts): the agent is handed the sandbox no earlier. */
  readonly watching: Promise<void>;
}

/** The agent phase: its stages in order, each adding to `soFar` what it makes; returns the phase it ended with. */
export async function runAgentPhase(
  ctx: RunContext,
  soFar: PhaseSoFar,
  capabilities: readonly CapabilityRun[],
  { deadline, signal, watching }: PhaseLimits,
): Promise<AgentPhase> {
  // The engine is reached and the images made ready while the run prepares: they need only its configuration.
  // A configuration error still ends the run first; images being made are waited for, never left half made.
  const { image, imageRegistry, runtime } = ctx.config;
  const begun = DockerSandbox.begin({
    image,
    imageRegistry,
    runtime,
    progress: ctx.log,
    startRecord: soFar.current.start,
  });
  let ahead: FirstTurnAhead | undefined;
  try {
    const prepared = await prepare(ctx, soFar, capabilities, { deadline, signal });
    // The first turn is asked once the engine answers: a run with no engine makes no model call.
    await begun.reached;
    ahead = askAhead(ctx, soFar, prepared, signal);
    const sandbox = await openSandbox(ctx, soFar, prepared, { signal, begun, watching });
    const started = await startServices(ctx, soFar, prepared, sandbox, deadline, signal);
    return await converse(ctx, soFar, prepared, started, ahead);
  } finally {
    ahead?.drop("the run ended before its first turn");
    await begun.drop();
  }
}

/** The first model turn, asked now when its request needs nothing of the sandbox (first-turn.ts). */
function askAhead(
  ctx: RunContext,
  soFar: PhaseSoFar,
  prepared: Prepared,
  signal: AbortSignal,
): FirstTurnAhead | undefined {
  const blocker = overlapBlocker(prepared.config, firstTurnWaits(prepared.capabilities));
  if (blocker) {
    soFar.add({ firstTurn: { overlapped: false, reason: blocker } });
    if (!prepared.config.script) ctx.log(`the first model turn waits for the sandbox: ${blocker}`);
    return undefined;
  }
  const tools = new RunToolSet(toolSetOptions(prepared)).api;
  const request = firstTurnRequest(mainConversation(ctx, prepared, tools));
  const ahead = new FirstTurnAhead(prepared.driver, request, signal, ctx.log);
  soFar.add({ firstTurn: ahead.record });
  return ahead;
}

async function prepare(
  ctx: RunContext,
  soFar: PhaseSoFar,
  capabilities: readonly CapabilityRun[],
  { deadline, signal }: Pick<PhaseLimits, "deadline" | "signal">,
): Promise<Prepared> {
  checkCapabilities(capabilities);
  const { log } = ctx;
  // The model API's SDK, the largest module a run loads, is read while the run prepares (no call is made before
  // the checks below); a scripted run loads none.
  const driverModule = ctx.config.script ? undefined : import("../model/anthropic-driver.js");
  driverModule?.catch(() => undefined);
  const settled = await settleRun(ctx, soFar, capabilities);
  const { config, policy } = settled;
  const choosing = chooseRunNode(config);
  const review =
    config.task === "review" && config.reviewBase
      ? reviewTarget(config.workspace, config.reviewBase, config.reviewHead)
      : undefined;
  if (review) soFar.add({ review });
  const structured = review
    ? await StructuredOutputSpec.compile(reviewJsonSchema(), "review")
    : await structuredOutputSpec(config);
  const given = { ctx, config, mode: policy.policy.mode, structured };
  // What the model is told (memory, git snapshot, environment): taken before the container starts.
  const told = await tell(capabilities, given);
  // The capabilities' own checks (agent definitions) come before any container or model call.
  prepareCapabilities(capabilities, given);
  const node = await choosing;
  if (node) log(describeNodeChoice(node));
  const driver = await makeDriver(config, { deadline, log, onSecret: ctx.io.onSecret, signal, driverModule });
  modelReady(capabilities, { ...given, driver });
  return { ...settled, capabilities, review, mode: given.mode, structured, told, driver, node };
}

/** What settleRun found. */
type Settled = Pick<Prepared, "config" | "resume" | "policy" | "instructions">;

/**
 * What the run is, before anything of the model: a resume's checkout, the policy, the skills and slash commands
 * and the prompt they expand; what the capabilities start on the host being started beside them.
 */
async function settleRun(
  ctx: RunContext,
  soFar: PhaseSoFar,
  capabilities: readonly CapabilityRun[],
): Promise<Settled> {
  const { log } = ctx;
  const { config: given, resume } = await resumeFrom(ctx, soFar);
  // What the capabilities start on the host beside the rest of the preparation (the git snapshot).
  workspaceKnown(capabilities, given);
  // A resumed run's policy is its own configuration only; the earlier record's is compared, never adopted.
  const policy = preparePolicy(given);
  soFar.add({ policy });
  if (resume) comparePolicy(resume, policy.summary, log);
  const catalogue = loadInstructions(given, log);
  soFar.add({ instructions: catalogue });
  const { config, instructions } = applyInstructions(given, catalogue, log);
  soFar.add({ config, instructions });
  log(runHeader(ctx.runId, config, policy.policy.mode));
  for (const ignored of policy.policy.ignored) log(describeIgnored(ignored));
  return { config, resume, policy, instructions };
}

/**
 * The Bash tool's Node.js (sandbox/node/node-choice.ts), resolved against the npm registry while the rest of the run
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

/**
 * With --resume: the earlier record read and checked, and the configuration with its checkout as the workspace
 * (resume.ts); else the configuration as given.
 */
async function resumeFrom(
  ctx: RunContext,
  soFar: PhaseSoFar,
): Promise<{ config: RunConfig; resume?: RunResume }> {
  const { config: given } = ctx;
  if (!given.resume) return { config: given };
  const { resume, checkout } = await startResume(
    given.resume,
    given.workspace,
    given.resumeNeedsPublishedCommit,
    ctx.redactor.redact,
    ctx.log,
  );
  const config = { ...given, workspace: checkout };
  soFar.add({ resume, config });
  return { config, resume };
}

/** The run's first progress line: what runs, in which mode, with which model. */
function runHeader(runId: string, config: RunConfig, mode: PermissionMode): string {
  const model = config.script ? "script" : modelProvider(config.provider).describe(config.model);
  return `agent-ci ${AGENT_CI_VERSION}: run ${runId}, mode ${mode}, ${model}`;
}

async function openSandbox(
  ctx: RunContext,
  soFar: PhaseSoFar,
  { capabilities, config, resume, policy, node }: Prepared,
  { signal, begun, watching }: Pick<PhaseLimits, "signal" | "watching"> & { begun: EngineStart },
): Promise<DockerSandbox> {
  const { runId, log } = ctx;
  const sandbox = await DockerSandbox.start({
    ...runSandboxOptions(config, sandboxAsks(capabilities), runId, true, ctx.io.setupCacheStore),
    node,
    runId,
    workspaceDir: config.workspace,
    readOnlyWorkspace: policy.container.workspaceReadOnly,
    excludeFromCopy: policy.excludeFromCopy,
    ...sandboxNeeds(capabilities, policy),
    progress: log,
    startRecord: soFar.current.start,
    // The Bash parser's load is the policy's one slow part; it waits for no container, so it runs now.
    whileStarting: () => void policy.loadParser().catch(() => undefined),
    begun,
  });
  soFar.add({ sandbox });
  await Promise.all([policy.loadParser(), watching]);
  log(`sandbox ready in ${Math.round(sandbox.timings.readyMs)} ms (${sandbox.copy.files} files copied)`);
  sandboxOpened(capabilities, sandbox, log);
  blockEventLoopForTests();
  signal.throwIfAborted();
  if (resume) await continueWorkspace(resume, sandbox, ctx.state, policy.container.workspaceReadOnly);
  return sandbox;
}

async function startServices(
  ctx: RunContext,
  soFar: PhaseSoFar,
  prepared: Prepared,
  sandbox: DockerSandbox,
  deadline: number,
  signal: AbortSignal,
): Promise<Started> {
  const { capabilities, config, policy } = prepared;
  // What the capabilities start in the sandbox (MCP servers, hooks), each kept by its capability as it is made.
  const parts = await startCapabilities(capabilities, { ctx, config, policy, sandbox });
  const budget = new RunBudget(
    { maxBudgetUsd: config.maxBudgetUsd, deadline, maxDenials: config.maxDenials },
    signal,
  );
  const services = runServices(ctx, config, {
    sandbox,
    policy,
    hooks: parts.hooks,
    budget,
    driver: prepared.driver,
  });
  bindCapabilities(capabilities, {
    ctx,
    config,
    services,
    budget,
    parentTools: () => toolSet.enabled,
    told: prepared.told,
  });
  const toolSet = runToolSet(ctx, soFar, prepared, parts.toolSource);
  return { parts, services, toolSet };
}

/**
 * The run's tool set: the static tools, Skill, the capabilities' tools (Task and its kin, the web tools) and
 * the tools that come and go (the MCP servers').
 */
function runToolSet(
  ctx: RunContext,
  soFar: PhaseSoFar,
  prepared: Prepared,
  toolSource: StartedParts["toolSource"],
): RunToolSet {
  const toolSet = new RunToolSet({ ...toolSetOptions(prepared), mcp: toolSource });
  soFar.add({ tools: toolSet });
  toolSource?.onToolsChanged(() => toolSet.refresh());
  for (const r of toolSet.refused)
    ctx.log(`MCP server ${r.server}: its tool ${r.tool} is not offered: ${r.reason}`);
  return toolSet;
}

/** The tool set's options but the tools that come and go: the capabilities' tools as they are now. */
function toolSetOptions({
  capabilities,
  config,
  policy,
  mode,
  structured,
  instructions,
}: Prepared): RunToolSetOptions {
  const skills = instructions.catalogue.skills;
  return {
    mode,
    gate: policy.gate,
    bound: [...(skills.length ? [createSkillTool(skills)] : []), ...capabilityTools(capabilities)],
    off: capabilityToolsOff(capabilities, { config, policy }),
    extraApiTools: structured ? [structured.tool] : [],
  };
}

/** The converse stage: the agent loop; returns the phase the run ends with (a failure when the loop did not complete). */
async function converse(
  ctx: RunContext,
  soFar: PhaseSoFar,
  prepared: Prepared,
  { parts, services, toolSet }: Started,
  askedAhead: FirstTurnAhead | undefined,
): Promise<AgentPhase> {
  const { told } = prepared;
  const { sandbox, budget } = services;
  const { events, loop } = ctx;
  events.emit(initEvent(ctx, prepared, { sandbox, toolSet, parts }));
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
  soFar.add({ conversation });
  await timed(ctx, "calls", () => runAgentLoop({ ...services, pipeline, askedAhead }, conversation));
  if (loop.exit === "completed") return soFar.current;
  return soFar.add({ failure: { reason: loop.exit, kind: loop.exit, message: loop.detail ?? loop.exit } });
}

/** What the main conversation starts with: the system prompt, memory, git snapshot and task, and its tools. */
function mainConversation(
  ctx: RunContext,
  { config, told, structured, review, resume }: Prepared,
  tools: Anthropic.Tool[],
): Conversation {
  return {
    system: told.system,
    preamble: told.main.preamble,
    prompt: review ? reviewPrompt(review, config.prompt) : (config.prompt ?? "Run the scripted tool calls."),
    restored: resume
      ? restoreMessages(resume.record.conversation.messages, config.prompt ?? DEFAULT_RESUME_PROMPT)
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
  { config, mode }: Prepared,
  { sandbox, toolSet, parts }: { sandbox: { root: string }; toolSet: RunToolSet; parts: StartedParts },
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
    mcp_servers: [...(parts.servers?.() ?? [])],
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
