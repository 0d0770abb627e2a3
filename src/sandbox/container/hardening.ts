// The hardening read-back as a pure comparison: what agent-ci asked the engine for, what the engine's
// inspect says it applied, and what the kernel says from inside the container (the helper's
// /proc/self/status and a user-namespace probe). The result lists every requested setting that did not
// hold; the sandbox refuses to run on any unless the user opted in (docs/RELIABILITY.md, row D11). And the cgroup's
// OOM-kill counter, read once after the start and again after a SIGKILL'd command (C10).
import { toolbeltProgram } from "../image/toolbelt.js";

/** The create request's settings that are read back (a subset of dockerode's HostConfig). */
export interface RequestedHardening {
  PidsLimit?: number;
  Ulimits?: Array<{ Name?: string; Hard?: number }>;
  Memory?: number;
  NanoCpus?: number;
  NetworkMode?: string;
  /** Set only when the run asked for one (`--runtime`). */
  Runtime?: string;
}

/** What `inspect` returns for them. */
export interface InspectedHardening {
  ReadonlyRootfs?: boolean;
  CapDrop?: string[] | null;
  NetworkMode?: string;
  PidsLimit?: number | null;
  Memory?: number;
  NanoCpus?: number;
  Init?: boolean | null;
  Privileged?: boolean;
  Runtime?: string;
  SecurityOpt?: string[] | null;
}

/** From inside: the helper process's own status fields, and whether `unshare -U true` succeeded. */
export interface InsideProbe {
  uid: number | null;
  capEff: string;
  noNewPrivs: string;
  seccomp: string;
  userNamespaceOpen: boolean;
  /** A command's hard RLIMIT_NPROC (`ulimit -Hu`); null where unlimited or unread. */
  maxProcesses?: number | null;
}

export interface Hardening {
  user: string;
  uid: number | null;
  capEff: string;
  noNewPrivileges: boolean;
  seccomp: string;
  readonlyRootfs: boolean;
  capDrop: string[];
  networkMode: string;
  pidsLimit: number | null;
  memoryBytes: number;
  nanoCpus: number;
  init: boolean;
  privileged: boolean;
  runtime: string;
  /** The egress sidecar's runtime, read back likewise (runs whose network goes through it). */
  egressRuntime?: string;
  workspaceWritableByAgent: boolean;
  /** Under a runtime with its own kernel (gVisor): the limits held inside it, and by what (`limitsInside`). */
  limitsInside?: LimitsInside & { heldBy: string };
  /** Requested settings the engine did not apply (empty when all held). */
  missing: string[];
}

/** The check that the container does not run as root (the egress sidecar does, by design). */
export const NON_ROOT_CHECK = "non-root user";
/**
 * OCI runtimes that run the container on a kernel of their own in user space (gVisor's runsc): the agent's
 * system calls reach that kernel, never the host's, which the runtime guards with its own seccomp filter.
 * There, the host-kernel checks (a seccomp filter on the agent, user namespaces closed) do not apply, and
 * the container's /proc does not print no_new_privs: the engine's read-back says it.
 */
export const USER_SPACE_KERNELS: ReadonlySet<string> = new Set(["runsc"]);

/**
 * gVisor's kernel does not see the container's cgroups, and they count gVisor itself. Measured with Debian
 * bookworm's runsc (its ptrace platform): each process the agent starts costs about 15 tasks in the
 * container's pids cgroup (gVisor's threads and the platform's stub processes), so at a pids limit of 512 gVisor
 * could not start a thread of its own after ~45 processes and the whole sandbox exited; and a process past
 * the memory limit got the whole sandbox OOM-killed. There the run's limits are held inside gVisor's kernel,
 * which honours rlimits: the process count by RLIMIT_NPROC (set on the container, so every exec has it), each
 * Bash command's memory by RLIMIT_AS (set by the helper's wrapper). The cgroups still bound the sandbox as
 * a whole on the host: memory at the run's limit, pids with room for gVisor's threads.
 */
export const HOST_TASKS_PER_GUEST_TASK = 32;

/** The limits held inside a runtime's own kernel (user-space kernels only). */
export interface LimitsInside {
  /** RLIMIT_NPROC of the agent's user: processes and threads. */
  processes: number;
  /** RLIMIT_AS of each Bash command (and what it starts). */
  addressSpaceBytes: number;
}

/** The limits to hold inside the runtime's kernel, where it has its own (gVisor); undefined under runc. */
export function limitsInside(
  runtime: string | undefined,
  pidsLimit: number,
  memoryBytes: number,
): LimitsInside | undefined {
  if (!runtime || !USER_SPACE_KERNELS.has(runtime)) return undefined;
  return { processes: pidsLimit, addressSpaceBytes: memoryBytes };
}

/** The container's pids cgroup limit: the run's, with room for gVisor's own tasks where the limit is held inside. */
export function hostPidsLimit(runtime: string | undefined, pidsLimit: number): number {
  return limitsInside(runtime, pidsLimit, 0) ? pidsLimit * HOST_TASKS_PER_GUEST_TASK : pidsLimit;
}

const HELD_INSIDE =
  "the runtime's own kernel does not see the container's cgroups: processes held by RLIMIT_NPROC, each Bash command's memory by RLIMIT_AS; the cgroups bound the whole sandbox";

/** The runtime the run asked for by name and did not get: refused always, `--allow-weak-hardening` or not. */
export function runtimeMismatch(requested: RequestedHardening, host: InspectedHardening): string | undefined {
  const got = host.Runtime || "runc";
  return requested.Runtime && got !== requested.Runtime
    ? `the container was asked to run under the OCI runtime ${requested.Runtime} and the engine started it under ${got}`
    : undefined;
}

/** Fewer dropped capabilities than this, listed one by one (Podman's way of saying ALL), is not ALL. */
const MIN_CAPS_LISTED_AS_ALL = 10;

export function assessHardening(
  requested: RequestedHardening,
  host: InspectedHardening,
  inside: InsideProbe,
  context: { user: string; workspaceWritableByAgent: boolean; addressSpaceBytes?: number },
): Hardening {
  const capDrop = host.CapDrop ?? [];
  const runtime = host.Runtime || "runc";
  const ownKernel = USER_SPACE_KERNELS.has(runtime) && runtime === requested.Runtime;
  const engineNoNewPrivs = (host.SecurityOpt ?? []).some((o) => /^no-new-privileges(:true)?$/.test(o));
  const hardening: Hardening = {
    user: context.user,
    uid: inside.uid,
    capEff: inside.capEff,
    noNewPrivileges: inside.noNewPrivs === "1" || (ownKernel && inside.noNewPrivs === "" && engineNoNewPrivs),
    seccomp: ownKernel
      ? `${runtime}: the agent's calls reach its own kernel, itself under a seccomp filter`
      : inside.seccomp,
    readonlyRootfs: Boolean(host.ReadonlyRootfs),
    capDrop,
    networkMode: host.NetworkMode ?? "",
    pidsLimit: host.PidsLimit ?? null,
    memoryBytes: host.Memory ?? 0,
    nanoCpus: host.NanoCpus ?? 0,
    init: Boolean(host.Init),
    privileged: Boolean(host.Privileged),
    runtime,
    workspaceWritableByAgent: context.workspaceWritableByAgent,
    missing: [],
  };
  const nproc = requested.Ulimits?.find((u) => u.Name === "nproc")?.Hard;
  if (ownKernel && nproc !== undefined && context.addressSpaceBytes !== undefined)
    hardening.limitsInside = {
      processes: nproc,
      addressSpaceBytes: context.addressSpaceBytes,
      heldBy: HELD_INSIDE,
    };
  const checks: Array<[boolean, string]> = [
    [hardening.uid === 0 || hardening.uid === null, NON_ROOT_CHECK],
    [!/^0+$/.test(hardening.capEff), `capabilities dropped (CapEff ${hardening.capEff})`],
    [!hardening.noNewPrivileges, "no-new-privileges"],
    [!hardening.readonlyRootfs, "read-only root filesystem"],
    // Podman reports the dropped capabilities one by one instead of "ALL"; CapEff above is the proof.
    [!capDrop.some((c) => /^(CAP_)?ALL$/i.test(c)) && capDrop.length < MIN_CAPS_LISTED_AS_ALL, "CapDrop ALL"],
    [
      hardening.pidsLimit !== (requested.PidsLimit ?? null),
      `pids limit ${requested.PidsLimit} (got ${hardening.pidsLimit})`,
    ],
    [
      hardening.memoryBytes !== requested.Memory,
      `memory limit ${requested.Memory} (got ${hardening.memoryBytes})`,
    ],
    [
      hardening.nanoCpus !== requested.NanoCpus,
      `CPU limit ${requested.NanoCpus} (got ${hardening.nanoCpus})`,
    ],
    [
      hardening.limitsInside !== undefined && inside.maxProcesses !== hardening.limitsInside.processes,
      `process limit inside the runtime's kernel ${hardening.limitsInside?.processes} (RLIMIT_NPROC; got ${inside.maxProcesses ?? "none"})`,
    ],
    [!hardening.init, "init process"],
    [hardening.privileged, "unprivileged"],
    [requested.NetworkMode === "none" && hardening.networkMode !== "none", "network none"],
    [!ownKernel && hardening.seccomp === "0", "seccomp filter"],
    // Docker's default seccomp profile refuses unshare(CLONE_NEWUSER) without CAP_SYS_ADMIN; Podman's
    // (containers-common) allows it, opening the kernel's user-namespace surface. Probed, not assumed.
    [
      !ownKernel && inside.userNamespaceOpen,
      "user namespaces blocked (the engine's seccomp profile allows unshare -U)",
    ],
  ];
  hardening.missing = checks.filter(([failed]) => failed).map(([, what]) => what);
  return hardening;
}

/**
 * Reads the container cgroup's OOM-kill counter (cgroup v2 `memory.events`, v1 `memory.oom_control`).
 * Docker sets `State.OOMKilled` only when the container itself exits, so a command killed by the OOM
 * killer in a running container is recognised by this counter going up (C10).
 */
export const OOM_KILLS_SCRIPT =
  "cat /sys/fs/cgroup/memory.events 2>/dev/null || cat /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null";

/** The counter in what OOM_KILLS_SCRIPT printed; undefined where the engine does not expose it. */
export function parseOomKills(text: string): number | undefined {
  const match = /^oom_kill (\d+)$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** The counter now, OOM_KILLS_SCRIPT run through the helper by `exec` (its stdout); undefined when unreadable. */
export async function readOomKills(
  exec: (request: { argv: string[]; cwd: string; timeoutMs: number }) => Promise<string>,
): Promise<number | undefined> {
  try {
    return parseOomKills(
      await exec({ argv: [toolbeltProgram("bash"), "-c", OOM_KILLS_SCRIPT], cwd: "/", timeoutMs: 10_000 }),
    );
  } catch {
    return undefined;
  }
}
