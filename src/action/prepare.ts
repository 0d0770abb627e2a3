// Before the agent runs: classify the event, decide whether it triggers a run (trigger phrase, fork heads,
// the actor's access), fetch what the prompt needs, read the trusted task and settings (from the base ref on
// pull-request events), and build the one RunConfig. Returns a discriminated result: skip (with the reason
// to log) or run (with the config and the record of the untrusted text).
import fs from "node:fs";
import path from "node:path";
import { isInlineJson } from "../json-source.js";
import { parseRunConfig, type RunConfig, type RunConfigInput } from "../runner/config.js";
import type { GitHubContext } from "../github/context.js";
import { classifyEvent, eventTarget, forkHeadOf, pullRequestBase, type ActionEvent } from "./event.js";
import { decideTrigger } from "./triggers.js";
import { fetchEventContent, readTrustedFile, readTrustedFolder } from "./event-content.js";
import type { GitHubApi } from "../github/api.js";
import { ActionInputError, providerOf, type ActionInputs } from "./inputs.js";
import { modelProvider, providerEnv } from "../runner/model/providers.js";
import { checkActor } from "./permission.js";
import { buildPrompt, PromptError, type BuiltPrompt, type EventContent } from "./prompt.js";
import { actionCredentialFields, toRunConfigInput } from "./run-config.js";
import { anthropicCredential, credentialsFromEnv, CREDENTIAL_SOURCES } from "../runner/model/credentials.js";
import type { Provider } from "../runner/model/providers.js";
import { actionMemory } from "./trusted-memory.js";
import { baseHookScripts } from "./trusted-hook-scripts.js";
import { REVIEW_TASK } from "../review/review-task.js";
import type { TriggerRecord } from "./summary.js";
import { pathNodeVersion } from "../sandbox/node/runner-node.js";

export type Prepared =
  | { kind: "skip"; reason: string; trigger: TriggerRecord }
  | {
      kind: "run";
      config: RunConfig;
      event: ActionEvent;
      trigger: TriggerRecord;
      /** What the comment says before the report. */
      notes: string[];
    };

export interface PrepareOptions {
  inputs: ActionInputs;
  ctx: GitHubContext;
  api?: GitHubApi;
  env: Record<string, string | undefined>;
  log: (line: string) => void;
  warn: (line: string) => void;
  /** Removes known secret values: a token pasted into an issue never reaches the model. */
  redact: (text: string) => string;
  /** Registers a path (file or folder) to delete when the step ends. */
  cleanupPath: (file: string) => void;
}

/**
 * The Anthropic credentials of a model run, or why there are none. Federation gets the file the Action keeps
 * the GitHub OIDC token in (main.ts fills it); it is not used when a key or token is given too.
 */
function anthropicSignIn(options: PrepareOptions, provider: Provider) {
  const { inputs } = options;
  const envCredentials = credentialsFromEnv(options.env);
  if (inputs.script || !modelProvider(provider).anthropicSignIn) return { envCredentials };
  const federated = Boolean(inputs.anthropic_federation_rule_id);
  const identityTokenFile = federated
    ? path.join(tempFolder(options, "agent-ci-identity-"), "github-oidc-token")
    : undefined;
  const credential = anthropicCredential(
    actionCredentialFields({ inputs, envCredentials, identityTokenFile }),
  );
  if (!credential)
    throw new ActionInputError(
      "anthropic_api_key is empty: pass the key from a secret (anthropic_api_key: ${{ secrets.ANTHROPIC_API_KEY }}), or give claude_code_oauth_token, or anthropic_federation_rule_id and anthropic_organization_id to sign in with the workflow's OIDC token (permissions: id-token: write)",
    );
  if (federated && credential.kind !== "federation")
    options.warn(
      `anthropic_federation_rule_id is not used: ${CREDENTIAL_SOURCES[credential.kind]} is given too and signs in first`,
    );
  return { envCredentials, identityTokenFile };
}

function tempFolder(options: PrepareOptions, prefix: string): string {
  const dir = fs.mkdtempSync(path.join(options.ctx.runnerTemp, prefix));
  options.cleanupPath(dir);
  return dir;
}

function record(
  ctx: GitHubContext,
  event: ActionEvent,
  decision: string,
  prompt?: BuiltPrompt,
): TriggerRecord {
  const action = typeof ctx.payload.action === "string" ? ctx.payload.action : undefined;
  return {
    event: ctx.eventName || "(none)",
    action,
    actor: ctx.actor || event.sender,
    target: eventTarget(event),
    decision,
    untrusted: prompt?.untrusted ?? [],
  };
}

/** The inputs that name trusted content: JSON (inline or a file) or a folder of files. */
type JsonInput = "settings" | "output_schema" | "mcp_config" | "agents";
type FolderInput = "skills" | "commands" | "agents";

/** Where trusted inputs are read: the base revision when the workspace may be a PR head (`pullRequestBase`). */
type TrustedBase = ReturnType<typeof pullRequestBase>;

/**
 * A trusted input's content on the runner, from the base ref on pull-request events (never the PR head),
 * else from the workspace or an absolute path. JSON (inline `{…}`, or a file) is checked and written to a
 * temp file named like the original (the report labels rules `settings:<name>` and names the output
 * schema's file); a folder read through the API is copied into a temp folder.
 */
async function trustedInput(
  options: PrepareOptions,
  base: TrustedBase,
  want: { input: JsonInput; as: "json" } | { input: FolderInput; as: "folder" },
): Promise<string | undefined> {
  const { input } = want;
  const value = options.inputs[input];
  if (!value) return undefined;
  const slug = input.replace("_", "-");
  const tempDir = fs.mkdtempSync(path.join(options.ctx.runnerTemp, `agent-ci-${slug}-`));
  options.cleanupPath(tempDir);
  const source = {
    value,
    input,
    workspace: path.resolve(options.ctx.workspace, options.inputs.workspace),
    base,
    api: options.api,
    ctx: options.ctx,
  };
  if (want.as === "folder") {
    const { dir, from } = await readTrustedFolder({ ...source, input: want.input, tempDir });
    options.log(`${input}: read from ${from}`);
    return dir;
  }
  const inline = isInlineJson(value);
  const { text, from } = inline ? { text: value, from: `the ${input} input` } : await readTrustedFile(source);
  try {
    JSON.parse(text);
  } catch (e) {
    throw new ActionInputError(`${input}: ${from} is not valid JSON: ${(e as Error).message}`);
  }
  const file = path.join(tempDir, inline ? `${slug}.json` : path.basename(value));
  fs.writeFileSync(file, text, { mode: 0o600 });
  options.log(`${input}: read from ${from}`);
  return file;
}

/** `agents`: JSON in Claude Code's --agents shape (inline or a `.json` file), else a folder of agent files. */
async function trustedAgents(
  options: PrepareOptions,
  base: TrustedBase,
): Promise<{ agentsJsonPath?: string; agentsDir?: string }> {
  const value = options.inputs.agents;
  if (!value) return {};
  if (isInlineJson(value) || value.endsWith(".json"))
    return { agentsJsonPath: await trustedInput(options, base, { input: "agents", as: "json" }) };
  return { agentsDir: await trustedInput(options, base, { input: "agents", as: "folder" }) };
}

/**
 * resume_from: the earlier run's record when the folder (the downloaded artifact) holds one. Without one —
 * the workflow found no artifact, or it expired — the run starts fresh, and says so. On a fork's pull request
 * it is never used (B17): the record is bound to the commit publish pushed for its run, looked for in the
 * checkout's history, and a fork's head is history its author wrote (a commit with agent-ci's trailer and the
 * tree of a forged record's patch); agent-ci never publishes onto a fork, so nothing is lost.
 */
function resumeSource(
  options: PrepareOptions,
  fork: string | undefined,
): { resume?: string; notes: string[] } {
  const given = options.inputs.resume_from;
  if (!given) return { notes: [] };
  if (fork) {
    const note = `resume_from is not used on a pull request from a fork (${fork}): the earlier run's record could be checked only against commits the fork's author wrote, so this run started fresh, without the earlier conversation.`;
    options.warn(note);
    return { notes: [note] };
  }
  const target = path.resolve(options.ctx.workspace, given);
  const dir = fs.existsSync(target) && fs.statSync(target).isFile() ? path.dirname(target) : target;
  if (fs.existsSync(path.join(dir, "report.json"))) {
    options.log(`resume_from: continuing the run recorded in ${given}`);
    return { resume: target, notes: [] };
  }
  const note = `resume_from named no earlier run's record (${given}: no report.json; its artifact was not found or has expired), so this run started fresh, without the earlier conversation.`;
  options.warn(note);
  return { notes: [note] };
}

/** task: review: the pull request's base and head commits, from the event (a comment's PR was fetched). */
function reviewRange(event: ActionEvent, content: EventContent): { base: string; head: string } {
  const pr =
    event.kind === "pull_request" || event.kind === "review" || event.kind === "review_comment"
      ? event.pr
      : event.kind === "issue_comment" && event.onPullRequest
        ? content.pr
        : undefined;
  if (!pr) {
    throw new ActionInputError(
      `task: review needs a pull request: run it on pull_request, or on a comment on a pull request (this is ${event.kind === "issue_comment" ? "a comment on an issue" : `a ${event.kind} event`})`,
    );
  }
  return { base: pr.base.sha, head: pr.head.sha };
}

function buildPromptFor(
  event: ActionEvent,
  task: string | undefined,
  content: EventContent,
  scripted: boolean,
): BuiltPrompt | undefined {
  try {
    return buildPrompt({ event, task, content });
  } catch (error) {
    if (scripted && error instanceof PromptError) return undefined;
    throw error;
  }
}

export async function prepare(options: PrepareOptions): Promise<Prepared> {
  const { inputs, ctx, api } = options;
  const event = classifyEvent(ctx);
  const admitted = await admit(options, event);
  if (admitted.kind === "skip") return admitted;

  const content = await fetchEventContent(api, ctx, event, options.warn);
  const base = pullRequestBase(event, ctx, content.pr);
  const workspace = path.resolve(ctx.workspace, inputs.workspace);
  const task = await readTask(options, workspace, base);
  // A scripted run has no model, but its record still shows the untrusted text the event carried.
  const built = buildPromptFor(
    event,
    inputs.task === "review" ? task || REVIEW_TASK : task,
    content,
    Boolean(inputs.script),
  );
  const provider = providerOf(inputs);
  const credentials = anthropicSignIn(options, provider);
  const outDir = fs.mkdtempSync(path.join(ctx.runnerTemp, "agent-ci-out-"));
  const trusted = await trustedFiles(options, base, workspace);
  const review = inputs.task === "review" ? reviewRange(event, content) : undefined;
  const { resume, notes } = resumeSource(options, forkHeadOf(event, content.pr));
  const config = parseRunConfig(
    toRunConfigInput({
      inputs,
      workspace,
      outDir,
      prompt: built ? options.redact(built.prompt) : undefined,
      systemPromptAppend: inputs.script ? undefined : built?.systemPromptAppend,
      ...trusted,
      review,
      ...credentials,
      envBaseUrl: options.env.ANTHROPIC_BASE_URL,
      providerEnv: providerEnv(provider, options.env),
      repo: `${ctx.owner}/${ctx.repo}`,
      resume,
      pullRequestHead: base !== undefined,
      // The job's Node.js, not this process's: the Action runs on the runner's own bundled Node.js.
      runnerNodeVersion: inputs.node_version ? undefined : pathNodeVersion(options.env.PATH),
      cacheOrigin: cacheOriginOf(ctx, event, options.env, base !== undefined),
    }),
  );
  return { kind: "run", config, event, trigger: record(ctx, event, `ran: ${admitted.why}`, built), notes };
}

/** Whether the event starts a run (the trigger) and its actor may start one; else the skip, recorded. */
async function admit(
  options: PrepareOptions,
  event: ActionEvent,
): Promise<Extract<Prepared, { kind: "skip" }> | { kind: "run"; why: string }> {
  const { inputs, ctx, api } = options;
  const trigger = decideTrigger(event, {
    triggerPhrase: inputs.trigger_phrase,
    allowForkHeads: inputs.allow_fork_heads,
    hasTask: Boolean(inputs.prompt || inputs.prompt_file || inputs.task === "review"),
    labelTrigger: inputs.label_trigger,
    assigneeTrigger: inputs.assignee_trigger,
  });
  if (!trigger.run)
    return {
      kind: "skip",
      reason: trigger.reason,
      trigger: record(ctx, event, `skipped: ${trigger.reason}`),
    };
  if (trigger.note) options.warn(trigger.note);
  const actor = api
    ? await checkActor(api, ctx, event, inputs.allowed_bots)
    : event.kind === "manual"
      ? ({ allowed: true, why: `${event.trigger} runs need write access to start` } as const)
      : ({
          allowed: false,
          reason: "no github_token to check the actor's access with, so the run is refused",
        } as const);
  if (!actor.allowed)
    return { kind: "skip", reason: actor.reason, trigger: record(ctx, event, `skipped: ${actor.reason}`) };
  options.log(`trigger: ${trigger.why}, by ${ctx.actor || event.sender}: ${actor.why}`);
  return { kind: "run", why: `${trigger.why}; ${actor.why}` };
}

/** The task: the prompt input, or prompt_file read at the trusted revision. */
async function readTask(
  options: PrepareOptions,
  workspace: string,
  base: TrustedBase,
): Promise<string | undefined> {
  const { inputs, ctx, api } = options;
  if (!inputs.prompt_file) return inputs.prompt;
  const file = await readTrustedFile({
    value: inputs.prompt_file,
    input: "prompt_file",
    workspace,
    base,
    api,
    ctx,
  });
  options.log(`prompt: read from ${file.from}`);
  return file.text;
}

/**
 * What the run reads at the trusted revision (the base on pull requests): the settings, schema, skills,
 * commands, MCP servers and agents its inputs name, the memory files and the hook scripts.
 */
async function trustedFiles(options: PrepareOptions, base: TrustedBase, workspace: string) {
  const settingsPath = await trustedInput(options, base, { input: "settings", as: "json" });
  const outputSchemaPath = await trustedInput(options, base, { input: "output_schema", as: "json" });
  const [skillsDir, commandsDir] = await Promise.all(
    (["skills", "commands"] as const).map((input) => trustedInput(options, base, { input, as: "folder" })),
  );
  const mcpConfigPath = await trustedInput(options, base, { input: "mcp_config", as: "json" });
  const agents = await trustedAgents(options, base);
  const trustedDir = fs.mkdtempSync(path.join(options.ctx.runnerTemp, "agent-ci-trusted-"));
  options.cleanupPath(trustedDir);
  const memory = await actionMemory({ ...options, workspace, base, tempDir: trustedDir });
  const hookScriptsDir = await baseHookScripts({
    ...options,
    workspace,
    settingsPath,
    base,
    tempDir: trustedDir,
  });
  return {
    settingsPath,
    outputSchemaPath,
    skillsDir,
    commandsDir,
    mcpConfigPath,
    ...agents,
    memory,
    hookScriptsDir,
  };
}

/**
 * Where the run came from, for the setup cache's trust rules: the event, the ref, the repository's default
 * branch and the pull request it works on. A workspace that is a pull request's head without a pull request
 * number is given no ref, so it can never write an entry others read (fail-closed).
 */
function cacheOriginOf(
  ctx: PrepareOptions["ctx"],
  event: ActionEvent,
  env: Record<string, string | undefined>,
  pullRequestHead: boolean,
): NonNullable<RunConfigInput["cacheOrigin"]> {
  const target = eventTarget(event);
  const pullRequest = target?.isPullRequest ? target.number : undefined;
  const defaultBranch = (ctx.payload.repository as { default_branch?: unknown } | undefined)?.default_branch;
  return {
    event: ctx.eventName,
    ref: pullRequestHead && pullRequest === undefined ? "" : (env.GITHUB_REF ?? ""),
    ...(typeof defaultBranch === "string" && defaultBranch ? { defaultBranch } : {}),
    ...(pullRequest !== undefined ? { pullRequest } : {}),
    commit: ctx.sha,
    runId: `${ctx.runId}-${ctx.runAttempt}`,
  };
}
