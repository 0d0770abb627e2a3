// The user images the toolbelt tests run in (test/fixtures/images/*/Dockerfile), built from Debian
// packages on this engine and tagged by a hash of their Dockerfile and base image, like agent-ci's own.
import type Docker from "dockerode";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  baseImageFor,
  type BuildRecipe,
  DEFAULT_BASE_IMAGE,
  ensureBuilt,
  folderFiles,
  imageExists,
  recipeTag,
} from "../../src/sandbox/image.js";
import { ensureToolbelt } from "../../src/sandbox/toolbelt.js";

export const FIXTURE_IMAGES = ["go", "python", "busybox", "tmp-755", "tmp-symlink", "tmp-owned"] as const;
export type FixtureImage = (typeof FIXTURE_IMAGES)[number];

const IMAGES_DIR = fileURLToPath(new URL("../fixtures/images/", import.meta.url));

export function fixtureRecipe(name: FixtureImage): BuildRecipe {
  return {
    what: `the ${name} test image`,
    repository: `agent-ci-test-${name}`,
    files: folderFiles(path.join(IMAGES_DIR, name)),
    baseImage: DEFAULT_BASE_IMAGE,
    label: `test-${name}`,
  };
}

export function fixtureImageTag(name: FixtureImage): string {
  return recipeTag(fixtureRecipe(name));
}

export async function ensureFixtureImages(docker: Docker, progress?: (line: string) => void): Promise<void> {
  for (const name of FIXTURE_IMAGES) await ensureBuilt(docker, fixtureRecipe(name), progress);
}

/**
 * An image of another architecture than this engine's, run under qemu-user-static emulation: Debian's base
 * for it, made by scripts/test.sh (`AGENT_CI_BASE_ARCH=arm64 bash scripts/ensure-engine.sh`), which also
 * registers the emulator. Its toolbelt is built here, under emulation, when the base is there; a run builds
 * it itself otherwise.
 */
export const FOREIGN_ARCHITECTURE = "arm64";
export const foreignImage = (): string => baseImageFor(FOREIGN_ARCHITECTURE);

export async function ensureForeignToolbelt(
  docker: Docker,
  progress?: (line: string) => void,
): Promise<void> {
  if (await imageExists(docker, foreignImage()))
    await ensureToolbelt(docker, progress, { architecture: FOREIGN_ARCHITECTURE });
}
