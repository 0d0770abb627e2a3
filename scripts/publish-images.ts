// The TypeScript half of scripts/publish-images.sh: the recipes come from the package's own modules, so
// the published images are exactly what a run would build and their record names the same content hash.
//   tsx scripts/publish-images.ts recipes               one line per image: label repository hash12 hash
//   tsx scripts/publish-images.ts build LABEL ARCH      builds (or finds) LABEL for ARCH, prints its local tag
//   tsx scripts/publish-images.ts record FILE REGISTRY LABEL DIGEST PLATFORMS
//                                                       adds LABEL's entry to the record FILE
import fs from "node:fs";
import { createDockerClient } from "../src/sandbox/engine/docker-client.js";
import { pingEngine } from "../src/sandbox/engine/engine.js";
import {
  baseImageFor,
  type BuildRecipe,
  ensureBuilt,
  recipeHash,
  sandboxRecipe,
} from "../src/sandbox/image/image.js";
import { PrebuiltRecord } from "../src/sandbox/image/prebuilt.js";
import { toolbeltRecipe } from "../src/sandbox/image/toolbelt.js";

/** What a release publishes: the default sandbox image and the toolbelt, each for the engine's architecture. */
const RECIPES: Record<string, () => BuildRecipe> = {
  sandbox: () => sandboxRecipe(),
  toolbelt: () => toolbeltRecipe(),
};

function recipeFor(label: string): BuildRecipe {
  const make = RECIPES[label];
  if (!make) throw new Error(`unknown image ${label} (known: ${Object.keys(RECIPES).join(", ")})`);
  return make();
}

async function build(label: string, architecture: string): Promise<string> {
  const docker = createDockerClient();
  const engine = await pingEngine(docker);
  const native = recipeFor(label);
  // Another architecture than the engine's is built under emulation from that architecture's base.
  const recipe =
    architecture === engine.architecture
      ? native
      : { ...native, baseImage: baseImageFor(architecture), architecture };
  return ensureBuilt(docker, recipe, (line) => process.stderr.write(`${line}\n`));
}

function record(file: string, registry: string, label: string, digest: string, platforms: string): void {
  const current = fs.existsSync(file)
    ? PrebuiltRecord.parse(JSON.parse(fs.readFileSync(file, "utf8")))
    : { registry, images: {} };
  const recipe = recipeFor(label);
  const next = PrebuiltRecord.parse({
    registry,
    images: {
      ...(current.registry === registry ? current.images : {}),
      [label]: {
        repository: recipe.repository,
        recipe: recipeHash(recipe),
        digest,
        platforms: platforms.split(",").map((p) => `linux/${p}`),
      },
    },
  });
  fs.writeFileSync(file, `${JSON.stringify(next, null, 2)}\n`);
}

const [command, ...args] = process.argv.slice(2);
if (command === "recipes") {
  for (const label of Object.keys(RECIPES)) {
    const recipe = recipeFor(label);
    const hash = recipeHash(recipe);
    console.log(`${label} ${recipe.repository} ${hash.slice(0, 12)} ${hash}`);
  }
} else if (command === "build" && args.length === 2) {
  console.log(await build(args[0]!, args[1]!));
} else if (command === "record" && args.length === 5) {
  record(args[0]!, args[1]!, args[2]!, args[3]!, args[4]!);
} else {
  console.error(
    "usage: publish-images.ts recipes | build LABEL ARCH | record FILE REGISTRY LABEL DIGEST PLATFORMS",
  );
  process.exit(2);
}
