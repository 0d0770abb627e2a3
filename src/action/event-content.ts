// What the prompt and the trusted configuration need beyond the payload, fetched through the API: the
// conversation thread, the pull request (an issue_comment carries only its issue half), its diff and its
// commits, and files read at the base ref. A thread or diff that cannot be read is a warning, not a failure: the run
// goes on with what the payload holds.
import path from "node:path";
import fs from "node:fs";
import { z } from "zod";
import type { GitHubContext } from "../github/context.js";
import type { ActionEvent, CommentInfo, PullRequestInfo, ReviewCommentInfo } from "./event.js";
import { GitHubApiError, type GitHubApi } from "../github/api.js";
import { PR_COMMITS_MAX, type EventContent, type PullCommit } from "./prompt.js";
import { COMMENT_MARKER_PREFIX } from "./comment.js";

const THREAD_PAGES = 3;
const User = z.object({ login: z.string(), type: z.string().optional() });
const Comment = z.object({
  id: z.number().int(),
  body: z
    .string()
    .nullish()
    .transform((v) => v ?? ""),
  user: User.nullish().transform((u) => u ?? { login: "ghost" }),
  html_url: z.string().optional(),
});
const RepoRef = z.object({ full_name: z.string() }).nullish();
const PullRequest = z.object({
  number: z.number().int().positive(),
  title: z
    .string()
    .nullish()
    .transform((v) => v ?? ""),
  body: z
    .string()
    .nullish()
    .transform((v) => v ?? ""),
  user: User,
  html_url: z.string().optional(),
  head: z.object({ ref: z.string(), sha: z.string(), repo: RepoRef }),
  base: z.object({ ref: z.string(), sha: z.string(), repo: RepoRef }),
});
/** An inline comment of a review, as GET /pulls/{n}/reviews/{id}/comments lists it. */
const ReviewComment = Comment.extend({
  path: z.string().optional(),
  line: z.number().int().nullish(),
  diff_hunk: z.string().optional(),
});
const ListedCommit = z.object({
  sha: z.string(),
  commit: z.object({ message: z.string(), author: z.object({ name: z.string().optional() }).nullish() }),
  author: z.object({ login: z.string() }).nullish(),
});
const FileContent = z.object({ type: z.literal("file"), encoding: z.string(), content: z.string() });

export class TrustedFileError extends Error {
  override readonly name = "TrustedFileError";
}

async function readThread(
  api: GitHubApi,
  ctx: GitHubContext,
  issueNumber: number,
  excludeId?: number,
): Promise<CommentInfo[]> {
  const comments: CommentInfo[] = [];
  for (let page = 1; page <= THREAD_PAGES; page += 1) {
    const response = await api.call(
      "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
      { owner: ctx.owner, repo: ctx.repo, issue_number: issueNumber, per_page: 100, page },
      { what: `reading the comments of #${issueNumber}`, permission: "issues: read" },
    );
    const parsed = z.array(Comment).safeParse(response.data);
    if (!parsed.success) break;
    comments.push(...parsed.data);
    if (parsed.data.length < 100) break;
  }
  // agent-ci's own report comments are not part of the conversation.
  return comments.filter((c) => c.id !== excludeId && !c.body.startsWith(COMMENT_MARKER_PREFIX));
}

async function readPullRequest(api: GitHubApi, ctx: GitHubContext, number: number): Promise<PullRequestInfo> {
  const response = await api.call(
    "GET /repos/{owner}/{repo}/pulls/{pull_number}",
    { owner: ctx.owner, repo: ctx.repo, pull_number: number },
    { what: `reading pull request #${number}`, permission: "pull-requests: read" },
  );
  return PullRequest.parse(response.data);
}

async function readDiff(api: GitHubApi, ctx: GitHubContext, number: number): Promise<string> {
  const response = await api.call(
    "GET /repos/{owner}/{repo}/pulls/{pull_number}",
    { owner: ctx.owner, repo: ctx.repo, pull_number: number, mediaType: { format: "diff" } },
    { what: `reading the diff of pull request #${number}`, permission: "pull-requests: read" },
  );
  return typeof response.data === "string" ? response.data : "";
}

/** A review's inline comments, in the order GitHub lists them (at most THREAD_PAGES pages). */
async function readReviewComments(
  api: GitHubApi,
  ctx: GitHubContext,
  pull: number,
  reviewId: number,
): Promise<ReviewCommentInfo[]> {
  const comments: ReviewCommentInfo[] = [];
  for (let page = 1; page <= THREAD_PAGES; page += 1) {
    const response = await api.call(
      "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments",
      { owner: ctx.owner, repo: ctx.repo, pull_number: pull, review_id: reviewId, per_page: 100, page },
      {
        what: `reading the inline comments of review ${reviewId} on #${pull}`,
        permission: "pull-requests: read",
      },
    );
    const listed = z.array(ReviewComment).parse(response.data);
    comments.push(...listed);
    if (listed.length < 100) break;
  }
  return comments;
}

/** The pull request's commits, oldest first: the newest PR_COMMITS_MAX of the (at most 250) the API lists. */
async function readCommits(api: GitHubApi, ctx: GitHubContext, number: number): Promise<PullCommit[]> {
  const commits: PullCommit[] = [];
  for (let page = 1; page <= 3; page += 1) {
    const response = await api.call(
      "GET /repos/{owner}/{repo}/pulls/{pull_number}/commits",
      { owner: ctx.owner, repo: ctx.repo, pull_number: number, per_page: 100, page },
      { what: `reading the commits of pull request #${number}`, permission: "pull-requests: read" },
    );
    const listed = z.array(ListedCommit).parse(response.data);
    for (const c of listed)
      commits.push({
        sha: c.sha,
        message: c.commit.message,
        author: c.author?.login ?? c.commit.author?.name,
      });
    if (listed.length < 100) break;
  }
  return commits.slice(-PR_COMMITS_MAX);
}

/** Fetches what the prompt needs; failures are reported through `warn` and leave the part out. */
export async function fetchEventContent(
  api: GitHubApi | undefined,
  ctx: GitHubContext,
  event: ActionEvent,
  warn: (line: string) => void,
): Promise<EventContent> {
  if (!api) return {};
  const content: EventContent = {};
  const attempt = async <T>(what: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await what();
    } catch (error) {
      if (!(error instanceof GitHubApiError) && !(error instanceof z.ZodError)) throw error;
      warn(
        error instanceof GitHubApiError
          ? `${error.message} The prompt is built without it.`
          : `unexpected API answer (${error.issues[0]?.message ?? "invalid"}); the prompt is built without it.`,
      );
      return undefined;
    }
  };
  switch (event.kind) {
    case "issue":
      content.thread = await attempt(() => readThread(api, ctx, event.issue.number));
      break;
    case "issue_comment":
      content.thread = await attempt(() => readThread(api, ctx, event.issue.number, event.comment.id));
      if (event.onPullRequest) {
        content.pr = await attempt(() => readPullRequest(api, ctx, event.issue.number));
        content.diff = await attempt(() => readDiff(api, ctx, event.issue.number));
        content.commits = await attempt(() => readCommits(api, ctx, event.issue.number));
      }
      break;
    case "review":
      // A review is read as a comment on its pull request is: the conversation, then the review itself (its
      // body comes with the event, its inline comments through the API).
      content.thread = await attempt(() => readThread(api, ctx, event.pr.number));
      content.reviewComments = await attempt(() =>
        readReviewComments(api, ctx, event.pr.number, event.review.id),
      );
      content.diff = await attempt(() => readDiff(api, ctx, event.pr.number));
      content.commits = await attempt(() => readCommits(api, ctx, event.pr.number));
      break;
    case "pull_request":
    case "review_comment":
      content.diff = await attempt(() => readDiff(api, ctx, event.pr.number));
      content.commits = await attempt(() => readCommits(api, ctx, event.pr.number));
      break;
    default:
      break;
  }
  return content;
}

/** A repository-relative path, normalized; undefined when it is absolute or climbs out of the repository. */
export function repoRelative(value: string): string | undefined {
  if (path.isAbsolute(value)) return undefined;
  const normalized = path.posix.normalize(value.replace(/\\/g, "/")).replace(/^\.\//, "");
  if (normalized === "." || normalized.startsWith("../") || normalized === "..") return undefined;
  return normalized;
}

export interface TrustedFileOptions {
  /** The input's value: a repository-relative path, or an absolute path on the runner. */
  value: string;
  input:
    | "settings"
    | "prompt_file"
    | "output_schema"
    | "mcp_config"
    | "skills"
    | "commands"
    | "agents"
    | "project_memory"
    | "memory";
  workspace: string;
  /**
   * Set when the workspace may be a pull request's head (`pullRequestBase`): repository paths are read at
   * this base revision through the API, never from the checkout.
   */
  base: { ref: string | undefined } | undefined;
  api?: GitHubApi;
  ctx: GitHubContext;
}

/**
 * Reads a file an input names. On pull-request events a repository path is read at the base ref through the
 * contents API, never from the checkout (the PR head could change it); an absolute path is a file on the
 * runner that the workflow itself wrote. Elsewhere, it is read from the workspace.
 */
export async function readTrustedFile(options: TrustedFileOptions): Promise<{ text: string; from: string }> {
  const { value, input, ctx } = options;
  const rel = repoRelative(value);
  if (!options.base || rel === undefined) {
    const file = path.resolve(options.workspace, value);
    try {
      return { text: fs.readFileSync(file, "utf8"), from: rel === undefined ? file : `${rel} (workspace)` };
    } catch (e) {
      throw new TrustedFileError(
        `${input}: cannot read ${value}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
  }
  if (!options.api)
    throw new TrustedFileError(
      `${input}: on pull request events ${rel} is read from the base branch through the API, which needs github_token`,
    );
  const { ref } = options.base;
  if (!ref)
    throw new TrustedFileError(
      `${input}: the base ref of the pull request is unknown, so ${rel} cannot be read from it`,
    );
  try {
    const response = await options.api.call(
      "GET /repos/{owner}/{repo}/contents/{path}",
      { owner: ctx.owner, repo: ctx.repo, path: rel, ref },
      { what: `reading ${rel} at the base ref`, permission: "contents: read" },
    );
    const file = FileContent.safeParse(response.data);
    if (!file.success || file.data.encoding !== "base64")
      throw new TrustedFileError(
        `${input}: ${rel} at ${ref.slice(0, 12)} is not a readable file (too large or a directory)`,
      );
    return {
      text: Buffer.from(file.data.content, "base64").toString("utf8"),
      from: `${rel} at base ${ref.slice(0, 12)}`,
    };
  } catch (error) {
    if (error instanceof GitHubApiError && error.failure.kind === "not_found") {
      throw new TrustedFileError(
        `${input}: ${rel} does not exist on the base branch (${ref.slice(0, 12)}); on pull request events it is read from there, not from the pull request`,
      );
    }
    if (error instanceof GitHubApiError) throw new TrustedFileError(`${input}: ${error.message}`);
    throw error;
  }
}

const DirEntry = z.object({ type: z.string(), name: z.string(), path: z.string() });
/** A trusted folder read through the API holds at most this many files (skills, commands and agents are small). */
const MAX_FOLDER_FILES = 200;

export interface TrustedFolderOptions extends TrustedFileOptions {
  input: "skills" | "commands" | "agents";
  /** Where a folder read through the API is written. */
  tempDir: string;
}

/**
 * A folder an input names (skills, commands, agents). On pull-request events a repository path is read at the base
 * ref through the contents API, file by file, into `tempDir`, never from the checkout (the PR head could
 * change it); elsewhere, and for an absolute path, it is the folder itself.
 */
export async function readTrustedFolder(
  options: TrustedFolderOptions,
): Promise<{ dir: string; from: string }> {
  const { value, input, ctx } = options;
  const rel = repoRelative(value);
  if (!options.base || rel === undefined) {
    const dir = path.resolve(options.workspace, value);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
      throw new TrustedFileError(`${input}: ${value} is not a folder`);
    return { dir, from: rel === undefined ? dir : `${rel} (workspace)` };
  }
  const { api } = options;
  const { ref } = options.base;
  if (!api)
    throw new TrustedFileError(
      `${input}: on pull request events ${rel} is read from the base branch through the API, which needs github_token`,
    );
  if (!ref)
    throw new TrustedFileError(
      `${input}: the base ref of the pull request is unknown, so ${rel} cannot be read from it`,
    );
  let files = 0;
  const copy = async (repoPath: string, into: string, depth: number): Promise<void> => {
    let listing: unknown;
    try {
      listing = (
        await api.call(
          "GET /repos/{owner}/{repo}/contents/{path}",
          { owner: ctx.owner, repo: ctx.repo, path: repoPath, ref },
          { what: `reading ${repoPath} at the base ref`, permission: "contents: read" },
        )
      ).data;
    } catch (error) {
      if (error instanceof GitHubApiError && error.failure.kind === "not_found")
        throw new TrustedFileError(
          `${input}: ${repoPath} does not exist on the base branch (${ref.slice(0, 12)}); on pull request events it is read from there, not from the pull request`,
        );
      if (error instanceof GitHubApiError) throw new TrustedFileError(`${input}: ${error.message}`);
      throw error;
    }
    const entries = z.array(DirEntry).safeParse(listing);
    if (!entries.success)
      throw new TrustedFileError(`${input}: ${repoPath} at ${ref.slice(0, 12)} is not a folder`);
    fs.mkdirSync(into, { recursive: true });
    for (const entry of entries.data) {
      if (!/^[A-Za-z0-9_.-]+$/.test(entry.name) || entry.name.startsWith("..")) continue;
      const target = path.join(into, entry.name);
      if (entry.type === "dir" && depth < 3) await copy(entry.path, target, depth + 1);
      if (entry.type !== "file") continue;
      if (++files > MAX_FOLDER_FILES)
        throw new TrustedFileError(`${input}: ${rel} holds more than ${MAX_FOLDER_FILES} files`);
      const { text } = await readTrustedFile({ ...options, value: entry.path });
      fs.writeFileSync(target, text, { mode: 0o600 });
    }
  };
  const dir = path.join(options.tempDir, path.basename(rel));
  await copy(rel, dir, 0);
  return { dir, from: `${rel} at base ${ref.slice(0, 12)}` };
}
