// The prebuilt images' record (images.json): the recipe and the digest stay in step, and a run pulls only
// by digest, only what was built from the package's own recipe.
import { afterEach, describe, expect, it } from "vitest";
import { recipeHash, sandboxRecipe } from "../../../src/sandbox/image/image.js";
import type Docker from "dockerode";
import {
  PrebuiltImages,
  prebuiltReference,
  PrebuiltRecord,
  readPrebuiltRecord,
  staleImages,
} from "../../../src/sandbox/image/prebuilt.js";
import { toolbeltRecipe } from "../../../src/sandbox/image/toolbelt.js";

const RECIPES = () => [sandboxRecipe(), toolbeltRecipe()];
const DIGEST = `sha256:${"ab".repeat(32)}`;

function recordOf(registry: string, recipes = RECIPES()): PrebuiltRecord {
  return PrebuiltRecord.parse({
    registry,
    images: Object.fromEntries(
      recipes.map((r) => [
        r.label,
        { repository: r.repository, recipe: recipeHash(r), digest: DIGEST, platforms: ["linux/amd64"] },
      ]),
    ),
  });
}

describe("the prebuilt images' record", () => {
  const saved = process.env.AGENT_CI_REGISTRY;
  afterEach(() => {
    if (saved === undefined) delete process.env.AGENT_CI_REGISTRY;
    else process.env.AGENT_CI_REGISTRY = saved;
  });

  it("the package's record names, for each image it holds, the recipe the package has now", () => {
    // Fails when Dockerfile.sandbox or toolbelt/ changed and the release script was not run again.
    const record = readPrebuiltRecord();
    expect(staleImages(record, RECIPES())).toEqual([]);
    for (const label of Object.keys(record.images)) expect(["sandbox", "toolbelt"]).toContain(label);
  });

  it("a changed recipe makes the record stale", () => {
    const record = recordOf("ghcr.io/owner");
    const changed = sandboxRecipe(`${sandboxRecipe().files.Dockerfile}\nRUN true\n`);
    expect(staleImages(record, [changed, toolbeltRecipe()])).toEqual([
      expect.stringMatching(/^sandbox \(recorded [0-9a-f]{12}, recipe [0-9a-f]{12}\)$/),
    ]);
    expect(prebuiltReference(record, changed)).toEqual({
      none: expect.stringMatching(/another recipe than this package's \(images\.json not regenerated\)/),
    });
  });

  it("a run pulls by digest, never by tag, from the recorded registry or the mirror named", () => {
    delete process.env.AGENT_CI_REGISTRY;
    const record = recordOf("ghcr.io/owner/");
    expect(prebuiltReference(record, sandboxRecipe())).toEqual({
      reference: `ghcr.io/owner/agent-ci-sandbox@${DIGEST}`,
    });
    process.env.AGENT_CI_REGISTRY = "mirror.example:5000/agent-ci";
    expect(prebuiltReference(record, toolbeltRecipe())).toEqual({
      reference: `mirror.example:5000/agent-ci/agent-ci-toolbelt@${DIGEST}`,
    });
    // A mirror given as an option (--image-registry, image_registry) wins over the environment.
    expect(prebuiltReference(record, toolbeltRecipe(), "other.example")).toEqual({
      reference: `other.example/agent-ci-toolbelt@${DIGEST}`,
    });
  });

  it("nothing is pulled where nothing was published, nor for an emulated architecture", () => {
    delete process.env.AGENT_CI_REGISTRY;
    const empty = PrebuiltRecord.parse({ registry: "", images: {} });
    expect(prebuiltReference(empty, sandboxRecipe())).toEqual({
      none: "no prebuilt image is recorded for the sandbox image",
    });
    expect(prebuiltReference(recordOf("ghcr.io/owner"), toolbeltRecipe("arm64"))).toEqual({
      none: expect.stringMatching(/for arm64 \(emulated\) is not published/),
    });
  });

  it("a record whose digest is not a sha256 digest is refused", () => {
    expect(() =>
      PrebuiltRecord.parse({
        registry: "r",
        images: { sandbox: { repository: "x", recipe: "0".repeat(64), digest: "latest", platforms: [] } },
      }),
    ).toThrow(/sha256 manifest digest/);
  });

  it("a record that cannot be read is said once, and the images are built", async () => {
    const saved = process.env.AGENT_CI_IMAGES_FILE;
    process.env.AGENT_CI_IMAGES_FILE = "/nonexistent/images.json";
    try {
      const prebuilt = PrebuiltImages.forRun();
      const lines: string[] = [];
      // No engine is reached: with no record there is nothing to pull.
      const noEngine = {} as Docker;
      for (const recipe of RECIPES())
        expect(await prebuilt.pull(noEngine, recipe, (l) => lines.push(l))).toBe(false);
      expect(lines).toEqual([
        expect.stringMatching(
          /^the prebuilt images' record \/nonexistent\/images\.json is unreadable \(.*ENOENT.*\); building agent-ci's images locally instead/,
        ),
      ]);
    } finally {
      if (saved === undefined) delete process.env.AGENT_CI_IMAGES_FILE;
      else process.env.AGENT_CI_IMAGES_FILE = saved;
    }
  });
});
