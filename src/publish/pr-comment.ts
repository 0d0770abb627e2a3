// publish's comment on a pull request it did not open: what it pushed onto a person's branch
// (push_to_pr_branch), or, on a pull request from a fork, that nothing was pushed and where the patch is. The
// words are agent-ci's; the model's only in the commit's title, made inert as every published text is. The
// comment starts with a marker naming the run: a re-run finds it and adds nothing, and never edits a comment
// (a person may have written the marker too: at worst that leaves the note unsaid, never someone's text changed).
import { findMarkerComment } from "../github/comments.js";
import { GitHubApiError, type GitHubApi } from "../github/api.js";
import { markdownCode, type RunReport } from "../report/index.js";
import { fencedBlock } from "../text.js";
import { pathCode } from "./pr-description.js";

export const PUBLISH_COMMENT_MARKER_PREFIX = "<!-- agent-ci-publish:";
/** The patch is shown in the fork's comment up to this size; beyond it, the artifact holds it. */
export const PATCH_IN_PUBLISH_COMMENT_MAX_CHARS = 20_000;
const MAX_FILES = 100;

/** The patch's files as the descriptions list them: path, lines added and removed. */
export function patchFileLines(report: RunReport): string[] {
  const files = report.patch.files.map((f) => `- ${pathCode(f.path)} (+${f.added} −${f.removed})`);
  return [
    ...files.slice(0, MAX_FILES),
    ...(files.length > MAX_FILES ? [`- … and ${files.length - MAX_FILES} more`] : []),
  ];
}

const changedFiles = (report: RunReport) =>
  `**Changed files** (${report.patch.files.length}, +${report.patch.added} −${report.patch.removed}):`;

const shortSha = (sha: string) => sha.slice(0, 12);

export interface PushedNote {
  marker: string;
  report: RunReport;
  branch: string;
  /** The commit pushed, its page, and the head it went on top of. */
  commitSha: string;
  commitUrl?: string;
  parent: string;
  /** The commit's title (agent-ci's prefix and the model's first line, already inert). */
  title: string;
  /** The commit was made by GitHub through its API (use_commit_signing), so GitHub signed it. */
  signed: boolean;
  runUrl?: string;
}

/** The note on a person's pull request after publish pushed onto its branch. */
export function pushedComment(note: PushedNote): string {
  const sha = markdownCode(shortSha(note.commitSha), 20);
  const commit = note.commitUrl ? `[${sha}](${encodeURI(note.commitUrl)})` : sha;
  return [
    note.marker,
    `**agent-ci pushed ${commit} to ${markdownCode(note.branch, 200)}**, on top of ${markdownCode(shortSha(note.parent), 20)}, the head the run started from: ${note.title}`,
    "",
    ...(note.signed
      ? [
          "The commit was made through GitHub's API (`use_commit_signing`), so GitHub signed it and shows it as Verified.",
          "",
        ]
      : []),
    changedFiles(note.report),
    ...patchFileLines(note.report),
    "",
    `From run ${markdownCode(note.report.runId, 200)}${note.runUrl ? ` ([workflow run](${encodeURI(note.runUrl)}))` : ""}. Pull the branch before pushing to it again.`,
  ].join("\n");
}

export interface ForkNote {
  marker: string;
  report: RunReport;
  patchText: string;
  /** owner/name of the fork and of this repository. */
  fork: string;
  repository: string;
  runUrl?: string;
}

/** The note on a pull request from a fork: nothing was pushed; the patch is here (when small) and in the artifact. */
export function forkComment(note: ForkNote): string {
  const { report } = note;
  const where = note.runUrl
    ? `the run's artifact (patch.diff, [workflow run](${encodeURI(note.runUrl)}))`
    : "the run's artifact (patch.diff)";
  const patch =
    note.patchText.length <= PATCH_IN_PUBLISH_COMMENT_MAX_CHARS
      ? [
          `<details><summary><b>Patch</b> (${report.patch.files.length} file(s), +${report.patch.added} −${report.patch.removed})</summary>`,
          "",
          fencedBlock(note.patchText, "diff"),
          "",
          "</details>",
        ]
      : [`The patch is too large to show here; it is in ${where}.`];
  return [
    note.marker,
    `**agent-ci did not push to this pull request**: it comes from a fork (${markdownCode(note.fork, 200)}), and a token of ${markdownCode(note.repository, 200)} cannot push there. The change is in ${where}; to take it, apply it on the branch with \`git apply patch.diff\` (it was made on ${markdownCode(shortSha(report.workspace.baseCommit ?? "?"), 20)}).`,
    "",
    changedFiles(report),
    ...patchFileLines(report),
    "",
    ...patch,
  ].join("\n");
}

/**
 * Posts `body` on pull request `number` unless a comment starting with its marker is there already. A create
 * whose answer was lost (5xx, network) is looked for again before the error is reported. Its URL either way.
 */
export async function postOnce(
  api: GitHubApi,
  repository: { owner: string; repo: string },
  number: number,
  marker: string,
  body: string,
): Promise<{ url?: string; posted: boolean }> {
  const permission = "pull-requests: write";
  const existing = await findMarkerComment(api, repository, number, marker, "pull-requests: read");
  if (existing) return { url: existing.url, posted: false };
  try {
    const response = await api.once(
      "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
      { owner: repository.owner, repo: repository.repo, issue_number: number, body },
      { what: `commenting on pull request #${number}`, permission },
    );
    const url = (response.data as { html_url?: unknown }).html_url;
    return { url: typeof url === "string" ? url : undefined, posted: true };
  } catch (error) {
    if (!(error instanceof GitHubApiError)) throw error;
    if (error.failure.kind !== "server" && error.failure.kind !== "network") throw error;
    const landed = await findMarkerComment(api, repository, number, marker, "pull-requests: read");
    if (landed) return { url: landed.url, posted: true };
    throw error;
  }
}
