// `agent-ci publish`: a finished run's output folder (report.json + patch.diff, or the downloaded
// artifact) becomes a commit on a branch and a pull request, with a token the agent never held.
//
// The patch is data: it is checked (checks.ts), applied with `git apply --cached` to a temporary index
// built from the base commit the report records (no working tree, so no checkout filter and no hook runs),
// committed with `git commit-tree` with the run's end time as the date (the same run gives the same
// commit), pushed without force, and opened as a pull request. When the run came from an agent-ci pull
// request, the commit goes on that PR's branch instead; a resumed run's (its patch is the whole change against
// the same base) goes on top of the commit of the run it continues, and only when the base its report names
// is where the branch's agent-ci commits start (else the checks of patch.diff would miss part of the new
// commit's change). On a person's pull request of this repository the commit goes onto its branch when
// `pushToPrBranch` says so (else into a new PR against it), only while the branch is still at the run's
// base, with a comment saying what was pushed; a fork's pull request gets a comment and nothing pushed. With
// `useCommitSigning` GitHub makes the commit through its API (signed-commit.ts) instead of a push. Re-running
// publish for the same run finds the branch already at that tree and the PR already open (or the comment
// posted), and changes nothing. Every failure is an error that says what to do; nothing here reports success
// for a step that did not happen.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { markdownCode, parseRunCommit, RunReport, type GitHubTextOptions } from "../report/index.js";
import { GitHubApiError, type GitHubApi } from "../github/api.js";
import { git } from "../host-git.js";
import { checkPatch, type PatchCheckOptions } from "./checks.js";
import { gitPatchSides, treeWithPatch, type GitRun, type PatchSides } from "./patch-sides.js";
import { readBranchHistory, wholeChangeBody, type HistoryGit } from "./pr-description.js";
import { forkComment, postOnce, pushedComment } from "./pr-comment.js";
import {
  commitMessageInput,
  createCommitOnBranch,
  fileChangesFor,
  isStaleHead,
  parseRawTreeDiff,
  type CreatedCommit,
} from "./signed-commit.js";
import {
  DEFAULT_AUTHOR,
  DEFAULT_LINK_ISSUE,
  LINK_ISSUE_MODES,
  PublishFailedError,
  PublishRefusedError,
  type LinkIssue,
} from "./options.js";
import {
  allowedFindingsNote,
  BRANCH_PREFIX,
  commitMessage,
  commitTitle,
  issueLine,
  prMarker,
  publishCommentMarker,
  pullBody,
  runBranch,
  safeRunId,
  verifyInputsNote,
} from "./pull-text.js";
import { commitPage, ensureCommit, pushRef, remoteTipOf, Repo } from "./publish-repo.js";

export {
  DEFAULT_AUTHOR,
  DEFAULT_LINK_ISSUE,
  LINK_ISSUE_MODES,
  PublishFailedError,
  PublishRefusedError,
  type LinkIssue,
};

export interface PublishPrOptions extends PatchCheckOptions {
  /** The run's output folder: report.json, patch.diff, and trigger.json when the Action wrote one. */
  outDir: string;
  /** A git checkout of the repository (shallow is fine: what is missing is fetched). */
  repoDir: string;
  /** Remote name or URL to fetch from and push to. */
  remote: string;
  /** Token for git over HTTPS (sent as a header through the environment). */
  token?: string;
  api: GitHubApi;
  owner: string;
  repo: string;
  /** Branch the new PR targets; default: the PR's head for a run on someone's PR, else the default branch. */
  baseBranch?: string;
  /** Publish onto this pull request instead of the one trigger.json names. */
  pullNumber?: number;
  /** How the PR names the issue the run came from (default: DEFAULT_LINK_ISSUE, "Opened from #N"). */
  linkIssue?: LinkIssue;
  /**
   * On a person's pull request of this repository, push onto its branch (a new commit on top, refused when the
   * branch moved since the run's base) instead of opening a pull request against it.
   */
  pushToPrBranch?: boolean;
  /** Have GitHub make the commit through its GraphQL API (createCommitOnBranch), which GitHub signs. */
  useCommitSigning?: boolean;
  /** The GitHub server (`https://github.com`): links to commits pushed with git. */
  serverUrl?: string;
  /** The workflow run publishing, linked from the comments publish leaves. */
  runUrl?: string;
  author: { name: string; email: string };
  /** The repository's GitHub host (`github.com`): the model's links to it stay links, all others are text. */
  githubHost?: string;
  log: (line: string) => void;
  redact: (text: string) => string;
}

export interface PublishPrResult {
  /** commented: a fork's pull request, answered with a comment and nothing pushed. */
  action: "created" | "updated" | "unchanged" | "commented";
  pullNumber: number;
  pullUrl: string;
  /** The branch the commit is on ("" when nothing was pushed, on a fork's pull request). */
  branch: string;
  commitSha: string;
  /** The commit's page on GitHub ("" when unknown: no serverUrl and no commit made through the API). */
  commitUrl: string;
  pushed: boolean;
  /** The commit on the branch carries a signature (with use_commit_signing, GitHub's). */
  signed: boolean;
}

const Trigger = z.object({
  target: z.object({ number: z.number().int().positive(), isPullRequest: z.boolean() }).optional(),
});

const PullJson = z.object({
  number: z.number(),
  html_url: z.string(),
  body: z.string().nullable().optional(),
  state: z.string().optional(),
  head: z.object({ ref: z.string(), sha: z.string(), repo: z.object({ full_name: z.string() }).nullable() }),
  base: z.object({ ref: z.string() }),
});
type PullJson = z.infer<typeof PullJson>;

function readOptional(file: string): string | undefined {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined;
}

function loadReport(outDir: string): RunReport {
  const file = path.join(outDir, "report.json");
  const text = readOptional(file);
  if (text === undefined)
    throw new PublishRefusedError(
      `${file} not found: give publish a run's output folder or its downloaded artifact`,
    );
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new PublishRefusedError(`${file} is not JSON: ${(error as Error).message}`);
  }
  const parsed = RunReport.safeParse(json);
  if (!parsed.success)
    throw new PublishRefusedError(
      `${file} is not an agent-ci report: ${parsed.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ")}`,
    );
  return parsed.data;
}

function loadTrigger(outDir: string): z.infer<typeof Trigger>["target"] {
  const text = readOptional(path.join(outDir, "trigger.json"));
  if (text === undefined) return undefined;
  try {
    return Trigger.parse(JSON.parse(text)).target;
  } catch {
    return undefined;
  }
}

function loadTriggerTarget(outDir: string): number | undefined {
  const target = loadTrigger(outDir);
  return target?.isPullRequest ? target.number : undefined;
}

/** The issue (not a pull request) the run came from, when trigger.json names one. */
function loadTriggerIssue(outDir: string): number | undefined {
  const target = loadTrigger(outDir);
  return target && !target.isPullRequest ? target.number : undefined;
}

/**
 * Whether the branch's tip is the commit of the run this one resumed (its trailer names that run): a resumed
 * run's patch is the whole change against the same base, so its commit goes on top of that one.
 */
async function continuesTip(repo: Repo, report: RunReport, tip: string): Promise<boolean> {
  const earlier = report.resumedFrom?.runId;
  if (!earlier) return false;
  const message = await repo.run(["log", "-1", "--format=%B", tip]);
  return parseRunCommit(message)?.runId === safeRunId(earlier);
}

/** git for reading the branch's agent-ci commits, fetching what a shallow checkout lacks. */
function historyGit(repo: Repo, options: PublishPrOptions, branch: string): HistoryGit {
  return {
    run: (args) => repo.run(args),
    ensure: (sha) => ensureCommit(repo, options.remote, sha, `a commit of ${branch}`),
  };
}

/**
 * A resumed run's commit goes on top of the branch, but its tree is built from the base its report names: that
 * base must be where the branch's agent-ci commits start, or the new commit would hold changes (between the
 * branch's start and the named base) that patch.diff, and so every check of it, never showed. The report may
 * be forged: it is checked against the branch, never believed.
 */
async function requireChainStart(
  repo: Repo,
  options: PublishPrOptions,
  branch: string,
  tip: string,
  report: RunReport,
): Promise<void> {
  const history = await readBranchHistory(historyGit(repo, options, branch), tip);
  const base = report.workspace.baseCommit ?? "";
  if (history?.start === base) return;
  throw new PublishRefusedError(
    `not published: run ${report.runId} continues run ${report.resumedFrom?.runId ?? "?"} from base ${base}, but ${branch}'s agent-ci commits start at ${history?.start ?? "no agent-ci commit"}; a commit built from another base would carry changes its patch.diff does not show, past the checks. Re-run the agent from the branch's own artifact.`,
  );
}

async function getPull(options: PublishPrOptions, number: number): Promise<PullJson> {
  const response = await options.api.call(
    "GET /repos/{owner}/{repo}/pulls/{pull_number}",
    { owner: options.owner, repo: options.repo, pull_number: number },
    { what: `reading pull request #${number}`, permission: "pull-requests: read" },
  );
  return PullJson.parse(response.data);
}

async function openPullFor(options: PublishPrOptions, branch: string): Promise<PullJson | undefined> {
  const response = await options.api.call(
    "GET /repos/{owner}/{repo}/pulls",
    {
      owner: options.owner,
      repo: options.repo,
      head: `${options.owner}:${branch}`,
      state: "open",
      per_page: 10,
    },
    { what: `looking for an open pull request from ${branch}`, permission: "pull-requests: read" },
  );
  return z.array(PullJson).parse(response.data)[0];
}

async function defaultBranch(options: PublishPrOptions): Promise<string> {
  const response = await options.api.call(
    "GET /repos/{owner}/{repo}",
    { owner: options.owner, repo: options.repo },
    { what: "reading the repository's default branch", permission: "contents: read" },
  );
  return z.object({ default_branch: z.string() }).parse(response.data).default_branch;
}

function apiFailure(error: unknown, done: string): never {
  if (error instanceof GitHubApiError) throw new PublishFailedError(`${done}${error.message}`);
  throw error;
}

/**
 * Where the run's change goes: a new branch for a new pull request against `base`; onto an agent-ci pull
 * request's branch; onto a person's pull request's branch (pushToPrBranch); or nowhere, for a fork's pull
 * request, which is answered with a comment.
 */
type Target =
  | { kind: "new"; branch: string; base?: string }
  | { kind: "agent-ci"; branch: string; pull: PullJson }
  | { kind: "person"; branch: string; pull: PullJson }
  | { kind: "fork"; pull: PullJson };

/** The pull request's head is this repository's: who opened it and where its branch lives come from GitHub. */
async function chooseTarget(options: PublishPrOptions, report: RunReport): Promise<Target> {
  const number = options.pullNumber ?? loadTriggerTarget(options.outDir);
  const full = `${options.owner}/${options.repo}`;
  if (number === undefined) return { kind: "new", branch: runBranch(report.runId), base: options.baseBranch };
  const pull = await getPull(options, number).catch((e: unknown) => apiFailure(e, ""));
  if (pull.head.repo?.full_name !== full) return { kind: "fork", pull };
  if (pull.head.ref.startsWith(BRANCH_PREFIX)) return { kind: "agent-ci", branch: pull.head.ref, pull };
  if (!options.pushToPrBranch)
    // Someone's own PR: the change goes to them as a PR against their branch, not onto it.
    return { kind: "new", branch: runBranch(report.runId), base: options.baseBranch ?? pull.head.ref };
  if ((pull.state ?? "open") !== "open")
    throw new PublishRefusedError(
      `not published: pull request #${number} is ${pull.state ?? "not open"}; publish pushes onto the branch of an open pull request only. Nothing was pushed; the patch stays in the run's artifact.`,
    );
  return { kind: "person", branch: pull.head.ref, pull };
}

/**
 * The body of an agent-ci pull request this run published onto: the whole change and every run when the
 * branch holds more than this one (pr-description.ts), else this run's. The title is left as it is: it was
 * written for the first run, which named what the pull request is for, and a person may have edited it
 * since; the body lists every run.
 */
async function followUpBody(
  repo: Repo,
  options: PublishPrOptions,
  branch: string,
  commitSha: string,
  report: RunReport,
  issue: string | undefined,
  notes: readonly string[],
): Promise<string> {
  const history = await readBranchHistory(historyGit(repo, options, branch), commitSha).catch(
    (error: unknown) => {
      options.log(
        `could not read the earlier runs on ${branch} (${(error as Error).message}); the description names this run only`,
      );
      return undefined;
    },
  );
  const text = { host: options.githubHost };
  return history && history.runs.length > 1
    ? wholeChangeBody(history, prMarker(report.runId), issue, text, notes)
    : pullBody(report, issue, text, notes);
}

/**
 * Refuses a patch with problems (secrets, size, …); logs the findings --allow-finding let through and
 * returns their note.
 */
async function checkBeforePublish(
  options: PublishPrOptions,
  report: RunReport,
  patchFile: string,
  sides: () => Promise<PatchSides>,
): Promise<string[]> {
  const { problems, allowed } = await checkPatch(report, readOptional(patchFile), options, sides);
  if (problems.length)
    throw new PublishRefusedError(`not published:\n${problems.map((p) => `- ${p}`).join("\n")}`);
  for (const finding of allowed)
    options.log(
      `allowed by --allow-finding ${finding.kind}: ${finding.file}${finding.line ? `:${finding.line}` : ""}`,
    );
  return allowedFindingsNote(allowed);
}

/** The run's commit on its branch: pushed, or found already there. */
interface BranchCommit {
  branch: string;
  commitSha: string;
  commitUrl: string;
  /** The commit it went on top of. */
  parent: string;
  pushed: boolean;
  signed: boolean;
}

/** The commit made here with git (the author and the run's end time from the options), pushed without force. */
async function commitWithGit(
  repo: Repo,
  options: PublishPrOptions,
  report: RunReport,
  branch: string,
  parent: string,
  tree: string,
  message: string,
): Promise<{ commitSha: string; commitUrl: string }> {
  const date = `${Math.floor(Date.parse(report.endedAt) / 1000)} +0000`;
  const commitSha =
    // --no-gpg-sign: the runner's git configuration does not sign (or fail to sign) the commit behind our back.
    (
      await repo.run(["commit-tree", "--no-gpg-sign", tree, "-p", parent, "-m", message], {
        GIT_AUTHOR_NAME: options.author.name,
        GIT_AUTHOR_EMAIL: options.author.email,
        GIT_COMMITTER_NAME: options.author.name,
        GIT_COMMITTER_EMAIL: options.author.email,
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_DATE: date,
      })
    ).trim();
  await pushRef(repo, options, commitSha, branch);
  return { commitSha, commitUrl: commitPage(options, commitSha) };
}

/**
 * The commit made by GitHub through createCommitOnBranch (use_commit_signing): the change from `parent` to
 * `tree` as whole files, refused with every reason when the mutation cannot carry it exactly; the branch
 * created at `parent` first when it does not exist (the mutation appends to a branch); then the commit GitHub
 * made is fetched and must be `tree` on `parent`, or the step fails saying what is on the branch.
 */
async function commitThroughApi(
  repo: Repo,
  options: PublishPrOptions,
  branch: string,
  tip: string | undefined,
  parent: string,
  tree: string,
  message: string,
): Promise<CreatedCommit> {
  const full = `${options.owner}/${options.repo}`;
  const changes = parseRawTreeDiff(
    await repo.bytes(["diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", parent, tree]),
  );
  const files = await fileChangesFor(changes, {
    size: async (oid) => Number((await repo.run(["cat-file", "-s", oid])).trim()),
    read: (oid) => repo.bytes(["cat-file", "blob", oid]),
  });
  if (files.kind === "refused")
    throw new PublishRefusedError(
      `not published: use_commit_signing (--use-commit-signing) has GitHub make the commit through its API (createCommitOnBranch), which cannot carry this patch exactly:\n${files.reasons.map((r) => `- ${r}`).join("\n")}\nNothing was pushed; the patch stays in the run's artifact. Publish it without use_commit_signing to push it as a git commit (unsigned).`,
    );
  if (!tip) {
    await pushRef(repo, options, parent, branch);
    options.log(`created ${branch} at ${parent} for the commit GitHub makes`);
  }
  let created: CreatedCommit;
  try {
    created = await createCommitOnBranch(options.api, {
      branch: { repositoryNameWithOwner: full, branchName: branch },
      expectedHeadOid: parent,
      message: commitMessageInput(message),
      fileChanges: files.fileChanges,
    });
  } catch (error) {
    if (isStaleHead(error))
      throw new PublishFailedError(
        `not published: ${branch} moved on ${full} while publishing (it is no longer at ${parent}); GitHub made no commit. Publish never overwrites a branch: re-run publish, or re-run the agent on the branch's new head.\nGitHub said: ${(error as Error).message}`,
      );
    if (
      error instanceof GitHubApiError &&
      (error.failure.kind === "integration" || error.failure.kind === "forbidden")
    )
      throw new PublishFailedError(
        `not published: ${error.message} Give the publishing job \`permissions: contents: write\`, or pass a token that may write to ${full}.`,
      );
    if (
      error instanceof GitHubApiError &&
      (error.failure.kind === "server" || error.failure.kind === "network")
    )
      throw new PublishFailedError(
        `not known whether GitHub made the commit: ${error.message} Re-run publish: it finds the commit on ${branch} if GitHub made it, and makes it otherwise.`,
      );
    if (error instanceof GitHubApiError) throw new PublishFailedError(`not published: ${error.message}`);
    throw error;
  }
  options.log(`GitHub made ${created.oid} on ${branch} (createCommitOnBranch): ${created.url}`);
  await ensureCommit(repo, options.remote, created.oid, "the commit GitHub made");
  const madeTree = (await repo.run(["rev-parse", `${created.oid}^{tree}`])).trim();
  const { parents } = await repo.commitFacts(created.oid);
  if (madeTree !== tree || parents.length !== 1 || parents[0] !== parent)
    throw new PublishFailedError(
      `GitHub made ${created.oid} on ${branch}, but it is not the commit publish built: its tree is ${madeTree} on ${parents.join(", ") || "no parent"}, where the patch gives ${tree} on ${parent}. The branch holds it now: look at ${created.url}, and revert it if it is wrong.`,
    );
  return created;
}

/**
 * Commits the patched tree onto the branch — on the run's base, or on the tip of an agent-ci chain the run
 * continues — with git and a push without force, or through GitHub's API (use_commit_signing); nothing to do
 * when the tip already holds the same tree. A branch that moved since the run's base is refused, untouched.
 */
async function commitOnBranch(
  repo: Repo,
  options: PublishPrOptions,
  report: RunReport,
  branch: string,
  tree: string,
  message: string,
): Promise<BranchCommit> {
  const { log } = options;
  const base = report.workspace.baseCommit ?? "";
  const tip = await remoteTipOf(repo, options, branch);
  const tipTree = tip ? (await repo.run(["rev-parse", `${tip}^{tree}`])).trim() : undefined;
  if (tip && tipTree === tree) {
    log(`${branch} already holds this run's change (${tip}); nothing to push`);
    const facts = await repo.commitFacts(tip);
    return {
      branch,
      commitSha: tip,
      commitUrl: commitPage(options, tip),
      parent: facts.parents[0] ?? "",
      pushed: false,
      signed: facts.signed,
    };
  }
  const continued = tip && tip !== base && (await continuesTip(repo, report, tip)) ? tip : undefined;
  if (continued) await requireChainStart(repo, options, branch, continued, report);
  const parent = continued ?? base;
  if (tip && tip !== parent)
    throw new PublishRefusedError(
      `not published: ${branch} is at ${tip}, but the run was based on ${base}: the branch moved since the run. Publish never force-pushes, and nothing was pushed; the patch stays in the run's artifact. Re-run the agent on the branch's head.`,
    );
  const made = options.useCommitSigning
    ? await commitThroughApi(repo, options, branch, tip, parent, tree, message).then((c) => ({
        commitSha: c.oid,
        commitUrl: c.url,
      }))
    : await commitWithGit(repo, options, report, branch, parent, tree, message);
  log(`pushed ${made.commitSha} to ${branch}`);
  const { signed } = await repo.commitFacts(made.commitSha);
  return { branch, ...made, parent, pushed: true, signed };
}

/** agent-ci's line in a pull request's description about a commit GitHub made and signed. */
function signedNote({ commitSha, commitUrl, signed }: BranchCommit): string[] {
  if (!signed) return [];
  const sha = markdownCode(commitSha.slice(0, 12), 20);
  return [
    `Commit ${commitUrl ? `[${sha}](${encodeURI(commitUrl)})` : sha} was made through GitHub's API (\`use_commit_signing\`): GitHub signed it.`,
  ];
}

/** Rewrites the body of the agent-ci pull request the run published onto; unchanged when nothing moved. */
async function updatePull(
  repo: Repo,
  options: PublishPrOptions,
  pull: PullJson,
  committed: BranchCommit,
  report: RunReport,
  issue: string | undefined,
  notes: readonly string[],
): Promise<PublishPrResult> {
  const { log, owner, repo: name } = options;
  const { branch, commitSha, pushed } = committed;
  const result = { pullNumber: pull.number, pullUrl: pull.html_url, ...resultOf(committed) };
  const done = pushed ? `${branch} was pushed (${commitSha}), but the pull request step failed: ` : "";
  const body = await followUpBody(repo, options, branch, commitSha, report, issue, notes);
  if ((pull.body ?? "") === body && !pushed) return { action: "unchanged", ...result };
  await options.api
    .call(
      "PATCH /repos/{owner}/{repo}/pulls/{pull_number}",
      { owner, repo: name, pull_number: pull.number, body },
      { what: `updating pull request #${pull.number}`, permission: "pull-requests: write" },
    )
    .catch((e: unknown) => apiFailure(e, done));
  log(`updated pull request #${pull.number}`);
  return { action: "updated", ...result };
}

const repositoryOf = (options: PublishPrOptions) => ({ owner: options.owner, repo: options.repo });

/** The result's fields that come from the commit. */
function resultOf({ branch, commitSha, commitUrl, pushed, signed }: BranchCommit) {
  return { branch, commitSha, commitUrl, pushed, signed };
}

/**
 * On a person's pull request: the commit is on its branch; the description stays the person's, and a comment
 * says what was pushed (once per run).
 */
async function notePushed(
  options: PublishPrOptions,
  pull: PullJson,
  committed: BranchCommit,
  report: RunReport,
): Promise<PublishPrResult> {
  const marker = publishCommentMarker(report.runId);
  const body = pushedComment({
    marker,
    report,
    branch: committed.branch,
    commitSha: committed.commitSha,
    commitUrl: committed.commitUrl,
    parent: committed.parent,
    title: commitTitle(report, { host: options.githubHost }),
    signed: committed.signed,
    runUrl: options.runUrl,
  });
  const done = committed.pushed
    ? `${committed.branch} was pushed (${committed.commitSha}), but the comment saying so failed: `
    : "";
  const comment = await postOnce(
    options.api,
    repositoryOf(options),
    pull.number,
    marker,
    options.redact(body),
  ).catch((e: unknown) => apiFailure(e, done));
  if (comment.posted) options.log(`commented on pull request #${pull.number}: ${comment.url ?? ""}`);
  return {
    action: committed.pushed || comment.posted ? "updated" : "unchanged",
    pullNumber: pull.number,
    pullUrl: pull.html_url,
    ...resultOf(committed),
  };
}

/** A fork's pull request: nothing can be pushed there; a comment says so and shows the patch (once per run). */
async function answerFork(
  options: PublishPrOptions,
  pull: PullJson,
  report: RunReport,
  patchText: string,
): Promise<PublishPrResult> {
  const fork = pull.head.repo?.full_name ?? "a deleted repository";
  const marker = publishCommentMarker(report.runId);
  const body = forkComment({
    marker,
    report,
    patchText,
    fork,
    repository: `${options.owner}/${options.repo}`,
    runUrl: options.runUrl,
  });
  const comment = await postOnce(
    options.api,
    repositoryOf(options),
    pull.number,
    marker,
    options.redact(body),
  ).catch((e: unknown) =>
    apiFailure(e, `nothing was pushed (pull request #${pull.number} comes from ${fork}), and `),
  );
  options.log(
    `pull request #${pull.number} comes from a fork (${fork}): nothing pushed; ${comment.posted ? "commented" : "the comment was there already"}: ${comment.url ?? ""}`,
  );
  return {
    action: "commented",
    pullNumber: pull.number,
    pullUrl: pull.html_url,
    branch: "",
    commitSha: "",
    commitUrl: "",
    pushed: false,
    signed: false,
  };
}

/** Opens the pull request for the run's branch, unless one is already open for it. */
async function openPull(
  options: PublishPrOptions,
  committed: BranchCommit,
  targetBase: string | undefined,
  body: string,
  title: string,
): Promise<PublishPrResult> {
  const { log, owner, repo: name } = options;
  const { branch, commitSha, pushed } = committed;
  const done = pushed ? `${branch} was pushed (${commitSha}), but the pull request step failed: ` : "";
  const existing = await openPullFor(options, branch).catch((e: unknown) => apiFailure(e, done));
  if (existing) {
    log(`pull request #${existing.number} is already open for ${branch}`);
    return {
      action: pushed ? "updated" : "unchanged",
      pullNumber: existing.number,
      pullUrl: existing.html_url,
      ...resultOf(committed),
    };
  }
  const baseRef = targetBase ?? (await defaultBranch(options).catch((e: unknown) => apiFailure(e, done)));
  const created = await options.api
    .call(
      "POST /repos/{owner}/{repo}/pulls",
      {
        owner,
        repo: name,
        title,
        head: branch,
        base: baseRef,
        body,
        maintainer_can_modify: false,
      },
      // Not idempotent: a retry after a lost answer could open a second PR.
      {
        what: `opening a pull request from ${branch} into ${baseRef}`,
        permission: "pull-requests: write",
        retry: false,
      },
    )
    .catch((e: unknown) => {
      if (
        e instanceof GitHubApiError &&
        (e.failure.kind === "unprocessable" ||
          e.failure.kind === "integration" ||
          e.failure.kind === "forbidden")
      )
        throw new PublishFailedError(
          `${done}${e.message} Check that ${baseRef} exists and differs from ${branch}, that the job has \`permissions: pull-requests: write\`, and that the repository setting "Allow GitHub Actions to create and approve pull requests" is on (or pass a PAT / GitHub App token). Then re-run publish: it reuses the pushed branch.`,
        );
      return apiFailure(e, done);
    });
  const pull = PullJson.parse(created.data);
  log(`opened pull request #${pull.number}: ${pull.html_url}`);
  return { action: "created", pullNumber: pull.number, pullUrl: pull.html_url, ...resultOf(committed) };
}

export async function publishPullRequest(options: PublishPrOptions): Promise<PublishPrResult> {
  const report = loadReport(options.outDir);
  const patchFile = path.join(options.outDir, "patch.diff");
  const text: GitHubTextOptions = { host: options.githubHost };
  const base = report.workspace.baseCommit ?? "";
  const issue = issueLine(loadTriggerIssue(options.outDir), options.linkIssue ?? DEFAULT_LINK_ISSUE);

  const remoteUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(options.remote)
    ? options.remote
    : (await git(["remote", "get-url", options.remote], { cwd: options.repoDir }).catch(() => "")).trim();
  const repo = new Repo(options, remoteUrl);
  // The gate reads the patched files from the tree the commit is made of: what it checked is what is pushed
  // (or, on a fork's pull request, what the comment shows).
  const run: GitRun = (args, env) => repo.run(args, env);
  let patched: Promise<string> | undefined;
  const patchedTree = () =>
    (patched ??= ensureCommit(repo, options.remote, base, "the run's base commit").then(() =>
      treeWithPatch(run, base, path.resolve(patchFile)),
    ));
  const notes = [
    ...verifyInputsNote(report),
    ...(await checkBeforePublish(options, report, patchFile, async () =>
      gitPatchSides(run, base, await patchedTree()),
    )),
  ];
  const target = await chooseTarget(options, report);
  if (target.kind === "fork") return answerFork(options, target.pull, report, readOptional(patchFile) ?? "");

  const tree = await patchedTree();
  const message = commitMessage(report, issue, text);
  const committed = await commitOnBranch(repo, options, report, target.branch, tree, message);
  const allNotes = [...notes, ...signedNote(committed)];
  switch (target.kind) {
    case "person":
      return notePushed(options, target.pull, committed, report);
    case "agent-ci":
      return updatePull(repo, options, target.pull, committed, report, issue, allNotes);
    case "new":
      return openPull(
        options,
        committed,
        target.base,
        pullBody(report, issue, text, allNotes),
        commitTitle(report, text),
      );
  }
}
