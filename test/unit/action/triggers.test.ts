// When an event starts a run, row by row of the trigger table (src/action/triggers.ts), against what
// claude-code-action does (its src/modes/detector.ts and src/github/validation/trigger.ts): with a task every
// event runs (agent mode); without one, only the phrase in a comment, a review's body or a new issue's title
// or body, or label_trigger on `labeled`, or assignee_trigger on `assigned` (tag mode). The expectations are
// written out here, not read from the table, and every row of the table is reached by some case. The
// migration guide's table is generated from the same rows and checked to be up to date.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { classifyEvent, type ActionEvent } from "../../../src/action/event.js";
import type { GitHubContext } from "../../../src/github/context.js";
import {
  decideTrigger,
  mentionsTrigger,
  triggerRule,
  TRIGGER_RULES,
  type TriggerOptions,
  type TriggerRule,
} from "../../../src/action/triggers.js";
import { COMMENT_MARKER_PREFIX } from "../../../src/action/comment.js";
import { REVIEW_MARKER_PREFIX } from "../../../src/action/review.js";
import { DOC_FILE, END, formattedSection, START, updateSection } from "../../../scripts/trigger-docs.js";

const OWN = "acme/widgets";
const user = { login: "octocat", type: "User" };
const issue = (title = "add() is wrong", body = "It subtracts.") => ({ number: 12, title, body, user });
const pr = (body = "Uses a table.", headRepo = OWN) => ({
  number: 34,
  title: "Speed up multiply()",
  body,
  user,
  head: { ref: "fast-multiply", sha: "1".repeat(40), repo: { full_name: headRepo } },
  base: { ref: "main", sha: "2".repeat(40), repo: { full_name: OWN } },
});
const comment = (body: string) => ({ id: 901, body, user });
const review = (body: string) => ({ id: 77, body, user, state: "commented" });

/** The event as classifyEvent makes it from a payload in GitHub's shape. */
function eventOf(eventName: string, payload: Record<string, unknown>): ActionEvent {
  const ctx: GitHubContext = {
    eventName,
    payload: { ...payload, sender: user, repository: { full_name: OWN, default_branch: "main" } },
    owner: "acme",
    repo: "widgets",
    actor: "octocat",
    runId: "1",
    runAttempt: "1",
    workflow: "w",
    job: "j",
    sha: "2".repeat(40),
    apiUrl: undefined,
    serverUrl: "https://github.com",
    workspace: "/tmp",
    runnerTemp: "/tmp",
  };
  return classifyEvent(ctx);
}

const base: TriggerOptions = {
  triggerPhrase: "@agent-ci",
  allowForkHeads: false,
  hasTask: false,
  labelTrigger: "agent-ci",
  assigneeTrigger: "",
};
const withTask = { ...base, hasTask: true };

interface Case {
  name: string;
  event: string;
  payload: Record<string, unknown>;
  options?: Partial<TriggerOptions>;
  /** Without a task: runs, or the words of the reason. */
  without: true | string;
  /** With a task: runs, or the words of the reason. */
  with: true | string;
}

const NO_TASK = "there is no prompt input";
const cases: Case[] = [
  // issues opened: the phrase in the title or the body.
  {
    name: "issues opened, phrase in the body",
    event: "issues",
    payload: { action: "opened", issue: issue("add() is wrong", "@agent-ci please fix it") },
    without: true,
    with: true,
  },
  {
    name: "issues opened, phrase in the title",
    event: "issues",
    payload: { action: "opened", issue: issue("@agent-ci: add() is wrong") },
    without: true,
    with: true,
  },
  {
    name: "issues opened, no phrase",
    event: "issues",
    payload: { action: "opened", issue: issue() },
    without: "issues opened: the issue's title and body do not mention @agent-ci",
    with: true,
  },
  // issues labeled: label_trigger only, in any case.
  {
    name: "issues labeled with label_trigger",
    event: "issues",
    payload: { action: "labeled", issue: issue(), label: { id: 7, name: "Agent-CI" } },
    without: true,
    with: true,
  },
  {
    name: "issues labeled with another label (the phrase in the body does not count)",
    event: "issues",
    payload: { action: "labeled", issue: issue("t", "@agent-ci"), label: { id: 8, name: "bug" } },
    without: "the label bug is not agent-ci (label_trigger)",
    with: true,
  },
  // issues assigned: assignee_trigger only.
  {
    name: "issues assigned to assignee_trigger",
    event: "issues",
    payload: { action: "assigned", issue: issue(), assignee: user },
    options: { assigneeTrigger: "@octocat" },
    without: true,
    with: true,
  },
  {
    name: "issues assigned to someone else",
    event: "issues",
    payload: { action: "assigned", issue: issue(), assignee: { login: "hubot" } },
    options: { assigneeTrigger: "octocat" },
    without: "the assignee hubot is not octocat (assignee_trigger)",
    with: true,
  },
  {
    name: "issues assigned, assignee_trigger empty",
    event: "issues",
    payload: { action: "assigned", issue: issue(), assignee: user },
    without: "assignee_trigger is empty",
    with: true,
  },
  // issues edited: the phrase in the title or the body, as on opened.
  {
    name: "issues edited with the phrase",
    event: "issues",
    payload: { action: "edited", issue: issue("t", "@agent-ci fix it") },
    without: true,
    with: true,
  },
  {
    name: "issues edited, no phrase",
    event: "issues",
    payload: { action: "edited", issue: issue() },
    without: "issues edited: the issue's title and body do not mention @agent-ci",
    with: true,
  },
  // Other issue actions: never without a task.
  {
    name: "issues closed",
    event: "issues",
    payload: { action: "closed", issue: issue() },
    without: `issues closed: ${NO_TASK}`,
    with: true,
  },
  // Comments: the phrase in the comment, created or edited.
  ...(["created", "edited"] as const).flatMap((action): Case[] => [
    {
      name: `issue_comment ${action} with the phrase`,
      event: "issue_comment",
      payload: { action, issue: issue(), comment: comment("@agent-ci fix it") },
      without: true,
      with: true,
    },
    {
      name: `pull_request_review_comment ${action} with the phrase`,
      event: "pull_request_review_comment",
      payload: { action, pull_request: pr(), comment: comment("@agent-ci rename this") },
      without: true,
      with: true,
    },
  ]),
  {
    name: "issue_comment created without the phrase",
    event: "issue_comment",
    payload: { action: "created", issue: issue(), comment: comment("looks good to me") },
    without: "the comment does not mention @agent-ci",
    with: true,
  },
  {
    name: "issue_comment created: agent-ci's own report",
    event: "issue_comment",
    payload: { action: "created", issue: issue(), comment: comment(`${COMMENT_MARKER_PREFIX} @agent-ci`) },
    without: "the comment is agent-ci's own report",
    with: "the comment is agent-ci's own report",
  },
  {
    name: "issue_comment deleted with the phrase",
    event: "issue_comment",
    payload: { action: "deleted", issue: issue(), comment: comment("@agent-ci fix it") },
    without: `issue_comment deleted: ${NO_TASK}`,
    with: true,
  },
  {
    name: "pull_request_review_comment deleted with the phrase",
    event: "pull_request_review_comment",
    payload: { action: "deleted", pull_request: pr(), comment: comment("@agent-ci") },
    without: `pull_request_review_comment deleted: ${NO_TASK}`,
    with: true,
  },
  // Reviews: the phrase in the review's body, submitted or edited.
  ...(["submitted", "edited"] as const).map((action): Case => ({
    name: `pull_request_review ${action} with the phrase`,
    event: "pull_request_review",
    payload: { action, pull_request: pr(), review: review("@agent-ci the table is wrong past 9") },
    without: true,
    with: true,
  })),
  {
    name: "pull_request_review submitted without the phrase",
    event: "pull_request_review",
    payload: { action: "submitted", pull_request: pr(), review: review("LGTM") },
    without: "the review's body does not mention @agent-ci",
    with: true,
  },
  {
    name: "pull_request_review submitted with no body",
    event: "pull_request_review",
    payload: { action: "submitted", pull_request: pr(), review: { ...review(""), body: null } },
    without: "the review's body does not mention @agent-ci",
    with: true,
  },
  {
    name: "pull_request_review submitted: agent-ci's own review",
    event: "pull_request_review",
    payload: {
      action: "submitted",
      pull_request: pr(),
      review: review(`${REVIEW_MARKER_PREFIX} -->\n@agent-ci`),
    },
    without: "the review is agent-ci's own",
    with: "the review is agent-ci's own",
  },
  {
    name: "pull_request_review dismissed with the phrase",
    event: "pull_request_review",
    payload: { action: "dismissed", pull_request: pr(), review: review("@agent-ci") },
    without: `pull_request_review dismissed: ${NO_TASK}`,
    with: true,
  },
  // Pull requests: a task only (claude-code-action's detector gives them tag mode only with track_progress).
  ...(["opened", "synchronize", "closed"] as const).map((action): Case => ({
    name: `pull_request ${action}, the phrase in the body`,
    event: "pull_request",
    payload: { action, pull_request: pr("@agent-ci review this") },
    without: `pull_request ${action}: ${NO_TASK}`,
    with: true,
  })),
  {
    name: "pull_request_target from the same repository",
    event: "pull_request_target",
    payload: { action: "opened", pull_request: pr() },
    without: `pull_request_target opened: ${NO_TASK}`,
    with: true,
  },
  {
    name: "pull_request_target from a fork",
    event: "pull_request_target",
    payload: { action: "opened", pull_request: pr("b", "mallory/widgets") },
    without: "allow_fork_heads",
    with: "allow_fork_heads",
  },
  {
    name: "pull_request_target from a fork, allow_fork_heads",
    event: "pull_request_target",
    payload: { action: "opened", pull_request: pr("b", "mallory/widgets") },
    options: { allowForkHeads: true },
    without: `pull_request_target opened: ${NO_TASK}`,
    with: true,
  },
  // Automation events: a task only.
  {
    name: "workflow_run from the same repository",
    event: "workflow_run",
    payload: {
      action: "completed",
      workflow_run: {
        head_branch: "main",
        head_repository: { full_name: OWN },
        repository: { full_name: OWN },
      },
    },
    without: `workflow_run: ${NO_TASK}`,
    with: true,
  },
  {
    name: "workflow_run from a fork",
    event: "workflow_run",
    payload: {
      action: "completed",
      workflow_run: { head_repository: { full_name: "mallory/widgets" }, repository: { full_name: OWN } },
    },
    without: "workflow_run for a head from a fork is refused",
    with: "workflow_run for a head from a fork is refused",
  },
  ...["workflow_dispatch", "schedule", "repository_dispatch", "check_suite"].map((event): Case => ({
    name: event,
    event,
    payload: {},
    without: `${event}: ${NO_TASK}`,
    with: true,
  })),
  {
    name: "merge_group",
    event: "merge_group",
    payload: {
      action: "checks_requested",
      merge_group: { base_sha: "2".repeat(40), head_ref: "gh-readonly-queue/main/pr-34" },
    },
    without: `merge_group checks_requested: ${NO_TASK}`,
    with: true,
  },
];

function expectDecision(event: ActionEvent, options: TriggerOptions, expected: true | string): void {
  const decision = decideTrigger(event, options);
  if (expected === true) expect(decision).toMatchObject({ run: true, why: expect.any(String) });
  else expect(decision).toEqual({ run: false, reason: expect.stringContaining(expected) });
}

describe("decideTrigger, row by row", () => {
  it.each(cases)("$name", (c) => {
    const event = eventOf(c.event, c.payload);
    expectDecision(event, { ...base, ...c.options }, c.without);
    expectDecision(event, { ...withTask, ...c.options }, c.with);
  });

  it("reaches every row of the trigger table", () => {
    const reached = new Set<TriggerRule>(
      cases.map((c) => triggerRule(c.event, typeof c.payload.action === "string" ? c.payload.action : "")),
    );
    for (const rule of TRIGGER_RULES) expect(reached, JSON.stringify(rule)).toContain(rule);
  });

  it("says why a run starts, and that a fork head runs only because the workflow allowed it", () => {
    const opened = eventOf("issues", { action: "opened", issue: issue("t", "@agent-ci fix") });
    expect(decideTrigger(opened, base)).toEqual({
      run: true,
      why: "issues opened: the issue's title or body mentions @agent-ci",
    });
    const fork = eventOf("pull_request_target", {
      action: "opened",
      pull_request: pr("b", "mallory/widgets"),
    });
    expect(decideTrigger(fork, { ...withTask, allowForkHeads: true })).toMatchObject({
      run: true,
      note: expect.stringContaining("allow_fork_heads: true"),
    });
  });

  it("an empty label_trigger matches no label", () => {
    const labeled = eventOf("issues", { action: "labeled", issue: issue(), label: { name: "" } });
    expect(decideTrigger(labeled, { ...base, labelTrigger: "" })).toMatchObject({ run: false });
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

describe("the migration guide's table", () => {
  const page = fs.readFileSync(DOC_FILE, "utf8");

  it("is generated from the trigger rules and up to date (run npm run action-docs)", async () => {
    expect(page).toContain(START);
    expect(page).toContain(END);
    expect(updateSection(page, await formattedSection())).toBe(page);
  });

  it("goes stale when a rule changes", async () => {
    const changed = TRIGGER_RULES.map((r, i) => (i === 0 ? { ...r, withoutTask: "never" as const } : r));
    expect(updateSection(page, await formattedSection(changed))).not.toBe(page);
  });
});
