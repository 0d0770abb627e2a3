// The copy-in where the engine sees this host's files (a Docker engine on this machine): a short-lived
// copier container reads the workspace through a read-only bind mount and unpacks the planned files into
// the run's workspace volume, at the speed of a local `tar | tar`. Streamed through the engine's API
// instead, every byte costs dockerd and containerd CPU (~6 ms a MB: node_modules took 4–5× a local copy).
// The run's container never sees the host's directory; the copier does, for the copy only, and reads
// exactly the planned names (what a Read deny rule covers and the credential files stay out, as in the
// stream). Where the engine does not see this host's paths (a remote engine, a VM without the path
// shared), the copier finds that out itself and the caller streams instead.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { COPY_LIST, copyInFailed, tarCreateArgs, type WorkspaceCopy, writeCopyList } from "./archive.js";
import {
  createTmpfsVolume,
  engineElsewhere,
  ownerLabels,
  removeContainer,
  volumeMount,
  withTimeout,
} from "../engine/engine.js";
import type { Ulimit } from "../engine/profile.js";
import { WORKSPACE_ROOT } from "../sandbox.js";
import { TOOLBELT_BIN, TOOLBELT_DIR, toolbeltProgram } from "../image/toolbelt.js";

/** The run's /workspace on engines with `workspaceVolume`: a tmpfs volume, by name (the watchdog removes it). */
export function workspaceVolumeName(runId: string): string {
  return `agent-ci-${runId}-workspace`;
}

/**
 * The workspace volume's mount, with nothing of the image's copied in (`volumeMount`): the workspace is the
 * copy alone, and its root keeps the owner its options give (root's in plan mode).
 */
export function workspaceMount(runId: string): Docker.MountSettings {
  return volumeMount(workspaceVolumeName(runId), WORKSPACE_ROOT);
}

export function copierName(runId: string): string {
  return `agent-ci-${runId}-copy`;
}

/**
 * Creates the run's /workspace volume: a tmpfs with the given mount options (size, owner, nosuid, nodev),
 * mounted while a container uses it. The run's container holds it from its start to its removal.
 */
export async function createWorkspaceVolume(
  docker: Docker,
  runId: string,
  mountOptions: string,
): Promise<void> {
  await createTmpfsVolume(docker, runId, workspaceVolumeName(runId), mountOptions);
}

const SOURCE_DIR = "/run/agent-ci-copy/source";
const LIST_DIR = "/run/agent-ci-copy/list";
const NAMES = `${LIST_DIR}/${COPY_LIST.names}`;
const REWRITTEN = `${LIST_DIR}/${COPY_LIST.rewritten}`;
/** The copier's exit code when its list is not there: the engine runs where this host's files are not. */
const ELSEWHERE = 90;
/** A copy of a GiB on a slow disk takes a while; a cancel removes the copier (and ends the wait) sooner. */
const COPY_TIMEOUT_MS = 30 * 60_000;

/**
 * The copier's script (the toolbelt's bash and GNU tar; the arguments are `tarCreateArgs`). As root, tar
 * keeps the archive's owners; `--no-same-permissions` applies the umask, as the streamed copy's tar does.
 */
const SCRIPT = `
[ -f ${NAMES} ] || exit ${ELSEWHERE}
tar "$@" | tar -x -f - -C ${WORKSPACE_ROOT} --no-same-permissions --delay-directory-restore
s=("\${PIPESTATUS[@]}")
[ "\${s[0]}" -le 1 ] && [ "\${s[1]}" = 0 ] || exit 1
[ ! -f ${REWRITTEN} ] || tar -x -f ${REWRITTEN} -C ${WORKSPACE_ROOT} --no-same-permissions
`;

export interface CopierOptions {
  runId: string;
  image: string;
  toolbeltVolume: string;
  copy: WorkspaceCopy;
  /** Who owns the copied files: the agent, or root in plan mode. */
  owner: number;
  ulimits: Ulimit[];
}

/**
 * Copies `copy` into the run's workspace volume (mounted by the run's started container) with a copier
 * container. Resolves false, having copied nothing, when the engine does not see this host's files.
 */
export async function copyThroughBind(docker: Docker, options: CopierOptions): Promise<boolean> {
  const listDir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-copy-"));
  try {
    await writeCopyList(options.copy, listDir, options.owner);
    let container: Docker.Container;
    try {
      container = await withTimeout(
        "a container create",
        docker.createContainer(copierSpec(options, listDir)),
      );
    } catch (e) {
      if (engineElsewhere(e)) return false;
      throw e;
    }
    try {
      await withTimeout("a container start", container.start());
      const { StatusCode: code } = (await withTimeout(
        "the workspace copy",
        container.wait(),
        COPY_TIMEOUT_MS,
      )) as { StatusCode: number };
      if (code === ELSEWHERE) return false;
      const log = (
        (await withTimeout("a container log", container.logs({ stdout: true, stderr: true }))) as Buffer
      ).toString("utf8");
      // tar skips a file it cannot open (`--ignore-failed-read`: a file deleted since the listing is fine),
      // but one the copier may not read (a user-namespace-remapped engine) must not go missing silently.
      const denied = log.split("\n").filter((line) => /Permission denied/.test(line));
      if (code !== 0 || denied.length) throw copyInFailed(denied.length ? denied.join("\n") : log);
      return true;
    } finally {
      await removeContainer(container).catch(() => undefined); // the copy's own error, if any, is the one to tell
    }
  } finally {
    fs.rmSync(listDir, { recursive: true, force: true });
  }
}

function copierSpec(options: CopierOptions, listDir: string): Docker.ContainerCreateOptions {
  const { copy } = options;
  return {
    name: copierName(options.runId),
    Image: options.image,
    Entrypoint: [
      toolbeltProgram("bash"),
      "-c",
      SCRIPT,
      "copy",
      ...tarCreateArgs(SOURCE_DIR, NAMES, options.owner, copy.worldReadable),
    ],
    Cmd: [],
    // Root, to read the host's files whoever owns them and to give the copies their owner; nothing else.
    User: "0:0",
    Env: [`PATH=${TOOLBELT_BIN}`, "LC_ALL=C"],
    WorkingDir: "/",
    Labels: ownerLabels(options.runId),
    Tty: true, // one plain log for the error message
    NetworkDisabled: true,
    HostConfig: {
      NetworkMode: "none",
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      CapAdd: ["CHOWN", "DAC_OVERRIDE", "FOWNER"],
      SecurityOpt: ["no-new-privileges:true"],
      PidsLimit: 64,
      Ulimits: options.ulimits,
      Mounts: [
        { Type: "volume", Source: options.toolbeltVolume, Target: TOOLBELT_DIR, ReadOnly: true },
        { Type: "bind", Source: copy.dir, Target: SOURCE_DIR, ReadOnly: true },
        { Type: "bind", Source: listDir, Target: LIST_DIR, ReadOnly: true },
        workspaceMount(options.runId),
      ],
    },
  };
}
