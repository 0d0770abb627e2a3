// The sandbox image: built on demand from Dockerfile.sandbox through the Engine API (the build context is
// a tar-stream of the Dockerfile alone), tagged by a hash of its inputs so it is rebuilt only when they
// change. A user-named image is used as it is, after a preflight check for the tools agent-ci needs.
import crypto from "node:crypto";
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import type Docker from "dockerode";
import { pack as tarPack } from "tar-stream";
import { EngineError } from "./sandbox.js";

export const IMAGE_REPOSITORY = "agent-ci-sandbox";
export const DEFAULT_BASE_IMAGE = process.env.AGENT_CI_BASE_IMAGE ?? "debian:bookworm-slim";
/** What the tools and the exec helper need inside any image. */
export const REQUIRED_TOOLS = ["bash", "git", "rg", "node", "tar"];
const BUILD_TIMEOUT_MS = 20 * 60_000;

export function dockerfilePath(): string {
  // src/sandbox/image.ts and dist/*.js both sit two levels below the package root.
  const candidates = ["../../Dockerfile.sandbox", "../Dockerfile.sandbox"].map((rel) =>
    fileURLToPath(new URL(rel, import.meta.url)),
  );
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) throw new EngineError(`Dockerfile.sandbox not found (looked in ${candidates.join(", ")})`);
  return found;
}

export function defaultImageTag(dockerfile = fs.readFileSync(dockerfilePath(), "utf8")): string {
  const hash = crypto.createHash("sha256").update(dockerfile).update("\0").update(DEFAULT_BASE_IMAGE).digest("hex");
  return `${IMAGE_REPOSITORY}:${hash.slice(0, 12)}`;
}

async function imageExists(docker: Docker, name: string): Promise<boolean> {
  try {
    await docker.getImage(name).inspect();
    return true;
  } catch {
    return false;
  }
}

function contextTar(dockerfile: string): NodeJS.ReadableStream {
  const pack = tarPack();
  pack.entry({ name: "Dockerfile", mode: 0o644 }, dockerfile);
  pack.finalize();
  return pack as unknown as NodeJS.ReadableStream;
}

interface BuildEvent {
  stream?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/** Builds (if needed) and returns the default image's tag; `progress` gets each build output line. */
export async function ensureDefaultImage(docker: Docker, progress: (line: string) => void = () => {}): Promise<string> {
  const dockerfile = fs.readFileSync(dockerfilePath(), "utf8");
  const tag = defaultImageTag(dockerfile);
  if (await imageExists(docker, tag)) return tag;
  if (!(await imageExists(docker, DEFAULT_BASE_IMAGE))) {
    throw new EngineError(
      `the base image ${DEFAULT_BASE_IMAGE} is missing and no registry may be reachable: run \`bash scripts/ensure-engine.sh\` ` +
        `(it pulls it, or builds it locally with debootstrap), or set AGENT_CI_BASE_IMAGE to an image you have`,
    );
  }
  progress(`building the sandbox image ${tag} from Dockerfile.sandbox (first run only; a few minutes)`);
  const stream = await docker.buildImage(contextTar(dockerfile), {
    t: tag,
    buildargs: { BASE_IMAGE: DEFAULT_BASE_IMAGE },
    labels: { "agent-ci.image": "sandbox" },
  });
  const tail: string[] = [];
  const building = new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null) => (err ? reject(err) : resolve()),
      (event: BuildEvent) => {
        const error = event.error ?? event.errorDetail?.message;
        if (error) tail.push(`ERROR ${error}`);
        for (const line of (event.stream ?? "").split("\n")) {
          if (!line.trim()) continue;
          tail.push(line);
          if (tail.length > 30) tail.shift();
          progress(line);
        }
      },
    );
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      building,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${BUILD_TIMEOUT_MS / 60_000} min`)), BUILD_TIMEOUT_MS);
      }),
    ]);
  } catch (e) {
    throw new EngineError(`building the sandbox image failed: ${(e as Error).message}\n${tail.join("\n")}`);
  } finally {
    clearTimeout(timer);
  }
  if (!(await imageExists(docker, tag))) {
    throw new EngineError(`building the sandbox image failed:\n${tail.join("\n")}`);
  }
  return tag;
}

/** Resolves the image a run uses: the user's (must exist locally or be pullable) or the default. */
export async function resolveImage(
  docker: Docker,
  image: string | undefined,
  progress?: (line: string) => void,
): Promise<{ name: string; id: string; isDefault: boolean }> {
  const name = image ?? (await ensureDefaultImage(docker, progress));
  if (image && !(await imageExists(docker, image))) {
    try {
      const stream = await docker.pull(image);
      await new Promise<void>((resolve, reject) =>
        docker.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve())),
      );
    } catch (e) {
      throw new EngineError(`image ${image} is not on this engine and pulling it failed: ${(e as Error).message}`);
    }
  }
  const info = await docker.getImage(name).inspect();
  return { name, id: info.Id, isDefault: image === undefined };
}
