// Cold and warm starts, as a fresh CI runner meets them: from an engine that has only the base image to
// the first tool call's answer. The cold builds run with the build cache off, under tags and a volume of
// their own (removed afterwards), so nothing another run on this engine uses is removed or rebuilt.
import { DockerSandbox, newRunId } from "../src/sandbox/docker-sandbox.js";
import { createDockerClient } from "../src/sandbox/engine.js";
import { DEFAULT_BASE_IMAGE, ensureBuilt, sandboxRecipe } from "../src/sandbox/image.js";
import { ensureToolbelt } from "../src/sandbox/toolbelt.js";
import type { Row } from "./stats.js";

const COLD_TAG = "agent-ci-bench-cold";

/** One start to the first tool call's answer (`true` through the helper), the container removed after. */
async function firstCall(
  workspaceDir: string,
  image: string | undefined,
  toolbeltVolume?: string,
): Promise<number> {
  const t0 = performance.now();
  const sandbox = await DockerSandbox.start({ runId: newRunId(), workspaceDir, image, toolbeltVolume });
  try {
    const res = await sandbox.exec({ argv: ["true"] });
    if (res.exitCode !== 0) throw new Error("the first call failed");
    return performance.now() - t0;
  } finally {
    await sandbox.dispose();
  }
}

export async function benchColdStarts(workspaceDir: string, log: (line: string) => void): Promise<Row[]> {
  const docker = createDockerClient();
  const section = "Cold start (to the first tool call)";
  const coldVolume = `${COLD_TAG}-toolbelt-${newRunId().slice(-6)}`;
  const rows: Row[] = [];
  try {
    log("cold start: the default image and the toolbelt built from the base image, build cache off");
    let t0 = performance.now();
    const image = await ensureBuilt(docker, sandboxRecipe(), undefined, {
      tag: `${COLD_TAG}:sandbox`,
      noCache: true,
    });
    const volume = await ensureToolbelt(docker, undefined, {
      tag: `${COLD_TAG}:toolbelt`,
      noCache: true,
      volume: coldVolume,
    });
    const coldDefault = performance.now() - t0 + (await firstCall(workspaceDir, image, volume));
    log("cold start: a user image (the base image itself), toolbelt not yet built");
    await docker.getVolume(coldVolume).remove();
    await docker.getImage(`${COLD_TAG}:toolbelt`).remove();
    t0 = performance.now();
    const volume2 = await ensureToolbelt(docker, undefined, {
      tag: `${COLD_TAG}:toolbelt`,
      noCache: true,
      volume: coldVolume,
    });
    const coldUser = performance.now() - t0 + (await firstCall(workspaceDir, DEFAULT_BASE_IMAGE, volume2));
    log("warm starts: the user image with the toolbelt built, and the default image");
    const userWarm = await firstCall(workspaceDir, DEFAULT_BASE_IMAGE);
    await firstCall(workspaceDir, undefined);
    const warm = await firstCall(workspaceDir, undefined);
    rows.push(
      {
        section,
        measurement: "default image, cold: base image only → images built, container up, first call answered",
        unit: "ms",
        agentCi: coldDefault,
        native: warm,
        note: "native column: the warm start (everything built)",
      },
      {
        section,
        measurement: "user image (`debian:bookworm-slim`), toolbelt not yet built",
        unit: "ms",
        agentCi: coldUser,
        native: warm,
        note: "native column: the warm start",
      },
      {
        section,
        measurement: "user image, toolbelt already built (its volume filled)",
        unit: "ms",
        agentCi: userWarm,
        native: warm,
        note: "native column: the warm start with the default image",
      },
    );
  } finally {
    await docker
      .getVolume(coldVolume)
      .remove()
      .catch(() => {});
    for (const tag of ["sandbox", "toolbelt"])
      await docker
        .getImage(`${COLD_TAG}:${tag}`)
        .remove()
        .catch(() => {});
  }
  return rows;
}
