// The words publish writes: the pull request's description and notes, the commit's message, the run's branch
// name and the markers it finds its own comments and pull requests by, and what a refused push means. The
// model's summary enters only through neutralizeGitHubText; every other line is agent-ci's own.
import {
  markdownCode,
  neutralizeGitHubText,
  RUN_TRAILER,
  type GitHubTextOptions,
  type RunReport,
} from "../report/index.js";
import type { GateFinding } from "./gate-findings.js";
import { attemptsLine } from "./attempts-line.js";
import { pathCode } from "./pr-description.js";
import { patchFileLines, PUBLISH_COMMENT_MARKER_PREFIX } from "./pr-comment.js";
import type { LinkIssue } from "./options.js";

export const BRANCH_PREFIX = "agent-ci/";
export const PR_MARKER_PREFIX = "<!-- agent-ci-run:";

/**
 * The agent's last words, the summary the commit message and the PR body are made of, made inert
 * (neutralizeGitHubText): the model's text must not show an image, raw HTML or a link out of the repository's
 * host, ping anyone or close an issue on merge (whether the PR closes its issue is `linkIssue`'s).
 */
export function runSummary(report: RunReport, text: GitHubTextOptions = {}): string {
  for (let i = report.turns.length - 1; i >= 0; i--) {
    const said = report.turns[i]?.text?.trim();
    if (said) return neutralizeGitHubText(said, text);
  }
  return "";
}

/** agent-ci's own line about the issue the run came from, written by agent-ci and never by the model. */
export function issueLine(issue: number | undefined, linkIssue: LinkIssue): string | undefined {
  if (issue === undefined || linkIssue === "none") return undefined;
  return linkIssue === "closes" ? `Fixes #${issue}` : `Opened from #${issue}`;
}

export function commitTitle(report: RunReport, text: GitHubTextOptions = {}): string {
  const first =
    runSummary(report, text)
      .split("\n", 1)[0]
      ?.replace(/^#+\s*/, "")
      .trim() ?? "";
  const title = first || `changes from run ${safeRunId(report.runId)}`;
  return `agent-ci: ${title.length > 72 ? `${title.slice(0, 71)}…` : title}`;
}

export function commitMessage(report: RunReport, issue: string | undefined, text: GitHubTextOptions): string {
  const summary = runSummary(report, text);
  return `${commitTitle(report, text)}\n\n${summary ? `${summary}\n\n` : ""}${issue ? `${issue}\n` : ""}${RUN_TRAILER}${safeRunId(report.runId)}\n`;
}

/**
 * The run id as agent-ci writes it into the hidden marker and the commit's trailer: report.json is an artifact,
 * and an id holding `-->` or a newline would end the marker or add a line (a closing keyword) to the message.
 * Only what parseRunCommit reads back is kept.
 */
export const safeRunId = (runId: string) => runId.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 200) || "unknown";

export const prMarker = (runId: string) => `${PR_MARKER_PREFIX} ${safeRunId(runId)} -->`;
/** The marker of the comment publish leaves on a pull request it did not open, per run. */
export const publishCommentMarker = (runId: string) =>
  `${PUBLISH_COMMENT_MARKER_PREFIX} ${safeRunId(runId)} -->`;

/**
 * agent-ci's note in the description when the gate's findings were let through: a reviewer sees that the
 * patch holds a lifecycle script, a hook, a secret finding… and that someone chose to publish it anyway.
 */
export function allowedFindingsNote(allowed: readonly GateFinding[]): string[] {
  if (!allowed.length) return [];
  const kinds = [...new Set(allowed.map((f) => f.kind))].join(", ");
  const listed = allowed
    .slice(0, 20)
    .map((f) => `> - ${f.kind}: ${pathCode(f.file)}${f.line ? ` line ${f.line}` : ""}`);
  return [
    [
      "> [!WARNING]",
      `> Published past the publish gate with \`--allow-finding\` (\`allow_findings\`: ${kinds}). Review these before merging:`,
      ...listed,
      ...(allowed.length > 20 ? [`> - … and ${allowed.length - 20} more`] : []),
    ].join("\n"),
  ];
}

/**
 * agent-ci's note in the description when the patch changes what verify runs (report.json's
 * verify.changedInputs: a script the command runs, its test runner's configuration, a file it names): verify's
 * result then says little about the change, and a reviewer looks at those files first.
 */
export function verifyInputsNote(report: RunReport): string[] {
  const inputs = report.verify?.changedInputs ?? [];
  if (!inputs.length || !report.verify) return [];
  const passed = report.verify.applied && report.verify.exitCode === 0;
  const listed = inputs.slice(0, 20).map((input) => markdownCode(input, 300));
  return [
    [
      "> [!WARNING]",
      `> The patch changes what verify runs (${markdownCode(report.verify.command, 200)}): ${listed.join(", ")}${inputs.length > 20 ? `, and ${inputs.length - 20} more` : ""}.`,
      `> Verify ${passed ? "passed" : "ran"} with those changes, so its result does not show that the change works: review them first.`,
    ].join("\n"),
  ];
}

/** The description of the pull request one run opens: the agent's summary, the issue, the changed files. */
export function pullBody(
  report: RunReport,
  issue: string | undefined,
  text: GitHubTextOptions,
  notes: readonly string[],
): string {
  return [
    prMarker(report.runId),
    runSummary(report, text) || "_The agent left no summary._",
    "",
    ...(issue ? [issue, ""] : []),
    ...(attemptsLine(report) ? [attemptsLine(report), ""] : []),
    ...notes.flatMap((note) => [note, ""]),
    `**Changed files** (${report.patch.files.length}, +${report.patch.added} −${report.patch.removed}):`,
    ...patchFileLines(report),
    "",
    `Opened by \`agent-ci publish\` from run ${markdownCode(report.runId, 200)}, based on ${markdownCode(report.workspace.baseCommit ?? "?", 64)}.`,
  ].join("\n");
}

/** `agent-ci/run-<id>`, with anything git refuses in a ref replaced. */
export function runBranch(runId: string): string {
  let safe = runId
    .slice(0, 100)
    .replace(/[^A-Za-z0-9_-]+/g, "-")
    .replace(/^-+/, "");
  // Trailing dashes trimmed with a loop: `/-+$/` would be quadratic on a long run of dashes before a letter.
  while (safe.endsWith("-")) safe = safe.slice(0, -1);
  return `${BRANCH_PREFIX}run-${safe || "unknown"}`;
}

/** What a failed push means, and what to do about it. */
export function explainPushFailure(stderr: string, repo: string, branch: string): string {
  if (/returned error: 403|Permission to \S+ denied|\b403\b/i.test(stderr))
    return `the token cannot push to ${repo} (403). Give the publishing job \`permissions: contents: write\`; when that is not enough (a fork, an organisation that makes GITHUB_TOKEN read-only, a ruleset), pass a PAT or GitHub App token with contents: write as the token input.`;
  if (
    /returned error: 401|Authentication failed|could not read Username|terminal prompts disabled/i.test(
      stderr,
    )
  )
    return `the push to ${repo} was not authenticated: the token is missing or was rejected (401). Check the token input.`;
  if (/verified signatures|signed commits/i.test(stderr))
    return `a rule of ${repo} requires signed commits on ${branch}: publish with use_commit_signing (--use-commit-signing), so that GitHub makes and signs the commit.`;
  if (/GH006|GH013|protected branch|ruleset|rule violations|pre-receive hook declined/i.test(stderr))
    return `branch protection or a ruleset refused the push to ${branch}: let the token create ${BRANCH_PREFIX}* branches, or publish with a token that may.`;
  if (/non-fast-forward|fetch first|\(stale info\)|\[rejected\]/i.test(stderr))
    return `${branch} moved on the remote while publishing; publish never force-pushes. Re-run publish, or re-run the agent on the branch's new head.`;
  return `the push of ${branch} to ${repo} failed.`;
}
