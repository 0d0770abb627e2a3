// The fleet's queue against a real git server (git http-backend over smart HTTP on loopback) holding the ledger
// ref, and the fake GitHub REST API for the issues, the pull requests and the workflow runs the entries name.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitHubApi, octokitRequest } from "../../../src/github/api.js";
import { git } from "../../../src/host-git.js";
import { authConfig } from "../../../src/publish/publish-repo.js";
import {
  EMPTY_TREE,
  LEDGER_REF,
  LedgerRepo,
  ledgerMessage,
  type LedgerEntry,
} from "../../../src/fleet/ledger.js";
import {
  appendEntries,
  CLAIM_LABEL,
  claimWork,
  readQueue,
  type SchedulerOptions,
} from "../../../src/fleet/scheduler.js";
import { CAP_COMMENT_MARKER } from "../../../src/fleet/caps.js";
import { MAX_FAILED_RUNS } from "../../../src/fleet/queue-state.js";
import type { FakeGitHub } from "../../support/fake-github.js";
import { startFleetFixture, type FleetFixture } from "../../support/fleet-fixture.js";
import type { GitRemote } from "../../support/git-remote.js";

const TOKEN = "ghs_queuetoken";
const T0 = Date.parse("2026-03-10T12:00:00Z");

let fleet: FleetFixture;
let remote: GitRemote;
let fake: FakeGitHub;
let work: string;

beforeEach(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-fleet-"));
  fleet = await startFleetFixture(
    { "README.md": "widgets\n" },
    {
      issues: [1, 2, 3, 4, 5, 6].map((n) => ({
        number: n,
        title: `issue ${n}`,
        body: "",
        user: { login: "octocat" },
        labels: ["agent-ready"],
      })),
      runs: [
        { id: 1001, event: "schedule", head_branch: "main" },
        { id: 1002, event: "workflow_dispatch", head_branch: "main" },
        { id: 2001, event: "pull_request", head_branch: "agent-ci/run-7" },
      ],
    },
    TOKEN,
  );
  ({ remote, github: fake } = fleet);
});

afterEach(async () => {
  await fleet.close();
  fs.rmSync(work, { recursive: true, force: true });
});

function scheduler(runId: string, now = T0): SchedulerOptions {
  return {
    api: new GitHubApi({ request: octokitRequest(TOKEN, fake.url) }),
    context: {
      api: new GitHubApi({ request: octokitRequest(TOKEN, fake.url) }),
      owner: "acme",
      repo: "widgets",
      defaultBranch: "main",
    },
    remote: { url: remote.repoUrl("acme", "widgets"), token: TOKEN },
    runId,
    now: () => now,
  };
}

const query = { label: "agent-ready" };
const items = (claimed: Array<{ item: string }>) => claimed.map((c) => c.item).sort();

async function state(now = T0) {
  const ledger = await LedgerRepo.open({ url: remote.repoUrl("acme", "widgets"), token: TOKEN });
  try {
    return await readQueue(ledger, scheduler("1001", now));
  } finally {
    ledger.close();
  }
}

// Each test runs several git processes against the in-process server: a busy machine needs more than a minute.
describe("the queue's ledger on refs/agent-ci/queue", { timeout: 180_000 }, () => {
  it("two schedulers racing claim disjoint items", async () => {
    const [a, b] = await Promise.all([
      claimWork(scheduler("1001"), { query, max: 3, leaseSeconds: 600 }),
      claimWork(scheduler("1002"), { query, max: 3, leaseSeconds: 600 }),
    ]);
    const both = [...items(a.claimed), ...items(b.claimed)];
    expect(new Set(both).size).toBe(both.length);
    expect(both.sort()).toEqual([1, 2, 3, 4, 5, 6].map((n) => `issue:${n}`).sort());
    const { state: read } = await state();
    expect([...read.items.values()].every((s) => s.status === "claimed")).toBe(true);
    // Each claim shows on its issue.
    expect([1, 2, 3, 4, 5, 6].filter((n) => fake.issues.get(n)?.labels?.includes(CLAIM_LABEL))).toHaveLength(
      6,
    );
    // A third finds nothing left.
    const c = await claimWork(scheduler("1001"), { query, max: 3, leaseSeconds: 600 });
    expect(c.claimed).toEqual([]);
  });

  it("an expired lease is retaken", async () => {
    const first = await claimWork(scheduler("1001"), { query, max: 6, leaseSeconds: 60 });
    expect(first.claimed).toHaveLength(6);
    const early = await claimWork(scheduler("1002", T0 + 59_000), { query, max: 6, leaseSeconds: 60 });
    expect(early.claimed).toEqual([]);
    const late = await claimWork(scheduler("1002", T0 + 61_000), { query, max: 2, leaseSeconds: 60 });
    expect(items(late.claimed)).toEqual(["issue:1", "issue:2"]);
    const { state: read } = await state(T0 + 61_000);
    expect(read.items.get("issue:1")).toMatchObject({ status: "claimed", runId: "1002" });
  });

  it("a cancelled run releases its claim, and a published one keeps the item done", async () => {
    await claimWork(scheduler("1001"), { query, max: 2, leaseSeconds: 3600 });
    const at = new Date(T0).toISOString();
    await appendEntries(scheduler("1001"), [
      { v: 1, kind: "release", run_id: "1001", at, item: "issue:1", outcome: "cancelled" },
      { v: 1, kind: "release", run_id: "1001", at, item: "issue:2", outcome: "published" },
    ]);
    const next = await claimWork(scheduler("1002"), { query, max: 6, leaseSeconds: 3600 });
    expect(items(next.claimed)).toEqual(["issue:1", "issue:3", "issue:4", "issue:5", "issue:6"]);
  });

  it("a failed run's item is taken again once its claim's lease lapses, until it failed MAX_FAILED_RUNS times", async () => {
    let now = T0;
    for (let run = 1; run <= MAX_FAILED_RUNS; run += 1) {
      const runId = run % 2 ? "1001" : "1002";
      const got = await claimWork(scheduler(runId, now), { query, max: 1, leaseSeconds: 60 });
      expect(items(got.claimed), `try ${run}`).toEqual(["issue:1"]);
      await appendEntries(scheduler(runId, now), [
        {
          v: 1,
          kind: "release",
          run_id: runId,
          at: new Date(now + 1000).toISOString(),
          item: "issue:1",
          outcome: "failed",
        },
      ]);
      // Before the lease the failed claim had: the next item, not this one.
      const early = (await state(now + 59_000)).state;
      expect(early.items.get("issue:1")).toMatchObject({ status: "failed", failures: run, retake: false });
      now += 61_000;
    }
    // Failed three times: left for a person, however long the wait.
    const read = (await state(now + 3600_000)).state;
    expect(read.items.get("issue:1")).toMatchObject({
      status: "failed",
      failures: MAX_FAILED_RUNS,
      retake: false,
    });
    const next = await claimWork(scheduler("1001", now + 3600_000), { query, max: 1, leaseSeconds: 60 });
    expect(items(next.claimed)).toEqual(["issue:2"]);
  });

  it("leaves out an issue an open agent-ci pull request answers", async () => {
    fake.pulls.set(50, {
      number: 50,
      title: "Fix",
      body: "<!-- agent-ci-run: r1 -->\nDone.\n\nFixes #3\n",
      user: { login: "github-actions[bot]", type: "Bot" },
      head: { ref: "agent-ci/run-r1", sha: "1".repeat(40), repo: "acme/widgets" },
      base: { ref: "main", sha: "2".repeat(40), repo: "acme/widgets" },
      diff: "",
    });
    const got = await claimWork(scheduler("1001"), { query, max: 6, leaseSeconds: 600 });
    expect(items(got.claimed)).not.toContain("issue:3");
    expect(got.claimed).toHaveLength(5);
  });

  it("a cap refuses a start with a comment and starts nothing", async () => {
    const at = new Date(T0 - 3600_000).toISOString();
    await appendEntries(scheduler("1001"), [
      { v: 1, kind: "cost", run_id: "1001", at, usd: 4.5, cap: "acme/widgets" },
    ]);
    const before = (await state()).tip;
    const got = await claimWork(scheduler("1002"), {
      query,
      max: 2,
      leaseSeconds: 600,
      caps: { capName: "acme/widgets", maxDailyUsd: 5, perRunUsd: 1 },
      commentOnRefusal: true,
    });
    expect(got.claimed).toEqual([]);
    expect(items(got.capped)).toEqual(["issue:1", "issue:2"]);
    expect((await state()).tip).toBe(before);
    const notes = fake.comments.filter((c) => c.body.startsWith(CAP_COMMENT_MARKER));
    expect(notes.map((c) => c.issue_number).sort()).toEqual([1, 2]);
    expect(notes[0]?.body).toContain("max_daily_usd $5.00");
    // Refused again: the same comments are edited, not added.
    await claimWork(scheduler("1002"), {
      query,
      max: 2,
      leaseSeconds: 600,
      caps: { capName: "acme/widgets", maxDailyUsd: 5, perRunUsd: 1 },
      commentOnRefusal: true,
    });
    expect(fake.comments.filter((c) => c.body.startsWith(CAP_COMMENT_MARKER))).toHaveLength(2);
  });

  it("B27 a ledger entry pushed from a pull request's run is ignored", async () => {
    await claimWork(scheduler("1001"), { query, max: 1, leaseSeconds: 3600 });
    // The pull request's code, with a token that may push, appends on the tip: it claims every other item,
    // releases run 1001's claim in 1001's name from a commit that carries files, and adds negative spend.
    // Async git: the server answers in this process.
    const clone = path.join(work, "pr");
    const url = remote.repoUrl("acme", "widgets");
    const config = authConfig(url, TOKEN);
    const env = {
      GIT_AUTHOR_NAME: "agent-ci",
      GIT_AUTHOR_EMAIL: "a@e",
      GIT_COMMITTER_NAME: "agent-ci",
      GIT_COMMITTER_EMAIL: "a@e",
    };
    await git(["clone", "-q", url, clone], { cwd: work, config });
    await git(["fetch", "-q", "origin", `${LEDGER_REF}:refs/ledger`], { cwd: clone, config });
    const at = new Date(T0).toISOString();
    const forged: LedgerEntry[] = [2, 3, 4, 5, 6].map((n) => ({
      v: 1,
      kind: "claim",
      run_id: "2001",
      at,
      item: `issue:${n}`,
      lease_s: 3600,
    }));
    const claimOid = (
      await git(["commit-tree", EMPTY_TREE, "-p", "refs/ledger", "-m", ledgerMessage(forged)], {
        cwd: clone,
        env,
      })
    ).trim();
    const tree = (await git(["rev-parse", "HEAD^{tree}"], { cwd: clone })).trim();
    const release: LedgerEntry = {
      v: 1,
      kind: "release",
      run_id: "1001",
      at,
      item: "issue:1",
      outcome: "cancelled",
    };
    const releaseOid = (
      await git(["commit-tree", tree, "-p", claimOid, "-m", ledgerMessage([release])], { cwd: clone, env })
    ).trim();
    await git(["push", "-q", "origin", `${releaseOid}:${LEDGER_REF}`], { cwd: clone, config });

    const read = await state();
    expect(read.tip).toBe(releaseOid);
    expect(read.refused).toHaveLength(2);
    expect(read.refused[0]).toContain("run 2001 was started by pull_request");
    expect(read.refused[1]).toContain("not a ledger commit");
    expect(read.state.items.get("issue:1")).toMatchObject({ status: "claimed", runId: "1001" });
    expect(read.state.items.get("issue:2")).toBeUndefined();
    const next = await claimWork(scheduler("1002"), { query, max: 6, leaseSeconds: 600 });
    expect(items(next.claimed)).toEqual(["issue:2", "issue:3", "issue:4", "issue:5", "issue:6"]);
  });
});
