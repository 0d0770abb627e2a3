// task: review: the findings go to the pull request as ONE review (`event: COMMENT`, the inline comments in
// the same call), found again on re-runs by a hidden marker in its body. A submitted review cannot be
// deleted (only a pending one can), a COMMENT review cannot be dismissed (dismissal is for approvals and
// change requests), and its inline comments cannot be replaced in bulk. So a re-run posts the new review
// first, then deletes the earlier review's inline comments one by one and cuts its body to a link to the new
// one: the pull request shows one live agent-ci review, and a failure half way never leaves it with none.
import { z } from "zod";
import { commentBody, reviewBody, type Finding } from "../review/findings.js";
import type { ReviewPlacement } from "../review/review-task.js";
import { serverHost, type GitHubContext } from "../github/context.js";
import type { GitHubTextOptions } from "../report/index.js";
import { GitHubApiError, type GitHubApi } from "../github/api.js";
import { writtenBy } from "../github/comments.js";

export const REVIEW_MARKER_PREFIX = "<!-- agent-ci:review";
const SUPERSEDED_MARKER = "<!-- agent-ci:review-superseded -->";
const MARKER_SEARCH_PAGES = 10;
const PERMISSION = "pull-requests: write";

/** The hidden marker of this workflow job's review. */
export function reviewMarker(workflow: string, job: string): string {
  const key = `${workflow}/${job}`.replace(/[^A-Za-z0-9._/-]/g, "_").slice(0, 200);
  return `${REVIEW_MARKER_PREFIX} key=${key} -->`;
}

const ListedReview = z.object({
  id: z.number().int(),
  body: z.string().nullish(),
  user: z.object({ login: z.string() }).nullish(),
});
const ListedComment = z.object({ id: z.number().int() });
const Created = z.object({ id: z.number().int(), html_url: z.string().optional() });

export type ReviewPostResult =
  | { kind: "posted"; id: number; url?: string; superseded: number; inline: number; warnings: string[] }
  | { kind: "failed"; message: string };

/** The review API's comment: on the head side, a range when start_line is given. */
function apiComment(finding: Finding, text: GitHubTextOptions): Record<string, unknown> {
  const range = finding.start_line !== undefined && finding.start_line < finding.line;
  return {
    path: finding.path,
    line: finding.line,
    side: "RIGHT",
    ...(range ? { start_line: finding.start_line, start_side: "RIGHT" } : {}),
    body: commentBody(finding, text),
  };
}

async function earlierReviews(
  api: GitHubApi,
  ctx: GitHubContext,
  pull: number,
  marker: string,
): Promise<number[]> {
  const found: number[] = [];
  // Only the token's own reviews are agent-ci's: anyone may start a review's body with the marker.
  const login = await api.login();
  if (login === undefined) return found;
  for (let page = 1; page <= MARKER_SEARCH_PAGES; page += 1) {
    const response = await api.call(
      "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
      { owner: ctx.owner, repo: ctx.repo, pull_number: pull, per_page: 100, page },
      { what: `looking for agent-ci's earlier review on #${pull}`, permission: "pull-requests: read" },
    );
    const reviews = z.array(ListedReview).safeParse(response.data);
    if (!reviews.success) return found;
    for (const r of reviews.data)
      if (r.body?.startsWith(marker) && writtenBy(r.user, login)) found.push(r.id);
    if (reviews.data.length < 100) return found;
  }
  return found;
}

/** Deletes an earlier review's inline comments and cuts its body to a link to the new review. */
async function supersede(
  api: GitHubApi,
  ctx: GitHubContext,
  pull: number,
  reviewId: number,
  newUrl: string | undefined,
): Promise<void> {
  const what = `replacing agent-ci's earlier review ${reviewId} on #${pull}`;
  for (let page = 1; page <= MARKER_SEARCH_PAGES; page += 1) {
    // Deleting shifts the pages: always read the first one until it is empty.
    const response = await api.call(
      "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments",
      { owner: ctx.owner, repo: ctx.repo, pull_number: pull, review_id: reviewId, per_page: 100 },
      { what, permission: "pull-requests: read" },
    );
    const comments = z.array(ListedComment).parse(response.data);
    for (const c of comments) {
      await api.call(
        "DELETE /repos/{owner}/{repo}/pulls/comments/{comment_id}",
        { owner: ctx.owner, repo: ctx.repo, comment_id: c.id },
        { what, permission: PERMISSION },
      );
    }
    if (comments.length < 100) break;
  }
  const body = `${SUPERSEDED_MARKER}\nThis agent-ci review was replaced by ${newUrl ? `[a newer one](${newUrl})` : "a newer one"}.`;
  await api.call(
    "PUT /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}",
    { owner: ctx.owner, repo: ctx.repo, pull_number: pull, review_id: reviewId, body },
    { what, permission: PERMISSION },
  );
}

/**
 * Posts the review (one call) and replaces this job's earlier ones. When GitHub refuses the inline comments
 * (422: a line it cannot resolve, e.g. the head moved since the run), the review is posted again with every
 * finding in its body rather than lost.
 */
export async function postReview(
  api: GitHubApi,
  ctx: GitHubContext,
  pull: number,
  placement: ReviewPlacement,
  options: { marker: string; runUrl?: string },
): Promise<ReviewPostResult> {
  const warnings: string[] = [];
  const text: GitHubTextOptions = { host: serverHost(ctx.serverUrl) };
  try {
    const earlier = await earlierReviews(api, ctx, pull, options.marker);
    const post = async (p: ReviewPlacement) =>
      Created.parse(
        (
          await api.once(
            "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
            {
              owner: ctx.owner,
              repo: ctx.repo,
              pull_number: pull,
              commit_id: p.head,
              event: "COMMENT",
              body: reviewBody({
                marker: options.marker,
                summary: p.summary,
                placed: p,
                runUrl: options.runUrl,
                text,
              }),
              comments: p.inline.map((finding) => apiComment(finding, text)),
            },
            { what: `posting the review on #${pull}`, permission: PERMISSION },
          )
        ).data,
      );
    let created: z.infer<typeof Created>;
    let inline = placement.inline.length;
    try {
      created = await post(placement);
    } catch (error) {
      if (
        !(error instanceof GitHubApiError) ||
        error.failure.kind !== "unprocessable" ||
        !placement.inline.length
      )
        throw error;
      warnings.push(
        `GitHub refused the inline comments (${error.failure.message}); the review lists every finding in its body instead`,
      );
      const why = "GitHub could not place it on the diff";
      created = await post({
        ...placement,
        inline: [],
        outside: [...placement.inline.map((finding) => ({ finding, why })), ...placement.outside],
      });
      inline = 0;
    }
    let superseded = 0;
    for (const id of earlier) {
      try {
        await supersede(api, ctx, pull, id, created.html_url);
        superseded += 1;
      } catch (error) {
        if (!(error instanceof GitHubApiError)) throw error;
        warnings.push(`the earlier review ${id} could not be replaced: ${error.message}`);
      }
    }
    return { kind: "posted", id: created.id, url: created.html_url, superseded, inline, warnings };
  } catch (error) {
    if (!(error instanceof GitHubApiError)) throw error;
    return { kind: "failed", message: error.message };
  }
}
