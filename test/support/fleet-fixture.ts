// The fleet's world for Action tests: a workspace checked in as acme/widgets, served over git's smart HTTP on
// loopback (the ledger ref lives there; a step's GITHUB_SERVER_URL points at it, so the Action finds the
// ledger where it would find github.com's), the fake GitHub REST API with the workflow runs ledger entries
// name, and the test's own view of the ledger (trusted entries only, read as any scheduler reads them).
import fs from "node:fs";
import { GitHubApi, octokitRequest } from "../../src/github/api.js";
import { LedgerRepo } from "../../src/fleet/ledger.js";
import { readQueue, type SchedulerOptions } from "../../src/fleet/scheduler.js";
import { JOB_TOKEN } from "./github-env.js";
import { startFakeGitHub, type FakeGitHub, type FakeGitHubOptions } from "./fake-github.js";
import { addBareRepo, startGitRemote, type GitRemote } from "./git-remote.js";
import { makeWorkspace, type FileSpec } from "./workspace.js";

export interface FleetFixture {
  remote: GitRemote;
  github: FakeGitHub;
  workspace: string;
  /** What a step's `env:` adds: the ledger's server and the run that writes. */
  env(runId: string): Record<string, string>;
  /** A scheduler on the ledger as run 4242 (the harness's GITHUB_RUN_ID). */
  scheduler(): SchedulerOptions;
  /** The ledger's tip and its trusted state. */
  ledgerState(): ReturnType<typeof readQueue>;
  close(): Promise<void>;
}

/** The workspace `files` as acme/widgets (main), on the git server and the fake API (`token` for both). */
export async function startFleetFixture(
  files: Record<string, FileSpec>,
  github: Omit<FakeGitHubOptions, "token">,
  token = JOB_TOKEN,
): Promise<FleetFixture> {
  const workspace = makeWorkspace(files, { git: true });
  const remote = await startGitRemote({ token });
  addBareRepo(remote, "acme", "widgets", workspace);
  const fakeGitHub = await startFakeGitHub({ token, ...github });
  const scheduler = (): SchedulerOptions => {
    const api = new GitHubApi({ request: octokitRequest(token, fakeGitHub.url) });
    return {
      api,
      context: { api, owner: "acme", repo: "widgets", defaultBranch: "main" },
      remote: { url: remote.repoUrl("acme", "widgets"), token },
      runId: "4242",
    };
  };
  return {
    remote,
    github: fakeGitHub,
    workspace,
    env: (runId) => ({ GITHUB_SERVER_URL: remote.url, GITHUB_RUN_ID: runId }),
    scheduler,
    async ledgerState() {
      const ledger = await LedgerRepo.open(scheduler().remote);
      try {
        return await readQueue(ledger, scheduler());
      } finally {
        ledger.close();
      }
    },
    async close() {
      await fakeGitHub.close();
      await remote.close();
      fs.rmSync(remote.root, { recursive: true, force: true });
      fs.rmSync(workspace, { recursive: true, force: true });
    },
  };
}
