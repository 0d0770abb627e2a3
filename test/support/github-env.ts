// Environment for running the Action as a runner would: GITHUB_* variables for one recorded event payload
// (test/fixtures/events/<name>.json), with the output, summary and temp files in a fresh directory.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

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
}

export function runnerFiles(): RunnerFiles {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-runner-"));
  const files = {
    dir,
    output: path.join(dir, "output.txt"),
    summary: path.join(dir, "summary.md"),
    temp: path.join(dir, "temp"),
  };
  fs.writeFileSync(files.output, "");
  fs.writeFileSync(files.summary, "");
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
  return {
    GITHUB_ACTIONS: "true",
    GITHUB_EVENT_NAME: eventName,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_REPOSITORY: "acme/widgets",
    GITHUB_ACTOR: options.actor ?? "octocat",
    GITHUB_RUN_ID: "4242",
    GITHUB_RUN_ATTEMPT: "1",
    GITHUB_WORKFLOW: "agent-ci",
    GITHUB_JOB: "agent",
    GITHUB_SHA: "1111111111111111111111111111111111111111",
    GITHUB_API_URL: options.apiUrl,
    GITHUB_SERVER_URL: "https://github.com",
    GITHUB_WORKSPACE: options.workspace,
    GITHUB_OUTPUT: options.files.output,
    GITHUB_STEP_SUMMARY: options.files.summary,
    RUNNER_TEMP: options.files.temp,
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
