// The setup phase: the setup commands, or, where the setup cache holds an entry for this run's key that the
// run may read, the snapshot restored and `setup_refresh` run instead; after a setup that ran, the snapshot
// written where the run may write one. Then nothing setup started may carry the network into the agent's
// phase. What happened is recorded (`SetupCacheRecord`) for report.json.
import type Docker from "dockerode";
import { formatBytes } from "../../report/format.js";
import { WorkspaceError } from "../copy/archive.js";
import type { DockerSandboxOptions } from "../container/spec.js";
import { runtimeOf } from "../container/spec.js";
import type { EgressSidecar } from "../egress/sidecar.js";
import { injectionText } from "../egress/allowlist.js";
import { AGENT_USER } from "../engine/profile.js";
import { oneShotExec } from "../engine/exec.js";
import type { HelperLink } from "../helper/link.js";
import {
  type PackageCacheRecord,
  type PackageCacheTarget,
  restorePackageCache,
  savePackageCache,
} from "./package-cache.js";
import type { ResolvedImage } from "../image/image.js";
import type { Sandbox } from "../sandbox.js";
import {
  findSnapshot,
  type Needle,
  restoreSnapshot,
  type SnapshotEntry,
  snapshotTag,
  writeSnapshot,
} from "./snapshot.js";
import {
  newStoreRecord,
  restoreFromStore,
  saveToStore,
  type SnapshotStore,
  type SnapshotStoreRecord,
} from "./store.js";
import { toolbeltProgram } from "../image/toolbelt.js";
import {
  keyEnv,
  readKeyFiles,
  SETUP_CACHE_FORMAT,
  setupKey,
  type SetupKeyInputs,
} from "../../setup-cache/key.js";
import { type CacheProducer, type CacheScope, entryLabels } from "../../setup-cache/trust.js";

/** The ledger's caller for setup commands (tool calls carry their tool_use id). */
export const SETUP_CALLER = "setup";

/** The setup cache as a run asks for it: who the run is, and what the key reads beyond the run's options. */
export interface SetupCacheRequest {
  scope: CacheScope;
  /** `setup_cache_key_files`: the files whose bytes are in the key (default: detected per ecosystem). */
  keyFiles?: readonly string[];
  /** `setup_refresh`: run after a snapshot is restored, in place of the setup commands. */
  refresh?: readonly string[];
  /** `setup_cache_max_age`: an older entry is not restored (default: none is too old). */
  maxAgeDays?: number;
  /** The clock an entry's age is read against (tests set it). */
  now?: () => number;
  /** The package-cache volumes' name prefix (default: PACKAGE_CACHE_PREFIX; the Action's names the repository). */
  packageCachePrefix?: string;
  /** Where entries travel beyond this engine (the Action on a runner: the Actions cache); none: the engine's. */
  store?: SnapshotStore;
}

/** What the setup cache did in a run, as report.json records it. */
export interface SetupCacheRecord {
  /** hit: started from a snapshot; miss: none was there; refused: one was there and was not trusted. */
  outcome: "hit" | "miss" | "refused";
  key: string;
  inputs: SetupKeyInputs;
  read: string[];
  write: string | undefined;
  /** Why the run reads and writes what it does. */
  scope: string;
  /** The entry started from (a hit). */
  entry?: { image: string; tag: string; namespace: string; producer: CacheProducer };
  refused: Array<{ tag: string; reason: string }>;
  /** The entry this run wrote, or why it wrote none (`notSaved`). */
  saved?: { image: string; tag: string; bytes: number; ms: number };
  notSaved?: string;
  /** This run's setup phase: the commands (a miss), or the restore and refresh (a hit). */
  setupMs?: number;
  /** A hit: the entry's setup time less this run's restore and refresh. */
  savedMs?: number;
  /** A setup that ran: the package managers' caches restored before it and saved after it. */
  packageCache?: PackageCacheRecord;
  /** The store beyond the engine: what was restored from it, what was saved to it, what failed. */
  store?: SnapshotStoreRecord;
}

/** The key and the lookup, made once the image is known and before the container is created from it. */
export interface SetupCachePlan {
  request: SetupCacheRequest;
  entry: SnapshotEntry | undefined;
  record: SetupCacheRecord;
}

/** The setup phase's network as the key holds it: the policy and, through the proxy, what it reaches. */
function networkOfSetup(options: DockerSandboxOptions): string {
  const egress = options.egress;
  return JSON.stringify({
    network: options.network ?? "none",
    allow: egress?.given ?? [],
    privateHosts: egress?.privateHosts ?? [],
    inject: (egress?.injections ?? []).map(injectionText),
    caCert: options.caCertPem ?? "",
  });
}

/** Computes the run's key and looks for an entry it may start from. */
export async function planSetupCache(
  docker: Docker,
  options: DockerSandboxOptions,
  image: ResolvedImage,
): Promise<SetupCachePlan | undefined> {
  const request = options.setupCache;
  if (!request || !options.setup?.length) return undefined;
  const inputs: SetupKeyInputs = {
    format: SETUP_CACHE_FORMAT,
    baseImage: image.id,
    setup: options.setup,
    files: readKeyFiles(options.workspaceDir, request.keyFiles),
    env: keyEnv(options.env),
    network: networkOfSetup(options),
    platform: [
      image.architecture,
      runtimeOf(options) ?? "default",
      `node ${options.node?.version ?? "image"}`,
    ].join(" / "),
  };
  const key = setupKey(inputs);
  const { store } = request;
  const storeRecord = store && newStoreRecord(store);
  const { entry, refused } = await findSnapshot(
    docker,
    key,
    request.scope,
    { maxAgeDays: request.maxAgeDays, now: request.now?.() ?? Date.now() },
    store && storeRecord && ((tag) => restoreFromStore(docker, store, tag, storeRecord, options.progress)),
  );
  const outcome = entry ? "hit" : refused.length ? "refused" : "miss";
  const record: SetupCacheRecord = {
    outcome,
    key,
    inputs,
    read: request.scope.read,
    write: request.scope.write,
    scope: request.scope.why,
    refused,
    ...(storeRecord ? { store: storeRecord } : {}),
    ...(entry
      ? {
          entry: { image: entry.image, tag: entry.tag, namespace: entry.namespace, producer: entry.producer },
        }
      : {}),
  };
  return { request, entry, record };
}

/** What the setup phase runs through. */
export interface SetupRun {
  docker: Docker;
  container: Docker.Container;
  link: HelperLink;
  egress: EgressSidecar | undefined;
  options: DockerSandboxOptions;
  image: ResolvedImage;
  plan: SetupCachePlan | undefined;
  /** The workspace's paths the copy-in put there (a snapshot holds the others). */
  copied: () => Promise<ReadonlySet<string>>;
  /** Told of the snapshot's save to the store, under way while the agent works (it never rejects). */
  storing?: (saving: Promise<void>) => void;
}

/**
 * The setup commands, through the sandbox (network "setup": through the egress proxy), or the snapshot and
 * the refresh; then the snapshot written where the run may. After them, nothing setup started may carry the
 * network into the agent's phase (C18): every process of the agent user is killed (the helper too), the
 * egress proxy ended, and a fresh helper started.
 */
export async function runSetupPhase(sandbox: Sandbox, commands: string[], run: SetupRun): Promise<void> {
  const started = performance.now();
  const plan = run.plan;
  if (plan?.entry) {
    run.options.progress?.(`setup cache: hit ${plan.entry.tag} (setup skipped)`);
    await restoreSnapshot(run.docker, run.container);
    await runCommands(sandbox, [...(plan.request.refresh ?? [])], run.options);
  } else {
    if (plan) await restorePackages(plan, run);
    await runCommands(sandbox, commands, run.options);
  }
  const setupMs = performance.now() - started;
  if (run.options.network === "setup") {
    const killAll = [toolbeltProgram("bash"), "-c", "kill -9 -1 2>/dev/null; true"];
    await oneShotExec(run.docker, run.container, killAll, AGENT_USER);
    await run.egress?.stop();
    await run.link.start();
  }
  if (!plan) return;
  plan.record.setupMs = Math.round(setupMs);
  if (plan.entry) {
    plan.record.savedMs = Math.max(0, Math.round(plan.entry.setupMs - setupMs));
    return;
  }
  await saveSnapshot(plan, run, setupMs);
  await savePackages(plan, run);
}

function packageTarget(plan: SetupCachePlan, run: SetupRun): PackageCacheTarget {
  return {
    docker: run.docker,
    container: run.container,
    runId: run.options.runId,
    image: run.image.id,
    platform: run.image.architecture,
    scope: plan.request.scope,
    prefix: plan.request.packageCachePrefix,
  };
}

/** The package cache into the home before a setup that runs; a failure is recorded and setup runs without it. */
async function restorePackages(plan: SetupCachePlan, run: SetupRun): Promise<void> {
  const record: PackageCacheRecord = { restored: [], refused: [] };
  plan.record.packageCache = record;
  try {
    await restorePackageCache(packageTarget(plan, run), record);
  } catch (e) {
    record.notRestored = (e as Error).message;
  }
  const bytes = record.restored.reduce((sum, r) => sum + r.bytes, 0);
  if (record.restored.length)
    run.options.progress?.(
      `setup cache: package cache restored from ${record.restored.map((r) => r.namespace).join(", ")} (${formatBytes(bytes)})`,
    );
}

/** The home's package caches into the volume the run may write, after a setup that succeeded. */
async function savePackages(plan: SetupCachePlan, run: SetupRun): Promise<void> {
  const record = (plan.record.packageCache ??= { restored: [], refused: [] });
  try {
    await savePackageCache(packageTarget(plan, run), secretNeedles(run.options), record);
    if (record.saved) run.options.progress?.(`setup cache: package cache saved to ${record.saved.volume}`);
  } catch (e) {
    record.notSaved = `the package cache was not written: ${(e as Error).message}`;
    run.options.progress?.(`setup cache: ${record.notSaved}`);
  }
}

/** Writes the run's snapshot where its scope lets it, recording the entry or why there is none. */
async function saveSnapshot(plan: SetupCachePlan, run: SetupRun, setupMs: number): Promise<void> {
  const { record, request } = plan;
  const namespace = request.scope.write;
  if (!namespace) {
    record.notSaved = `this run writes no entry: ${request.scope.why}`;
    return;
  }
  const tag = snapshotTag(namespace, record.key);
  const started = performance.now();
  try {
    const labels = entryLabels(
      { key: record.key, namespace, format: SETUP_CACHE_FORMAT, setupMs },
      request.scope.producer,
    );
    const made = await writeSnapshot(
      run.docker,
      { container: run.container, runId: run.options.runId, copied: await run.copied() },
      { baseImage: run.image.id, tag, labels, needles: secretNeedles(run.options) },
    );
    record.saved = { image: made.image, tag, bytes: made.bytes, ms: Math.round(performance.now() - started) };
    run.options.progress?.(`setup cache: saved ${tag}`);
    if (request.store && record.store)
      run.storing?.(saveToStore(run.docker, request.store, tag, record.store, run.options.progress));
  } catch (e) {
    record.notSaved = `the snapshot was not written: ${(e as Error).message}`;
    run.options.progress?.(`setup cache: ${record.notSaved}`);
  }
}

/**
 * What must never be in a snapshot: each injected secret's value and the placeholder setup saw in its place,
 * and the values of `--env` variables long enough to be credentials.
 */
function secretNeedles(options: DockerSandboxOptions): Needle[] {
  const needles: Needle[] = [];
  for (const injection of options.egress?.injections ?? []) {
    needles.push({ name: `the placeholder of ${injection.name}`, value: injection.placeholder });
    needles.push({ name: `the value of ${injection.name}`, value: injection.value() });
  }
  for (const [name, value] of Object.entries(options.env ?? {}))
    if (value.length >= 8) needles.push({ name: `the value of --env ${name}`, value });
  return needles;
}

async function runCommands(
  sandbox: Sandbox,
  commands: string[],
  options: DockerSandboxOptions,
): Promise<void> {
  for (const command of commands) {
    options.progress?.(`setup: ${command}`);
    const res = await sandbox.exec({ script: command, timeoutMs: 30 * 60_000, caller: SETUP_CALLER });
    if (res.exitCode !== 0) {
      const tail = Buffer.concat([res.stdout, res.stderr]).toString("utf8").trim().slice(-2000);
      const refused = res.egressRefused?.length
        ? `\n${res.egressRefused.join("\n")} (widen it with --setup-allow-domain)`
        : "";
      throw new WorkspaceError(`setup command failed (exit ${res.exitCode}): ${command}\n${tail}${refused}`);
    }
  }
}
