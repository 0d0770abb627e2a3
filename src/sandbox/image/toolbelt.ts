// The toolbelt: everything agent-ci runs inside a run's container (the exec helper's Node.js, ripgrep,
// git, bash, GNU tar, coreutils, ...) comes from here, not from the image, so any Linux image works
// (glibc, musl, or nothing but a static busybox). It is built once per engine from toolbelt/ (content-hash
// tag), copied into a named volume (the engine copies an image's content into an empty volume on first
// mount; Docker and Podman alike) and mounted read-only at /opt/agent-ci. No host path is mounted, so
// remote engines and Docker Desktop work the same.
import fs from "node:fs";
import path from "node:path";
import type Docker from "dockerode";
import { withTimeout } from "../engine/engine.js";
import type { Ulimit } from "../engine/profile.js";
import {
  baseImageFor,
  DEFAULT_BASE_IMAGE,
  type BuildOptions,
  type BuildRecipe,
  ensureBuilt,
  folderFiles,
  packagePath,
  pinnedArg,
  recipeTag,
} from "./image.js";
import { EngineError } from "../sandbox.js";

export const TOOLBELT_DIR = "/opt/agent-ci";
export const TOOLBELT_BIN = `${TOOLBELT_DIR}/bin`;
/** Programs of the toolbelt by name: agent-ci's own commands use these paths, never the image's. */
export const toolbeltProgram = (name: string): string => `${TOOLBELT_BIN}/${name}`;

const TOOLBELT_REPOSITORY = "agent-ci-toolbelt";
const VOLUME_LABEL = "agent-ci.toolbelt";
/** Where the toolbelt stands when a run's PATH is composed; the image's own programs come first for Bash. */
export const FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * The toolbelt's Node.js version (toolbelt/Dockerfile's NODE_VERSION): the default image's `node` is a link to
 * it, so it is also the version the default image's own Node.js has.
 */
export function toolbeltNodeVersion(): string {
  return pinnedArg(fs.readFileSync(path.join(packagePath("toolbelt"), "Dockerfile"), "utf8"), "NODE_VERSION");
}

/** The engine's own architecture's toolbelt, or (`architecture`) one for images of another, built under emulation. */
export function toolbeltRecipe(architecture?: string): BuildRecipe {
  const recipe = {
    what: "agent-ci's toolbelt",
    repository: TOOLBELT_REPOSITORY,
    files: folderFiles(packagePath("toolbelt")),
    label: "toolbelt",
  };
  return architecture
    ? { ...recipe, baseImage: baseImageFor(architecture), architecture }
    : { ...recipe, baseImage: DEFAULT_BASE_IMAGE };
}

/** The volume's name: one per toolbelt content, so a changed toolbelt never mixes with an old copy. */
export function toolbeltVolumeName(tag = recipeTag(toolbeltRecipe())): string {
  return `agent-ci-toolbelt-${tag.slice(tag.indexOf(":") + 1)}`;
}

async function volumeExists(docker: Docker, name: string): Promise<boolean> {
  try {
    await withTimeout("a volume inspect", docker.getVolume(name).inspect());
    return true;
  } catch {
    return false;
  }
}

/** One population per volume name in this process: concurrent runs wait for the same one. */
const populating = new Map<string, Promise<string>>();

/**
 * Builds the toolbelt image if needed and makes sure its volume holds it; returns the volume's name. The
 * volume is filled by a short-lived container of the toolbelt image that mounts it (the engine copies the
 * image's /opt/agent-ci into the empty volume) and runs the toolbelt's own `true` from it, so a volume that
 * did not fill is removed rather than handed to a run.
 */
export async function ensureToolbelt(
  docker: Docker,
  progress?: (line: string) => void,
  options: BuildOptions & { volume?: string; ulimits?: Ulimit[]; architecture?: string } = {},
): Promise<string> {
  const recipe = toolbeltRecipe(options.architecture);
  const name = options.volume ?? toolbeltVolumeName(recipeTag(recipe));
  let pending = populating.get(name);
  if (!pending) {
    pending = populate(docker, recipe, name, progress, options).finally(() => populating.delete(name));
    populating.set(name, pending);
  }
  return pending;
}

async function populate(
  docker: Docker,
  recipe: BuildRecipe,
  name: string,
  progress: ((line: string) => void) | undefined,
  options: BuildOptions & { ulimits?: Ulimit[] },
): Promise<string> {
  if (await volumeExists(docker, name)) return name;
  const tag = await ensureBuilt(docker, recipe, progress, options);
  progress?.(`copying agent-ci's toolbelt into the volume ${name}`);
  const filler = await withTimeout(
    "a container create",
    docker.createContainer({
      Image: tag,
      Cmd: [`${TOOLBELT_BIN}/true`],
      Labels: { [VOLUME_LABEL]: name },
      HostConfig: {
        Mounts: [{ Type: "volume", Source: name, Target: TOOLBELT_DIR }],
        NetworkMode: "none",
        Ulimits: options.ulimits,
      },
    }),
  );
  try {
    await withTimeout("a container start", filler.start());
    const result = (await withTimeout("a container wait", filler.wait())) as { StatusCode?: number };
    if (result.StatusCode !== 0)
      throw new EngineError(
        `the toolbelt volume ${name} did not come up (its check exited ${result.StatusCode})`,
      );
  } catch (e) {
    await docker
      .getVolume(name)
      .remove()
      .catch(() => {});
    throw e;
  } finally {
    await filler.remove({ force: true }).catch(() => {});
  }
  return name;
}
