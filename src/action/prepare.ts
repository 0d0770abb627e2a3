// Before the agent runs: classify the event, decide whether it triggers a run (trigger phrase, fork heads,
// the actor's access), fetch what the prompt needs, read the trusted task and settings (from the base ref on
// pull-request events), and build the one RunConfig. Returns a discriminated result: skip (with the reason
// to log) or run (with the config and the record of the untrusted text).
import fs from "node:fs";
import path from "node:path";
import { parseRunConfig, type RunConfig } from "../runner/config.js";
import type { GitHubContext } from "../github/context.js";
import {
  classifyEvent,
  decideTrigger,
  eventTarget,
  isPullRequestContext,
  type ActionEvent,
} from "./event.js";
import { fetchEventContent, readTrustedFile, readTrustedFolder, trustedRef } from "./event-content.js";
import type { GitHubApi } from "../github/api.js";
import { ActionInputError, providerOf, type ActionInputs } from "./inputs.js";
import { providerEnv } from "../runner/providers.js";
import { checkActor } from "./permission.js";
import { buildPrompt, PromptError, type BuiltPrompt, type EventContent } from "./prompt.js";
import { toRunConfigInput } from "./run-config.js";
import { REVIEW_TASK } from "../review/task.js";
import type { TriggerRecord } from "./summary.js";

export type Prepared =
  | { kind: "skip"; reason: string; trigger: TriggerRecord }
  | { kind: "run"; config: RunConfig; event: ActionEvent; trigger: TriggerRecord };

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

/**
 * A trusted JSON input, inline (`{…}`) or a file (read from the base ref on pull-request events, never the
 * PR head), written to a temp file for the runner, named like the original (the report labels rules
 * `settings:<name>` and names the output schema's file).
 */
async function trustedJsonFile(
  options: PrepareOptions,
  event: ActionEvent,
  ref: string | undefined,
  input: "settings" | "output_schema" | "mcp_config",
): Promise<string | undefined> {
  const value = options.inputs[input];
  if (!value) return undefined;
  let text: string;
  let from: string;
  if (value.startsWith("{")) {
    text = value;
    from = `the ${input} input`;
  } else {
    ({ text, from } = await readTrustedFile({
      value,
      input,
      workspace: path.resolve(options.ctx.workspace, options.inputs.workspace),
      ref,
      pullRequest: isPullRequestContext(event),
      api: options.api,
      ctx: options.ctx,
    }));
  }
  try {
    JSON.parse(text);
  } catch (e) {
    throw new ActionInputError(`${input}: ${from} is not valid JSON: ${(e as Error).message}`);
  }
  const dir = fs.mkdtempSync(path.join(options.ctx.runnerTemp, `agent-ci-${input.replace("_", "-")}-`));
  const file = path.join(
    dir,
    value.startsWith("{") ? `${input.replace("_", "-")}.json` : path.basename(value),
  );
  fs.writeFileSync(file, text, { mode: 0o600 });
  options.cleanupPath(dir);
  options.log(`${input}: read from ${from}`);
  return file;
}

/** A trusted folder input (skills, commands), from the base ref on pull-request events. */
async function trustedFolder(
  options: PrepareOptions,
  event: ActionEvent,
  ref: string | undefined,
  input: "skills" | "commands",
): Promise<string | undefined> {
  const value = options.inputs[input];
  if (!value) return undefined;
  const tempDir = fs.mkdtempSync(path.join(options.ctx.runnerTemp, `agent-ci-${input}-`));
  options.cleanupPath(tempDir);
  const { dir, from } = await readTrustedFolder({
    value,
    input,
    workspace: path.resolve(options.ctx.workspace, options.inputs.workspace),
    ref,
    pullRequest: isPullRequestContext(event),
    api: options.api,
    ctx: options.ctx,
    tempDir,
  });
  options.log(`${input}: read from ${from}`);
  return dir;
}

/** task: review: the pull request's base and head commits, from the event (a comment's PR was fetched). */
function reviewRange(event: ActionEvent, content: EventContent): { base: string; head: string } {
  const pr =
    event.kind === "pull_request" || event.kind === "review_comment"
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
  const trigger = decideTrigger(event, {
    triggerPhrase: inputs.trigger_phrase,
    allowForkHeads: inputs.allow_fork_heads,
    hasPrompt: Boolean(inputs.prompt || inputs.prompt_file),
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
  options.log(`trigger: ${ctx.eventName} by ${ctx.actor || event.sender}: ${actor.why}`);

  const content = await fetchEventContent(api, ctx, event, options.warn);
  const ref = trustedRef(event, content, ctx);
  const workspace = path.resolve(ctx.workspace, inputs.workspace);
  let task = inputs.prompt;
  if (inputs.prompt_file) {
    const file = await readTrustedFile({
      value: inputs.prompt_file,
      input: "prompt_file",
      workspace,
      ref,
      pullRequest: isPullRequestContext(event),
      api,
      ctx,
    });
    task = file.text;
    options.log(`prompt: read from ${file.from}`);
  }
  // A scripted run has no model, but its record still shows the untrusted text the event carried.
  const built = buildPromptFor(
    event,
    inputs.task === "review" ? task || REVIEW_TASK : task,
    content,
    Boolean(inputs.script),
  );
  const provider = providerOf(inputs);
  if (
    !inputs.script &&
    provider === "anthropic" &&
    !inputs.anthropic_api_key &&
    !options.env.ANTHROPIC_API_KEY
  ) {
    throw new ActionInputError(
      "anthropic_api_key is empty: pass the key from a secret (anthropic_api_key: ${{ secrets.ANTHROPIC_API_KEY }})",
    );
  }

  const outDir = fs.mkdtempSync(path.join(ctx.runnerTemp, "agent-ci-out-"));
  const settingsPath = await trustedJsonFile(options, event, ref, "settings");
  const outputSchemaPath = await trustedJsonFile(options, event, ref, "output_schema");
  const [skillsDir, commandsDir] = await Promise.all(
    (["skills", "commands"] as const).map((input) => trustedFolder(options, event, ref, input)),
  );
  const mcpConfigPath = await trustedJsonFile(options, event, ref, "mcp_config");
  const review = inputs.task === "review" ? reviewRange(event, content) : undefined;
  const config = parseRunConfig(
    toRunConfigInput({
      inputs,
      workspace,
      outDir,
      prompt: built ? options.redact(built.prompt) : undefined,
      systemPromptAppend: inputs.script ? undefined : built?.systemPromptAppend,
      settingsPath,
      outputSchemaPath,
      skillsDir,
      commandsDir,
      mcpConfigPath,
      review,
      envApiKey: options.env.ANTHROPIC_API_KEY,
      envBaseUrl: options.env.ANTHROPIC_BASE_URL,
      providerEnv: providerEnv(provider, options.env),
      repo: `${ctx.owner}/${ctx.repo}`,
    }),
  );
  return { kind: "run", config, event, trigger: record(ctx, event, `ran: ${actor.why}`, built) };
}
