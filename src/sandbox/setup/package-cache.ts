// The package-manager cache (docs/setup-cache.md): for a setup that runs (its key missed), the downloads of
// npm, pip, uv, cargo and go kept on the engine in a named volume per namespace and platform. The run's
// container never mounts it — one container serves setup and the agent's phase, and a mount cannot be taken
// back from a running container — so the volume's content is streamed into the home's caches before setup,
// and, after a setup that succeeded, streamed back out, scanned for secrets, into the volume the run may
// write. Both go through a helper container that mounts the volume and is never started: the engine's archive
// reads and writes a created container's volumes, so no code, the workspace's least of all, runs beside it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type Docker from "dockerode";
import { type CacheScope, packageCacheLabels, refusePackageCache } from "../../setup-cache/trust.js";
import { removeContainer, withTimeout } from "../engine/engine.js";
import { AGENT_USER } from "../engine/profile.js";
import { oneShotExec } from "../engine/exec.js";
import { EngineError } from "../sandbox.js";
import { collect, HOME, type Needle, SnapshotRefused, streamTar } from "./snapshot.js";
import { toolbeltProgram } from "../image/toolbelt.js";

/** The package managers' caches, under the home directory: what the volume holds, and nothing else. */
export const PACKAGE_CACHE_DIRS: readonly string[] = [
  ".npm/_cacache",
  ".cache/pip",
  ".cache/uv",
  ".cargo/registry",
  ".cargo/git",
  "go/pkg/mod",
];
export const PACKAGE_CACHE_PREFIX = "agent-ci-pkg-cache";
/** The environment variable that names the volumes' prefix in place of PACKAGE_CACHE_PREFIX. */
export const PACKAGE_CACHE_PREFIX_ENV = "AGENT_CI_PACKAGE_CACHE_PREFIX";
/** Where the helper container mounts each volume, by namespace. */
const MOUNT_ROOT = "/agent-ci-pkg-cache";
/**
 * Made in the run's container before a restore: the files restored keep their own times, so what setup added
 * is what is newer, and only that is written back (the volumes read hold the rest). A setup that moves it only
 * makes the write smaller.
 */
const RESTORED_MARK = "/tmp/.agent-ci-pkg-cache-restored";

/** A namespace's volume for a platform (the image's architecture). */
export function packageCacheVolume(
  namespace: string,
  platform: string,
  prefix = PACKAGE_CACHE_PREFIX,
): string {
  return `${prefix}-${namespace}-${platform}`;
}

/** The helper container a run reads or writes its volumes through, by the run's id (the watchdog removes it). */
export function packageCacheHelperName(runId: string): string {
  return `agent-ci-${runId}-pkg-cache`;
}

/** What the package cache did in a run whose setup ran, as report.json records it. */
export interface PackageCacheRecord {
  /** The volumes restored into the home's caches, in the order read (the first one's files win). */
  restored: Array<{ volume: string; namespace: string; bytes: number }>;
  /** Volumes that were there and were not restored, and why. */
  refused: Array<{ volume: string; reason: string }>;
  /** Why restoring failed (setup then ran with what was restored before). */
  notRestored?: string;
  /** The volume this run's caches were written to. */
  saved?: { volume: string; bytes: number; ms: number };
  /** Why none was written. */
  notSaved?: string;
}

/** Where a run's package cache lives and who it is. */
export interface PackageCacheTarget {
  docker: Docker;
  container: Docker.Container;
  runId: string;
  /** The image the helper is created from (never started): the run's base image, on the engine already. */
  image: string;
  platform: string;
  scope: CacheScope;
  /** The volumes' name prefix (tests give their own). */
  prefix?: string;
}

/** Counts the bytes passing through. */
class Counter extends Transform {
  bytes = 0;
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: (e: null, c: Buffer) => void): void {
    this.bytes += chunk.length;
    done(null, chunk);
  }
}

/** A container of `image` holding `mounts`, never started: the engine's archive reads and writes its volumes. */
async function createHelper(
  t: PackageCacheTarget,
  mounts: Array<{ volume: string; namespace: string; readOnly: boolean }>,
): Promise<Docker.Container> {
  return withTimeout(
    "a container create",
    t.docker.createContainer({
      name: packageCacheHelperName(t.runId),
      Image: t.image,
      Entrypoint: [toolbeltProgram("sleep")],
      Cmd: ["infinity"],
      NetworkDisabled: true,
      HostConfig: {
        Mounts: mounts.map((m) => ({
          Type: "volume" as const,
          Source: m.volume,
          Target: `${MOUNT_ROOT}/${m.namespace}`,
          ReadOnly: m.readOnly,
        })),
      },
    }),
  );
}

/**
 * Streams the volumes of the namespaces the run reads into its home's caches, the first namespace's files
 * winning; a volume whose labels do not fit its name is refused. Only volumes that are there are mounted (a
 * mount would make a missing one).
 */
export async function restorePackageCache(t: PackageCacheTarget, record: PackageCacheRecord): Promise<void> {
  const found: Array<{ volume: string; namespace: string; readOnly: boolean }> = [];
  for (const namespace of t.scope.read) {
    const volume = packageCacheVolume(namespace, t.platform, t.prefix);
    const info = await withTimeout("a volume inspect", t.docker.getVolume(volume).inspect()).catch(
      () => undefined,
    );
    if (!info) continue;
    const reason = refusePackageCache(info.Labels, { namespace, platform: t.platform }, t.scope);
    if (reason) record.refused.push({ volume, reason });
    else found.push({ volume, namespace, readOnly: true });
  }
  if (!found.length) return;
  const helper = await createHelper(t, found);
  try {
    for (const { volume, namespace } of found) {
      const archive = await withTimeout(
        "an archive read",
        helper.getArchive({ path: `${MOUNT_ROOT}/${namespace}` }),
      );
      const counter = new Counter();
      // The home is made by the first command that writes to it: setup's, or this one.
      const extract = [
        toolbeltProgram("tar"),
        "-C",
        HOME,
        "--strip-components=1",
        "--skip-old-files",
        "-xf",
        "-",
      ];
      const res = await oneShotExec(
        t.docker,
        t.container,
        [
          toolbeltProgram("bash"),
          "-c",
          `mkdir -p ${HOME} && touch ${RESTORED_MARK} && exec "$0" "$@"`,
          ...extract,
        ],
        AGENT_USER,
        (sink) => pipeline(archive, counter, sink),
      );
      if (res.exitCode !== 0)
        throw new EngineError(
          `restoring the package cache ${volume} failed (exit ${res.exitCode}): ${res.output.trim()}`,
        );
      record.restored.push({ volume, namespace, bytes: counter.bytes });
    }
  } finally {
    await removeContainer(helper);
  }
}

/**
 * Streams the home's caches out of the run's container into the volume the run may write, scanned for
 * `needles`. The stream is kept in a file on the host until the scan has passed it whole, so a secret found
 * late leaves nothing of the stream in the volume.
 */
export async function savePackageCache(
  t: PackageCacheTarget,
  needles: readonly Needle[],
  record: PackageCacheRecord,
): Promise<void> {
  const namespace = t.scope.write;
  if (!namespace) {
    record.notSaved = `this run writes no package cache: ${t.scope.why}`;
    return;
  }
  const started = performance.now();
  const volume = packageCacheVolume(namespace, t.platform, t.prefix);
  const dirs = PACKAGE_CACHE_DIRS.join(" ");
  const newer = `$([ -e ${RESTORED_MARK} ] && echo "-newer ${RESTORED_MARK}")`;
  const list = `cd ${HOME} 2>/dev/null || exit 0; for d in ${dirs}; do [ -d "$d" ] && find "$d" ${newer} -print0; done; true`;
  const listed = await collect(t.docker, t.container, [toolbeltProgram("bash"), "-c", list]);
  if (listed.exitCode !== 0)
    throw new SnapshotRefused(`listing the package caches failed: ${listed.stderr.trim()}`);
  const paths = listed.stdout.toString("utf8").split("\0").filter(Boolean);
  if (!paths.length) {
    record.notSaved = "setup added nothing to the package managers' caches";
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-pkg-cache-"));
  try {
    const file = path.join(dir, "cache.tar");
    const stderr = await streamTar(t.docker, t.container, { dir: HOME, paths }, needles, (tar) =>
      pipeline(tar, fs.createWriteStream(file)),
    );
    if (stderr !== undefined)
      throw new SnapshotRefused(`reading the package caches failed: ${stderr.trim()}`);
    const existing = await withTimeout("a volume inspect", t.docker.getVolume(volume).inspect()).catch(
      () => undefined,
    );
    if (existing) {
      const reason = refusePackageCache(existing.Labels, { namespace, platform: t.platform }, t.scope);
      if (reason) throw new SnapshotRefused(`the volume ${volume} is not written: ${reason}`);
    } else {
      await withTimeout(
        "a volume create",
        t.docker.createVolume({
          Name: volume,
          Labels: packageCacheLabels({ namespace, platform: t.platform }, t.scope.producer),
        }),
      );
    }
    const helper = await createHelper(t, [{ volume, namespace, readOnly: false }]);
    try {
      await helper.putArchive(fs.createReadStream(file), { path: `${MOUNT_ROOT}/${namespace}` });
    } finally {
      await removeContainer(helper);
    }
    record.saved = { volume, bytes: fs.statSync(file).size, ms: Math.round(performance.now() - started) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
