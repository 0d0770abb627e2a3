// The checkout publish works in, with git over HTTPS authenticated by the token (never written to a config
// file): reading commits and remote tips, fetching what a shallow checkout lacks, pushing without force.
import { git, gitBytes, GitError } from "../host-git.js";
import { PublishFailedError } from "./options.js";
import { explainPushFailure } from "./pull-text.js";
import type { PublishPrOptions } from "./pull-request.js";

export class Repo {
  constructor(
    private readonly options: PublishPrOptions,
    private readonly remoteUrl: string,
  ) {}

  run(args: readonly string[], env?: Record<string, string>): Promise<string> {
    const { repoDir, token, redact } = this.options;
    return git(args, { cwd: repoDir, env, redact, config: authConfig(this.remoteUrl, token) });
  }

  bytes(args: readonly string[]): Promise<Buffer> {
    const { repoDir, token, redact } = this.options;
    return gitBytes(args, { cwd: repoDir, redact, config: authConfig(this.remoteUrl, token) });
  }

  /** A commit's parents and whether it carries a signature, read from the object itself (shallow or not). */
  async commitFacts(sha: string): Promise<{ parents: string[]; signed: boolean }> {
    const raw = await this.run(["cat-file", "commit", sha]);
    const headers = raw.slice(0, raw.indexOf("\n\n") === -1 ? raw.length : raw.indexOf("\n\n")).split("\n");
    return {
      parents: headers.filter((h) => h.startsWith("parent ")).map((h) => h.slice("parent ".length).trim()),
      signed: headers.some((h) => h.startsWith("gpgsig ") || h.startsWith("gpgsig-sha256 ")),
    };
  }

  async hasCommit(sha: string): Promise<boolean> {
    return this.run(["cat-file", "-e", `${sha}^{commit}`]).then(
      () => true,
      () => false,
    );
  }

  async isShallow(): Promise<boolean> {
    return (await this.run(["rev-parse", "--is-shallow-repository"])).trim() === "true";
  }

  /** Fetches `what` (a commit or a ref) when the checkout lacks it; depth 1 only in a shallow checkout. */
  async fetch(what: string): Promise<void> {
    const depth = (await this.isShallow()) ? ["--depth=1"] : [];
    await this.run(["fetch", "--no-tags", "--no-write-fetch-head", ...depth, this.options.remote, what]);
  }

  async remoteTip(branch: string): Promise<string | undefined> {
    const out = await this.run(["ls-remote", "--heads", this.options.remote, `refs/heads/${branch}`]);
    return /^([0-9a-f]{40,64})\s/m.exec(out)?.[1];
  }
}

export async function ensureCommit(repo: Repo, remoteName: string, sha: string, what: string): Promise<void> {
  if (await repo.hasCommit(sha)) return;
  try {
    await repo.fetch(sha);
  } catch (error) {
    throw new PublishFailedError(
      `${what} ${sha} is not in the checkout and could not be fetched: ${(error as Error).message}. Check out the repository with enough history (actions/checkout fetch-depth: 0) or a token that can read it.`,
    );
  }
  if (!(await repo.hasCommit(sha)))
    throw new PublishFailedError(`${what} ${sha} is still missing after fetching it from ${remoteName}`);
}

/** The branch's tip on the remote (fetched here), undefined when the branch does not exist yet. */
export async function remoteTipOf(
  repo: Repo,
  options: PublishPrOptions,
  branch: string,
): Promise<string | undefined> {
  const full = `${options.owner}/${options.repo}`;
  let tip: string | undefined;
  try {
    tip = await repo.remoteTip(branch);
  } catch (error) {
    throw new PublishFailedError(
      `cannot read ${full} (${(error as Error).message}): ${explainPushFailure((error as GitError).stderr ?? "", full, branch)}`,
    );
  }
  if (tip) await ensureCommit(repo, options.remote, tip, `the tip of ${branch}`);
  return tip;
}

/** A commit's page on GitHub, from the server URL; "" when publish was given none. */
export function commitPage(options: PublishPrOptions, sha: string): string {
  return options.serverUrl ? `${options.serverUrl}/${options.owner}/${options.repo}/commit/${sha}` : "";
}

/** Pushes `what` to the branch without force; a refusal is explained (explainPushFailure). */
export async function pushRef(
  repo: Repo,
  options: PublishPrOptions,
  what: string,
  branch: string,
): Promise<void> {
  try {
    await repo.run(["push", "--porcelain", options.remote, `${what}:refs/heads/${branch}`]);
  } catch (error) {
    const stderr = error instanceof GitError ? error.stderr : (error as Error).message;
    throw new PublishFailedError(
      `not published: ${explainPushFailure(stderr, `${options.owner}/${options.repo}`, branch)}\ngit said: ${stderr}`,
    );
  }
}

/**
 * The header config that authenticates git over HTTPS with a token, the way actions/checkout does, scoped
 * to the remote's origin. The first, empty entry resets headers set before (a checkout's persisted
 * credentials), so exactly one Authorization header is sent.
 */
export function authConfig(remoteUrl: string, token: string | undefined): Array<[string, string]> {
  if (!token || !/^https?:\/\//i.test(remoteUrl)) return [];
  const key = `http.${new URL(remoteUrl).origin}/.extraheader`;
  const basic = Buffer.from(`x-access-token:${token}`).toString("base64");
  return [
    [key, ""],
    [key, `AUTHORIZATION: basic ${basic}`],
  ];
}
