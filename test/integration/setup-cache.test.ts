// The setup cache on the real engine: a run whose setup succeeded leaves a snapshot image; the next run with
// the same key starts from it (setup skipped, the installed dependencies there, the current source copied
// in); a changed lockfile misses; a pull request's run writes only its own namespace; an entry whose
// producer does not fit is refused; the agent's phase never reaches an entry; no secret is in one.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Docker from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import { DockerSandbox, newRunId } from "../../src/sandbox/docker-sandbox.js";
import type { DockerSandboxOptions } from "../../src/sandbox/container/spec.js";
import { SNAPSHOT_REPOSITORY, snapshotTag } from "../../src/sandbox/setup/snapshot.js";
import { cacheScope, LABELS, type CacheOrigin } from "../../src/setup-cache/trust.js";
import { makeWorkspace, writeFiles } from "../support/workspace.js";
import { CLI_ORIGIN, prOrigin, removeSnapshots } from "../support/setup-cache.js";

const docker = new Docker();
const text = (b: Buffer) => b.toString("utf8");
/** Each test's setup differs by a nonce, so its key is its own: no other run on the engine shares an entry. */
const nonce = () => randomBytes(6).toString("hex");

/** A Node-like project: the "install" copies a vendored package into node_modules, as npm ci would fetch it. */
function project(): string {
  return makeWorkspace(
    {
      ".gitignore": "node_modules/\n",
      "package.json": JSON.stringify({ name: "demo", version: "1.0.0" }),
      "package-lock.json": JSON.stringify({
        lockfileVersion: 3,
        packages: { "node_modules/dep": { version: "1.0.0" } },
      }),
      "vendor/dep.js": "module.exports = 'dep 1.0.0';\n",
      "src/app.js": "require('dep');\n",
    },
    { git: true },
  );
}

const install = (id: string) => [
  `mkdir -p node_modules/dep ~/.cache/demo && cp vendor/dep.js node_modules/dep/index.js && echo ${id} > ~/.cache/demo/fetched && touch /tmp/setup-ran`,
];

const sandboxes: DockerSandbox[] = [];
const workspaces: string[] = [];

async function start(
  workspace: string,
  setup: string[],
  origin: CacheOrigin,
  extra: Partial<DockerSandboxOptions> = {},
): Promise<DockerSandbox> {
  const runId = newRunId();
  const sandbox = await DockerSandbox.start({
    runId,
    workspaceDir: workspace,
    setup,
    setupCache: { scope: cacheScope({ ...origin, runId } as CacheOrigin) },
    ...extra,
  });
  sandboxes.push(sandbox);
  return sandbox;
}

/** Every entry this file made, removed; and none of its containers left. */
afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.dispose()));
  for (const dir of workspaces) fs.rmSync(dir, { recursive: true, force: true });
  await removeSnapshots(docker, keys);
}, 300_000);
const keys: string[] = [];
function recordKey(sandbox: DockerSandbox): string {
  const key = sandbox.setupCache?.key ?? "";
  keys.push(key);
  return key;
}

const exists = (name: string) =>
  docker
    .getImage(name)
    .inspect()
    .then(
      () => true,
      () => false,
    );

describe("the setup cache", { timeout: 600_000 }, () => {
  it("a hit skips setup, and the agent sees the same installed dependencies and the current source", async () => {
    const ws = project();
    workspaces.push(ws);
    const setup = install(nonce());
    const first = await start(ws, setup, CLI_ORIGIN);
    const key = recordKey(first);
    expect(first.setupCache).toMatchObject({ outcome: "miss", write: "trusted" });
    expect(first.setupCache?.saved?.tag).toBe(snapshotTag("trusted", key));
    expect(first.setupCache?.inputs.files.map((f) => f.path)).toEqual(["package-lock.json", "package.json"]);
    await first.dispose();

    // A source-only change, a new file and a deleted one: still the same key.
    writeFiles(ws, { "src/app.js": "require('dep'); // changed\n", "src/new.js": "new\n" });
    fs.rmSync(path.join(ws, "vendor/dep.js"));
    const second = await start(ws, setup, CLI_ORIGIN);
    expect(second.setupCache).toMatchObject({ outcome: "hit", key });
    expect(second.setupCache?.entry?.namespace).toBe("trusted");
    const seen = await second.exec({
      script:
        "cat node_modules/dep/index.js; cat ~/.cache/demo/fetched; cat src/app.js; cat src/new.js; test -e vendor/dep.js && echo resurrected; test -e /tmp/setup-ran && echo setup-ran; true",
    });
    const out = text(seen.stdout);
    expect(out).toContain("dep 1.0.0");
    expect(out).toContain(setup[0]!.match(/echo (\w+)/)![1]);
    expect(out).toContain("// changed");
    expect(out).toContain("new\n");
    expect(out).not.toContain("resurrected");
    expect(out).not.toContain("setup-ran");
    // The patch holds the agent's work only: nothing the snapshot restored.
    expect(text((await second.exportPatch()).patch)).toBe("");
  });

  it("a changed lockfile misses", async () => {
    const ws = project();
    workspaces.push(ws);
    const setup = install(nonce());
    const first = await start(ws, setup, CLI_ORIGIN);
    const key = recordKey(first);
    await first.dispose();
    writeFiles(ws, { "package-lock.json": JSON.stringify({ lockfileVersion: 3, packages: {} }) });
    const second = await start(ws, setup, CLI_ORIGIN);
    recordKey(second);
    expect(second.setupCache?.outcome).toBe("miss");
    expect(second.setupCache?.key).not.toBe(key);
  });

  it("B23 a pull request's run reads trusted entries and writes only its own namespace", async () => {
    const ws = project();
    workspaces.push(ws);
    const setup = install(nonce());
    const prRun = await start(ws, setup, prOrigin(7));
    const key = recordKey(prRun);
    expect(prRun.setupCache).toMatchObject({ outcome: "miss", read: ["pr-7", "trusted"], write: "pr-7" });
    await prRun.dispose();
    expect(await exists(snapshotTag("pr-7", key))).toBe(true);
    expect(await exists(snapshotTag("trusted", key))).toBe(false);
    // Another pull request, and a trusted run, do not read pr-7's entry.
    const other = await start(ws, setup, prOrigin(8));
    expect(other.setupCache?.outcome).toBe("miss");
    await other.dispose();
    const trusted = await start(ws, setup, CLI_ORIGIN);
    expect(trusted.setupCache?.outcome).toBe("miss");
    await trusted.dispose();
    // Its own later run does; and a trusted entry now there is read by the pull request's runs.
    const again = await start(ws, setup, prOrigin(8));
    expect(again.setupCache).toMatchObject({ outcome: "hit" });
    expect(again.setupCache?.entry?.namespace).toBe("pr-8");
    const third = await start(ws, setup, prOrigin(9));
    expect(third.setupCache?.entry?.namespace).toBe("trusted");
  });

  it("B24 an entry whose producer does not fit its namespace is refused", async () => {
    const ws = project();
    workspaces.push(ws);
    const setup = install(nonce());
    const prRun = await start(ws, setup, prOrigin(11));
    const key = recordKey(prRun);
    await prRun.dispose();
    // The pull request's snapshot re-labelled as a trusted entry from pull_request_target, then one that
    // claims a push to another branch: both are refused, and the run's setup runs.
    const forge = async (labels: Record<string, string>) => {
      const holder = await docker.createContainer({
        Image: snapshotTag("pr-11", key),
        Labels: { [LABELS.namespace]: "trusted", ...labels },
      });
      await holder.commit({ repo: SNAPSHOT_REPOSITORY, tag: `trusted-${key}` });
      await holder.remove();
    };
    const reader = (await import("../../src/setup-cache/trust.js")).cacheScope({
      face: "action",
      event: "push",
      ref: "refs/heads/main",
      defaultBranch: "main",
      pullRequest: undefined,
      commit: "1",
      runId: "r",
    });
    for (const [labels, reason] of [
      [{ [LABELS.event]: "pull_request_target" }, /"pull_request_target" may not write trusted entries/],
      [
        { [LABELS.event]: "push", [LABELS.ref]: "refs/heads/evil" },
        /ran on "refs\/heads\/evil", not refs\/heads\/main/,
      ],
    ] as const) {
      await forge(labels);
      const run = await DockerSandbox.start({
        runId: newRunId(),
        workspaceDir: ws,
        setup,
        setupCache: { scope: { ...reader, write: undefined } },
      });
      sandboxes.push(run);
      expect(run.setupCache?.outcome).toBe("refused");
      expect(run.setupCache?.refused[0]?.reason).toMatch(reason);
      const ran = await run.exec({ script: "test -e /tmp/setup-ran && echo ran" });
      expect(text(ran.stdout)).toContain("ran");
      await run.dispose();
      await docker.getImage(snapshotTag("trusted", key)).remove();
    }
  });

  it("B25 the agent's phase cannot write the cache: what it changes is in no entry", async () => {
    const ws = project();
    workspaces.push(ws);
    const setup = install(nonce());
    const first = await start(ws, setup, CLI_ORIGIN);
    const key = recordKey(first);
    const saved = first.setupCache?.saved?.image;
    await first.exec({ script: "echo poisoned > node_modules/dep/index.js; echo x > ~/.cache/demo/fetched" });
    const engineSeen = await first.exec({ script: "ls /var/run/docker.sock /run/docker.sock 2>&1; true" });
    expect(text(engineSeen.stdout)).not.toMatch(/^\/(var\/)?run\/docker\.sock$/m);
    await first.dispose();
    expect((await docker.getImage(snapshotTag("trusted", key)).inspect()).Id).toBe(saved);
    const second = await start(ws, setup, CLI_ORIGIN);
    expect(second.setupCache?.outcome).toBe("hit");
    const res = await second.exec({ script: "cat node_modules/dep/index.js" });
    expect(text(res.stdout)).toBe("module.exports = 'dep 1.0.0';\n");
  });

  it("B26 no secret value is in a snapshot: setup that writes one saves no entry, and an entry's config, history and layers hold none", async () => {
    const ws = project();
    workspaces.push(ws);
    const secret = `s3cr3t-${randomBytes(12).toString("hex")}`;
    const env = { DEMO_TOKEN: secret };
    const leaky = [`${install(nonce())[0]} && echo "//registry/:_authToken=$DEMO_TOKEN" > ~/.npmrc`];
    const leak = await start(ws, leaky, CLI_ORIGIN, { env });
    recordKey(leak);
    expect(leak.setupCache?.saved).toBeUndefined();
    expect(leak.setupCache?.notSaved).toMatch(/setup left the value of --env DEMO_TOKEN/);
    expect(leak.setupCache?.notSaved).not.toContain(secret);
    expect(await exists(snapshotTag("trusted", leak.setupCache!.key))).toBe(false);
    await leak.dispose();

    const clean = await start(ws, install(nonce()), CLI_ORIGIN, { env });
    const key = recordKey(clean);
    expect(clean.setupCache?.saved).toBeDefined();
    await clean.dispose();
    const tag = snapshotTag("trusted", key);
    const image = docker.getImage(tag);
    const [info, history] = await Promise.all([image.inspect(), image.history()]);
    expect(JSON.stringify(info)).not.toContain(secret);
    expect(JSON.stringify(history)).not.toContain(secret);
    const saved = execFileSync("docker", ["save", tag], { maxBuffer: 1024 ** 3 });
    expect(saved.includes(secret)).toBe(false);
    expect(saved.includes("dep 1.0.0")).toBe(true);
  });
});
