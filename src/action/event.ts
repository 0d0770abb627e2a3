// The triggering event, as a discriminated union of the events the Action understands, validated from the
// webhook payload with zod (only the fields used). Whether it starts a run is triggers.ts; whether the actor
// may start one is permission.ts (it needs the API).
// Which events check out what a pull request may have written, so that trusted inputs are read from the
// base revision instead, is decided once: `pullRequestBase`.
import { z } from "zod";
import type { GitHubContext } from "../github/context.js";

const User = z.object({ login: z.string(), type: z.string().optional() });
const Text = z
  .string()
  .nullish()
  .transform((v) => v ?? "");

const IssuePayload = z.object({
  number: z.number().int().positive(),
  title: Text,
  body: Text,
  user: User,
  html_url: z.string().optional(),
  pull_request: z.object({ url: z.string().optional() }).passthrough().nullish(),
});

const CommentPayload = z.object({
  id: z.number().int(),
  body: Text,
  user: User,
  html_url: z.string().optional(),
});

const RepoRef = z.object({ full_name: z.string() }).nullish();
const PullRequestPayload = z.object({
  number: z.number().int().positive(),
  title: Text,
  body: Text,
  user: User,
  html_url: z.string().optional(),
  head: z.object({ ref: z.string(), sha: z.string(), repo: RepoRef }),
  base: z.object({ ref: z.string(), sha: z.string(), repo: RepoRef }),
});

const ReviewCommentPayload = CommentPayload.extend({
  path: z.string().optional(),
  line: z.number().int().nullish(),
  diff_hunk: z.string().optional(),
});

/** A pull request review (pull_request_review): its body; its inline comments are read through the API. */
const ReviewPayload = z.object({
  id: z.number().int(),
  body: Text,
  user: User.nullish().transform((u) => u ?? { login: "ghost" }),
  state: z.string().optional(),
  html_url: z.string().optional(),
});

const MergeGroupPayload = z.object({
  base_sha: z.string(),
  base_ref: z.string().optional(),
  head_sha: z.string().optional(),
  head_ref: z.string().optional(),
});

const WorkflowRunPayload = z.object({
  event: z.string().optional(),
  head_branch: z.string().nullish(),
  head_sha: z.string().optional(),
  head_repository: RepoRef,
  repository: RepoRef,
});

export type IssueInfo = z.infer<typeof IssuePayload>;
export type CommentInfo = z.infer<typeof CommentPayload>;
export type PullRequestInfo = z.infer<typeof PullRequestPayload>;
export type ReviewCommentInfo = z.infer<typeof ReviewCommentPayload>;
export type ReviewInfo = z.infer<typeof ReviewPayload>;

export type ActionEvent =
  | { kind: "issue"; action: string; issue: IssueInfo; label?: string; assignee?: string; sender: string }
  | {
      kind: "issue_comment";
      action: string;
      issue: IssueInfo;
      comment: CommentInfo;
      onPullRequest: boolean;
      sender: string;
    }
  | { kind: "pull_request"; action: string; pr: PullRequestInfo; target: boolean; sender: string }
  /** A review submitted (or edited, dismissed) on a pull request: a pull-request event, with its body. */
  | { kind: "review"; action: string; pr: PullRequestInfo; review: ReviewInfo; sender: string }
  | {
      kind: "review_comment";
      action: string;
      pr: PullRequestInfo;
      comment: ReviewCommentInfo;
      sender: string;
    }
  | { kind: "manual"; trigger: "workflow_dispatch" | "schedule"; sender: string }
  /** A merge queue's group: its head merges pull requests into the base; no pull request of its own. */
  | { kind: "merge_group"; action: string; baseSha: string; headRef?: string; sender: string }
  | {
      kind: "workflow_run";
      headRepository?: string;
      repository?: string;
      headBranch?: string;
      sender: string;
    }
  | { kind: "unsupported"; eventName: string; sender: string };

export class EventError extends Error {
  override readonly name = "EventError";
}

function parsePart<T>(schema: z.ZodType<T>, value: unknown, what: string, eventName: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new EventError(`the ${eventName} payload has no usable ${what}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** Classifies the event from the context; throws EventError when a known event's payload is malformed. */
export function classifyEvent(ctx: GitHubContext): ActionEvent {
  const p = ctx.payload;
  const action = typeof p.action === "string" ? p.action : "";
  const senderLogin = (p.sender as { login?: unknown } | undefined)?.login;
  const sender = typeof senderLogin === "string" ? senderLogin : ctx.actor;
  switch (ctx.eventName) {
    case "issues": {
      const label = (p.label as { name?: unknown } | undefined)?.name;
      const assignee = (p.assignee as { login?: unknown } | null | undefined)?.login;
      return {
        kind: "issue",
        action,
        issue: parsePart(IssuePayload, p.issue, "issue", ctx.eventName),
        label: typeof label === "string" ? label : undefined,
        assignee: typeof assignee === "string" ? assignee : undefined,
        sender,
      };
    }
    case "issue_comment": {
      const issue = parsePart(IssuePayload, p.issue, "issue", ctx.eventName);
      const comment = parsePart(CommentPayload, p.comment, "comment", ctx.eventName);
      return {
        kind: "issue_comment",
        action,
        issue,
        comment,
        onPullRequest: Boolean(issue.pull_request),
        sender,
      };
    }
    case "pull_request":
    case "pull_request_target":
      return {
        kind: "pull_request",
        action,
        pr: parsePart(PullRequestPayload, p.pull_request, "pull_request", ctx.eventName),
        target: ctx.eventName === "pull_request_target",
        sender,
      };
    // A review's event carries its pull request as pull_request does, and checks out the same head.
    case "pull_request_review":
      return {
        kind: "review",
        action,
        pr: parsePart(PullRequestPayload, p.pull_request, "pull_request", ctx.eventName),
        review: parsePart(ReviewPayload, p.review, "review", ctx.eventName),
        sender,
      };
    case "pull_request_review_comment":
      return {
        kind: "review_comment",
        action,
        pr: parsePart(PullRequestPayload, p.pull_request, "pull_request", ctx.eventName),
        comment: parsePart(ReviewCommentPayload, p.comment, "comment", ctx.eventName),
        sender,
      };
    case "workflow_dispatch":
    case "schedule":
      return { kind: "manual", trigger: ctx.eventName, sender };
    case "merge_group": {
      const group = parsePart(MergeGroupPayload, p.merge_group, "merge_group", ctx.eventName);
      return { kind: "merge_group", action, baseSha: group.base_sha, headRef: group.head_ref, sender };
    }
    case "workflow_run": {
      const run = parsePart(WorkflowRunPayload, p.workflow_run, "workflow_run", ctx.eventName);
      const repository =
        run.repository?.full_name ?? (p.repository as { full_name?: string } | undefined)?.full_name;
      return {
        kind: "workflow_run",
        headRepository: run.head_repository?.full_name,
        repository,
        headBranch: run.head_branch ?? undefined,
        sender,
      };
    }
    default:
      return { kind: "unsupported", eventName: ctx.eventName || "(none)", sender };
  }
}

/** The issue or pull request number a comment goes to, when the event has one. */
export function eventTarget(event: ActionEvent): { number: number; isPullRequest: boolean } | undefined {
  switch (event.kind) {
    case "issue":
      return { number: event.issue.number, isPullRequest: false };
    case "issue_comment":
      return { number: event.issue.number, isPullRequest: event.onPullRequest };
    case "pull_request":
    case "review":
    case "review_comment":
      return { number: event.pr.number, isPullRequest: true };
    default:
      return undefined;
  }
}

/**
 * Where an event's trusted inputs (settings, prompt_file, output_schema, mcp_config, skills, commands,
 * agents) come from: undefined when the workspace is the repository as its writers left it, else the base
 * revision to read them at through the API, never the checkout, because it is (or may be) what a pull
 * request wrote (RELIABILITY R18): a pull request, a review or a review comment (its base commit), a
 * comment on a pull request (the base of `fetchedPr`, fetched for the prompt), a merge queue's group (its
 * base commit), a workflow_run (the default branch). `ref` undefined means the base is not known (the pull
 * request could not be fetched): reading then fails closed, never falls back to the workspace.
 */
export function pullRequestBase(
  event: ActionEvent,
  ctx: Pick<GitHubContext, "payload">,
  fetchedPr?: PullRequestInfo,
): { ref: string | undefined } | undefined {
  switch (event.kind) {
    case "pull_request":
    case "review":
    case "review_comment":
      return { ref: event.pr.base.sha };
    case "issue_comment":
      return event.onPullRequest ? { ref: fetchedPr?.base.sha } : undefined;
    case "merge_group":
      return { ref: event.baseSha };
    case "workflow_run": {
      const defaultBranch = (ctx.payload.repository as { default_branch?: unknown } | undefined)
        ?.default_branch;
      return { ref: typeof defaultBranch === "string" ? defaultBranch : undefined };
    }
    case "issue":
    case "manual":
    case "unsupported":
      return undefined;
  }
}

/** Whether the workspace is (or may be) a pull request's head (see `pullRequestBase`). */
export function isPullRequestContext(event: ActionEvent): boolean {
  return pullRequestBase(event, { payload: {} }) !== undefined;
}

/** Whether the PR's head lives in another repository than its base. */
export function isForkHead(pr: PullRequestInfo): boolean {
  const head = pr.head.repo?.full_name;
  const base = pr.base.repo?.full_name;
  // A deleted fork has `head.repo: null`: unknown, so treated as a fork.
  return !head || !base || head.toLowerCase() !== base.toLowerCase();
}

/** Whether a workflow_run's head lives in another repository than the one it runs in (unknown counts as one). */
export function workflowRunFromFork(event: Extract<ActionEvent, { kind: "workflow_run" }>): boolean {
  return (
    !event.headRepository ||
    !event.repository ||
    event.headRepository.toLowerCase() !== event.repository.toLowerCase()
  );
}

/**
 * Where the workspace's commits come from when a fork's author wrote them: the head repository of a pull
 * request (or a workflow_run) from a fork, said for a message; undefined when the head is the repository's own
 * or the event has none. A comment on a pull request that could not be read counts as a fork.
 */
export function forkHeadOf(event: ActionEvent, fetchedPr?: PullRequestInfo): string | undefined {
  switch (event.kind) {
    case "pull_request":
    case "review":
    case "review_comment":
      return isForkHead(event.pr) ? (event.pr.head.repo?.full_name ?? "a deleted fork") : undefined;
    case "issue_comment":
      if (!event.onPullRequest) return undefined;
      if (!fetchedPr) return "a pull request whose head could not be read";
      return isForkHead(fetchedPr) ? (fetchedPr.head.repo?.full_name ?? "a deleted fork") : undefined;
    case "workflow_run":
      return workflowRunFromFork(event) ? (event.headRepository ?? "an unknown repository") : undefined;
    default:
      return undefined;
  }
}
