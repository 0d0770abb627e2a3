// The workflow run's context, read from the runner's environment (GITHUB_*) and the event payload file.
// Read fresh on every call rather than through @actions/github's import-time `context`, so one process
// (a test, local-action) can run the Action for several events, and nothing here hard-codes github.com:
// the API and server URLs come from GITHUB_API_URL / GITHUB_SERVER_URL (GHES, proxies: RELIABILITY G10).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface GitHubContext {
  eventName: string;
  /** The webhook payload as parsed JSON (validated later, per event, in event.ts). */
  payload: Record<string, unknown>;
  owner: string;
  repo: string;
  actor: string;
  runId: string;
  runAttempt: string;
  workflow: string;
  job: string;
  sha: string;
  /** GITHUB_API_URL; undefined when unset (then @actions/github's own default applies). */
  apiUrl: string | undefined;
  serverUrl: string;
  workspace: string;
  runnerTemp: string;
}

export class ContextError extends Error {
  override readonly name = "ContextError";
}

type Env = Record<string, string | undefined>;

function payloadFrom(env: Env): Record<string, unknown> {
  const file = env.GITHUB_EVENT_PATH;
  if (!file) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new ContextError(
      `cannot read the event payload GITHUB_EVENT_PATH=${file}: ${(e as Error).message}`,
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new ContextError(`the event payload in ${file} is not a JSON object`);
  return parsed as Record<string, unknown>;
}

function repositoryFrom(env: Env, payload: Record<string, unknown>): { owner: string; repo: string } {
  const full =
    env.GITHUB_REPOSITORY || (payload.repository as { full_name?: unknown } | undefined)?.full_name;
  const match = typeof full === "string" ? /^([^/\s]+)\/([^/\s]+)$/.exec(full) : null;
  if (!match?.[1] || !match[2])
    throw new ContextError(
      "GITHUB_REPOSITORY is not set (owner/name): run this as a step of a GitHub Actions workflow",
    );
  return { owner: match[1], repo: match[2] };
}

/** Trailing slashes off, so `${apiUrl}/repos/…` never has a double slash. */
function baseUrl(value: string | undefined, fallback: string): string {
  return (value && value.trim() ? value.trim() : fallback).replace(/\/+$/, "");
}

export function readGitHubContext(env: Env = process.env): GitHubContext {
  const payload = payloadFrom(env);
  const { owner, repo } = repositoryFrom(env, payload);
  const sender = (payload.sender as { login?: unknown } | undefined)?.login;
  return {
    eventName: env.GITHUB_EVENT_NAME ?? "",
    payload,
    owner,
    repo,
    actor: env.GITHUB_ACTOR || (typeof sender === "string" ? sender : ""),
    runId: env.GITHUB_RUN_ID ?? "",
    runAttempt: env.GITHUB_RUN_ATTEMPT ?? "1",
    workflow: env.GITHUB_WORKFLOW ?? "",
    job: env.GITHUB_JOB ?? "",
    sha: env.GITHUB_SHA ?? "",
    apiUrl: env.GITHUB_API_URL?.trim() ? baseUrl(env.GITHUB_API_URL, "") : undefined,
    serverUrl: baseUrl(env.GITHUB_SERVER_URL, "https://github.com"),
    workspace: path.resolve(env.GITHUB_WORKSPACE || process.cwd()),
    runnerTemp: path.resolve(env.RUNNER_TEMP || os.tmpdir()),
  };
}

/**
 * The GitHub host the repository lives on (`github.com`, a GitHub Enterprise Server's host): the only host the
 * model's text may still link to once published (neutralizeGitHubText).
 */
export function serverHost(serverUrl: string): string | undefined {
  try {
    return new URL(serverUrl).host || undefined;
  } catch {
    return undefined;
  }
}

/** Link to this workflow run (or to the repository when the run id is unknown, e.g. locally). */
export function runUrl(ctx: GitHubContext): string {
  const repoUrl = `${ctx.serverUrl}/${ctx.owner}/${ctx.repo}`;
  if (!ctx.runId) return repoUrl;
  return `${repoUrl}/actions/runs/${ctx.runId}${ctx.runAttempt && ctx.runAttempt !== "1" ? `/attempts/${ctx.runAttempt}` : ""}`;
}

/** Link to one uploaded artifact of this run. */
export function artifactUrl(ctx: GitHubContext, artifactId: number): string {
  return `${ctx.serverUrl}/${ctx.owner}/${ctx.repo}/actions/runs/${ctx.runId}/artifacts/${artifactId}`;
}
