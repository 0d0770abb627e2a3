// The copy-in: the workspace into the container's /workspace, streamed through the run's own container when
// it is small, else by a copier container reading a bind mount (copier.ts).
import type Docker from "dockerode";
import {
  copyInFailed,
  detectHostPacker,
  extractFlags,
  packWorkspace,
  WORKSPACE_FULL,
  type WorkspaceCopy,
} from "./archive.js";
import type { DockerSandboxOptions } from "../container/spec.js";
import { copyThroughBind } from "./copier.js";
import { AGENT_UID, containerUlimits, type EngineProfile, KEEPER_USER } from "../engine/profile.js";
import { oneShotExec } from "../engine/exec.js";
import type { RunObjects } from "../engine/run-objects.js";
import { EngineError, WORKSPACE_ROOT } from "../sandbox.js";
import { toolbeltProgram } from "../image/toolbelt.js";

/** Where the copy-in goes and what it may use. */
export interface CopyTarget {
  docker: Docker;
  container: Docker.Container;
  objects: RunObjects;
  options: DockerSandboxOptions;
  profile: EngineProfile;
  image: string;
  toolbelt: string;
}

/**
 * Below this many bytes the tar stream through the run's own container beats starting a copier: the
 * stream costs the engine about 6 ms a MB, a copier container's create, start and removal 300–500 ms.
 */
export const STREAM_BELOW_BYTES = 16 * 2 ** 20;

/**
 * Fills /workspace: a small tree as a tar stream into the container's `tar -x`; a larger one with a
 * copier container reading the host's workspace from a bind mount, where the engine sees this host's
 * files (copier.ts), else streamed too.
 */
export async function copyIn(target: CopyTarget, copy: WorkspaceCopy): Promise<"copier" | "stream"> {
  const { options, profile } = target;
  if (profile.workspaceVolume && !options.packer && copy.bytes >= STREAM_BELOW_BYTES) {
    target.objects.addCopier();
    const copied = await copyThroughBind(target.docker, {
      runId: options.runId,
      image: target.image,
      toolbeltVolume: target.toolbelt,
      copy,
      owner: options.readOnlyWorkspace ? 0 : AGENT_UID,
      ulimits: containerUlimits(profile),
    });
    if (copied) return "copier";
    options.progress?.(
      "copy-in: the engine does not see this host's files (a remote engine?): streaming the workspace instead",
    );
  }
  await streamCopy(target, copy);
  return "stream";
}

async function streamCopy(
  { docker, container, options, profile }: CopyTarget,
  copy: WorkspaceCopy,
): Promise<void> {
  let packError: unknown;
  const user = profile.copyInUser(Boolean(options.readOnlyWorkspace));
  if (profile.opensWorkspace && !options.readOnlyWorkspace) {
    const opened = await oneShotExec(
      docker,
      container,
      [toolbeltProgram("chmod"), "0777", WORKSPACE_ROOT],
      KEEPER_USER,
    );
    if (opened.exitCode !== 0)
      throw new EngineError(`preparing ${WORKSPACE_ROOT} failed: ${opened.output.trim()}`);
  }
  const packer = options.packer ?? (await detectHostPacker());
  const extract = [
    toolbeltProgram("tar"),
    "-x",
    "-f",
    "-",
    "-C",
    WORKSPACE_ROOT,
    "--no-same-owner",
    "--delay-directory-restore",
    ...extractFlags(packer),
  ];
  const copying = oneShotExec(docker, container, extract, user, async (sink) => {
    try {
      await packWorkspace(copy, sink, packer);
    } catch (e) {
      packError = e;
    } finally {
      sink.end();
    }
  });
  const result = await copying.catch((e: unknown) => {
    throw packError ?? e;
  });
  // A full workspace stops the extracting tar, and the packer then fails writing to it: the first is the cause.
  if (result.exitCode !== 0 && (!packError || WORKSPACE_FULL.test(result.output)))
    throw copyInFailed(result.output);
  if (packError) throw packError;
}
