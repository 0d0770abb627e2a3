// Reaching the Docker engine: the client (DOCKER_HOST or the default socket, so a remote engine or a
// Podman socket works unchanged), a ping that says how to fix a missing engine, timeouts on API calls,
// and the reaper that removes containers left by runs whose owner process died.
import os from "node:os";
import type Docker from "dockerode";
import { type EngineProfile, engineProfile } from "./profile.js";
import { EngineError } from "../sandbox.js";

export const LABEL_RUN = "agent-ci.run";
export const LABEL_PID = "agent-ci.pid";
export const LABEL_HOST = "agent-ci.host";
export const LABEL_STARTED = "agent-ci.started";

const API_TIMEOUT_MS = 30_000;

/** The engine's client, loaded when a run first reaches the engine (docker-client.ts says why). */
export async function connectEngine(): Promise<Docker> {
  const { createDockerClient } = await import("./docker-client.js");
  return createDockerClient();
}

/** Bounds an Engine API call that has no timeout of its own (D6: a hung daemon must not hang the run). */
export async function withTimeout<T>(what: string, promise: Promise<T>, ms = API_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new EngineError(`Docker engine did not answer ${what} within ${ms / 1000} s`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Rethrows all but "no such object": removing what is already gone is fine. */
function unlessGone(e: unknown): void {
  if ((e as { statusCode?: number }).statusCode !== 404) throw e;
}

/** A bind source the engine cannot find (a container create's error): it does not see this host's files. */
export function engineElsewhere(e: unknown): boolean {
  const err = e as { statusCode?: number; message?: string };
  return (
    err.statusCode === 400 &&
    /bind source path|no such file or directory|does not exist/i.test(err.message ?? "")
  );
}

/** Removes a container, running or not, with its anonymous volumes; one already gone is fine. */
export async function removeContainer(container: Docker.Container): Promise<void> {
  await withTimeout("a container removal", container.remove({ force: true, v: true })).catch(unlessGone);
}

/**
 * Creates a run's tmpfs volume of the local driver with the given mount options (size, owner, nosuid,
 * nodev), labelled as the run's: mounted while a container uses it, removed with the run.
 */
export async function createTmpfsVolume(
  docker: Docker,
  runId: string,
  name: string,
  mountOptions: string,
): Promise<void> {
  await withTimeout(
    "a volume create",
    docker.createVolume({
      Name: name,
      Driver: "local",
      DriverOpts: { type: "tmpfs", device: "tmpfs", o: mountOptions },
      Labels: ownerLabels(runId),
    }),
  );
}

/**
 * A volume's mount at `target`. NoCopy: an engine fills an empty volume from the image's directory
 * underneath and gives the volume's root that directory's owner; the volume keeps the owner its options give.
 */
export function volumeMount(name: string, target: string): Docker.MountSettings {
  // dockerode's type marks the API's optional Labels and DriverConfig as required.
  const noCopy = { NoCopy: true } as NonNullable<Docker.MountSettings["VolumeOptions"]>;
  return { Type: "volume", Source: name, Target: target, VolumeOptions: noCopy };
}

/** Removes a volume no container uses any more; one already gone is fine. */
export async function removeVolume(docker: Docker, name: string): Promise<void> {
  await withTimeout("a volume removal", docker.getVolume(name).remove()).catch(unlessGone);
}

function whereEngine(): string {
  if (process.env.DOCKER_HOST) return `DOCKER_HOST=${process.env.DOCKER_HOST}`;
  // dockerode's default: Docker's named pipe on Windows, the Unix socket elsewhere.
  return os.type() === "Windows_NT"
    ? "the default pipe //./pipe/docker_engine"
    : "the default socket /var/run/docker.sock";
}

/** What the engine says of itself. */
export interface EngineFacts {
  version: string;
  apiVersion: string;
  architecture: string;
  profile: EngineProfile;
}

/** Fails fast, before any model call, with what to do next (D1). */
export async function pingEngine(docker: Docker): Promise<EngineFacts> {
  let facts: EngineFacts;
  let engineOs: string | undefined;
  try {
    // A ping answers fast or not at all; the version request is an ordinary call (a loaded Podman service
    // took over 10 s to answer it).
    // Both asked at once: an engine that is not there fails the ping within its bound either way.
    const [, v] = await Promise.all([
      withTimeout("a ping", docker.ping(), 10_000),
      withTimeout("a version request", docker.version()),
    ]);
    // Arch is Go's name for the engine's architecture (amd64, arm64), as images name theirs.
    facts = {
      version: v.Version,
      apiVersion: v.ApiVersion,
      architecture: v.Arch,
      profile: engineProfile(v.Components ?? []),
    };
    engineOs = v.Os;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const hint =
      code === "EACCES"
        ? "permission denied on the socket: add your user to the docker group or run with access to it"
        : "start Docker (e.g. `sudo systemctl start docker`), point DOCKER_HOST at a Docker-compatible socket, " +
          "or run `bash scripts/ensure-engine.sh` as root with AGENT_CI_INSTALL_ENGINE=1";
    throw new EngineError(
      `no Docker engine answers at ${whereEngine()} (${code ?? (e as Error).message}): ${hint}`,
      {
        cause: e,
      },
    );
  }
  // Os is Go's GOOS of the engine. Docker on a Windows host (a GitHub-hosted Windows runner's) runs Windows
  // containers, which cannot run agent-ci's Linux images; said here, before an image is asked for.
  if (engineOs && engineOs !== "linux")
    throw new EngineError(
      `the engine at ${whereEngine()} runs ${engineOs} containers; agent-ci's sandbox is a Linux container: ` +
        "run on a Linux host with Docker (on GitHub, an ubuntu runner), or point DOCKER_HOST at a Linux engine",
    );
  return facts;
}

/**
 * Fails before anything is made when the engine has no OCI runtime of this name, saying how to get one
 * (a create would fail later with only "unknown runtime specified").
 */
export async function requireRuntime(docker: Docker, runtime: string): Promise<void> {
  const info = (await withTimeout("an info request", docker.info())) as {
    Runtimes?: Record<string, unknown>;
  };
  const known = Object.keys(info.Runtimes ?? {});
  if (known.includes(runtime)) return;
  const gvisor =
    runtime === "runsc"
      ? "install gVisor (Debian: apt-get install runsc) and register it with the engine as docs/ENGINES.md's gVisor section shows " +
        "(as root, `AGENT_CI_RUNTIMES=runsc bash scripts/ensure-engine.sh` does both and reloads dockerd without stopping its containers)"
      : `register ${runtime} under "runtimes" in the engine's daemon.json and reload it`;
  throw new EngineError(
    `the engine at ${whereEngine()} has no OCI runtime named ${runtime} (it has: ${known.join(", ") || "none listed"}): ${gvisor}; or run without --runtime`,
  );
}

export function ownerLabels(runId: string): Record<string, string> {
  return {
    [LABEL_RUN]: runId,
    [LABEL_PID]: String(process.pid),
    [LABEL_HOST]: os.hostname(),
    [LABEL_STARTED]: new Date().toISOString(),
  };
}

/** Whether a process of this host's (this PID namespace's) is still there. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A labelled object of an earlier run on this host whose owner process is dead (D7, D8). */
export function orphaned(labels: Record<string, string> | undefined): boolean {
  const pid = Number(labels?.[LABEL_PID]);
  return labels?.[LABEL_HOST] === os.hostname() && Number.isInteger(pid) && !processAlive(pid);
}

/**
 * Removes containers of earlier runs on this host whose owner process is dead (D7), then their volumes
 * (`--network allowlist`'s socket volume; a volume goes only once its containers have). A container whose owner is alive, or that belongs to another host sharing the engine, is left
 * alone (D8).
 */
export async function reapOrphans(docker: Docker): Promise<string[]> {
  const list = await withTimeout(
    "a container list",
    docker.listContainers({ all: true, filters: { label: [LABEL_RUN] } }),
  );
  const reaped: string[] = [];
  for (const info of list) {
    if (!orphaned(info.Labels)) continue;
    try {
      await withTimeout("a container removal", docker.getContainer(info.Id).remove({ force: true, v: true }));
      reaped.push(info.Labels[LABEL_RUN] ?? info.Id);
    } catch {
      // Already gone (another run reaped it first).
    }
  }
  const { Volumes: volumes } = await withTimeout(
    "a volume list",
    docker.listVolumes({ filters: { label: [LABEL_RUN] } }),
  );
  for (const info of volumes ?? []) {
    if (!orphaned(info.Labels ?? undefined)) continue;
    await withTimeout("a volume removal", docker.getVolume(info.Name).remove()).catch(() => {});
  }
  return reaped;
}
