// The publish step's options and their defaults, and its refusal: what `agent-ci publish --help` and the
// Actions' inputs need, without loading the gate (secretlint), git or the GitHub client.

export const FINDING_KINDS = [
  "secret",
  "lifecycle_script",
  "git_hook",
  "executable",
  "large_binary",
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

export const DEFAULT_MAX_BINARY_BYTES = 1024 * 1024;
export const DEFAULT_MAX_PATCH_BYTES = 5 * 1024 * 1024;

/** The kinds `--allow-finding` / `allow_findings` name, checked: an unknown kind is an error, not a no-op. */
export function parseFindingKinds(values: readonly string[]): FindingKind[] {
  const unknown = values.filter((v) => !(FINDING_KINDS as readonly string[]).includes(v));
  if (unknown.length)
    throw new Error(
      `unknown finding kind(s) ${unknown.map((v) => JSON.stringify(v)).join(", ")}: one of ${FINDING_KINDS.join(", ")}`,
    );
  return [...new Set(values)] as FindingKind[];
}

/**
 * The commits' author when the user names none: the GitHub Actions bot, whose noreply address belongs to it
 * (an address at another login would credit whichever account holds that name).
 */
export const DEFAULT_AUTHOR = {
  name: "github-actions[bot]",
  email: "41898282+github-actions[bot]@users.noreply.github.com",
} as const;

/** How the pull request names the issue the run came from: closing it on merge, pointing at it, or not at all. */
export const LINK_ISSUE_MODES = ["closes", "references", "none"] as const;
export type LinkIssue = (typeof LINK_ISSUE_MODES)[number];
/** Pointing at the issue without closing it: whether a merge closes it stays a person's decision. */
export const DEFAULT_LINK_ISSUE: LinkIssue = "references";

/** A git or GitHub step failed; the message says what was done before, and what to do. */
export class PublishFailedError extends Error {
  override readonly name = "PublishFailedError";
}

/** The patch may not go out: the message lists why. Nothing was pushed. */
export class PublishRefusedError extends Error {
  override readonly name = "PublishRefusedError";
}

/**
 * The most file content one commit made through GitHub's API may carry (use_commit_signing): createCommitOnBranch
 * takes every added or changed file whole, base64 encoded (a third larger), in one GraphQL request. GitHub
 * documents no limit for the mutation, and its API times out on large requests; agent-ci refuses a commit over
 * this before asking, so a large binary is refused by name rather than by a timeout.
 */
export const SIGNED_COMMIT_MAX_BYTES = 10 * 1024 * 1024;
