// What a run asks of the engine: the options a sandbox is started with, and the run container's spec
// (hardening, limits, mounts) built from them. The assembly (assemble.ts) creates the container from this
// spec and reads the hardening back against it.
import type Docker from "dockerode";
import type { NetworkPolicy } from "../../policy/network.js";
import type { HostPacker, IncludeIgnored } from "../copy/archive.js";
import type { EngineStart } from "../assemble.js";
import type { StartRecord } from "../phase-clock.js";
import type { HelperChannel } from "../helper/channel.js";
import { BASE_ENV, envList } from "./command-env.js";
import { workspaceMount } from "../copy/copier.js";
import { type EgressOptions, egressMount } from "../egress/sidecar.js";
import { type EngineFacts, ownerLabels } from "../engine/engine.js";
import { containerUlimits, type EngineProfile, KEEPER_USER } from "../engine/profile.js";
import { hostPidsLimit, type LimitsInside, limitsInside } from "./hardening.js";
import { NODE_DIR } from "../node/volume.js";
import type { NodeChoice } from "../node/node-choice.js";
import { containerName } from "../engine/run-objects.js";
import type { SetupCacheRequest } from "../setup/phase.js";
import { serviceHomeMounts, serviceHomeVolumeMounts } from "./service.js";
import { WORKSPACE_ROOT } from "../sandbox.js";
import { TOOLBELT_DIR, toolbeltProgram } from "../image/toolbelt.js";

export type { NetworkPolicy };

export interface DockerSandboxOptions {
  runId: string;
  workspaceDir: string;
  /** A user-named image; default: Dockerfile.sandbox, built on demand. */
  image?: string;
  /** Where agent-ci's prebuilt images are pulled from (a mirror); default AGENT_CI_REGISTRY, else images.json's. */
  imageRegistry?: string;
  network?: NetworkPolicy;
  /**
   * The OCI runtime of the run's container (runsc: gVisor), as the engine registers it; default:
   * AGENT_CI_RUNTIME, else the engine's (`runtimeOf`). The egress sidecar and the copier keep the engine's default: they run only agent-ci's own code.
   */
  runtime?: string;
  /**
   * Run before the agent starts. Network "setup": through the egress proxy with `egress` (the setup
   * allowlist), which is then removed; "allowlist" and "on": with the run's own network.
   */
  setup?: string[];
  /** Networks "allowlist" and "setup": what the egress proxy lets through (sidecar.ts). */
  egress?: EgressOptions;
  /**
   * The setup cache (setup/phase.ts): start from a snapshot of an earlier run's setup with the same key, and
   * write one, as the run's scope allows. Undefined: off (every run runs its whole setup).
   */
  setupCache?: SetupCacheRequest;
  /** A CA certificate (PEM) for commands to trust besides the image's (`--ca-cert`: a company or test proxy). */
  caCertPem?: string;
  memoryBytes?: number;
  nanoCpus?: number;
  pidsLimit?: number;
  workspaceSizeBytes?: number;
  tmpSizeBytes?: number;
  /** Plan mode: the workspace is owned by root in the container, so nothing the agent runs can write it. */
  readOnlyWorkspace?: boolean;
  /**
   * The Node.js the Bash tool's node, npm and npx are (node/node-choice.ts, decided by the run): when `mounted`,
   * the official build's volume goes first on their PATH. Default: the image's own.
   */
  node?: NodeChoice;
  /** Values passed through to commands by name (`--env NAME`). */
  env?: Record<string, string>;
  includeIgnored?: IncludeIgnored;
  maxCopyFiles?: number;
  maxCopyBytes?: number;
  /** Files kept out of the container (Read deny rules), with the reason. */
  excludeFromCopy?: (relPath: string) => string | undefined;
  /**
   * Stream the copy-in through the engine, packed this way, even where a copier container could read the
   * workspace from a bind mount (copier.ts); default: the copier where the engine sees this host's files,
   * else a stream packed as this host can (`detectHostPacker`).
   */
  packer?: HostPacker;
  /**
   * How the host talks to the exec helper: "auto" (the default), a Unix socket bind-mounted from this host
   * where the engine sees its files (channel.ts), else the exec stream; "stream", the exec stream always
   * (what a remote engine gets).
   */
  helperChannel?: "auto" | "stream";
  /** A toolbelt volume made ready by the caller (the benchmark's cold starts); default: the engine's own. */
  toolbeltVolume?: string;
  /** Run even when the engine did not apply a requested hardening setting (read back after create). */
  allowWeakHardening?: boolean;
  /**
   * Services (MCP servers) will write the workspace too: its files are made group-writable after the
   * copy-in, for the agent's group that every service shares (service.ts).
   */
  sharedWorkspace?: boolean;
  /** How many services (MCP servers, by index) the run may start: each gets its home's tmpfs (service.ts). */
  services?: number;
  progress?: (line: string) => void;
  /** Filled as the start goes, for the record of a start that fails. */
  startRecord?: StartRecord;
  /**
   * Host work that needs no container, done once the container's start is asked for, while the engine starts
   * it (its time is the start phase's); it must not throw.
   */
  whileStarting?: () => void;
  /**
   * The engine reached and the images made ready ahead (`DockerSandbox.begin`, with these options); else the
   * start begins them itself. The start records into its record.
   */
  begun?: EngineStart;
}

/** The engine reached: its client and what it answered, and the sweep of dead runs' orphans. */
export interface ReachedEngine {
  docker: Docker;
  engine: EngineFacts;
  /** Awaited before the sandbox is handed out; none of the orphans is this run's. */
  reaping: Promise<unknown>;
}

/** A sandbox's limits when the run gives none (also what `--attempts` sizes its default parallelism by). */
export const DEFAULTS = {
  memoryBytes: 4 * 1024 ** 3,
  nanoCpus: 2e9,
  pidsLimit: 512,
  workspaceSizeBytes: 4 * 1024 ** 3,
  tmpSizeBytes: 1024 ** 3,
};

function sizeOption(bytes: number): string {
  return `${Math.floor(bytes / 1024)}k`;
}

/** /workspace's tmpfs: its size, its owner (the agent, or root in plan mode), no devices, no setuid. */
export function workspaceMountOptions(options: DockerSandboxOptions, profile: EngineProfile): string {
  return `rw,exec,nosuid,nodev,size=${sizeOption(options.workspaceSizeBytes ?? DEFAULTS.workspaceSizeBytes)},${profile.workspaceOwner(Boolean(options.readOnlyWorkspace))}`;
}

/** What the run's limits are inside a runtime with its own kernel (gVisor); undefined elsewhere. */
export function limitsInsideOf(options: DockerSandboxOptions): LimitsInside | undefined {
  return limitsInside(
    runtimeOf(options),
    options.pidsLimit ?? DEFAULTS.pidsLimit,
    options.memoryBytes ?? DEFAULTS.memoryBytes,
  );
}

/** The run container's OCI runtime: `--runtime`, `runtime:`, else AGENT_CI_RUNTIME; undefined: the engine's default. */
export function runtimeOf(options: Pick<DockerSandboxOptions, "runtime">): string | undefined {
  return options.runtime ?? (process.env.AGENT_CI_RUNTIME || undefined);
}

/** Allowlist, and setup while it runs its commands, go out through the egress sidecar. */
export function usesEgress(options: DockerSandboxOptions): boolean {
  return options.network === "allowlist" || (options.network === "setup" && Boolean(options.setup?.length));
}

/** Only "on" gives the container a network interface; the others have loopback (and the sidecar's socket). */
function networkMode(options: DockerSandboxOptions): string {
  return options.network === "on" ? "bridge" : "none";
}

/** The run container: hardened, limited, the toolbelt and the run's volumes mounted, asleep until used. */
export function containerSpec(
  options: DockerSandboxOptions,
  image: string,
  toolbeltVolume: string,
  profile: EngineProfile,
  channel: HelperChannel | undefined,
  nodeVolume?: string,
): Docker.ContainerCreateOptions {
  const memory = options.memoryBytes ?? DEFAULTS.memoryBytes;
  const runtime = runtimeOf(options);
  const pids = options.pidsLimit ?? DEFAULTS.pidsLimit;
  const inside = limitsInside(runtime, pids, memory);
  // Held inside gVisor's kernel (hardening.ts): RLIMIT_NPROC on the container, so every exec has it.
  const ulimits = containerUlimits(profile).filter((u) => !inside || u.Name !== "nproc");
  if (inside) ulimits.push({ Name: "nproc", Soft: inside.processes, Hard: inside.processes });
  return {
    name: containerName(options.runId),
    Image: image,
    // The toolbelt's sleep: the image needs none of its own.
    Entrypoint: [toolbeltProgram("sleep"), "infinity"],
    Cmd: [],
    User: KEEPER_USER,
    WorkingDir: WORKSPACE_ROOT,
    Env: envList(BASE_ENV),
    Labels: ownerLabels(options.runId),
    NetworkDisabled: false,
    HostConfig: {
      ...(runtime ? { Runtime: runtime } : {}),
      Init: true,
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges:true"],
      Privileged: false,
      PidsLimit: hostPidsLimit(runtime, pids),
      Memory: memory,
      MemorySwap: memory,
      NanoCpus: options.nanoCpus ?? DEFAULTS.nanoCpus,
      NetworkMode: networkMode(options),
      Ulimits: ulimits,
      Tmpfs: {
        ...(profile.workspaceVolume ? {} : { [WORKSPACE_ROOT]: workspaceMountOptions(options, profile) }),
        "/tmp": `rw,exec,nosuid,nodev,size=${sizeOption(options.tmpSizeBytes ?? DEFAULTS.tmpSizeBytes)},mode=1777`,
        ...(profile.serviceHomes === "tmpfs"
          ? serviceHomeMounts(
              options.services ?? 0,
              sizeOption(options.tmpSizeBytes ?? DEFAULTS.tmpSizeBytes),
            )
          : {}),
      },
      // The toolbelt and the project's Node.js, read-only (filled already: the engine copies an image's content only into an empty volume).
      Mounts: [
        { Type: "volume", Source: toolbeltVolume, Target: TOOLBELT_DIR, ReadOnly: true },
        ...(nodeVolume
          ? [{ Type: "volume" as const, Source: nodeVolume, Target: NODE_DIR, ReadOnly: true }]
          : []),
        ...(profile.workspaceVolume ? [workspaceMount(options.runId)] : []),
        ...(usesEgress(options) ? [egressMount(options.runId, true)] : []),
        ...(channel ? [channel.mount] : []),
        ...(profile.serviceHomes === "volume"
          ? serviceHomeVolumeMounts(options.runId, options.services ?? 0)
          : []),
      ],
    },
  };
}
