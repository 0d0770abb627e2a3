// What differs between engines, as data: the sandbox reads these fields and never asks which engine it
// is on. Docker is the reference; Podman's Docker-compatible API needs the differences below (see
// docs/ENGINES.md for why each exists). A remote engine is whichever of the two answers.

/** The agent's user: every tool call runs as it, and owns the workspace's files. */
export const AGENT_UID = 1000;
export const AGENT_USER = `${AGENT_UID}:${AGENT_UID}`;
/**
 * The container's own processes (init and its `sleep`) run as another unprivileged user, so that a
 * `kill -9 -1` by the agent cannot stop the container: it kills only the agent user's processes.
 */
export const KEEPER_USER = "1001:1001";

export interface Ulimit {
  Name: string;
  Soft: number;
  Hard: number;
}

/**
 * The ulimits of every container agent-ci starts (the run's, the toolbelt volume's filler). Rootful
 * Podman 4.3 otherwise raises nofile and nproc to its own maxima, and the container fails to start where
 * the service lacks CAP_SYS_RESOURCE ("error setting rlimit type 7"); Docker keeps the daemon's.
 */
export function containerUlimits(profile: EngineProfile): Ulimit[] {
  return [{ Name: "nofile", Soft: 4096, Hard: 4096 }, ...profile.extraUlimits];
}

export interface EngineProfile {
  name: "docker" | "podman";
  /** Mount options that give /workspace its owner (plan mode: root's, so the agent cannot write it). */
  workspaceOwner(readOnlyWorkspace: boolean): string;
  /** Ulimits set besides nofile (rootful Podman 4.3 raises the unset ones past what it may set). */
  extraUlimits: Ulimit[];
  /** /workspace belongs to the container's own user, not the agent: git needs safe.directory, always. */
  workspaceNotAgents: boolean;
  /** Who unpacks the workspace: plan mode's tree must end up unwritable by the agent. */
  copyInUser(readOnlyWorkspace: boolean): string;
  /** /workspace must be opened (chmod 0777, by its owner the keeper) before the agent can copy into it. */
  opensWorkspace: boolean;
  /**
   * /workspace is a tmpfs *volume* (the local driver's `type=tmpfs`) instead of the container's own tmpfs,
   * so that a copier container can fill it from a bind mount of the host's workspace where the engine
   * sees this host's files (copier.ts). Podman keeps the container's tmpfs and the streamed copy.
   */
  workspaceVolume: boolean;
  /**
   * How each service's home, a tmpfs owned by its user (`uid=`/`gid=`; service.ts), is mounted: as one of
   * the container's tmpfs mounts, or as a tmpfs volume of the local driver (Podman 4.3 rejects the owner
   * options on a container's tmpfs, and takes them on a volume's).
   */
  serviceHomes: "tmpfs" | "volume";
}

export const DOCKER_PROFILE: EngineProfile = {
  name: "docker",
  workspaceOwner: (readOnly) => `uid=${readOnly ? 0 : AGENT_UID},gid=${readOnly ? 0 : AGENT_UID},mode=0755`,
  extraUlimits: [],
  workspaceNotAgents: false,
  copyInUser: (readOnly) => (readOnly ? "0:0" : AGENT_USER),
  opensWorkspace: false,
  workspaceVolume: true,
  serviceHomes: "tmpfs",
};

export const PODMAN_PROFILE: EngineProfile = {
  name: "podman",
  // Podman 4.3 rejects tmpfs uid=/gid= ("unknown mount option") and gives the tmpfs the mode of the image's
  // /workspace; `U` hands it to the container user (the keeper), and the copy-in opens it up.
  workspaceOwner: () => "U",
  extraUlimits: [{ Name: "nproc", Soft: 32768, Hard: 32768 }],
  workspaceNotAgents: true,
  // The keeper owns /workspace there: it copies plan mode's tree itself, and opens the directory otherwise.
  copyInUser: (readOnly) => (readOnly ? KEEPER_USER : AGENT_USER),
  opensWorkspace: true,
  workspaceVolume: false,
  serviceHomes: "volume",
};

/** Podman's Docker-compatible API names itself in the version's Components ("Podman Engine"). */
export function engineProfile(components: Array<{ Name: string }>): EngineProfile {
  return components.some((c) => /podman/i.test(c.Name)) ? PODMAN_PROFILE : DOCKER_PROFILE;
}
