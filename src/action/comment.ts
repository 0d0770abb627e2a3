// The issue/PR comment: one per issue and workflow job, found again by a hidden marker and updated in place
// on re-runs; posted by the Action after the agent stopped. The body is report.md (size-capped, linking the
// artifact) plus the patch when it is small and the secret scan found nothing (RELIABILITY S5: a patch with
// a secret is never posted). Every byte passes the redactor. 5xx on the create is retried idempotently:
// look for the marker comment first (G6); 422 "too long" shrinks the body (G3). Only a comment the token's own
// login wrote is agent-ci's (B15): anyone may post a comment that starts with the marker, and updating it would
// put agent-ci's report under their name, or their text above it.
import {
  GITHUB_COMMENT_MAX_CHARS,
  markdownCode,
  neutralizeGitHubText,
  renderMarkdown,
  type Redactor,
  type RunReport,
  type SecretFinding,
} from "../report/index.js";
import { z } from "zod";
import { fencedBlock } from "../text.js";
import type { GitHubContext } from "../github/context.js";
import { GitHubApiError, type GitHubApi } from "../github/api.js";
import { retryDecision } from "../github/retry.js";
import { findMarkerComment as findCommentByMarker, type MarkerComment } from "../github/comments.js";

export const COMMENT_MARKER_PREFIX = "<!-- agent-ci:comment";
/** Room kept for the marker, the patch section header and the footer. */
const FRAME_CHARS = 2_000;
export const PATCH_IN_COMMENT_MAX_CHARS = 20_000;

/** The hidden marker of this workflow job's comment. Workflow and job names are reduced to a safe charset. */
export function commentMarker(workflow: string, job: string): string {
  const key = `${workflow}/${job}`.replace(/[^A-Za-z0-9._/-]/g, "_").slice(0, 200);
  return `${COMMENT_MARKER_PREFIX} key=${key} -->`;
}

export interface CommentBodyOptions {
  marker: string;
  report: RunReport;
  patchText: string;
  /** Secrets found in the patch: the patch is then left out, with a notice. */
  findings: readonly SecretFinding[];
  artifactUrl?: string;
  runUrl: string;
  redactor: Redactor;
  maxChars?: number;
  /** agent-ci's own notes about the run, said before the report (a resume that had to start fresh). */
  notes?: readonly string[];
  /** The agent's own final answer: shown first, as Markdown made inert like all published text. */
  finalMessage?: string;
}

function patchSection(options: CommentBodyOptions, budget: number): string {
  const { report, patchText, findings } = options;
  if (report.patch.empty) return "";
  if (findings.length) {
    const where = findings
      .slice(0, 5)
      .map((f) => `${markdownCode(`${f.file}${f.line ? `:${f.line}` : ""}`, 200)} (${f.kind})`)
      .join(", ");
    return [
      "> [!CAUTION]",
      `> The patch contains ${findings.length} possible secret${findings.length === 1 ? "" : "s"} (${where}${findings.length > 5 ? ", …" : ""}), so it is not posted here.`,
      "> Review it in the run's artifact before applying it.",
    ].join("\n");
  }
  const files = report.patch.files.length;
  const title = `Patch: ${files} file${files === 1 ? "" : "s"}, +${report.patch.added} −${report.patch.removed}`;
  const max = Math.min(PATCH_IN_COMMENT_MAX_CHARS, budget);
  if (patchText.length > max) {
    const where = options.artifactUrl
      ? `[the artifact](${encodeURI(options.artifactUrl)})`
      : "the run's artifact";
    return `**${title}** — too large to show here; download it from ${where}.`;
  }
  return `<details><summary><b>${title}</b></summary>\n\n${fencedBlock(patchText, "diff")}\n\n</details>`;
}

/** The final answer, neutralised, cut to `max` characters before neutralising (which only adds a few). */
function answerSection(finalMessage: string, max: number): string {
  const text = finalMessage.trim();
  if (!text) return "";
  const cut =
    text.length > max ? `${text.slice(0, max)}\n\n… (shortened; the whole answer is in the report)` : text;
  return neutralizeGitHubText(cut);
}

/** The whole comment, redacted and within `maxChars` (default GitHub's limit). Pure. */
export function buildCommentBody(options: CommentBodyOptions): string {
  const maxChars = options.maxChars ?? GITHUB_COMMENT_MAX_CHARS;
  const footer = [
    `<sub>[Workflow run](${encodeURI(options.runUrl)})`,
    options.artifactUrl ? ` · [Artifact](${encodeURI(options.artifactUrl)})` : "",
    ` · agent-ci ${options.report.agentCiVersion}</sub>`,
  ].join("");
  const budget = Math.max(1_000, maxChars - FRAME_CHARS - options.marker.length);
  const answer = answerSection(options.finalMessage ?? "", Math.floor(budget / 3));
  const patch = patchSection(options, Math.floor(budget / 3));
  const reportBudget = Math.max(800, budget - patch.length - answer.length);
  const markdown = renderMarkdown(options.report, {
    maxChars: reportBudget,
    artifactUrl: options.artifactUrl,
  });
  const notes = (options.notes ?? []).map((note) => `> [!NOTE]\n> ${note}`);
  const body = [options.marker, answer, ...notes, markdown.trimEnd(), patch, footer]
    .filter(Boolean)
    .join("\n\n");
  const redacted = options.redactor.redact(body);
  return redacted.length <= maxChars ? redacted : `${redacted.slice(0, maxChars - 40)}\n\n… (shortened)`;
}

/** A short comment for a run that was skipped or failed before a report existed. Pure. */
export function buildNoticeBody(
  marker: string,
  title: string,
  detail: string,
  runUrl: string,
  redactor: Redactor,
): string {
  const safe = neutralizeGitHubText(detail.slice(0, 4_000));
  return redactor.redact(
    `${marker}\n\n### ${title}\n\n${safe}\n\n<sub>[Workflow run](${encodeURI(runUrl)})</sub>`,
  );
}

export type CommentResult =
  | { kind: "created" | "updated"; id: number; url?: string }
  | { kind: "failed"; message: string; missingPermission: boolean };

export interface CommentTarget {
  number: number;
  isPullRequest: boolean;
}

function permissionFor(target: CommentTarget): string {
  return target.isPullRequest ? "pull-requests: write" : "issues: write";
}

/** The newest comment whose body starts with the marker and that the token's login wrote, if any. */
export function findMarkerComment(
  api: GitHubApi,
  ctx: GitHubContext,
  target: CommentTarget,
  marker: string,
): Promise<MarkerComment | undefined> {
  return findCommentByMarker(api, ctx, target.number, marker, permissionFor(target).replace("write", "read"));
}

const Created = z.object({ id: z.number().int(), html_url: z.string().optional() });

function tooLong(error: GitHubApiError): boolean {
  return error.failure.kind === "unprocessable" && /too long|maximum is/i.test(error.failure.message);
}

/**
 * Creates or updates the marker comment. `render(maxChars)` builds the body for a size; a 422 "body is too
 * long" halves the size. A 5xx or a network error on create is retried only after looking for the marker
 * again (the create may have landed), so a retry never duplicates the comment.
 */
export async function upsertComment(
  api: GitHubApi,
  ctx: GitHubContext,
  target: CommentTarget,
  marker: string,
  render: (maxChars: number) => string,
): Promise<CommentResult> {
  const what = `posting the comment on #${target.number}`;
  let maxChars = GITHUB_COMMENT_MAX_CHARS;
  try {
    let existing = await findMarkerComment(api, ctx, target, marker);
    for (let attempt = 0; ; attempt += 1) {
      const body = render(maxChars);
      try {
        if (existing) {
          const response = await api.call(
            "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
            { owner: ctx.owner, repo: ctx.repo, comment_id: existing.id, body },
            { what, permission: permissionFor(target) },
          );
          const updated = Created.safeParse(response.data);
          return {
            kind: "updated",
            id: existing.id,
            url: updated.success ? updated.data.html_url : existing.url,
          };
        }
        const response = await api.once(
          "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
          { owner: ctx.owner, repo: ctx.repo, issue_number: target.number, body },
          { what, permission: permissionFor(target) },
        );
        const created = Created.parse(response.data);
        return { kind: "created", id: created.id, url: created.html_url };
      } catch (error) {
        if (!(error instanceof GitHubApiError)) throw error;
        if (tooLong(error) && maxChars > 2_000) {
          maxChars = Math.floor(maxChars / 2);
          continue;
        }
        const decision = retryDecision(error.failure, attempt, api.clock());
        if (!decision.retry || existing) throw error;
        await api.sleep(decision.waitMs);
        // The POST may have been applied even though the answer was lost: look before posting again.
        existing = await findMarkerComment(api, ctx, target, marker);
      }
    }
  } catch (error) {
    if (!(error instanceof GitHubApiError)) throw error;
    return {
      kind: "failed",
      message: error.message,
      missingPermission: error.failure.kind === "integration",
    };
  }
}
