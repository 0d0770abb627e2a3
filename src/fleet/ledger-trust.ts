// Which ledger entries count. Anyone whose token may push to the repository may move `refs/agent-ci/queue`,
// and that includes the code of a pull request: a workflow on `pull_request` from a branch of the repository
// runs the branch's scripts with a GITHUB_TOKEN that may write contents, and an agent's own pull request is
// exactly such a branch. So the ledger is read as claims made by workflow runs, and each claim is checked
// against what GitHub itself says about the run it names:
//
//   - a ledger commit has one parent at most (the chain is append-only), git's empty tree, and a message of
//     entries ledger.ts writes; any other commit is refused, its entries with it;
//   - every entry names its workflow run (`run_id`), and GitHub's record of that run (GET
//     /repos/{owner}/{repo}/actions/runs/{id}) must be a run of this repository, on a trusted event
//     (TRUSTED_EVENTS: never one a pull request starts), for the default branch: code the repository's
//     maintainers merged, not code a pull request brought;
//   - agent-ci writes the ledger only from such a run (`assertTrustedWriter`), so its own entries pass.
//
// A refused commit's entries are left out and the chain read on past it (later trusted entries stand on it).
// What an entry can do is bounded as well: a cost is never negative (a forged one can only tighten a cap), and
// a release ends only a claim of the same run. What this does not catch is a forged entry that names another,
// trusted run's id; docs/fleet.md says so and what it can then do (hold an item, add spend).
import { z } from "zod";
import type { GitHubApi } from "../github/api.js";
import { EMPTY_TREE, type LedgerEntry, type LedgerSnapshot } from "./ledger.js";

/**
 * Events whose workflow runs the default branch's code with nothing a pull request wrote: the ones a
 * scheduler, a maintainer or an issue starts. Every `pull_request*` event is left out on purpose.
 */
export const TRUSTED_EVENTS = [
  "schedule",
  "workflow_dispatch",
  "issues",
  "issue_comment",
  "push",
  "repository_dispatch",
] as const;

export class UntrustedWriterError extends Error {
  override readonly name = "UntrustedWriterError";
}

/** Refuses to write the ledger from a run a pull request started, or with no run to name. */
export function assertTrustedWriter(env: NodeJS.ProcessEnv): string {
  const runId = env.GITHUB_RUN_ID?.trim() ?? "";
  const event = env.GITHUB_EVENT_NAME?.trim() ?? "";
  if (!/^\d{1,20}$/.test(runId))
    throw new UntrustedWriterError(
      "the queue's ledger is written only from a workflow run (GITHUB_RUN_ID): every entry names the run that wrote it",
    );
  if (!(TRUSTED_EVENTS as readonly string[]).includes(event))
    throw new UntrustedWriterError(
      `the queue's ledger is not written from a ${event || "(unknown)"} run: only ${TRUSTED_EVENTS.join(", ")} runs, whose code is the default branch's, may claim, release or add spend`,
    );
  return runId;
}

const WorkflowRun = z.object({
  event: z.string(),
  head_branch: z.string().nullish(),
  repository: z.object({ full_name: z.string() }),
});

export interface TrustContext {
  api: GitHubApi;
  owner: string;
  repo: string;
  defaultBranch: string;
}

/** Why a run's entries are refused, or undefined when they count; asked of GitHub once per run id. */
export function runVerifier(context: TrustContext): (runId: string) => Promise<string | undefined> {
  const seen = new Map<string, Promise<string | undefined>>();
  const check = async (runId: string): Promise<string | undefined> => {
    const response = await context.api
      .call(
        "GET /repos/{owner}/{repo}/actions/runs/{run_id}",
        { owner: context.owner, repo: context.repo, run_id: runId },
        { what: `reading workflow run ${runId} named in the queue's ledger`, permission: "actions: read" },
      )
      .catch((error: Error) => error);
    if (response instanceof Error) return `run ${runId}: ${response.message}`;
    const run = WorkflowRun.safeParse(response.data);
    if (!run.success) return `run ${runId}: GitHub's answer is not a workflow run`;
    const full = `${context.owner}/${context.repo}`.toLowerCase();
    if (run.data.repository.full_name.toLowerCase() !== full)
      return `run ${runId} is a run of ${run.data.repository.full_name}`;
    if (!(TRUSTED_EVENTS as readonly string[]).includes(run.data.event))
      return `run ${runId} was started by ${run.data.event}`;
    if (run.data.head_branch !== context.defaultBranch)
      return `run ${runId} ran ${run.data.head_branch ?? "no branch"}, not ${context.defaultBranch}`;
    return undefined;
  };
  return (runId) => {
    let found = seen.get(runId);
    if (!found) seen.set(runId, (found = check(runId)));
    return found;
  };
}

export interface TrustedLedger {
  entries: LedgerEntry[];
  /** One line per refused commit or run, for the log and `queue status`. */
  refused: string[];
}

/** The entries of a snapshot that count, oldest first. */
export async function trustedEntries(
  snapshot: LedgerSnapshot,
  verify: (runId: string) => Promise<string | undefined>,
): Promise<TrustedLedger> {
  const entries: LedgerEntry[] = [];
  const refused: string[] = [];
  for (const commit of snapshot.commits) {
    const short = commit.oid.slice(0, 12);
    if (commit.parents.length > 1 || commit.tree !== EMPTY_TREE || !commit.entries) {
      refused.push(`${short}: not a ledger commit (a merge, files, or a message agent-ci does not write)`);
      continue;
    }
    const runs = [...new Set(commit.entries.map((e) => e.run_id))];
    const why = (await Promise.all(runs.map(verify))).filter((w): w is string => w !== undefined);
    if (why.length) {
      refused.push(`${short}: ${why.join("; ")}`);
      continue;
    }
    entries.push(...commit.entries);
  }
  return { entries, refused };
}
