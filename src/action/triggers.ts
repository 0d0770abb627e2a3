// When an event starts a run: claude-code-action's rules (its src/modes/detector.ts and
// src/github/validation/trigger.ts), kept as one table that decideTrigger reads and the migration guide's
// "When a run starts" table is generated from (scripts/trigger-docs.ts). With a task (`prompt`, `prompt_file`
// or `task: review`) every event the workflow names runs, as claude-code-action's agent mode does; without
// one, only a mention of the trigger phrase, label_trigger or assignee_trigger starts a run, as its tag mode.
// Two checks stand before the table whatever the task: agent-ci's own report (a comment or a review it
// posted) never starts a run, and a head from a fork under pull_request_target or workflow_run is refused
// unless the workflow opts in (RELIABILITY G7). Whether the actor may start a run is permission.ts.
import { COMMENT_MARKER_PREFIX } from "./comment.js";
import { isForkHead, workflowRunFromFork, type ActionEvent } from "./event.js";
import { REVIEW_MARKER_PREFIX } from "./review.js";

/** What starts a run without a task. */
export type TriggerCondition =
  | "never"
  | "phrase in the title or body"
  | "phrase in the comment"
  | "phrase in the review's body"
  | "label_trigger"
  | "assignee_trigger";

export interface TriggerRule {
  /** The webhook events (GITHUB_EVENT_NAME) of the row. */
  events: readonly string[];
  /** The actions of the row; undefined: every action the rows before it for these events do not list. */
  actions?: readonly string[];
  withoutTask: TriggerCondition;
  /** What the docs add to a column of the row. */
  notes?: { withoutTask?: string; withTask?: string };
}

/** Any event no row names. */
export const OTHER_EVENTS = "*";

const FORK_NOTE = {
  withTask:
    "but a head from a fork is refused unless `allow_fork_heads: true` (the event has secrets and a write token)",
};

/** The rows, read top to bottom: the first whose event and action match decides. */
export const TRIGGER_RULES: readonly TriggerRule[] = [
  {
    events: ["issues"],
    actions: ["opened", "edited"],
    withoutTask: "phrase in the title or body",
    notes: {
      withoutTask:
        "claude-code-action reads them on opened only; an edit that adds the phrase starts a run here",
    },
  },
  { events: ["issues"], actions: ["labeled"], withoutTask: "label_trigger" },
  { events: ["issues"], actions: ["assigned"], withoutTask: "assignee_trigger" },
  { events: ["issues"], withoutTask: "never" },
  {
    events: ["issue_comment", "pull_request_review_comment"],
    actions: ["created", "edited"],
    withoutTask: "phrase in the comment",
  },
  {
    events: ["issue_comment", "pull_request_review_comment"],
    withoutTask: "never",
    notes: {
      withoutTask: "though claude-code-action looks for the phrase in a deleted comment too",
    },
  },
  {
    events: ["pull_request_review"],
    actions: ["submitted", "edited"],
    withoutTask: "phrase in the review's body",
  },
  { events: ["pull_request_review"], withoutTask: "never" },
  { events: ["pull_request"], withoutTask: "never" },
  { events: ["pull_request_target"], withoutTask: "never", notes: FORK_NOTE },
  { events: ["workflow_run"], withoutTask: "never", notes: FORK_NOTE },
  {
    events: ["workflow_dispatch", "schedule", "repository_dispatch", "merge_group", OTHER_EVENTS],
    withoutTask: "never",
  },
];

/** The row that decides for an event name and action (the last row catches every other event). */
export function triggerRule(eventName: string, action: string): TriggerRule {
  const named = TRIGGER_RULES.some((r) => r.events.includes(eventName));
  const rule = TRIGGER_RULES.find(
    (r) => r.events.includes(named ? eventName : OTHER_EVENTS) && (!r.actions || r.actions.includes(action)),
  );
  if (!rule) throw new Error(`no trigger rule for ${eventName} ${action}`);
  return rule;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * True when `text` mentions the trigger phrase as a word of its own (`@agent-ci please`, `(@agent-ci)`),
 * not inside another word (`foo@agent-ci.dev`). A phrase hidden in an HTML comment does not count, nor one
 * split by a zero-width character (that is how agent-ci's own reports defuse mentions).
 */
export function mentionsTrigger(text: string, phrase: string): boolean {
  if (!phrase) return true;
  const visible = text.replace(/<!--[\s\S]*?(?:-->|$)/g, "");
  return new RegExp(`(^|[\\s(\\[{>"'])${escapeRegExp(phrase)}(?=$|[\\s.,!?;:)\\]}<"'])`, "i").test(visible);
}

export type TriggerDecision = { run: true; why: string; note?: string } | { run: false; reason: string };

export interface TriggerOptions {
  triggerPhrase: string;
  allowForkHeads: boolean;
  /** A task is given: `prompt`, `prompt_file` or `task: review` (claude-code-action's agent mode). */
  hasTask: boolean;
  labelTrigger?: string;
  assigneeTrigger?: string;
}

/** The webhook event name and action an event came as. */
export function eventNameOf(event: ActionEvent): { name: string; action: string } {
  switch (event.kind) {
    case "issue":
      return { name: "issues", action: event.action };
    case "issue_comment":
      return { name: "issue_comment", action: event.action };
    case "review_comment":
      return { name: "pull_request_review_comment", action: event.action };
    case "review":
      return { name: "pull_request_review", action: event.action };
    case "pull_request":
      return { name: event.target ? "pull_request_target" : "pull_request", action: event.action };
    case "manual":
      return { name: event.trigger, action: "" };
    case "merge_group":
      return { name: "merge_group", action: event.action };
    case "workflow_run":
      return { name: "workflow_run", action: "" };
    case "unsupported":
      return { name: event.eventName, action: "" };
  }
}

/** Whether a condition holds for the event, and how the log says that it does (`yes`) or does not (`no`). */
function conditionMet(
  condition: TriggerCondition,
  event: ActionEvent,
  options: TriggerOptions,
): { met: boolean; yes: string; no: string } {
  const phrase = options.triggerPhrase;
  switch (condition) {
    case "never":
      return { met: false, yes: "", no: "" };
    case "phrase in the title or body": {
      const issue = event.kind === "issue" ? event.issue : { title: "", body: "" };
      return {
        met: mentionsTrigger(issue.title, phrase) || mentionsTrigger(issue.body, phrase),
        yes: `the issue's title or body mentions ${phrase}`,
        no: `the issue's title and body do not mention ${phrase}`,
      };
    }
    case "phrase in the comment": {
      const body =
        event.kind === "issue_comment" || event.kind === "review_comment" ? event.comment.body : "";
      return {
        met: mentionsTrigger(body, phrase),
        yes: `the comment mentions ${phrase}`,
        no: `the comment does not mention ${phrase}`,
      };
    }
    case "phrase in the review's body": {
      const body = event.kind === "review" ? event.review.body : "";
      return {
        met: mentionsTrigger(body, phrase),
        yes: `the review's body mentions ${phrase}`,
        no: `the review's body does not mention ${phrase}`,
      };
    }
    case "label_trigger": {
      const label = event.kind === "issue" ? (event.label ?? "") : "";
      const wanted = options.labelTrigger ?? "";
      return {
        met: wanted !== "" && label.toLowerCase() === wanted.toLowerCase(),
        yes: `labeled ${wanted} (label_trigger)`,
        no: wanted
          ? `the label ${label || "(none)"} is not ${wanted} (label_trigger)`
          : "label_trigger is empty",
      };
    }
    case "assignee_trigger": {
      const assignee = event.kind === "issue" ? (event.assignee ?? "") : "";
      const wanted = (options.assigneeTrigger ?? "").replace(/^@/, "");
      return {
        met: wanted !== "" && assignee.toLowerCase() === wanted.toLowerCase(),
        yes: `assigned to ${wanted} (assignee_trigger)`,
        no: wanted
          ? `the assignee ${assignee || "(none)"} is not ${wanted} (assignee_trigger)`
          : "assignee_trigger is empty",
      };
    }
  }
}

/** agent-ci's own report: a comment or a review it posted never starts a run (that would loop). */
function ownReport(event: ActionEvent): string | undefined {
  if (
    (event.kind === "issue_comment" || event.kind === "review_comment") &&
    event.comment.body.startsWith(COMMENT_MARKER_PREFIX)
  )
    return "the comment is agent-ci's own report";
  if (event.kind === "review" && event.review.body.startsWith(REVIEW_MARKER_PREFIX))
    return "the review is agent-ci's own";
  return undefined;
}

/** A head from a fork where the event runs with secrets and a write token (G7): refused, or a note. */
function forkCheck(event: ActionEvent, allowForkHeads: boolean): TriggerDecision | undefined {
  const fork =
    (event.kind === "pull_request" && event.target && isForkHead(event.pr)) ||
    (event.kind === "workflow_run" && workflowRunFromFork(event));
  if (!fork) return undefined;
  const name = eventNameOf(event).name;
  if (!allowForkHeads)
    return {
      run: false,
      reason:
        name === "pull_request_target"
          ? "pull_request_target with a head from a fork is refused: it runs with the base repository's secrets and a write token. Use pull_request, or set allow_fork_heads: true if you accept the risk"
          : "workflow_run for a head from a fork is refused (it runs with secrets and a write token); set allow_fork_heads: true to run anyway",
    };
  return {
    run: true,
    why: "",
    note: `running on a fork head under ${name} (allow_fork_heads: true); the agent still holds no token`,
  };
}

/** Pure: whether this event starts a run at all (the actor check comes after), and why, or why not. */
export function decideTrigger(event: ActionEvent, options: TriggerOptions): TriggerDecision {
  const { name, action } = eventNameOf(event);
  const said = action ? `${name} ${action}` : name;
  const own = ownReport(event);
  if (own) return { run: false, reason: own };
  const fork = forkCheck(event, options.allowForkHeads);
  if (fork && !fork.run) return fork;
  const note = fork?.run ? fork.note : undefined;
  if (options.hasTask) return { run: true, why: `${said} with a task (the prompt input)`, note };
  const rule = triggerRule(name, action);
  const { met, yes, no } = conditionMet(rule.withoutTask, event, options);
  if (met) return { run: true, why: `${said}: ${yes}`, note };
  const without =
    "there is no prompt input (without one, a run starts only on a mention of the trigger phrase, label_trigger or assignee_trigger)";
  if (rule.withoutTask === "never") return { run: false, reason: `${said}: ${without}` };
  return { run: false, reason: `${said}: ${no}, and ${without}` };
}

/** What each condition means, as the migration guide's table says it. */
export const TRIGGER_CONDITION_TEXT: Record<TriggerCondition, string> = {
  never: "never",
  "phrase in the title or body": "when the issue's title or body mentions `trigger_phrase`",
  "phrase in the comment": "when the comment mentions `trigger_phrase`",
  "phrase in the review's body": "when the review's body mentions `trigger_phrase`",
  label_trigger: "when the label added is `label_trigger` (any case)",
  assignee_trigger: "when the user assigned is `assignee_trigger` (empty: never)",
};
