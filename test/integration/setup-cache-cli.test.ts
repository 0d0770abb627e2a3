// `agent-ci cache ls|rm` on the real engine, through the agent-ci command: an entry a real run with setup made
// is listed with its key, namespace, producer and size, removed by its key, and gone; and an entry past the
// max age is not restored (the reader's clock injected: the entry is as old as the test says).
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import Docker from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import { DockerSandbox, newRunId } from "../../src/sandbox/docker-sandbox.js";
import { snapshotTag } from "../../src/sandbox/setup/snapshot.js";
import type { CacheEntry } from "../../src/sandbox/setup/entries.js";
import { DAY_MS } from "../../src/setup-cache/expiry.js";
import { cacheScope } from "../../src/setup-cache/trust.js";
import { runCli } from "../support/cli-process.js";
import { makeWorkspace } from "../support/workspace.js";
import { removeSnapshots } from "../support/setup-cache.js";

const docker = new Docker();
const workspaces: string[] = [];
const keys: string[] = [];
const sandboxes: DockerSandbox[] = [];

/** A project whose setup "installs" a file, with a nonce of its own: its key is no other test's. */
function project(): { dir: string; setup: string[] } {
  const dir = makeWorkspace(
    { ".gitignore": "node_modules/\n", "package.json": JSON.stringify({ name: "demo", version: "1.0.0" }) },
    { git: true },
  );
  workspaces.push(dir);
  return {
    dir,
    setup: [`mkdir -p node_modules/dep && echo ${randomBytes(6).toString("hex")} > node_modules/dep/id`],
  };
}

async function run(
  p: { dir: string; setup: string[] },
  clock?: { maxAgeDays: number; now: () => number },
): Promise<{ sandbox: DockerSandbox; runId: string }> {
  const runId = newRunId();
  const sandbox = await DockerSandbox.start({
    runId,
    workspaceDir: p.dir,
    setup: p.setup,
    setupCache: {
      scope: cacheScope({ face: "cli", runId, ref: "refs/heads/main", commit: "c0ffee1" }),
      ...clock,
    },
  });
  keys.push(sandbox.setupCache?.key ?? "");
  sandboxes.push(sandbox);
  return { sandbox, runId };
}

const exists = (name: string) =>
  docker
    .getImage(name)
    .inspect()
    .then(
      () => true,
      () => false,
    );

afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.dispose()));
  for (const dir of workspaces) fs.rmSync(dir, { recursive: true, force: true });
  await removeSnapshots(docker, keys);
}, 300_000);

describe("agent-ci cache", { timeout: 600_000 }, () => {
  it("ls lists an entry a run with setup made; rm <key> removes it, and ls no longer shows it", async () => {
    const p = project();
    const { sandbox: first, runId } = await run(p);
    const key = first.setupCache?.key ?? "";
    expect(first.setupCache?.saved?.tag).toBe(snapshotTag("trusted", key));
    await first.dispose();

    const json = await runCli(["cache", "ls", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const listed = (JSON.parse(json.stdout) as CacheEntry[]).filter((e) => e.key === key);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      tag: snapshotTag("trusted", key),
      namespace: "trusted",
      producer: { event: "cli", ref: "refs/heads/main", commit: "c0ffee1", runId: runId },
    });
    expect(listed[0]!.bytes).toBeGreaterThan(0);
    expect(Date.now() - listed[0]!.createdMs).toBeLessThan(DAY_MS);

    const table = await runCli(["cache", "ls"]);
    expect(table.stdout).toMatch(/^KEY +NAMESPACE +PRODUCER +SIZE +CREATED$/m);
    expect(table.stdout).toMatch(
      new RegExp(`^${key.slice(0, 12)} +trusted +cli main@c0ffee1 run ${runId} `, "m"),
    );

    const removed = await runCli(["cache", "rm", key.slice(0, 16)]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe(`removed ${snapshotTag("trusted", key)}\n`);
    expect(await exists(snapshotTag("trusted", key))).toBe(false);
    const after = await runCli(["cache", "ls", "--json"]);
    expect((JSON.parse(after.stdout) as CacheEntry[]).some((e) => e.key === key)).toBe(false);

    // The key is gone now: naming it again is a usage error, as is naming nothing.
    const again = await runCli(["cache", "rm", key]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/no setup cache entry has the key/);
    const none = await runCli(["cache", "rm"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/give one of a key, --all or --expired/);
  });

  it("an entry past the max age is not restored: setup runs again", async () => {
    const p = project();
    const { sandbox: first } = await run(p);
    const key = first.setupCache?.key ?? "";
    await first.dispose();

    const { sandbox: fresh } = await run(p, { maxAgeDays: 7, now: () => Date.now() + 6 * DAY_MS });
    expect(fresh.setupCache?.outcome).toBe("hit");
    await fresh.dispose();

    const { sandbox: late } = await run(p, { maxAgeDays: 7, now: () => Date.now() + 8 * DAY_MS });
    expect(late.setupCache?.key).toBe(key);
    expect(late.setupCache?.outcome).toBe("refused");
    expect(late.setupCache?.refused[0]?.reason).toMatch(
      /made 8\.0 days ago, past the setup cache's max age of 7 days/,
    );
    expect(late.setupCache?.saved?.tag).toBe(snapshotTag("trusted", key));
    await late.dispose();
  });
});
