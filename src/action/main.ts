// The GitHub Action: a thin shell over the runner the CLI uses. Inputs are parsed once
// into RunConfig; prepare → runAgent → publish (outputs, annotations, artifact, summary, comment) in `try`,
// temp files removed in `finally`, and `setFailed` only here, at the top. The GitHub token stays in this
// process: it is used for the API after the agent stopped and is never handed to the container.
import fs from "node:fs";
import { createRedactor, escapeMarkdownInline } from "../report/index.js";
import { runAgent, type RunOutcome } from "../runner/run.js";
import type { Capability } from "../runner/capabilities/capability.js";
import { readGitHubContext, type GitHubContext } from "../github/context.js";
import { telemetry } from "../telemetry/capability.js";
import type { ActionEvent } from "./event.js";
import { GitHubApi, octokitRequest, realSleep, type RequestFn, type Sleep } from "../github/api.js";
import { parseActionInputs } from "./inputs.js";
import { coreIO, redactingIO, type ActionIO } from "./io.js";
import { failureMessage } from "./outputs.js";
import { prepare, type Prepared } from "./prepare.js";
import { runQueueMode } from "./queue-task.js";
import { addRunCost, openRunCap, runCapRefusal, type RunCap } from "./run-cap.js";
import { writeRunResults, writeSkippedResults, type ResultOptions } from "./results.js";
import { defaultArtifactUploader, type ArtifactUploader } from "./artifact.js";
import { exchangeOidcToken, type CloudAuthEndpoints } from "./cloud-auth.js";
import type { RunProgress } from "../runner/progress.js";
import type { SnapshotStore } from "../sandbox/setup/store.js";
import { actionsCacheAvailable, actionsCacheStore } from "./setup-cache-store.js";
import { PROGRESS_EDIT_INTERVAL_MS, startProgressComment } from "./progress-comment.js";
import { CLOUD_CREDENTIAL_VARIABLES, type RunConfig } from "../runner/config.js";
import { anthropicCredential } from "../runner/model/credentials.js";
import {
  IDENTITY_TOKEN_REFRESH_MS,
  startIdentityTokenFile,
  type IdentityTokenFile,
} from "./identity-token.js";

/** What `run()` talks to; tests replace parts (the wait, the artifact client), never the flow. */
export interface ActionDeps {
  io: ActionIO;
  env: Record<string, string | undefined>;
  request: (token: string, apiUrl: string | undefined) => RequestFn;
  artifact: () => ArtifactUploader;
  sleep: Sleep;
  runAgent: typeof runAgent;
  /** Where the OIDC exchange calls the clouds (default: their real endpoints). */
  cloudAuth: CloudAuthEndpoints;
  /** How often the progress comment is edited at most. */
  commentIntervalMs: number;
  /** How often federation's identity token file gets a fresh token. */
  identityTokenRefreshMs: number;
  /** How often a model turn still under way is told (default: the runner's, every 30 s). */
  turnTickMs?: number;
  /** How long a restore from, and a save to, the Actions cache may take (default STORE_TIMEOUT_MS). */
  setupCacheStoreTimeoutMs?: number;
}

/**
 * The tests run the bundled Action in a child process, as a runner does, so they set what they would inject
 * through one variable: JSON of the intervals and endpoints above (never read from a workflow's inputs).
 */
export const TEST_HOOKS_VARIABLE = "AGENT_CI_TEST_HOOKS";

type TestHooks = Partial<
  Pick<
    ActionDeps,
    "cloudAuth" | "commentIntervalMs" | "identityTokenRefreshMs" | "turnTickMs" | "setupCacheStoreTimeoutMs"
  >
>;

function testHooks(env: Record<string, string | undefined>): TestHooks {
  const text = env[TEST_HOOKS_VARIABLE];
  if (!text) return {};
  const hooks = JSON.parse(text) as Record<string, unknown>;
  const number = (value: unknown) => (typeof value === "number" && value >= 0 ? value : undefined);
  const out: TestHooks = {};
  for (const key of [
    "commentIntervalMs",
    "identityTokenRefreshMs",
    "turnTickMs",
    "setupCacheStoreTimeoutMs",
  ] as const) {
    const value = number(hooks[key]);
    if (value !== undefined) out[key] = value;
  }
  if (hooks.cloudAuth && typeof hooks.cloudAuth === "object")
    out.cloudAuth = hooks.cloudAuth as CloudAuthEndpoints;
  return out;
}

function defaultDeps(): ActionDeps {
  return {
    io: coreIO(),
    env: process.env,
    request: octokitRequest,
    artifact: defaultArtifactUploader,
    sleep: realSleep,
    runAgent,
    cloudAuth: {},
    commentIntervalMs: PROGRESS_EDIT_INTERVAL_MS,
    identityTokenRefreshMs: IDENTITY_TOKEN_REFRESH_MS,
    ...testHooks(process.env),
  };
}

/** Where an Action run came from, for its telemetry: the repository, the event, the pull request or issue. */
function actionOrigin(ctx: GitHubContext, event: ActionEvent) {
  const pullRequest = "pr" in event ? event.pr.number : undefined;
  const issue = "issue" in event ? event.issue.number : undefined;
  const onPullRequest = event.kind === "issue_comment" && event.onPullRequest;
  return {
    repository: ctx.owner && ctx.repo ? `${ctx.owner}/${ctx.repo}` : undefined,
    event: ctx.eventName || undefined,
    pullRequest: pullRequest ?? (onPullRequest ? issue : undefined),
    issue: onPullRequest ? undefined : issue,
  };
}

/** The first SIGINT/SIGTERM (a cancelled job) stops the run; the runner then writes its report as cancelled. */
function onCancel(controller: AbortController): () => void {
  const handler = (signal: NodeJS.Signals) => controller.abort(new Error(`received ${signal}`));
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}

/** The values redacted everywhere: the token, the model key, the runner's own tokens. */
function knownSecrets(io: ActionIO, env: ActionDeps["env"]): string[] {
  return [
    io.getInput("github_token"),
    io.getInput("anthropic_api_key"),
    io.getInput("claude_code_oauth_token"),
    env.ANTHROPIC_API_KEY,
    env.ANTHROPIC_AUTH_TOKEN,
    env.CLAUDE_CODE_OAUTH_TOKEN,
    env.ACTIONS_RUNTIME_TOKEN,
    env.ACTIONS_ID_TOKEN_REQUEST_TOKEN,
    ...CLOUD_CREDENTIAL_VARIABLES.map((name) => env[name]),
  ]
    .map((value) => value?.trim() ?? "")
    .filter((value) => value !== "" && !value.startsWith("${{"));
}

/** The run's configuration with the short-lived cloud credentials the Action obtained (and their secrets). */
function withCloudCredentials(
  config: RunConfig,
  cloud: Awaited<ReturnType<typeof exchangeOidcToken>>,
): RunConfig {
  return {
    ...config,
    ...(cloud.awsCredentials ? { awsCredentials: cloud.awsCredentials } : {}),
    ...(cloud.googleAccessToken ? { googleAccessToken: cloud.googleAccessToken } : {}),
    secrets: [...config.secrets, ...cloud.secrets],
  };
}

/** The task (one run, or `attempts` of it); a token the run obtains (federation's) is masked once known. */
function runTask(
  deps: ActionDeps,
  config: RunConfig,
  io: ActionIO,
  onProgress: ((progress: RunProgress) => void) | undefined,
  signal: AbortSignal,
  capabilities: readonly Capability[],
): Promise<RunOutcome> {
  const log = (line: string) => io.info(line);
  const runIo = {
    stdout: log,
    stderr: log,
    progress: true,
    onSecret: (value: string) => io.setSecret(value),
    setupCacheStore: setupCacheStore(deps, config, io),
    capabilities,
  };
  const turnTick = deps.turnTickMs === undefined ? {} : { turnTickMs: deps.turnTickMs };
  return deps.runAgent(config, { ...runIo, onProgress, ...turnTick }, signal);
}

/**
 * On a runner with the Actions cache, and a run whose setup is cached: the Actions cache as the setup cache's
 * store, so that snapshots reach the next job's fresh engine. Undefined elsewhere (the engine's images only).
 */
function setupCacheStore(deps: ActionDeps, config: RunConfig, io: ActionIO): SnapshotStore | undefined {
  if (!config.setupCache || !config.setup.length || !actionsCacheAvailable(deps.env)) return undefined;
  const ms = deps.setupCacheStoreTimeoutMs;
  return actionsCacheStore({
    env: deps.env,
    warn: (line) => io.warning(line),
    ...(ms === undefined ? {} : { timeoutMs: { restore: ms, save: ms } }),
  });
}

/** The API client with the workflow's token, when it gave one. */
function githubApi(
  deps: ActionDeps,
  token: string | undefined,
  ctx: GitHubContext,
  log: (line: string) => void,
  redact: (text: string) => string,
): GitHubApi | undefined {
  if (!token) return undefined;
  return new GitHubApi({ request: deps.request(token, ctx.apiUrl), sleep: deps.sleep, log, redact });
}

/**
 * The spending caps before the model run starts (run-cap.ts): the caps, to add the run's cost when it ends
 * (undefined without caps), or "refused" once the run is written as skipped because of them.
 */
async function capGate(
  options: ResultOptions,
  prepared: Extract<Prepared, { kind: "run" }>,
  env: ActionDeps["env"],
): Promise<RunCap | undefined | "refused"> {
  const { inputs, ctx, api, io } = options;
  const runCap = await openRunCap({ inputs, ctx, api, env, log: (line) => io.info(line) });
  const capped = runCap && (await runCapRefusal(runCap, prepared.event, inputs.comment));
  if (!capped) return runCap;
  const reason = `the spending cap: ${capped}`;
  await writeSkippedResults(options, reason, { ...prepared.trigger, decision: `skipped: ${reason}` });
  return "refused";
}

export async function run(overrides: Partial<ActionDeps> = {}): Promise<void> {
  const deps: ActionDeps = { ...defaultDeps(), ...overrides };
  const cancel = new AbortController();
  const stopListening = onCancel(cancel);
  const cleanup: string[] = [];
  let identityToken: IdentityTokenFile | undefined;
  let io = deps.io;
  try {
    // Secrets are known (and masked) before anything else is read or printed, even an input error.
    const secrets = knownSecrets(io, deps.env);
    for (const secret of secrets) io.setSecret(secret);
    let redactor = createRedactor({ secrets });
    io = redactingIO(deps.io, redactor);
    const log = (line: string) => io.info(line);
    const inputs = parseActionInputs(io.getInput);

    const ctx = readGitHubContext(deps.env);
    const api = githubApi(deps, inputs.github_token, ctx, log, redactor.redact);
    if (inputs.task === "queue") {
      await io.group("agent-ci queue", () => runQueueMode({ io, inputs, ctx, api, env: deps.env }));
      return;
    }
    let resultOptions: ResultOptions = { io, inputs, ctx, api, redactor, secrets, artifact: deps.artifact };

    const prepared = await prepare({
      inputs,
      ctx,
      api,
      env: deps.env,
      log,
      warn: (line) => io.warning(line),
      redact: redactor.redact,
      cleanupPath: (file) => cleanup.push(file),
    });
    if (prepared.kind === "skip") {
      await writeSkippedResults(resultOptions, prepared.reason, prepared.trigger);
      return;
    }
    const runCap = await capGate(resultOptions, prepared, deps.env);
    if (runCap === "refused") return;
    const cloud = inputs.script
      ? { secrets: [] }
      : await exchangeOidcToken({
          inputs,
          region: prepared.config.region,
          idToken: (audience) => io.getIDToken(audience),
          endpoints: deps.cloudAuth,
          sessionName: `agent-ci-${ctx.runId || "run"}-${ctx.runAttempt}`,
          log,
        });
    if (cloud.secrets.length) {
      // Masked and redacted from here on, as the key and the token were from the start.
      for (const secret of cloud.secrets) io.setSecret(secret);
      secrets.push(...cloud.secrets);
      redactor = createRedactor({ secrets });
      io = redactingIO(deps.io, redactor);
      resultOptions = { ...resultOptions, io, redactor };
    }
    const config = withCloudCredentials(prepared.config, cloud);
    if (anthropicCredential(config)?.kind === "federation" && config.federation)
      identityToken = await startIdentityTokenFile({
        file: config.federation.identityTokenFile,
        audience: inputs.anthropic_oidc_audience,
        idToken: (audience) => io.getIDToken(audience),
        setSecret: (value) => io.setSecret(value),
        warn: (line) => io.warning(line),
        refreshMs: deps.identityTokenRefreshMs,
      });
    const progress = await startProgressComment(resultOptions, prepared.event, deps.commentIntervalMs);
    resultOptions = { ...resultOptions, progress };
    const onProgress = progress ? (p: RunProgress) => progress.update(p) : undefined;
    const outcome = await io.group("agent-ci run", () =>
      runTask(deps, config, io, onProgress, cancel.signal, [
        runTelemetry({ ctx, event: prepared.event, env: deps.env, secrets, io }),
      ]),
    );
    await writeRunResults(resultOptions, prepared.event, outcome, prepared.trigger, prepared.notes);
    if (runCap) await addRunCost(runCap, outcome, prepared.event, (line) => io.warning(line));
    const failure = failureMessage(inputs.fail_on, outcome);
    if (failure) io.setFailed(failure);
  } catch (error) {
    const message = `agent-ci: ${error instanceof Error ? `${error.name === "Error" ? "" : `${error.name}: `}${error.message}` : String(error)}`;
    // With the runner's debug logging on (RUNNER_DEBUG=1), where it came from too: the bundle's source maps
    // name the src/ files and lines.
    if (deps.env.RUNNER_DEBUG === "1" && error instanceof Error && error.stack) io.info(error.stack);
    await io
      .writeSummary(`### ❌ agent-ci failed\n\n${escapeMarkdownInline(message)}\n`)
      .catch(() => undefined);
    io.setFailed(message);
  } finally {
    identityToken?.stop();
    for (const file of cleanup) fs.rmSync(file, { force: true, recursive: true });
    stopListening();
  }
}

export { workLeftBehind } from "./setup-cache-store.js";

/** The run's telemetry (telemetry/capability.ts), with where the Action's run came from. */
function runTelemetry(given: {
  ctx: GitHubContext;
  event: ActionEvent;
  env: NodeJS.ProcessEnv;
  secrets: readonly string[];
  io: ActionIO;
}): Capability {
  return telemetry({
    origin: actionOrigin(given.ctx, given.event),
    env: given.env,
    secrets: given.secrets,
    warn: (line) => given.io.warning(line),
  });
}
