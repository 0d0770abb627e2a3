// Environment for running the Action as a runner would: the GITHUB_* and RUNNER_* variables a job's step gets
// for one recorded event payload (test/fixtures/events/<name>.json), with the step's files (GITHUB_OUTPUT,
// GITHUB_STEP_SUMMARY, GITHUB_ENV, GITHUB_PATH, GITHUB_STATE) and RUNNER_TEMP in a fresh directory; and the
// `github` expression context the runner evaluates `${{ github.… }}` with.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** The job's GITHUB_TOKEN when a test names none (`${{ github.token }}`); assembled, not a literal token. */
export const JOB_TOKEN = ["ghs", "jobToken".padEnd(36, "0")].join("_");

export const EVENTS_DIR = path.resolve(import.meta.dirname, "../fixtures/events");

/** Event name for each fixture file. */
export const FIXTURE_EVENTS: Record<string, string> = {
  "issues-opened": "issues",
  "issues-labeled": "issues",
  "issues-assigned": "issues",
  "issue-comment-issue": "issue_comment",
  "issue-comment-pr": "issue_comment",
  "pull-request-opened": "pull_request",
  "pull-request-review": "pull_request_review",
  "pull-request-review-comment": "pull_request_review_comment",
  "pull-request-target-fork": "pull_request_target",
  "workflow-dispatch": "workflow_dispatch",
  schedule: "schedule",
  "workflow-run-fork": "workflow_run",
  "merge-group": "merge_group",
};

export function eventPayload(fixture: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(EVENTS_DIR, `${fixture}.json`), "utf8")) as Record<
    string,
    unknown
  >;
}

export interface RunnerFiles {
  dir: string;
  output: string;
  summary: string;
  temp: string;
  /** GITHUB_ENV, GITHUB_PATH, GITHUB_STATE. */
  env: string;
  path: string;
  state: string;
}

export function runnerFiles(): RunnerFiles {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-runner-"));
  const files = {
    dir,
    output: path.join(dir, "output.txt"),
    summary: path.join(dir, "summary.md"),
    temp: path.join(dir, "temp"),
    env: path.join(dir, "env.txt"),
    path: path.join(dir, "path.txt"),
    state: path.join(dir, "state.txt"),
  };
  for (const file of [files.output, files.summary, files.env, files.path, files.state])
    fs.writeFileSync(file, "");
  fs.mkdirSync(files.temp);
  return files;
}

export interface GitHubEnvOptions {
  fixture: string;
  apiUrl: string;
  workspace: string;
  files: RunnerFiles;
  actor?: string;
  /** Write a modified payload instead of the fixture as is. */
  payload?: Record<string, unknown>;
}

export function githubEnv(options: GitHubEnvOptions): Record<string, string> {
  const eventName = FIXTURE_EVENTS[options.fixture];
  if (!eventName) throw new Error(`unknown fixture ${options.fixture}`);
  let eventPath = path.join(EVENTS_DIR, `${options.fixture}.json`);
  if (options.payload) {
    eventPath = path.join(options.files.dir, "event.json");
    fs.writeFileSync(eventPath, JSON.stringify(options.payload));
  }
  const payload = options.payload ?? eventPayload(options.fixture);
  const pull = payload.pull_request as
    { number: number; head: { ref: string }; base: { ref: string } } | undefined;
  const ref = pull ? `refs/pull/${pull.number}/merge` : "refs/heads/main";
  const actor = options.actor ?? "octocat";
  return {
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_EVENT_NAME: eventName,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_REPOSITORY: "acme/widgets",
    GITHUB_REPOSITORY_OWNER: "acme",
    GITHUB_ACTOR: actor,
    GITHUB_TRIGGERING_ACTOR: actor,
    GITHUB_REF: ref,
    GITHUB_REF_NAME: pull ? `${pull.number}/merge` : "main",
    GITHUB_REF_TYPE: "branch",
    GITHUB_HEAD_REF: pull?.head.ref ?? "",
    GITHUB_BASE_REF: pull?.base.ref ?? "",
    GITHUB_RUN_ID: "4242",
    GITHUB_RUN_NUMBER: "7",
    GITHUB_RUN_ATTEMPT: "1",
    GITHUB_WORKFLOW: "agent-ci",
    GITHUB_JOB: "agent",
    GITHUB_SHA: "1111111111111111111111111111111111111111",
    GITHUB_API_URL: options.apiUrl,
    GITHUB_GRAPHQL_URL: `${options.apiUrl}/graphql`,
    GITHUB_SERVER_URL: "https://github.com",
    GITHUB_WORKSPACE: options.workspace,
    GITHUB_RETENTION_DAYS: "90",
    GITHUB_OUTPUT: options.files.output,
    GITHUB_STEP_SUMMARY: options.files.summary,
    GITHUB_ENV: options.files.env,
    GITHUB_PATH: options.files.path,
    GITHUB_STATE: options.files.state,
    RUNNER_TEMP: options.files.temp,
    RUNNER_OS: "Linux",
    RUNNER_ARCH: process.arch === "arm64" ? "ARM64" : "X64",
    RUNNER_NAME: "GitHub Actions 1",
    RUNNER_ENVIRONMENT: "github-hosted",
  };
}

/**
 * The `github` expression context for a step with this environment: what `${{ github.… }}` reads (the job's
 * token as `github.token`, the event's payload as `github.event`).
 */
export function githubContext(env: Record<string, string>, token: string): Record<string, unknown> {
  const name = (variable: string) => variable.slice("GITHUB_".length).toLowerCase();
  const values = Object.fromEntries(
    Object.entries(env)
      .filter(([k]) => k.startsWith("GITHUB_") && !["GITHUB_ACTIONS", "GITHUB_TOKEN"].includes(k))
      .map(([k, v]) => [name(k), v]),
  );
  const eventPath = env.GITHUB_EVENT_PATH;
  return {
    ...values,
    token,
    event: eventPath ? (JSON.parse(fs.readFileSync(eventPath, "utf8")) as unknown) : {},
  };
}

/** Parses a GITHUB_OUTPUT file (`name<<delimiter` blocks, or `name=value` lines). */
export function readOutputs(file: string): Record<string, string> {
  const lines = fs.readFileSync(file, "utf8").split("\n");
  const out: Record<string, string> = {};
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? "";
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc?.[1] && heredoc[2]) {
      const value: string[] = [];
      for (i += 1; i < lines.length && lines[i] !== heredoc[2]; i += 1) value.push(lines[i] ?? "");
      out[heredoc[1]] = value.join("\n");
      continue;
    }
    const eq = line.indexOf("=");
    if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}
