// The description of an agent-ci pull request that more than one run has published onto: the whole change
// against where the branch started, and each run with its summary and its files.
//
// The runs are read from the branch's commits, not from the pull request's body: a person may edit the
// body, and its text would have to be trusted to say what the branch holds. Each publish commit ends with
// agent-ci's own line `agent-ci run <id>` (commitMessage in pull-request.ts); the first-parent chain from
// the new commit back through such commits is the list of runs, and the parent of the earliest is where the
// branch started. A commit that is not agent-ci's ends the chain: the description then covers the runs
// after it. The messages are data: whatever they say is shown, made inert, never followed.
import {
  markdownCode,
  neutralizeGitHubText,
  parseRunCommit,
  type GitHubTextOptions,
} from "../report/index.js";

/** One changed file in a diff: `-` counts (binary) as 0. */
export interface FileStat {
  path: string;
  added: number;
  removed: number;
}

export interface BranchRun {
  runId: string;
  commit: string;
  summary: string;
  files: FileStat[];
}

export interface BranchHistory {
  /** Where the chain of agent-ci commits starts: the parent of its earliest commit. */
  start: string;
  /** Oldest first. */
  runs: BranchRun[];
  /** The whole change, start to the newest commit. */
  files: FileStat[];
}

/** A pull request lists at most this many runs (the oldest are left out and counted). */
const MAX_RUNS = 50;
/** Each run's summary is cut here in the description: the commit keeps the whole text. */
const SUMMARY_CHARS = 2_000;
const MAX_FILES = 100;

export interface HistoryGit {
  /** git in the checkout (pull-request.ts's Repo). */
  run(args: readonly string[]): Promise<string>;
  /** Makes sure a commit is in the checkout, fetching it when a shallow checkout lacks it. */
  ensure(sha: string): Promise<void>;
}

/** `git diff --numstat -z` output: `added\tremoved\tpath\0` per file (no renames asked for). */
export function parseNumstat(out: string): FileStat[] {
  const files: FileStat[] = [];
  for (const record of out.split("\0")) {
    const first = record.indexOf("\t");
    const second = first === -1 ? -1 : record.indexOf("\t", first + 1);
    if (second === -1) continue;
    const count = (text: string) => (/^\d{1,15}$/.test(text) ? Number(text) : 0);
    files.push({
      path: record.slice(second + 1),
      added: count(record.slice(0, first)),
      removed: count(record.slice(first + 1, second)),
    });
  }
  return files;
}

function numstat(git: HistoryGit, from: string, to: string): Promise<FileStat[]> {
  return git.run(["diff", "--numstat", "-z", "--no-renames", from, to]).then(parseNumstat);
}

/**
 * The agent-ci runs on a branch whose newest commit is `head`, read from its commits. Undefined when `head`
 * is not an agent-ci commit with one parent.
 */
export async function readBranchHistory(git: HistoryGit, head: string): Promise<BranchHistory | undefined> {
  const runs: BranchRun[] = [];
  let at = head;
  let start: string | undefined;
  for (let i = 0; i < MAX_RUNS; i++) {
    await git.ensure(at);
    // The raw object, not `git log`: a shallow checkout hides the parents of its boundary commits.
    const raw = await git.run(["cat-file", "commit", at]);
    const split = raw.indexOf("\n\n");
    const headers = split === -1 ? raw : raw.slice(0, split);
    const parents = [...headers.matchAll(/^parent ([0-9a-f]{40,64})$/gm)].map((m) => m[1]);
    const run = split === -1 ? undefined : parseRunCommit(raw.slice(split + 2));
    if (!run || parents.length !== 1 || !parents[0]) break;
    const parent = parents[0];
    await git.ensure(parent);
    runs.unshift({ ...run, commit: at, files: await numstat(git, parent, at) });
    start = parent;
    at = parent;
  }
  if (!start || !runs.length) return undefined;
  return { start, runs, files: await numstat(git, start, head) };
}

/** A changed file's path as the description shows it: escaped as report.md escapes paths. */
export const pathCode = (path: string) => markdownCode(path, 300);

function fileLines(files: readonly FileStat[]): string[] {
  const lines = files.slice(0, MAX_FILES).map((f) => `- ${pathCode(f.path)} (+${f.added} −${f.removed})`);
  if (files.length > MAX_FILES) lines.push(`- … and ${files.length - MAX_FILES} more`);
  return lines;
}

const totals = (files: readonly FileStat[]) =>
  `${files.length}, +${files.reduce((n, f) => n + f.added, 0)} −${files.reduce((n, f) => n + f.removed, 0)}`;

/** A run's summary in the description: inert, cut to its share of the body. */
function runSummaryText(summary: string, text: GitHubTextOptions): string {
  const inert = neutralizeGitHubText(summary, text);
  return inert.length > SUMMARY_CHARS ? `${inert.slice(0, SUMMARY_CHARS - 1)}…` : inert;
}

/** The body of a pull request several runs published onto: the whole change, then each run, newest last. */
export function wholeChangeBody(
  history: BranchHistory,
  marker: string,
  issue: string | undefined,
  text: GitHubTextOptions = {},
  /** agent-ci's own lines after the file list (the gate findings allowed through). */
  notes: readonly string[] = [],
): string {
  const runs = history.runs.flatMap((run, i) => [
    `### Run ${i + 1}: ${markdownCode(run.runId, 200)}`,
    runSummaryText(run.summary, text) || "_The agent left no summary._",
    "",
    `Changed files (${totals(run.files)}): ${run.files
      .slice(0, 20)
      .map((f) => pathCode(f.path))
      .join(", ")}${run.files.length > 20 ? ", …" : ""}`,
    "",
  ]);
  return [
    marker,
    `This pull request holds the changes of ${history.runs.length} agent-ci runs.`,
    "",
    ...(issue ? [issue, ""] : []),
    `**Changed files** (${totals(history.files)}), the whole change:`,
    ...fileLines(history.files),
    "",
    ...notes.flatMap((note) => [note, ""]),
    ...runs,
    `Updated by \`agent-ci publish\` from run ${markdownCode(history.runs.at(-1)?.runId ?? "?", 200)}; the branch started at ${markdownCode(history.start, 64)}.`,
  ].join("\n");
}
