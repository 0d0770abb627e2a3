// What a run has made in the engine, by name and as it was made, and their removal: the assembly records
// each object as it creates it, so a step that fails removes everything made before it, and the running
// sandbox's dispose removes the same objects the same way.
import type Docker from "dockerode";
import { copierName, workspaceVolumeName } from "../copy/copier.js";
import { type EgressSidecar, egressNames, removeEgress } from "../egress/sidecar.js";
import { removeContainer, removeVolume } from "./engine.js";
import { packageCacheHelperName } from "../setup/package-cache.js";
import { serviceHomeVolumeName } from "../container/service.js";
import { snapshotContainerName } from "../setup/snapshot.js";

/** The run's container name: known before the container exists, so a watchdog can remove one being created. */
export function containerName(runId: string): string {
  return `agent-ci-${runId}`;
}

/**
 * Every engine object a run with `services` services may create, by name (the watchdog removes them without
 * asking the sandbox).
 */
export function runEngineObjects(
  runId: string,
  services: number,
): { containers: string[]; volumes: string[] } {
  const egress = egressNames(runId);
  return {
    containers: [
      containerName(runId),
      copierName(runId),
      egress.sidecar,
      snapshotContainerName(runId),
      packageCacheHelperName(runId),
    ],
    volumes: [
      workspaceVolumeName(runId),
      ...Array.from({ length: services }, (_, index) => serviceHomeVolumeName(runId, index)),
      egress.volume,
    ],
  };
}

/** Something of the run's that lives on the host and ends with it (the helper's connection, its socket). */
interface Closable {
  close(): void;
}

const live = new Set<RunObjects>();

/** Removes everything every run of this process still holds (SIGINT/SIGTERM path). */
export async function disposeAllSandboxes(): Promise<void> {
  await Promise.all([...live].map((objects) => objects.remove().catch(() => undefined)));
}

/**
 * The engine objects of one run, filled in by the assembly as each is made. Removal goes in the one order
 * that works: the host ends first, then the containers, then the volumes they held, the egress sidecar last
 * (its ledger records the run container's connections until that container is gone).
 */
export class RunObjects {
  /** Host ends: closed first, so nothing waits on a container being removed. */
  private readonly closables: Closable[] = [];
  private container: Docker.Container | undefined;
  private copier = false;
  private workspaceVolume = false;
  /** How many services' home volumes are (or are being) made. */
  private serviceHomeVolumes = 0;
  /** The sidecar while it starts, or started: removal waits for it, so one still starting is removed too. */
  private egress: Promise<EgressSidecar> | undefined;
  private removing: Promise<void> | undefined;

  constructor(
    private readonly docker: Docker,
    private readonly runId: string,
  ) {
    live.add(this);
  }

  /** Removal has begun: nothing more is to be made or asked of the run's container. */
  get removed(): boolean {
    return this.removing !== undefined;
  }

  closeWithRun(closable: Closable): void {
    this.closables.push(closable);
  }

  addContainer(container: Docker.Container): void {
    this.container = container;
  }

  /** A copier container is (or is being) made: it holds the workspace volume while it runs. */
  addCopier(): void {
    this.copier = true;
  }

  /** The workspace volume is being made (a create that times out may still have made it). */
  addWorkspaceVolume(): void {
    this.workspaceVolume = true;
  }

  /** The services' home volumes are being made (service.ts). */
  addServiceHomeVolumes(count: number): void {
    this.serviceHomeVolumes = count;
  }

  addEgress(starting: Promise<EgressSidecar>): void {
    this.egress = starting;
  }

  /** Removes all of it. Safe to call more than once and on every path out: every caller waits for the one removal. */
  remove(): Promise<void> {
    // A second signal's exit must not cut off the volumes' removal, which follows the containers'.
    this.removing ??= this.removeAll().finally(() => live.delete(this));
    return this.removing;
  }

  private async removeAll(): Promise<void> {
    for (const closable of this.closables) closable.close();
    try {
      // A copier still running (a cancel during the copy) holds the workspace volume too.
      const copier = this.copier ? [removeContainer(this.docker.getContainer(copierName(this.runId)))] : [];
      await Promise.all([...(this.container ? [removeContainer(this.container)] : []), ...copier]);
    } finally {
      // After the containers (the sidecar's tunnels closed and recorded): a volume goes once no container uses it.
      try {
        const volumes = [
          ...(this.workspaceVolume ? [workspaceVolumeName(this.runId)] : []),
          ...Array.from({ length: this.serviceHomeVolumes }, (_, i) => serviceHomeVolumeName(this.runId, i)),
        ];
        await Promise.all(volumes.map((name) => removeVolume(this.docker, name)));
      } finally {
        if (this.egress) await removeStartedEgress(this.docker, this.runId, this.egress);
      }
    }
  }
}

/** Removes a run's sidecar (started, failed or still starting) and its volume, keeping the ledger read so far. */
async function removeStartedEgress(
  docker: Docker,
  runId: string,
  starting: Promise<EgressSidecar>,
): Promise<void> {
  const sidecar = await starting.catch(() => undefined);
  await sidecar?.sync();
  await (sidecar ? sidecar.dispose() : removeEgress(docker, runId));
}
