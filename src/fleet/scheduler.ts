// The scheduler: the work a query names (issues by label, milestone or assignee, or a file of tasks), less
// what is done or in flight (an open agent-ci pull request for the issue, a live claim in the ledger, a run
// that ended published, a failed one until its claim's lease lapses), claimed up to N in one compare-and-swap
// append, under the spending caps; and the release (with the run's cost) when a run ends. Two schedulers that
// race both read the same tip; one append wins, the other reads again and claims only what is still free.
// A claimed issue also carries CLAIM_LABEL, so the claim shows on the issue; the label follows the ledger
// (put on after the append, taken off once the ledger no longer holds the claim) and never decides anything.
import { z } from "zod";
import { GitHubApiError, type GitHubApi } from "../github/api.js";
import { findMarkerComment } from "../github/comments.js";
import { BRANCH_PREFIX, PR_MARKER_PREFIX } from "../publish/pull-text.js";
import { CAP_COMMENT_MARKER, capComment, capRefusal, capRoom, type CapRoom, type Caps } from "./caps.js";
import { LedgerRepo, MAX_APPEND_TRIES, type LedgerEntry, type LedgerRemote } from "./ledger.js";
import { claimable, foldLedger, type QueueState } from "./queue-state.js";
import { runVerifier, trustedEntries, type TrustContext } from "./ledger-trust.js";

/**
 * The label on an issue a run has claimed (GitHub's add-labels call creates it in a repository that lacks it).
 * The ledger is the truth: a label that cannot be put on or taken off is a warning, never a lost claim.
 */
export const CLAIM_LABEL = "agent-ci:claimed";

/** The repository as GET /repos/{owner}/{repo} gives it: its default branch, which only trusted runs write from. */
export const RepositoryJson = z.object({ default_branch: z.string() });

export interface WorkItem {
  /** `issue:<n>` or `task:<id>`. */
  item: string;
  issue?: number;
  title: string;
  /** A tasks file's line (the run's options by flag name). */
  task?: Record<string, unknown>;
}

export interface WorkQuery {
  label?: string;
  milestone?: string;
  assignee?: string;
  /** A tasks file's lines, each with an `id`. */
  tasks?: Array<Record<string, unknown>>;
}

/** Pages of issues read at most (100 each). */
export const MAX_ISSUE_PAGES = 10;

const ListedIssue = z.object({
  number: z.number().int(),
  title: z.string(),
  pull_request: z.unknown().optional(),
});

/** The open issues (never pull requests) a query names, oldest first; or the tasks file's items. */
export async function listWork(api: GitHubApi, ctx: TrustContext, query: WorkQuery): Promise<WorkItem[]> {
  if (query.tasks)
    return query.tasks.map((task) => ({
      item: `task:${String(task.id)}`,
      title: String(task.id),
      task,
    }));
  const found: WorkItem[] = [];
  for (let page = 1; page <= MAX_ISSUE_PAGES; page += 1) {
    const response = await api.call(
      "GET /repos/{owner}/{repo}/issues",
      {
        owner: ctx.owner,
        repo: ctx.repo,
        state: "open",
        sort: "created",
        direction: "asc",
        per_page: 100,
        page,
        ...(query.label ? { labels: query.label } : {}),
        ...(query.milestone ? { milestone: query.milestone } : {}),
        ...(query.assignee ? { assignee: query.assignee } : {}),
      },
      { what: "listing the queue's issues", permission: "issues: read" },
    );
    const issues = z.array(ListedIssue).parse(response.data);
    for (const issue of issues)
      if (issue.pull_request === undefined || issue.pull_request === null)
        found.push({ item: `issue:${issue.number}`, issue: issue.number, title: issue.title });
    if (issues.length < 100) break;
  }
  return found;
}

const ListedPull = z.object({
  head: z.object({ ref: z.string() }),
  body: z.string().nullish(),
});

/**
 * Issues an open agent-ci pull request already answers: its branch is agent-ci's, its description starts with
 * agent-ci's marker and names the issue as publish writes it ("Fixes #n" or "Opened from #n").
 */
export async function issuesWithOpenPulls(api: GitHubApi, ctx: TrustContext): Promise<Set<number>> {
  const answered = new Set<number>();
  for (let page = 1; page <= MAX_ISSUE_PAGES; page += 1) {
    const response = await api.call(
      "GET /repos/{owner}/{repo}/pulls",
      { owner: ctx.owner, repo: ctx.repo, state: "open", per_page: 100, page },
      { what: "listing open pull requests", permission: "pull-requests: read" },
    );
    const pulls = z.array(ListedPull).parse(response.data);
    for (const pull of pulls) {
      const body = pull.body ?? "";
      if (!pull.head.ref.startsWith(BRANCH_PREFIX) || !body.startsWith(PR_MARKER_PREFIX)) continue;
      for (const m of body.matchAll(/^(?:Fixes|Opened from) #(\d{1,10})$/gm)) answered.add(Number(m[1]));
    }
    if (pulls.length < 100) break;
  }
  return answered;
}

export interface SchedulerOptions {
  api: GitHubApi;
  context: TrustContext;
  remote: LedgerRemote;
  /** This workflow run's id (assertTrustedWriter). */
  runId: string;
  now?: () => number;
  log?: (line: string) => void;
  /** Where a warning goes (a label not put on); default `log`. */
  warn?: (line: string) => void;
}

/** What a scheduler is opened from: the API and the token it holds, the repository, the run that writes. */
export interface SchedulerSetup {
  api: GitHubApi;
  token: string;
  owner: string;
  repo: string;
  /** GITHUB_SERVER_URL: the ledger's remote is `<server>/<owner>/<repo>.git` unless `remoteUrl` names one. */
  serverUrl: string;
  remoteUrl?: string;
  /** The run that writes ("" for a reader). */
  runId: string;
  log?: (line: string) => void;
  warn?: (line: string) => void;
}

/** The scheduler's options: the repository's default branch read (trust.ts checks runs against it). */
export async function openScheduler(setup: SchedulerSetup): Promise<SchedulerOptions> {
  const { api, owner, repo, token } = setup;
  const info = await api.call(
    "GET /repos/{owner}/{repo}",
    { owner, repo },
    { what: "reading the repository" },
  );
  const defaultBranch = RepositoryJson.parse(info.data).default_branch;
  const server = setup.serverUrl.replace(/\/+$/, "");
  return {
    api,
    context: { api, owner, repo, defaultBranch },
    remote: {
      url: setup.remoteUrl ?? `${server}/${owner}/${repo}.git`,
      token,
      redact: (t) => t.split(token).join("***"),
    },
    runId: setup.runId,
    log: setup.log,
    warn: setup.warn,
  };
}

/** The next job's matrix: `{"include": [{item, title, issue?, task?}]}` (a task's options as a JSON string). */
export function claimMatrix(claimed: readonly WorkItem[]): string {
  return JSON.stringify({
    include: claimed.map((w) => ({
      item: w.item,
      title: w.title,
      ...(w.issue !== undefined ? { issue: w.issue } : {}),
      ...(w.task ? { task: JSON.stringify(w.task) } : {}),
    })),
  });
}

export interface ClaimOptions {
  query: WorkQuery;
  max: number;
  leaseSeconds: number;
  caps?: Caps;
  /** Comment on each item the caps keep from starting (issues only). */
  commentOnRefusal?: boolean;
}

export interface ClaimResult {
  claimed: WorkItem[];
  /** Items left for later because of the caps. */
  capped: WorkItem[];
  cap?: CapRoom;
  refused: string[];
}

/** Reads the ledger and keeps what is trusted, folded into the queue's state. */
export async function readQueue(
  ledger: LedgerRepo,
  options: Pick<SchedulerOptions, "api" | "context" | "now">,
  verify = runVerifier(options.context),
): Promise<{ tip: string; state: QueueState; refused: string[] }> {
  const snapshot = await ledger.read();
  const trusted = await trustedEntries(snapshot, verify);
  return {
    tip: snapshot.tip,
    state: foldLedger(trusted.entries, (options.now ?? Date.now)()),
    refused: trusted.refused,
  };
}

/** Claims up to `max` free items, under the caps, with compare-and-swap; retries when another writer won. */
export async function claimWork(options: SchedulerOptions, claim: ClaimOptions): Promise<ClaimResult> {
  const now = options.now ?? Date.now;
  const [work, answered] = await Promise.all([
    listWork(options.api, options.context, claim.query),
    issuesWithOpenPulls(options.api, options.context),
  ]);
  const ledger = await LedgerRepo.open(options.remote);
  const verify = runVerifier(options.context);
  try {
    for (let attempt = 0; attempt < MAX_APPEND_TRIES; attempt += 1) {
      const { tip, state, refused } = await readQueue(ledger, options, verify);
      const free = work.filter(
        (w) => claimable(state, w.item) && (w.issue === undefined || !answered.has(w.issue)),
      );
      const cap = claim.caps ? capRoom(state, claim.caps) : undefined;
      const take = Math.min(claim.max, cap?.room ?? Number.POSITIVE_INFINITY, free.length);
      const chosen = free.slice(0, take);
      const capped = cap && cap.room < Math.min(claim.max, free.length) ? free.slice(take, claim.max) : [];
      if (!chosen.length) {
        if (capped.length && claim.commentOnRefusal && cap?.why)
          await commentCapped(options, capped, cap.why);
        return { claimed: [], capped, cap, refused };
      }
      const at = new Date(now()).toISOString();
      const entries: LedgerEntry[] = chosen.map((w) => ({
        v: 1,
        kind: "claim",
        run_id: options.runId,
        at,
        item: w.item,
        lease_s: claim.leaseSeconds,
      }));
      if (await ledger.append(tip, entries)) {
        await labelClaimed(options, chosen);
        if (capped.length && claim.commentOnRefusal && cap?.why)
          await commentCapped(options, capped, cap.why);
        return { claimed: chosen, capped, cap, refused };
      }
      options.log?.(`the queue's ledger moved while claiming (try ${attempt + 1}): reading it again`);
    }
    throw new Error(
      `the queue's ledger kept moving: ${MAX_APPEND_TRIES} claims in a row lost to other schedulers; try again`,
    );
  } finally {
    ledger.close();
  }
}

/**
 * The caps asked before a start that the ledger does not record (a batch's task): the ledger read again each
 * time, since other schedulers spend too, with the starter's own spend and runs in flight added. A ledger that
 * cannot be read starts nothing: the answer is then the reason.
 */
export function ledgerCapCheck(
  options: Pick<SchedulerOptions, "api" | "context" | "remote" | "now">,
  caps: Caps,
): (own: { spentUsd: number; running: number }) => Promise<string | undefined> {
  return async (own) => {
    try {
      const ledger = await LedgerRepo.open(options.remote);
      try {
        return capRefusal((await readQueue(ledger, options)).state, caps, own);
      } finally {
        ledger.close();
      }
    } catch (e) {
      return `the ledger could not be read, so nothing starts (${(e as Error).message})`;
    }
  };
}

/**
 * Before a single triggered run (one no queue claimed: `agent-ci queue check`, the Action's own run): the caps'
 * rule for one more start, as a claim applies it (capRoom: the spend so far, max_budget_usd held for each run in
 * flight and for this one). The reason it may not start, said on its thread with the queue's cap comment when a
 * thread is given; undefined when it may.
 */
export async function singleRunRefusal(
  options: SchedulerOptions,
  caps: Caps,
  thread?: number,
): Promise<string | undefined> {
  const ledger = await LedgerRepo.open(options.remote);
  let room: CapRoom;
  try {
    room = capRoom((await readQueue(ledger, options)).state, caps);
  } finally {
    ledger.close();
  }
  if (room.room > 0) return undefined;
  const why = room.why ?? `${caps.capName}'s caps leave no room for a run`;
  if (thread !== undefined)
    await commentCapped(options, [{ item: `issue:${thread}`, issue: thread, title: "" }], why);
  return why;
}

/** The ledger entry of a run's cost (from its report), counted under the cap's name. */
export function costEntry(runId: string, at: string, usd: number, cap: string, item?: string): LedgerEntry {
  return { v: 1, kind: "cost", run_id: runId, at, usd, cap, ...(item ? { item } : {}) };
}

/** Appends entries (a release, a cost) on whatever the tip is, with compare-and-swap. */
export async function appendEntries(options: SchedulerOptions, entries: LedgerEntry[]): Promise<void> {
  const ledger = await LedgerRepo.open(options.remote);
  try {
    for (let attempt = 0; attempt < MAX_APPEND_TRIES; attempt += 1) {
      const { tip } = await ledger.read();
      if (await ledger.append(tip, entries)) return;
    }
    throw new Error(`the queue's ledger kept moving: ${MAX_APPEND_TRIES} appends in a row lost; try again`);
  } finally {
    ledger.close();
  }
}

const issueOf = (item: string): number | undefined =>
  /^issue:\d+$/.test(item) ? Number(item.slice("issue:".length)) : undefined;

function warn(options: SchedulerOptions, line: string): void {
  (options.warn ?? options.log)?.(line);
}

/** Puts CLAIM_LABEL on each claimed issue; a failure is a warning (the ledger already holds the claim). */
async function labelClaimed(options: SchedulerOptions, claimed: readonly WorkItem[]): Promise<void> {
  const { api, context } = options;
  for (const w of claimed) {
    if (w.issue === undefined) continue;
    try {
      await api.call(
        "POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
        { owner: context.owner, repo: context.repo, issue_number: w.issue, labels: [CLAIM_LABEL] },
        { what: `labelling #${w.issue} ${CLAIM_LABEL}`, permission: "issues: write" },
      );
    } catch (e) {
      warn(options, `${(e as Error).message} (the claim stands: the ledger holds it)`);
    }
  }
}

/**
 * Takes CLAIM_LABEL off a released item's issue, once the ledger (read again, trusted entries only) no longer
 * holds a claim on it: a release of a claim another run has since retaken leaves that run's label on. An issue
 * without the label is fine; any other failure is a warning.
 */
export async function unlabelReleased(options: SchedulerOptions, item: string): Promise<void> {
  const issue = issueOf(item);
  if (issue === undefined) return;
  const { api, context } = options;
  try {
    const ledger = await LedgerRepo.open(options.remote);
    let holder: string | undefined;
    try {
      const current = (await readQueue(ledger, options)).state.items.get(item);
      holder = current?.status === "claimed" ? current.runId : undefined;
    } finally {
      ledger.close();
    }
    if (holder !== undefined) {
      options.log?.(`#${issue} is claimed by run ${holder}: its ${CLAIM_LABEL} label stays`);
      return;
    }
    await api.call(
      "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
      { owner: context.owner, repo: context.repo, issue_number: issue, name: CLAIM_LABEL },
      { what: `taking ${CLAIM_LABEL} off #${issue}`, permission: "issues: write" },
    );
  } catch (e) {
    if (e instanceof GitHubApiError && e.failure.kind === "not_found") return;
    warn(options, `${(e as Error).message} (the release stands: the ledger holds it)`);
  }
}

/** Says on each capped issue why it did not start: one comment per issue, edited on the next refusal. */
export async function commentCapped(
  options: SchedulerOptions,
  items: WorkItem[],
  why: string,
): Promise<void> {
  const { api, context } = options;
  for (const item of items) {
    if (item.issue === undefined) continue;
    const existing = await findMarkerComment(api, context, item.issue, CAP_COMMENT_MARKER, "issues: write");
    const body = capComment(why);
    if (existing)
      await api.call(
        "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
        { owner: context.owner, repo: context.repo, comment_id: existing.id, body },
        { what: `updating the spending cap's note on #${item.issue}`, permission: "issues: write" },
      );
    else
      await api.once(
        "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
        { owner: context.owner, repo: context.repo, issue_number: item.issue, body },
        { what: `saying on #${item.issue} that the spending cap was reached`, permission: "issues: write" },
      );
  }
}
