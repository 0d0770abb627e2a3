// The package-manager cache on the real engine: a run whose setup ran leaves the home's package caches in a
// named volume (per namespace and platform), and a later run whose key misses (a changed lockfile) starts its
// setup with them: `npm ci --offline` installs from ~/.npm with no registry at all, which fails on a cold
// cache. The run's container never mounts a volume of the cache; a pull request's run writes its own volume
// and never the trusted one; a volume whose producer does not fit is refused; a setup that leaves a secret in
// the caches writes none; `cache ls|rm` lists and removes the volumes; no helper container is left behind.
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import Docker from "dockerode";
import tar from "tar-stream";
import { afterAll, describe, expect, it } from "vitest";
import { containerName, DockerSandbox, newRunId } from "../../src/sandbox/docker-sandbox.js";
import type { DockerSandboxOptions } from "../../src/sandbox/container/spec.js";
import { packageCacheHelperName, packageCacheVolume } from "../../src/sandbox/setup/package-cache.js";
import { listCacheEntries, removeCacheEntries, selectEntries } from "../../src/sandbox/setup/entries.js";
import { cacheScope, LABELS, packageCacheLabels, type CacheOrigin } from "../../src/setup-cache/trust.js";
import { makeWorkspace, writeFiles } from "../support/workspace.js";
import { CLI_ORIGIN, prOrigin, removeSnapshots } from "../support/setup-cache.js";

const docker = new Docker();
const text = (b: Buffer) => b.toString("utf8");
const nonce = () => randomBytes(6).toString("hex");
const PACKAGE = "pkgcache-dep";
const TARBALL = `vendor/${PACKAGE}-1.0.0.tgz`;

/** A one-file npm package as `npm pack` would make it. */
async function packageTarball(): Promise<Buffer> {
  const pack = tar.pack();
  pack.entry(
    { name: "package/package.json", mode: 0o644 },
    JSON.stringify({ name: PACKAGE, version: "1.0.0" }),
  );
  pack.entry({ name: "package/index.js", mode: 0o644 }, 'module.exports = "dep from the cache";\n');
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack.pipe(zlib.createGzip())) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** package.json and its lockfile, the package resolved from the public registry; `id` makes the key new. */
function manifests(integrity: string, id: string): Record<string, string> {
  const dependencies = { [PACKAGE]: "1.0.0" };
  return {
    "package.json": JSON.stringify({ name: "app", version: "1.0.0", description: id, dependencies }),
    "package-lock.json": JSON.stringify({
      name: "app",
      version: "1.0.0",
      lockfileVersion: 3,
      requires: true,
      packages: {
        "": { name: "app", version: "1.0.0", dependencies },
        [`node_modules/${PACKAGE}`]: {
          version: "1.0.0",
          resolved: `https://registry.npmjs.org/${PACKAGE}/-/${PACKAGE}-1.0.0.tgz`,
          integrity,
        },
      },
    }),
  };
}

const NPM = "npm --no-audit --no-fund --no-update-notifier";
/** The first run's setup fetches the package into ~/.npm (from a file here, as a download would), then installs. */
const FETCH_AND_INSTALL = `${NPM} cache add ./${TARBALL} && ${NPM} ci --offline`;
/** A later setup installs from ~/.npm only: with no cache it fails (ENOTCACHED). */
const INSTALL_OFFLINE = `${NPM} ci --offline`;

const sandboxes: DockerSandbox[] = [];
const workspaces: string[] = [];
const prefixes: string[] = [];
const keys: string[] = [];
const runIds: string[] = [];

/** A volume prefix of the test's own: no other run on the engine reads or writes these volumes. */
function prefix(): string {
  const p = `agent-ci-test-pkg-${nonce()}`;
  prefixes.push(p);
  return p;
}

async function start(
  workspace: string,
  setup: string[],
  origin: CacheOrigin,
  packageCachePrefix: string,
  extra: Partial<DockerSandboxOptions> = {},
): Promise<DockerSandbox> {
  const runId = newRunId();
  runIds.push(runId);
  const sandbox = await DockerSandbox.start({
    runId,
    workspaceDir: workspace,
    setup,
    setupCache: { scope: cacheScope({ ...origin, runId } as CacheOrigin), packageCachePrefix },
    ...extra,
  });
  sandboxes.push(sandbox);
  keys.push(sandbox.setupCache?.key ?? "");
  return sandbox;
}

async function volumesOf(p: string): Promise<string[]> {
  const listed = await docker.listVolumes({ filters: { name: [p] } });
  return (listed.Volumes ?? []).map((v) => v.Name).filter((n) => n.startsWith(p));
}

afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.dispose()));
  for (const dir of workspaces) fs.rmSync(dir, { recursive: true, force: true });
  await removeSnapshots(docker, keys);
  for (const p of prefixes) for (const v of await volumesOf(p)) await docker.getVolume(v).remove();
}, 300_000);

describe("the package-manager cache", { timeout: 600_000 }, () => {
  it("a miss after a changed lockfile installs from ~/.npm restored from the volume, which the agent's container never mounts; a pull request writes only its own", async () => {
    const tarball = await packageTarball();
    const integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`;
    const ws = makeWorkspace(
      { ".gitignore": "node_modules/\n", ...manifests(integrity, nonce()) },
      { git: true },
    );
    workspaces.push(ws);
    fs.mkdirSync(path.join(ws, "vendor"));
    fs.writeFileSync(path.join(ws, TARBALL), tarball);
    const p = prefix();
    const platform = (await docker.version()).Arch;
    const trusted = packageCacheVolume("trusted", platform, p);

    const first = await start(ws, [FETCH_AND_INSTALL], CLI_ORIGIN, p);
    expect(first.setupCache?.outcome).toBe("miss");
    expect(first.setupCache?.packageCache?.restored).toEqual([]);
    expect(first.setupCache?.packageCache?.saved).toMatchObject({ volume: trusted });
    expect(first.setupCache?.packageCache?.saved?.bytes).toBeGreaterThan(0);
    const labels = (await docker.getVolume(trusted).inspect()).Labels;
    expect(labels).toMatchObject({ [LABELS.namespace]: "trusted", [LABELS.event]: "cli" });
    await first.dispose();

    // A changed lockfile (a new key), and the package's file gone: only the volume can supply it.
    writeFiles(ws, manifests(integrity, nonce()));
    fs.rmSync(path.join(ws, "vendor"), { recursive: true });
    const second = await start(ws, [INSTALL_OFFLINE], CLI_ORIGIN, p);
    expect(second.setupCache?.outcome).toBe("miss");
    expect(second.setupCache?.packageCache?.restored).toEqual([
      { volume: trusted, namespace: "trusted", bytes: expect.any(Number) as number },
    ]);
    expect(second.setupCache?.packageCache?.restored[0]?.bytes).toBeGreaterThan(0);
    // What was restored is not written back: only what setup added since (here, nothing of the package's).
    expect(second.setupCache?.packageCache?.saved?.bytes ?? 0).toBeLessThan(
      first.setupCache!.packageCache!.saved!.bytes,
    );
    const loaded = await second.exec({ script: `node -e 'console.log(require("${PACKAGE}"))'` });
    expect(text(loaded.stdout)).toContain("dep from the cache");
    // The agent's container has no volume of the cache mounted (nor any named volume but its own).
    const mounts = (await docker.getContainer(containerName(runIds[1]!)).inspect()).Mounts;
    expect(mounts.filter((m) => (m.Name ?? "").startsWith(p))).toEqual([]);
    expect(JSON.stringify(mounts)).not.toContain(p);
    await second.dispose();

    // Without the cache, the same setup fails: the install above came from the volume.
    writeFiles(ws, manifests(integrity, nonce()));
    await expect(start(ws, [INSTALL_OFFLINE], CLI_ORIGIN, prefix())).rejects.toThrow(/ENOTCACHED/);

    // A pull request's run reads the trusted volume, and writes its own only.
    writeFiles(ws, manifests(integrity, nonce()));
    const prRun = await start(
      ws,
      [`${INSTALL_OFFLINE} && mkdir -p ~/.cache/pip && echo pr > ~/.cache/pip/from-pr-7`],
      prOrigin(7),
      p,
    );
    expect(prRun.setupCache?.packageCache?.restored.map((r) => r.namespace)).toEqual(["trusted"]);
    expect(prRun.setupCache?.packageCache?.saved?.volume).toBe(packageCacheVolume("pr-7", platform, p));
    await prRun.dispose();
    writeFiles(ws, manifests(integrity, nonce()));
    const later = await start(ws, [INSTALL_OFFLINE], CLI_ORIGIN, p);
    const seen = await later.exec({ script: "cat ~/.cache/pip/from-pr-7 2>&1; true" });
    expect(text(seen.stdout)).not.toMatch(/^pr$/m);
    await later.dispose();
    writeFiles(ws, manifests(integrity, nonce()));
    const prAgain = await start(ws, [INSTALL_OFFLINE], prOrigin(7), p);
    expect(prAgain.setupCache?.packageCache?.restored.map((r) => r.namespace)).toEqual(["pr-7", "trusted"]);
    expect(text((await prAgain.exec({ script: "cat ~/.cache/pip/from-pr-7" })).stdout)).toBe("pr\n");
    await prAgain.dispose();

    // `cache ls` lists the volumes; `cache rm <volume>` removes one.
    const entries = await listCacheEntries(docker);
    const ours = entries.filter((e) => e.volume?.startsWith(p));
    expect(ours.map((e) => [e.volume, e.namespace]).sort()).toEqual(
      [
        [packageCacheVolume("pr-7", platform, p), "pr-7"],
        [trusted, "trusted"],
      ].sort(),
    );
    const removed = await removeCacheEntries(docker, selectEntries(entries, { key: trusted }));
    expect(removed).toEqual([{ entry: expect.objectContaining({ volume: trusted }) as unknown }]);
    expect(await volumesOf(p)).toEqual([packageCacheVolume("pr-7", platform, p)]);

    // No helper container is left, of any of these runs.
    for (const runId of runIds) {
      const helper = await docker
        .getContainer(packageCacheHelperName(runId))
        .inspect()
        .catch(() => undefined);
      expect(helper).toBeUndefined();
    }
  });

  it("a volume whose producer does not fit its namespace is refused, read and written", async () => {
    const p = prefix();
    const platform = (await docker.version()).Arch;
    const forged = packageCacheVolume("trusted", platform, p);
    await docker.createVolume({
      Name: forged,
      Labels: packageCacheLabels(
        { namespace: "trusted", platform },
        { event: "pull_request_target", ref: "refs/heads/main", commit: "1", runId: "r" },
      ),
    });
    const ws = makeWorkspace({ "package.json": JSON.stringify({ name: nonce() }) }, { git: true });
    workspaces.push(ws);
    const run = await start(ws, ["mkdir -p ~/.cache/pip && echo x > ~/.cache/pip/x"], CLI_ORIGIN, p);
    expect(run.setupCache?.packageCache?.refused).toEqual([
      {
        volume: forged,
        reason: expect.stringMatching(/"pull_request_target" may not write trusted/) as string,
      },
    ]);
    expect(run.setupCache?.packageCache?.saved).toBeUndefined();
    expect(run.setupCache?.packageCache?.notSaved).toMatch(/is not written: .*pull_request_target/);
  });

  it("no secret is in a volume: a setup that leaves one in the caches writes none", async () => {
    const p = prefix();
    const ws = makeWorkspace({ "package.json": JSON.stringify({ name: nonce() }) }, { git: true });
    workspaces.push(ws);
    const secret = `s3cr3t-${randomBytes(12).toString("hex")}`;
    const leaky = `mkdir -p ~/.cache/pip && echo "token=$DEMO_TOKEN" > ~/.cache/pip/leak`;
    const run = await start(ws, [leaky], CLI_ORIGIN, p, { env: { DEMO_TOKEN: secret } });
    expect(run.setupCache?.packageCache?.notSaved).toMatch(/setup left the value of --env DEMO_TOKEN/);
    expect(run.setupCache?.packageCache?.notSaved).not.toContain(secret);
    expect(await volumesOf(p)).toEqual([]);
    await run.dispose();

    // A setup with the same variable that leaves it out of the caches writes a volume, and the volume's bytes
    // hold what setup cached and not the value.
    const clean = await start(
      ws,
      [`mkdir -p ~/.cache/pip && echo wheel-${nonce()} > ~/.cache/pip/w`],
      CLI_ORIGIN,
      p,
      {
        env: { DEMO_TOKEN: secret },
      },
    );
    const volume = clean.setupCache?.packageCache?.saved?.volume;
    expect(volume).toBeDefined();
    await clean.dispose();
    const reader = await docker.createContainer({
      Image: clean.setupCache!.inputs.baseImage,
      Cmd: ["true"],
      HostConfig: { Mounts: [{ Type: "volume", Source: volume!, Target: "/v", ReadOnly: true }] },
    });
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of await reader.getArchive({ path: "/v" })) chunks.push(chunk as Buffer);
      const bytes = Buffer.concat(chunks);
      expect(bytes.includes("wheel-")).toBe(true);
      expect(bytes.includes(secret)).toBe(false);
    } finally {
      await reader.remove({ v: true });
    }
  });
});
