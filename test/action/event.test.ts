// Event classification from recorded payloads (one per event type): what each is, where its trusted inputs
// are read, and whose fork its head is. When an event starts a run is test/unit/action/triggers.test.ts.
// Bypasses the harness: pure functions over recorded payloads.
import { describe, expect, it } from "vitest";
import { readGitHubContext } from "../../src/github/context.js";
import {
  classifyEvent,
  eventTarget,
  forkHeadOf,
  isPullRequestContext,
  pullRequestBase,
  type ActionEvent,
} from "../../src/action/event.js";
import { FIXTURE_EVENTS, githubEnv, runnerFiles } from "../support/github-env.js";

function eventFor(fixture: string, payload?: Record<string, unknown>): ActionEvent {
  const env = githubEnv({
    fixture,
    apiUrl: "http://127.0.0.1:1",
    workspace: "/tmp",
    files: runnerFiles(),
    payload,
  });
  return classifyEvent(readGitHubContext(env));
}
/** The base commit of pull request #34 in the event fixtures (and of the merge group's queue). */
const BASE_SHA = "2".repeat(40);

describe("classifyEvent on recorded payloads", () => {
  it.each([
    ["issues-opened", "issue", { number: 12, isPullRequest: false }, false],
    ["issues-labeled", "issue", { number: 12, isPullRequest: false }, false],
    ["issues-assigned", "issue", { number: 12, isPullRequest: false }, false],
    ["issue-comment-issue", "issue_comment", { number: 12, isPullRequest: false }, false],
    ["issue-comment-pr", "issue_comment", { number: 34, isPullRequest: true }, true],
    ["pull-request-opened", "pull_request", { number: 34, isPullRequest: true }, true],
    ["pull-request-review", "review", { number: 34, isPullRequest: true }, true],
    ["pull-request-review-comment", "review_comment", { number: 34, isPullRequest: true }, true],
    ["pull-request-target-fork", "pull_request", { number: 56, isPullRequest: true }, true],
    ["workflow-dispatch", "manual", undefined, false],
    ["schedule", "manual", undefined, false],
    ["workflow-run-fork", "workflow_run", undefined, true],
    ["merge-group", "merge_group", undefined, true],
  ] as const)("%s → %s", (fixture, kind, target, prContext) => {
    const event = eventFor(fixture);
    expect(event.kind).toBe(kind);
    expect(eventTarget(event)).toEqual(target);
    expect(isPullRequestContext(event)).toBe(prContext);
  });

  it("covers every fixture", () => {
    expect(Object.keys(FIXTURE_EVENTS)).toHaveLength(13);
  });

  it.each([
    ["pull-request-opened", BASE_SHA],
    ["pull-request-review", BASE_SHA],
    ["pull-request-review-comment", BASE_SHA],
    ["pull-request-target-fork", BASE_SHA],
    ["merge-group", BASE_SHA],
    ["workflow-run-fork", "main"],
  ])("%s reads trusted inputs at the base revision %s, never the checkout", (fixture, ref) => {
    const env = githubEnv({ fixture, apiUrl: "http://127.0.0.1:1", workspace: "/tmp", files: runnerFiles() });
    const ctx = readGitHubContext(env);
    expect(pullRequestBase(classifyEvent(ctx), ctx)).toEqual({ ref });
  });

  it("a comment on a pull request reads at the fetched pull request's base, and fails closed without it", () => {
    const env = githubEnv({
      fixture: "issue-comment-pr",
      apiUrl: "http://127.0.0.1:1",
      workspace: "/tmp",
      files: runnerFiles(),
    });
    const ctx = readGitHubContext(env);
    const event = classifyEvent(ctx);
    expect(pullRequestBase(event, ctx)).toEqual({ ref: undefined });
    const fetched = eventFor("pull-request-opened");
    if (fetched.kind !== "pull_request") throw new Error("the fixture is a pull_request event");
    expect(pullRequestBase(event, ctx, fetched.pr)).toEqual({ ref: BASE_SHA });
  });

  it.each(["issues-opened", "issue-comment-issue", "workflow-dispatch", "schedule"])(
    "%s reads trusted inputs from the workspace",
    (fixture) => {
      const env = githubEnv({
        fixture,
        apiUrl: "http://127.0.0.1:1",
        workspace: "/tmp",
        files: runnerFiles(),
      });
      const ctx = readGitHubContext(env);
      expect(pullRequestBase(classifyEvent(ctx), ctx)).toBeUndefined();
    },
  );

  it("names the broken part of a malformed payload", () => {
    expect(() => eventFor("issues-opened", { action: "opened", issue: { title: "no number" } })).toThrow(
      /issues payload has no usable issue/,
    );
  });
});

describe("forkHeadOf", () => {
  it.each([
    ["pull-request-opened", undefined],
    ["pull-request-target-fork", "mallory/widgets"],
    ["workflow-run-fork", "mallory/widgets"],
    ["issues-opened", undefined],
    ["workflow-dispatch", undefined],
  ])("%s → %s", (fixture, fork) => {
    expect(forkHeadOf(eventFor(fixture))).toBe(fork);
  });

  it("reads a comment's pull request as fetched, and counts one it could not read as a fork", () => {
    const event = eventFor("issue-comment-pr");
    const pr = (repo: string) => ({
      number: 34,
      title: "t",
      body: "",
      user: { login: "octocat" },
      head: { ref: "x", sha: "1".repeat(40), repo: { full_name: repo } },
      base: { ref: "main", sha: BASE_SHA, repo: { full_name: "acme/widgets" } },
    });
    expect(forkHeadOf(event, pr("acme/widgets"))).toBeUndefined();
    expect(forkHeadOf(event, pr("mallory/widgets"))).toBe("mallory/widgets");
    expect(forkHeadOf(event)).toBe("a pull request whose head could not be read");
    expect(forkHeadOf(eventFor("issue-comment-issue"))).toBeUndefined();
  });
});
