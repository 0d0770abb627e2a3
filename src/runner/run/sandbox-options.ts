// The sandbox a run's configuration asks for, defined once: the agent's, and verify's fresh one after it,
// are made alike (image, runtime, network, setup, CAs, limits, environment, what is copied in), so that
// verify runs the command where the agent's work was done, without the agent.
import type { DockerSandboxOptions } from "../../sandbox/container/spec.js";
import { PACKAGE_CACHE_PREFIX, PACKAGE_CACHE_PREFIX_ENV } from "../../sandbox/setup/package-cache.js";
import type { SetupCacheRequest } from "../../sandbox/setup/phase.js";
import type { SnapshotStore } from "../../sandbox/setup/store.js";
import { gitSync } from "../../host-git.js";
import { cacheScope, type CacheOrigin } from "../../setup-cache/trust.js";
import type { RunConfig } from "../config.js";

export type RunSandboxOptions = Pick<
  DockerSandboxOptions,
  | "image"
  | "imageRegistry"
  | "runtime"
  | "network"
  | "setup"
  | "egress"
  | "caCertPem"
  | "memoryBytes"
  | "nanoCpus"
  | "workspaceSizeBytes"
  | "env"
  | "includeIgnored"
  | "allowWeakHardening"
  | "setupCache"
>;

/** What a capability asks of the run's sandboxes (capabilities/capability.ts's `sandbox`). */
export type SandboxAsk = Partial<Pick<RunSandboxOptions, "network" | "egress" | "caCertPem">>;

/**
 * `asks`: what the capabilities ask of it (capabilities/index.ts's sandboxAsks: egress's network, sidecar and
 * CA). `runId` names the run in what it writes to the setup cache; `writeCache` false: the sandbox reads the
 * cache and writes nothing (verify's fresh sandbox); `store`: where entries travel beyond the engine (the
 * Action's Actions cache; the CLI gives none).
 */
export function runSandboxOptions(
  config: RunConfig,
  asks: SandboxAsk,
  runId: string,
  writeCache = true,
  store?: SnapshotStore,
): RunSandboxOptions {
  return {
    image: config.image,
    imageRegistry: config.imageRegistry,
    runtime: config.runtime,
    network: asks.network,
    setup: config.setup,
    egress: asks.egress,
    caCertPem: asks.caCertPem,
    memoryBytes: config.memory,
    nanoCpus: config.cpus ? Math.round(config.cpus * 1e9) : undefined,
    workspaceSizeBytes: config.workspaceSize,
    env: passThroughEnv(config.env),
    includeIgnored: config.includeIgnored,
    allowWeakHardening: config.allowWeakHardening,
    setupCache: setupCacheRequest(config, runId, writeCache, store),
  };
}

/** The setup cache as the run may use it (undefined: off, or nothing to cache). */
function setupCacheRequest(
  config: RunConfig,
  runId: string,
  write: boolean,
  store: SnapshotStore | undefined,
): SetupCacheRequest | undefined {
  if (!config.setupCache || !config.setup.length) return undefined;
  const origin: CacheOrigin = config.cacheOrigin
    ? {
        face: "action",
        ...config.cacheOrigin,
        defaultBranch: config.cacheOrigin.defaultBranch,
        pullRequest: config.cacheOrigin.pullRequest,
      }
    : { face: "cli", runId, ...hostRevision(config.workspace) };
  const scope = cacheScope(origin);
  return {
    scope: write
      ? scope
      : { ...scope, write: undefined, why: "verify's sandbox reads the cache and writes none" },
    keyFiles: config.setupCacheKeyFiles.length ? config.setupCacheKeyFiles : undefined,
    refresh: config.setupRefresh,
    maxAgeDays: config.setupCacheMaxAge,
    packageCachePrefix: packageCachePrefix(config),
    ...(store ? { store } : {}),
  };
}

/**
 * The package-cache volumes' names begin with PACKAGE_CACHE_PREFIX_ENV where it is set (one engine's users
 * keeping theirs apart), else, in the Action, with the repository: repositories sharing a runner's engine share
 * no volume, and one repository's pull request 7 never reads another's.
 */
function packageCachePrefix(config: RunConfig): string | undefined {
  const given = process.env[PACKAGE_CACHE_PREFIX_ENV];
  if (given) return given;
  if (!config.cacheOrigin || !config.repo) return undefined;
  return `${PACKAGE_CACHE_PREFIX}-${config.repo.replace(/[^A-Za-z0-9_.-]/g, ".")}`;
}

/** The CLI's producer: the working tree's branch and commit, where it is a git repository. */
function hostRevision(workspace: string): { ref?: string; commit?: string } {
  const read = (args: string[]) => {
    try {
      return gitSync(args, { cwd: workspace }).trim() || undefined;
    } catch {
      return undefined;
    }
  };
  return { ref: read(["symbolic-ref", "-q", "HEAD"]), commit: read(["rev-parse", "-q", "--verify", "HEAD"]) };
}

/** The named variables of the host's environment that are set (`--env`). */
function passThroughEnv(names: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
