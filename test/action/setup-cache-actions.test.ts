// The setup cache across runners: the bundled Action, run as a runner runs it, saves its setup snapshot to the
// Actions cache through the fake results service (the cache service's Twirp methods and the blob upload, with
// GitHub's scoping by the runtime token's `ac` claim), and a later job whose engine lacks the image restores
// it and starts from it. Each job after the first is given a fresh engine state by removing the snapshot's
// image. A pull request's entry sits in the pull request's cache scope, where another pull request, a run on
// the default branch and an issue comment (the default branch's scope) do not find it; a planted entry whose
// labels were forged is refused as a local one is; a cache service that fails or never answers leaves the run
// green with a warning. RUNNER_TEMP is one directory for all the jobs, as it is one path on every hosted
// runner (the archive's path is part of a cache entry's version).
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { actionsCacheStore } from "../../src/action/setup-cache-store.js";
import { SNAPSHOT_REPOSITORY, snapshotStoreKey, snapshotTag } from "../../src/sandbox/setup/snapshot.js";
import { newStoreRecord, saveToStore } from "../../src/sandbox/setup/store.js";
import { LABELS } from "../../src/setup-cache/trust.js";
import type { SetupCache } from "../../src/report/index.js";
import { actionRunner, CALC_BEFORE, FIX_SCRIPT, scriptFile } from "../support/action-harness.js";
import {
  cacheService,
  CACHE_READ,
  CACHE_WRITE,
  fakeActionsCache,
  type FakeActionsCache,
} from "../support/fake-actions-cache.js";
import { startFakeResultsService } from "../support/fake-results.js";
import { fixturePullRequest, startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { eventPayload } from "../support/github-env.js";
import { makeWorkspace } from "../support/workspace.js";

const TOKEN = "ghs_cacheTestToken0123456789abcdefABCDEF";
const BASE = "2222222222222222222222222222222222222222";
const docker = new Docker();
const runnerTemp = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-runner-temp-"));
const keys = new Set<string>();
let fake: FakeGitHub;
let workspace: string;
let cache: FakeActionsCache;
let setup: string;

beforeEach(async () => {
  const pr = fixturePullRequest({ base: BASE });
  const other = { ...pr.pull, number: 35 };
  fake = await startFakeGitHub({
    token: TOKEN,
    permissions: { octocat: "write" },
    issues: [pr.issue, { ...pr.issue, number: 35 }],
    pulls: [pr.pull, other],
  });
  workspace = makeWorkspace(
    { "src/calc.js": CALC_BEFORE, "package.json": '{"name":"calc"}\n', ".gitignore": "node_modules/\n" },
    { git: true },
  );
  cache = fakeActionsCache();
  // Each test's setup is its own (a nonce), so its key is too: no other run on the engine shares its entries.
  setup = `mkdir -p node_modules/dep && echo ${randomBytes(6).toString("hex")} > node_modules/dep/index.js`;
});
afterEach(async () => {
  await fake.close();
  fs.rmSync(workspace, { recursive: true, force: true });
});
afterAll(async () => {
  const images = await docker.listImages({
    all: true,
    filters: { label: [`${LABELS.kind}=setup-snapshot`] },
  });
  const ours = images
    .filter((i) => keys.has(i.Labels?.[LABELS.key] ?? ""))
    .sort((a, b) => b.Created - a.Created);
  for (const image of ours)
    await docker
      .getImage(image.Id)
      .remove({ force: true })
      .catch(() => undefined);
  fs.rmSync(runnerTemp, { recursive: true, force: true });
}, 120_000);

const action = actionRunner(() => ({
  fixture: "workflow-dispatch",
  apiUrl: fake.url,
  workspace,
  cache,
  inputs: {
    github_token: TOKEN,
    prompt: "Fix add().",
    script: scriptFile(FIX_SCRIPT),
    permission_mode: "acceptEdits",
    setup,
    network: "setup",
  },
  env: { RUNNER_TEMP: runnerTemp },
}));

/** A run's setupCache record, its key remembered for the clean-up. */
function setupCacheOf(result: { outputs: Record<string, string> }): SetupCache {
  const report = JSON.parse(fs.readFileSync(result.outputs.report_path ?? "", "utf8")) as {
    setupCache: SetupCache;
  };
  keys.add(report.setupCache.key);
  return report.setupCache;
}

/** A fresh engine state for the next job: the entry's image is gone. */
const removeImage = (tag: string) => docker.getImage(tag).remove({ force: true });

/** The pull_request event on pull request `n` (the fixture's is 34). */
function pullRequestPayload(n: number): Record<string, unknown> {
  const payload = eventPayload("pull-request-opened");
  return { ...payload, number: n, pull_request: { ...(payload.pull_request as object), number: n } };
}

describe("the setup cache through the Actions cache", { timeout: 600_000 }, () => {
  it("a trusted run on the default branch saves its snapshot; a job on a fresh engine restores it and starts from it", async () => {
    const first = await action();
    expect(first.failed).toBeUndefined();
    const made = setupCacheOf(first);
    const tag = snapshotTag("trusted", made.key);
    expect(made).toMatchObject({ outcome: "miss", write: "trusted", saved: { tag } });
    expect(made.store).toMatchObject({
      name: "the Actions cache",
      restored: [],
      saved: { tag, storeKey: `agent-ci-setup-trusted-${made.key}` },
      failures: [],
    });
    expect(cache.entries).toEqual([
      expect.objectContaining({ key: snapshotStoreKey(tag), scope: "refs/heads/main", finalized: true }),
    ]);
    expect(first.stdout).toContain(`${tag} saved to the Actions cache as ${snapshotStoreKey(tag)}`);

    await removeImage(tag);
    const second = await action();
    expect(second.failed).toBeUndefined();
    const hit = setupCacheOf(second);
    expect(hit).toMatchObject({ outcome: "hit", key: made.key, entry: { tag, namespace: "trusted" } });
    expect(hit.store?.restored).toEqual([expect.objectContaining({ tag, storeKey: snapshotStoreKey(tag) })]);
    expect(hit.store?.saved).toBeUndefined();
    expect(second.stdout).toMatch(/setup cache: hit \w+ from trusted, restored from the Actions cache/);
    expect(second.stdout).not.toContain(`setup: ${setup}`);
    expect(second.stdout).not.toMatch(/::warning::setup cache/);
  });

  it("a pull request's entry is in its own cache scope: another pull request, the default branch and an issue comment do not read it", async () => {
    const pr34 = { fixture: "pull-request-opened" };
    const first = await action(pr34);
    expect(first.failed).toBeUndefined();
    const made = setupCacheOf(first);
    const tag = snapshotTag("pr-34", made.key);
    expect(made).toMatchObject({ outcome: "miss", write: "pr-34", store: { saved: { tag } } });
    expect(cache.entries.map((e) => [e.key, e.scope])).toEqual([
      [snapshotStoreKey(tag), "refs/pull/34/merge"],
    ]);

    // Another pull request, and a trusted run on main: each reads its own namespaces and finds nothing.
    await removeImage(tag);
    const other = setupCacheOf(
      await action({ fixture: "pull-request-opened", payload: pullRequestPayload(35) }),
    );
    expect(other).toMatchObject({ outcome: "miss", read: ["pr-35", "trusted"], store: { restored: [] } });
    await removeImage(snapshotTag("pr-35", made.key));
    const main = setupCacheOf(await action());
    expect(main).toMatchObject({ outcome: "miss", read: ["trusted"], store: { restored: [] } });
    await removeImage(snapshotTag("trusted", made.key));

    // An issue comment on pull request 34 asks for pr-34's key in the default branch's cache scope, where
    // GitHub does not show it the pull request's entry; it then starts from the trusted entry main's run saved.
    const lookups = cache.calls.filter((c) => c.method === "GetCacheEntryDownloadURL").length;
    const comment = setupCacheOf(await action({ fixture: "issue-comment-pr", inputs: commentInputs() }));
    expect(comment).toMatchObject({
      outcome: "hit",
      read: ["pr-34", "trusted"],
      entry: { namespace: "trusted" },
    });
    const asked = cache.calls.filter((c) => c.method === "GetCacheEntryDownloadURL").slice(lookups);
    expect(asked.filter((c) => c.key === snapshotStoreKey(tag))).toEqual([
      { method: "GetCacheEntryDownloadURL", key: snapshotStoreKey(tag) },
    ]);
    const trustedKey = snapshotStoreKey(snapshotTag("trusted", made.key));
    expect(new Set(asked.filter((c) => c.key === trustedKey).map((c) => c.scope))).toEqual(
      new Set(["refs/heads/main"]),
    );

    // The pull request's own next run reads it.
    const again = setupCacheOf(await action(pr34));
    expect(again).toMatchObject({ outcome: "hit", entry: { tag }, store: { restored: [{ tag }] } });
  });

  it("a planted entry whose labels were forged is restored and refused, and setup runs", async () => {
    // A pull request's snapshot, re-labelled as a trusted entry made by pull_request_target, and planted in
    // the default branch's scope by a job holding its runtime token (as any default-branch job could).
    const made = setupCacheOf(await action({ fixture: "pull-request-opened" }));
    const trusted = snapshotTag("trusted", made.key);
    const holder = await docker.createContainer({
      Image: snapshotTag("pr-34", made.key),
      Labels: {
        [LABELS.namespace]: "trusted",
        [LABELS.event]: "pull_request_target",
        [LABELS.ref]: "refs/heads/main",
      },
    });
    await holder.commit({ repo: SNAPSHOT_REPOSITORY, tag: `trusted-${made.key}` });
    await holder.remove();
    await plant(trusted);
    await removeImage(trusted);
    await removeImage(snapshotTag("pr-34", made.key));

    const run = await action();
    expect(run.failed).toBeUndefined();
    const refused = setupCacheOf(run);
    expect(refused).toMatchObject({ outcome: "refused", store: { restored: [{ tag: trusted }] } });
    expect(refused.refused).toEqual([
      { tag: trusted, reason: expect.stringMatching(/"pull_request_target" may not write trusted entries/) },
    ]);
    expect(run.stdout).toContain(`setup: ${setup}`);
  });

  for (const fault of ["500", "hang"] as const) {
    it(`a cache service that ${fault === "500" ? "answers 500" : "never answers"} leaves the run green with a warning`, async () => {
      cache.fault = fault;
      const run = await action({ hooks: { setupCacheStoreTimeoutMs: 3_000 } });
      expect(run.failed).toBeUndefined();
      expect(run.outputs.exit_reason).toBe("completed");
      const record = setupCacheOf(run);
      const tag = snapshotTag("trusted", record.key);
      expect(record).toMatchObject({ outcome: "miss", saved: { tag } });
      expect(record.store?.saved).toBeUndefined();
      expect(record.store?.failures).toEqual([
        expect.stringContaining(`${snapshotStoreKey(tag)} could not be restored from the Actions cache`),
        expect.stringContaining(`${tag} was not saved to the Actions cache`),
      ]);
      expect(run.stdout).toMatch(/::warning::setup cache: agent-ci-setup-trusted-\w+ could not be restored/);
      expect(run.stdout).toMatch(/::warning::setup cache: agent-ci-setup:trusted-\w+ was not saved/);
    });
  }
});

function commentInputs(): Record<string, string> {
  return {
    github_token: TOKEN,
    script: scriptFile(FIX_SCRIPT),
    permission_mode: "acceptEdits",
    setup,
    network: "setup",
  };
}

/** Saves the engine's `tag` to the Actions cache with a default-branch job's token, as the Action does. */
async function plant(tag: string): Promise<void> {
  const service = await startFakeResultsService({
    services: (blobs) => ({ CacheService: cacheService(cache, blobs) }),
    claims: { ac: JSON.stringify([{ Scope: "refs/heads/main", Permission: CACHE_READ | CACHE_WRITE }]) },
  });
  try {
    const env = {
      ...service.env,
      ACTIONS_CACHE_SERVICE_V2: "True",
      GITHUB_WORKSPACE: workspace,
      RUNNER_TEMP: runnerTemp,
    };
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    const store = actionsCacheStore({ env, warn: (line) => expect.fail(line) });
    const record = newStoreRecord(store);
    await saveToStore(docker, store, tag, record);
    expect(record.failures).toEqual([]);
  } finally {
    await service.close();
  }
}
