// Runs once before the test files: makes sure the engine answers and that the images the tests use are
// built (the default sandbox image, agent-ci's toolbelt and its volume, the user-image fixtures of
// test/fixtures/images/, and the arm64 image's toolbelt), so that integration tests running in parallel do
// not race to build them. Each is tagged by a hash of its inputs: a second run builds nothing. The same for
// the Actions' bundle: dist/ built from src/ into a folder laid out as the repository (action-dist.ts), which
// the Action tests run as a runner does (action-harness.ts).
import type { TestProject } from "vitest/node";
import { ensureActionBuild } from "./action-dist.js";
import { ensureDefaultImage } from "../../src/sandbox/image/image.js";
import { createDockerClient } from "../../src/sandbox/engine/docker-client.js";
import { pingEngine } from "../../src/sandbox/engine/engine.js";
import { ensureToolbelt } from "../../src/sandbox/image/toolbelt.js";
import { ensureFixtureImages, ensureForeignToolbelt } from "./fixture-images.js";

export default async function setup(project: TestProject): Promise<void> {
  project.provide(
    "actionRoot",
    ensureActionBuild((line) => process.stderr.write(`[action] ${line}\n`)),
  );
  const docker = createDockerClient();
  await pingEngine(docker);
  const progress = (line: string) => process.stderr.write(`[image] ${line}\n`);
  await ensureDefaultImage(docker, progress);
  await ensureToolbelt(docker, progress);
  await ensureFixtureImages(docker, progress);
  await ensureForeignToolbelt(docker, progress);
}
