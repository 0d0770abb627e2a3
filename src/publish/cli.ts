// `agent-ci publish <out-dir>`: the CLI face of pull-request.ts. The token comes from the environment
// (AGENT_CI_PUBLISH_TOKEN, GH_TOKEN or GITHUB_TOKEN), never from a flag that the process list would show.
// The command's options come from options.ts; what publishing uses (the gate, git, the GitHub client) is
// loaded when it publishes, so the CLI's other commands do not load it.
import { Command, InvalidArgumentError, Option } from "commander";
import { parseSize } from "../text.js";
import { git } from "../host-git.js";
import type { ProcessLogs } from "../github/workflow-log.js";
import type { PublishPrResult } from "./pull-request.js";
import {
  DEFAULT_AUTHOR,
  DEFAULT_LINK_ISSUE,
  DEFAULT_MAX_BINARY_BYTES,
  DEFAULT_MAX_PATCH_BYTES,
  FINDING_KINDS,
  LINK_ISSUE_MODES,
  parseFindingKinds,
  PublishRefusedError,
  SIGNED_COMMIT_MAX_BYTES,
  type FindingKind,
  type LinkIssue,
} from "./options.js";

export const PUBLISH_TOKEN_VARIABLES = ["AGENT_CI_PUBLISH_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"] as const;

interface PublishFlags {
  repoDir: string;
  remote: string;
  repo?: string;
  base?: string;
  pr?: number;
  allow: string[];
  maxPatchBytes: number;
  allowFinding: FindingKind[];
  maxBinaryBytes: number;
  author: string;
  linkIssue: LinkIssue;
  pushToPrBranch?: boolean;
  useCommitSigning?: boolean;
  apiUrl?: string;
  json?: boolean;
}

export function parseAuthor(value: string): { name: string; email: string } {
  const match = /^\s*([^<>\r\n]+?)\s*<([^<>\s]+@[^<>\s]+)>\s*$/.exec(value);
  if (!match?.[1] || !match[2]) throw new InvalidArgumentError('expected "Name <email>"');
  return { name: match[1], email: match[2] };
}

/** owner/name from an https or ssh GitHub remote URL. */
export function repoFromUrl(url: string): { owner: string; repo: string } | undefined {
  const match = /[/:]([^/:\s]+)\/([^/\s]+?)(?:\.git)?\/?$/.exec(url.trim());
  return match?.[1] && match[2] ? { owner: match[1], repo: match[2] } : undefined;
}

async function resolveRepo(flags: PublishFlags): Promise<{ owner: string; repo: string }> {
  const given = flags.repo ?? process.env.GITHUB_REPOSITORY;
  if (given) {
    const match = /^([^/\s]+)\/([^/\s]+)$/.exec(given);
    if (!match?.[1] || !match[2])
      throw new PublishRefusedError(`--repo: expected owner/name (got "${given}")`);
    return { owner: match[1], repo: match[2] };
  }
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(flags.remote)
    ? flags.remote
    : await git(["remote", "get-url", flags.remote], { cwd: flags.repoDir }).catch(() => "");
  const found = repoFromUrl(url);
  if (!found) throw new PublishRefusedError("cannot tell the repository: pass --repo owner/name");
  return found;
}

async function publish(outDir: string, flags: PublishFlags, log: ProcessLogs): Promise<number> {
  const [{ createRedactor }, { GitHubApi, octokitRequest }, { serverHost }, { publishPullRequest }] =
    await Promise.all([
      import("../report/index.js"),
      import("../github/api.js"),
      import("../github/context.js"),
      import("./pull-request.js"),
    ]);
  const token = PUBLISH_TOKEN_VARIABLES.map((name) => process.env[name]?.trim()).find(Boolean);
  const redactor = createRedactor({ secrets: token ? [token] : [] });
  const say = (line: string) => log.err.text(redactor.redact(line));
  try {
    if (!token)
      throw new PublishRefusedError(
        `no token: set ${PUBLISH_TOKEN_VARIABLES.join(", ")} (contents: write and pull-requests: write)`,
      );
    const { owner, repo } = await resolveRepo(flags);
    const serverUrl = (process.env.GITHUB_SERVER_URL?.trim() || "https://github.com").replace(/\/+$/, "");
    const result: PublishPrResult = await publishPullRequest({
      outDir,
      repoDir: flags.repoDir,
      remote: flags.remote,
      token,
      api: new GitHubApi({
        request: octokitRequest(token, flags.apiUrl ?? process.env.GITHUB_API_URL),
        log: say,
        redact: redactor.redact,
      }),
      owner,
      repo,
      baseBranch: flags.base,
      pullNumber: flags.pr,
      allow: flags.allow,
      maxPatchBytes: flags.maxPatchBytes,
      allowFindings: flags.allowFinding,
      maxBinaryBytes: flags.maxBinaryBytes,
      githubHost: serverHost(serverUrl),
      serverUrl,
      secrets: [token],
      author: parseAuthor(flags.author),
      linkIssue: flags.linkIssue,
      pushToPrBranch: flags.pushToPrBranch === true,
      useCommitSigning: flags.useCommitSigning === true,
      log: say,
      redact: redactor.redact,
    });
    if (flags.json)
      log.out.json(
        JSON.stringify({
          action: result.action,
          pr_number: result.pullNumber,
          pr_url: result.pullUrl,
          branch: result.branch,
          commit_sha: result.commitSha,
          commit_url: result.commitUrl,
        }),
      );
    else if (result.action === "commented")
      log.out.text(`commented: ${result.pullUrl} (a fork's pull request: nothing pushed)`);
    else
      log.out.text(
        `${result.action}: ${result.pullUrl} (${result.branch} at ${result.commitSha}${result.signed ? ", signed by GitHub" : ""})`,
      );
    return 0;
  } catch (error) {
    say(`agent-ci publish: ${(error as Error).message}`);
    return error instanceof PublishRefusedError ? 2 : 1;
  }
}

const size = (value: string) => {
  try {
    return parseSize(value);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
};

/** Adds `publish` to the program. */
function pullNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError("a pull request number");
  return n;
}

function findingKinds(value: string, previous: FindingKind[] = []): FindingKind[] {
  try {
    return [...previous, ...parseFindingKinds([value])];
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

/** What `agent-ci publish --help` says after the flags: the token, what is refused, the exit codes. */
const PUBLISH_HELP = `
The token is read from ${PUBLISH_TOKEN_VARIABLES.join(", ")}
(first set wins). It needs contents: write and pull-requests: write. Pull
requests opened with a workflow's GITHUB_TOKEN start no workflows; use a PAT or
a GitHub App token when the pull request should get CI.

The patch is refused when the run did not end with changes, when it differs
from the report, is larger than --max-patch-bytes, holds the token or another
known secret, or changes a protected path (CI definitions: .github/workflows,
local actions, other CI systems'; .git, .gitattributes, agent-ci/Claude/MCP
config) that no --allow rule names. It is also refused on a finding of the
gate: a secret (agent-ci's formats and secretlint's recommended rules), a new
or changed lifecycle script (postinstall, prepare, …) or setting or file that
makes a package manager or build tool run a program (read on both sides of the
patch), a committed git hook, a new executable file, a binary over
--max-binary-bytes; each is named with its file and line, and --allow-finding
KIND publishes it anyway, saying so in the pull request.
Publishing the same run again changes nothing. Never force-pushes.

A run on a person's pull request becomes a pull request against its branch,
or, with --push-to-pr-branch, a commit on its branch while the branch is where
the run started. A pull request from a fork gets a comment with the patch and
nothing pushed.

Exit codes: 0 published (or already published, or a fork's pull request
answered), 1 a git or GitHub step failed, 2 refused.

Example:
  GH_TOKEN=… agent-ci publish agent-ci-out/<run-id> --repo-dir . \\
    --allow 'Edit(.github/workflows/ci.yml)'`;

export function addPublishCommand(program: Command, log: ProcessLogs): void {
  program
    .command("publish")
    .description(
      "turn a run's output folder (or its downloaded artifact) into a commit, a branch and a pull request",
    )
    .argument(
      "<out-dir>",
      "the run's output folder: report.json and patch.diff (trigger.json when the Action wrote one)",
    )
    .option("--repo-dir <dir>", "a git checkout of the repository (shallow is fine)", ".")
    .option("--remote <name-or-url>", "where to fetch from and push to", "origin")
    .option(
      "--repo <owner/name>",
      "the GitHub repository (default: GITHUB_REPOSITORY, else from the remote URL)",
    )
    .option(
      "--base <branch>",
      "branch the new pull request targets (default: the repository's default branch)",
    )
    .option(
      "--pr <number>",
      "publish onto this pull request instead of the one trigger.json names: an agent-ci pull request's branch, a person's (with --push-to-pr-branch)",
      pullNumber,
    )
    .option(
      "--push-to-pr-branch",
      "on a person's pull request of this repository, push a new commit onto its branch (refused when the branch moved since the run) instead of opening a pull request against it; a comment says what was pushed",
    )
    .option(
      "--use-commit-signing",
      `have GitHub make the commit through its API (createCommitOnBranch), which GitHub signs; refuses a patch it cannot carry (a file mode, a symbolic link, a submodule, over ${SIGNED_COMMIT_MAX_BYTES / 1024 / 1024} MiB of files)`,
    )
    .option(
      "--allow <rule>",
      "let the patch change a protected path this rule names, e.g. 'Edit(.github/workflows/**)' (repeatable)",
      (v: string, prev: string[] = []) => [...prev, v],
      [],
    )
    .option(
      "--max-patch-bytes <size>",
      "refuse patches larger than this (e.g. 5m)",
      size,
      DEFAULT_MAX_PATCH_BYTES,
    )
    .option(
      "--allow-finding <kind>",
      `publish although the gate found this kind (${FINDING_KINDS.join(", ")}); the pull request says so (repeatable)`,
      findingKinds,
      [],
    )
    .option(
      "--max-binary-bytes <size>",
      "a binary file in the patch larger than this is a large_binary finding (e.g. 1m)",
      size,
      DEFAULT_MAX_BINARY_BYTES,
    )
    .addOption(
      new Option("--author <name-email>", 'commit author, "Name <email>"').default(
        `${DEFAULT_AUTHOR.name} <${DEFAULT_AUTHOR.email}>`,
        "the GitHub Actions bot",
      ),
    )
    .addOption(
      new Option(
        "--link-issue <mode>",
        'how the pull request names the issue the run came from (trigger.json): closes writes "Fixes #N" (merging closes it), references "Opened from #N", none nothing',
      )
        .choices(LINK_ISSUE_MODES)
        .default(DEFAULT_LINK_ISSUE),
    )
    .option("--api-url <url>", "GitHub API URL (default: GITHUB_API_URL, else the public GitHub API)")
    .option(
      "--json",
      "print the result as one JSON object (action, pr_number, pr_url, branch, commit_sha, commit_url)",
    )
    .addHelpText("after", PUBLISH_HELP)
    .action(async (outDir: string, flags: PublishFlags) => {
      process.exitCode = await publish(outDir, flags, log);
    });
}
