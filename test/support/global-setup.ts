// Runs once before the test files: makes sure the engine answers and the sandbox image is built, so that
// integration tests running in parallel do not race to build it.
import { ensureDefaultImage } from "../../src/sandbox/image.js";
import { createDockerClient, pingEngine } from "../../src/sandbox/engine.js";

export default async function setup(): Promise<void> {
  const docker = createDockerClient();
  await pingEngine(docker);
  await ensureDefaultImage(docker, (line) => process.stderr.write(`[image] ${line}\n`));
}
