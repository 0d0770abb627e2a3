// Event classification from recorded payloads (one per event type) and the pure trigger decisions: which
// actions run, the trigger phrase on comments (visible text only), fork heads refused by default (G7).
// Bypasses the harness: pure functions over recorded payloads.
import { describe, expect, it } from "vitest";
import { readGitHubContext } from "../../src/github/context.js";
import {
  classifyEvent,
  decideTrigger,
  eventTarget,
  forkHeadOf,
  isPullRequestContext,
  mentionsTrigger,
  pullRequestBase,
  type ActionEvent,
} from "../../src/action/event.js";
import { eventPayload, FIXTURE_EVENTS, githubEnv, runnerFiles } from "../support/github-env.js";

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
const options = { triggerPhrase: "@agent-ci", allowForkHeads: false, hasPrompt: false };
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
    ["pull-request-review", "pull_request", { number: 34, isPullRequest: true }, true],
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

describe("decideTrigger", () => {
  it("runs issues opened, labeled and assigned, and not other issue actions", () => {
    expect(decideTrigger(eventFor("issues-opened"), options)).toEqual({ run: true });
    expect(decideTrigger(eventFor("issues-labeled"), options)).toEqual({ run: true });
    expect(decideTrigger(eventFor("issues-assigned"), options)).toEqual({ run: true });
    const closed = eventFor("issues-opened", { ...eventPayload("issues-opened"), action: "closed" });
    expect(decideTrigger(closed, options)).toMatchObject({
      run: false,
      reason: expect.stringContaining("closed"),
    });
  });

  it("with label_trigger / assignee_trigger, runs an issues event only when labeled / assigned so", () => {
    const byLabel = { ...options, labelTrigger: "agent-ci" };
    expect(decideTrigger(eventFor("issues-labeled"), byLabel)).toEqual({ run: true });
    expect(decideTrigger(eventFor("issues-opened"), byLabel)).toMatchObject({
      run: false,
      reason: expect.stringContaining("label_trigger"),
    });
    expect(decideTrigger(eventFor("issues-assigned"), byLabel)).toMatchObject({ run: false });
    const otherLabel = eventFor("issues-labeled", {
      ...eventPayload("issues-labeled"),
      label: { id: 8, name: "bug" },
    });
    expect(decideTrigger(otherLabel, byLabel)).toMatchObject({ run: false });

    const byAssignee = { ...options, assigneeTrigger: "@OctoCat" };
    expect(decideTrigger(eventFor("issues-assigned"), byAssignee)).toEqual({ run: true });
    expect(decideTrigger(eventFor("issues-labeled"), byAssignee)).toMatchObject({
      run: false,
      reason: expect.stringContaining("assignee_trigger"),
    });
    const otherAssignee = eventFor("issues-assigned", {
      ...eventPayload("issues-assigned"),
      assignee: { login: "someone-else", id: 1, type: "User" },
    });
    expect(decideTrigger(otherAssignee, byAssignee)).toMatchObject({ run: false });

    const both = { ...options, labelTrigger: "agent-ci", assigneeTrigger: "octocat" };
    expect(decideTrigger(eventFor("issues-labeled"), both)).toEqual({ run: true });
    expect(decideTrigger(eventFor("issues-assigned"), both)).toEqual({ run: true });
    expect(decideTrigger(eventFor("issues-opened"), both)).toMatchObject({ run: false });
  });

  it("runs a comment only when it mentions the trigger phrase", () => {
    expect(decideTrigger(eventFor("issue-comment-issue"), options)).toEqual({ run: true });
    expect(decideTrigger(eventFor("pull-request-review-comment"), options)).toEqual({ run: true });
    const payload = eventPayload("issue-comment-issue");
    const quiet = eventFor("issue-comment-issue", {
      ...payload,
      comment: { ...(payload.comment as object), body: "looks good to me" },
    });
    expect(decideTrigger(quiet, options)).toMatchObject({
      run: false,
      reason: expect.stringContaining("@agent-ci"),
    });
    const edited = eventFor("issue-comment-issue", { ...payload, action: "edited" });
    expect(decideTrigger(edited, options)).toMatchObject({ run: false });
  });

  it("refuses pull_request_target and workflow_run with a fork head unless allow_fork_heads", () => {
    expect(decideTrigger(eventFor("pull-request-target-fork"), options)).toMatchObject({
      run: false,
      reason: expect.stringContaining("allow_fork_heads"),
    });
    expect(
      decideTrigger(eventFor("pull-request-target-fork"), { ...options, allowForkHeads: true }),
    ).toMatchObject({ run: true, note: expect.any(String) });
    expect(decideTrigger(eventFor("workflow-run-fork"), { ...options, hasPrompt: true })).toMatchObject({
      run: false,
      reason: expect.stringContaining("fork"),
    });
    expect(
      decideTrigger(eventFor("workflow-run-fork"), { ...options, hasPrompt: true, allowForkHeads: true }),
    ).toMatchObject({ run: true });
  });

  it("runs pull_request from the same repository", () => {
    expect(decideTrigger(eventFor("pull-request-opened"), options)).toEqual({ run: true });
  });

  it("runs a pull request review as its pull request; a merge group needs the prompt input", () => {
    expect(decideTrigger(eventFor("pull-request-review"), options)).toEqual({ run: true });
    expect(decideTrigger(eventFor("merge-group"), options)).toMatchObject({
      run: false,
      reason: "merge_group needs the prompt input (the task)",
    });
    expect(decideTrigger(eventFor("merge-group"), { ...options, hasPrompt: true })).toEqual({ run: true });
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

describe("mentionsTrigger", () => {
  it.each([
    ["@agent-ci fix it", true],
    ["please, @Agent-CI: fix it", true],
    ["(@agent-ci)", true],
    ["mail me at bob@agent-ci.dev", false],
    ["@agent-cis are great", false],
    ["<!-- @agent-ci --> nothing visible", false],
    ["@agent\u200b-ci split by a zero-width space", false],
    ["no mention", false],
  ])("%j → %s", (text, expected) => {
    expect(mentionsTrigger(text, "@agent-ci")).toBe(expected);
  });
});
