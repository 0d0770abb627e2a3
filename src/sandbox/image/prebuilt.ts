// Prebuilt images: the default sandbox image and the toolbelt, published by a release
// (scripts/publish-images.sh) and pulled by digest on an engine that lacks them, instead of built there
// (minutes on a fresh CI runner). The release records, in images.json at the package's root, each image's
// repository, manifest digest and the content hash of the recipe it was built from; the CLI and the Action
// read that one file. Only a digest is pulled, never a tag, and only while the recorded recipe is the
// package's own: a changed Dockerfile.sandbox or toolbelt/ is built locally. A pull that fails (no registry,
// no network, a private mirror that lacks it) falls back to the local build and says why once a run.
import fs from "node:fs";
import type Docker from "dockerode";
import { z } from "zod";
import { withTimeout } from "../engine/engine.js";
import { type BuildRecipe, packagePath, recipeHash, recipeTag } from "./image.js";

/** The record's file, at the package's root. */
export const PREBUILT_FILE = "images.json";

const PULL_TIMEOUT_MS = 15 * 60_000;

const Digest = z.string().regex(/^sha256:[0-9a-f]{64}$/, "a sha256 manifest digest");

const PrebuiltImage = z.object({
  repository: z.string().min(1).describe("The image's repository under the registry (agent-ci-sandbox)"),
  recipe: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe("The content hash of the recipe it was built from (recipeHash)"),
  digest: Digest.describe("Its manifest digest (a multi-platform index where it was built for several)"),
  platforms: z.array(z.string()).describe("The platforms it was built for (linux/amd64)"),
});

export const PrebuiltRecord = z.object({
  registry: z
    .string()
    .describe("Where the release pushed them (ghcr.io/owner); empty when nothing was published"),
  images: z
    .record(z.string(), PrebuiltImage)
    .describe("By recipe label (sandbox, toolbelt); empty when nothing was published"),
});
export type PrebuiltRecord = z.infer<typeof PrebuiltRecord>;
export type PrebuiltImage = z.infer<typeof PrebuiltImage>;

/** The package's record, or the one AGENT_CI_IMAGES_FILE names (a publication of one's own). */
export function readPrebuiltRecord(
  file = process.env.AGENT_CI_IMAGES_FILE || packagePath(PREBUILT_FILE),
): PrebuiltRecord {
  return PrebuiltRecord.parse(JSON.parse(fs.readFileSync(file, "utf8")));
}

/** Recorded images whose recipe is not the package's own (a recipe changed, the record not regenerated). */
export function staleImages(record: PrebuiltRecord, recipes: readonly BuildRecipe[]): string[] {
  const stale: string[] = [];
  for (const recipe of recipes) {
    const entry = record.images[recipe.label];
    if (entry && entry.recipe !== recipeHash(recipe))
      stale.push(
        `${recipe.label} (recorded ${entry.recipe.slice(0, 12)}, recipe ${recipeHash(recipe).slice(0, 12)})`,
      );
  }
  return stale;
}

/** The reference to pull for a recipe (`registry/repository@sha256:…`), or why there is none. */
export function prebuiltReference(
  record: PrebuiltRecord,
  recipe: BuildRecipe,
  registry = process.env.AGENT_CI_REGISTRY || record.registry,
): { reference: string } | { none: string } {
  const entry = record.images[recipe.label];
  if (!entry || !registry) return { none: `no prebuilt image is recorded for ${recipe.what}` };
  if (recipe.architecture)
    return { none: `${recipe.what} for ${recipe.architecture} (emulated) is not published` };
  if (entry.recipe !== recipeHash(recipe))
    return {
      none: `the prebuilt ${recipe.what} was made from another recipe than this package's (${PREBUILT_FILE} not regenerated)`,
    };
  return { reference: `${registry.replace(/\/+$/, "")}/${entry.repository}@${entry.digest}` };
}

interface PullEvent {
  status?: string;
  id?: string;
  error?: string;
  progressDetail?: { current?: number; total?: number };
}

/**
 * One run's use of the prebuilt images: pulls an image the engine lacks by digest and tags it with its
 * recipe's content tag, so it is found as if built here. After the first failure (said once, with the
 * reason) the run builds locally without trying again.
 */
export class PrebuiltImages {
  private failed = false;
  private said = false;

  constructor(
    private readonly record: PrebuiltRecord | undefined,
    private readonly registry?: string,
    /** Why there is no record (one that could not be read): said once, at the first image to pull. */
    private readonly problem?: string,
  ) {}

  /** The package's record and the mirror (`--image-registry`, Action `image_registry`, AGENT_CI_REGISTRY). */
  static forRun(registry?: string): PrebuiltImages {
    try {
      return new PrebuiltImages(readPrebuiltRecord(), registry || undefined);
    } catch (e) {
      const file = process.env.AGENT_CI_IMAGES_FILE || PREBUILT_FILE;
      return new PrebuiltImages(
        undefined,
        undefined,
        `the prebuilt images' record ${file} is unreadable (${(e as Error).message.split("\n")[0]})`,
      );
    }
  }

  /** True when the recipe's image was pulled (and tagged); false when it must be built, the reason said. */
  async pull(docker: Docker, recipe: BuildRecipe, progress: (line: string) => void): Promise<boolean> {
    if (this.problem) this.say(progress, this.problem);
    if (this.failed || !this.record) return false;
    const found = prebuiltReference(this.record, recipe, this.registry);
    if ("none" in found) {
      // Nothing published at all: the local build's own line says what happens.
      if (Object.keys(this.record.images).length > 0) this.say(progress, found.none);
      return false;
    }
    const { reference } = found;
    progress(`pulling ${recipe.what} ${reference} (prebuilt; instead of building it here)`);
    const started = performance.now();
    try {
      const bytes = await withTimeout(`the pull of ${reference}`, pull(docker, reference), PULL_TIMEOUT_MS);
      const tag = recipeTag(recipe);
      const colon = tag.lastIndexOf(":");
      await withTimeout(
        "an image tag",
        docker.getImage(reference).tag({ repo: tag.slice(0, colon), tag: tag.slice(colon + 1) }),
      );
      const mb = bytes > 0 ? `, ${(bytes / 1e6).toFixed(0)} MB` : "";
      progress(`pulled ${recipe.what} in ${((performance.now() - started) / 1000).toFixed(1)} s${mb}`);
      return true;
    } catch (e) {
      this.failed = true;
      this.say(progress, `pulling ${reference} failed: ${(e as Error).message.trim()}`);
      return false;
    }
  }

  private say(progress: (line: string) => void, why: string): void {
    if (this.said) return;
    this.said = true;
    progress(`${why}; building agent-ci's images locally instead (a few minutes)`);
  }
}

/** Pulls by reference; resolves with the bytes downloaded (compressed layers), rejects on an error event. */
async function pull(docker: Docker, reference: string): Promise<number> {
  const stream = await docker.pull(reference);
  const sizes = new Map<string, number>();
  return new Promise<number>((resolve, reject) =>
    docker.modem.followProgress(
      stream,
      (err: Error | null) => {
        if (err) reject(err);
        else resolve([...sizes.values()].reduce((a, b) => a + b, 0));
      },
      (event: PullEvent) => {
        if (event.error) reject(new Error(event.error));
        if (event.id && event.status === "Downloading" && event.progressDetail?.total)
          sizes.set(event.id, event.progressDetail.total);
      },
    ),
  );
}
