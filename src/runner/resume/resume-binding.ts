// A resume record is data from another run — for the Action, an artifact that anyone able to run a workflow
// in the repository could have uploaded under the expected name. What it claims about the workspace (a base
// commit and a patch) is checked against what agent-ci publish pushed for that run: the commit whose message
// ends with `agent-ci run <id>` (report/run-commit.ts), reachable from the checkout's HEAD (the pull
// request's head, or the branch publish pushed). The record's base with its patch applied must give that
// commit's tree exactly; otherwise the record is refused before any container starts.
//
// The tree is built on the host with git alone, as publish builds it: the base read into a throwaway index,
// the patch applied to the index (`git apply --cached`: no working tree, no checkout filter, no hook), the
// tree written — its objects into a throwaway object directory, so neither the user's repository nor the
// fresh checkout of the base gains anything.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ConfigError } from "../../errors.js";
import { git, GitError } from "../../host-git.js";
import { parseRunCommit, RUN_TRAILER } from "../../report/index.js";

export interface RecordBindingOptions {
  /** The user's repository (the workspace as given), where publish's commit is looked for. */
  repo: string;
  /** A git repository holding the base commit (the resumed run's fresh checkout of it). */
  baseRepo: string;
  runId: string;
  baseCommit: string;
  /** The earlier patch's exact bytes. */
  patch: Buffer;
  /** Without a published commit for the run the record is refused (the Action's artifacts); else it is accepted unbound. */
  required: boolean;
  /** How the record was named, for the messages. */
  given: string;
  redact: (text: string) => string;
}

/** The published commit the record reproduces, or undefined when the run was never published (allowed only when not `required`). */
export async function bindResumeRecord(options: RecordBindingOptions): Promise<string | undefined> {
  const { runId, given } = options;
  const commits = await publishedCommits(options.repo, runId, options.redact);
  if (!commits.length) {
    if (!options.required) return undefined;
    throw new ConfigError(
      `--resume ${given}: no commit reachable from HEAD in ${options.repo} ends with "${RUN_TRAILER}${runId}", so the record cannot be checked against what agent-ci publish pushed for run ${runId}; a record from an artifact is resumed only on its published branch (check out the pull request's head, with its history)`,
    );
  }
  const tree = await recordTree(options);
  const match = commits.find((c) => c.tree === tree);
  if (match) return match.sha;
  throw new ConfigError(
    `--resume ${given}: the record does not match what agent-ci publish pushed for run ${runId}: its base ${options.baseCommit} with its patch.diff gives tree ${tree}, but commit ${commits[0]?.sha ?? ""} holds tree ${commits[0]?.tree ?? ""}; the record was changed after the run, or belongs to another repository. Download the run's own artifact again`,
  );
}

/** Commits reachable from HEAD whose message's last line names `runId` exactly, with their trees, newest first. */
async function publishedCommits(
  repo: string,
  runId: string,
  redact: (text: string) => string,
): Promise<Array<{ sha: string; tree: string }>> {
  // An id publish could not have written into a trailer has no commit.
  if (parseRunCommit(`x\n\n${RUN_TRAILER}${runId}`)?.runId !== runId) return [];
  const head = await git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { cwd: repo }).then(
    () => true,
    () => false,
  );
  if (!head) return [];
  // Any other failure ends the run: a record is never taken as unbound because its commit could not be read.
  const out = await git(
    ["log", "-z", "--format=%H %T%n%B", "--fixed-strings", `--grep=${RUN_TRAILER}${runId}`, "HEAD", "--"],
    { cwd: repo, redact },
  );
  return out.split("\0").flatMap((entry) => {
    const newline = entry.indexOf("\n");
    const [sha = "", tree = ""] = entry.slice(0, newline).split(" ");
    const isId = (id: string) => /^[0-9a-f]{40,64}$/.test(id);
    return isId(sha) && isId(tree) && parseRunCommit(entry.slice(newline + 1))?.runId === runId
      ? [{ sha, tree }]
      : [];
  });
}

/** The tree of the record's base with its patch applied, as publish would build it. */
async function recordTree(options: RecordBindingOptions): Promise<string> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-resume-tree-"));
  try {
    const objects = path.resolve(
      options.baseRepo,
      (await git(["rev-parse", "--git-path", "objects"], { cwd: options.baseRepo })).trim(),
    );
    const env = {
      GIT_INDEX_FILE: path.join(scratch, "index"),
      GIT_OBJECT_DIRECTORY: path.join(scratch, "objects"),
      GIT_ALTERNATE_OBJECT_DIRECTORIES: objects,
    };
    fs.mkdirSync(env.GIT_OBJECT_DIRECTORY);
    const patchFile = path.join(scratch, "patch.diff");
    fs.writeFileSync(patchFile, options.patch);
    const run = (args: string[]) => git(args, { cwd: options.baseRepo, env, redact: options.redact });
    await run(["read-tree", options.baseCommit]);
    if (options.patch.length)
      await run(["apply", "--cached", "--whitespace=nowarn", "--", patchFile]).catch((error: unknown) => {
        const detail = error instanceof GitError ? error.stderr : (error as Error).message;
        throw new ConfigError(
          `--resume ${options.given}: the earlier run's patch does not apply to its base commit ${options.baseCommit}: ${detail.slice(-800)}`,
        );
      });
    return (await run(["write-tree"])).trim();
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
