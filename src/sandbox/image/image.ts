// Images agent-ci builds itself through the Engine API (the build context is a tar-stream of the files
// named, nothing else), each tagged by a hash of its inputs so it is rebuilt only when they change:
// the default sandbox image (Dockerfile.sandbox: a base and common toolchains) and the toolbelt
// (toolbelt/: what agent-ci runs inside any image, see toolbelt.ts). A user-named image is used as it
// is: agent-ci brings everything it needs itself.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type Docker from "dockerode";
import { pack as tarPack } from "tar-stream";
import { formatDuration } from "../../report/format.js";
import { withTimeout } from "../engine/engine.js";
import type { PrebuiltImages } from "./prebuilt.js";
import { EngineError } from "../sandbox.js";

export const IMAGE_REPOSITORY = "agent-ci-sandbox";
export const DEFAULT_BASE_IMAGE = process.env.AGENT_CI_BASE_IMAGE ?? "debian:bookworm-slim";
const baseImageVariable = (architecture?: string) =>
  architecture ? `AGENT_CI_BASE_IMAGE_${architecture.toUpperCase()}` : "AGENT_CI_BASE_IMAGE";
/** Docker's official images are also published one architecture a repository: arm64v8/debian, i386/debian. */
const OFFICIAL_ARCH_NAMESPACES: Record<string, string> = {
  amd64: "amd64",
  arm64: "arm64v8",
  arm: "arm32v7",
  "386": "i386",
  ppc64le: "ppc64le",
  s390x: "s390x",
  riscv64: "riscv64",
  mips64le: "mips64le",
};

/**
 * The base image agent-ci builds from for an architecture other than the engine's (an arm64 image on an
 * x86-64 engine, run under emulation): AGENT_CI_BASE_IMAGE_<ARCH> (AGENT_CI_BASE_IMAGE_ARM64), else the
 * default base's repository for that architecture (arm64v8/debian:bookworm-slim) — a name of its own, so
 * the default base's tag never changes architecture.
 */
export function baseImageFor(architecture: string): string {
  const variable = baseImageVariable(architecture);
  const given = process.env[variable];
  if (given) return given;
  const namespace = OFFICIAL_ARCH_NAMESPACES[architecture];
  if (!namespace || DEFAULT_BASE_IMAGE.includes("/")) {
    throw new EngineError(
      `no base image for ${architecture} images is known: set ${variable} to a Debian image for ${architecture}`,
    );
  }
  return `${namespace}/${DEFAULT_BASE_IMAGE}`;
}
const BUILD_TIMEOUT_MS = 20 * 60_000;

/**
 * Where agent-ci keeps its logs on this machine (scripts/ensure-engine.sh writes its own there too): a build's
 * thousands of lines of apt output go to a file, and the terminal gets one line per step.
 */
export function stateDir(): string {
  const state = process.env.XDG_STATE_HOME || path.join(os.homedir(), ".local", "state");
  return process.env.AGENT_CI_STATE_DIR || path.join(state, "agent-ci");
}

/** The log of one image's build, by its tag: a rebuild of the same inputs overwrites its own log only. */
export function buildLogPath(tag: string): string {
  return path.join(stateDir(), `build-${tag.replace(/[^A-Za-z0-9._-]/g, "-")}.log`);
}
const LOG_TAIL_LINES = 20;

/** A file or folder of the package: this module (src/sandbox/image/) sits three levels below its root, dist/*.js one. */
export function packagePath(name: string): string {
  const candidates = [`../../../${name}`, `../${name}`].map((rel) =>
    fileURLToPath(new URL(rel, import.meta.url)),
  );
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) throw new EngineError(`${name} not found (looked in ${candidates.join(", ")})`);
  return found;
}

export function dockerfilePath(): string {
  return packagePath("Dockerfile.sandbox");
}

/** What one build needs: the context's files (name → content) and the base image it starts from. */
export interface BuildRecipe {
  /** What it is, for messages ("the sandbox image"). */
  what: string;
  repository: string;
  files: Record<string, string>;
  baseImage: string;
  label: string;
  /** The architecture to build for (arm64) when it is not the engine's own. */
  architecture?: string;
}

/**
 * The content-hash tag: the same files and base image give the same tag on every engine. For one file it
 * is sha256(content NUL base image), as scripts/podman-engine.sh computes it for Dockerfile.sandbox.
 */
export function recipeTag(recipe: BuildRecipe): string {
  return `${recipe.repository}:${recipeHash(recipe).slice(0, 12)}`;
}

/** The recipe's whole content hash (hex), as the prebuilt images' record keeps it. */
export function recipeHash(recipe: BuildRecipe): string {
  const hash = crypto.createHash("sha256");
  for (const [, content] of Object.entries(recipe.files).sort(([a], [b]) => (a < b ? -1 : 1))) {
    hash.update(content).update("\0");
  }
  hash.update(recipe.baseImage);
  if (recipe.architecture) hash.update("\0").update(recipe.architecture);
  return hash.digest("hex");
}

export function sandboxRecipe(dockerfile = fs.readFileSync(dockerfilePath(), "utf8")): BuildRecipe {
  return {
    what: "the sandbox image",
    repository: IMAGE_REPOSITORY,
    files: { Dockerfile: dockerfile },
    baseImage: DEFAULT_BASE_IMAGE,
    label: "sandbox",
  };
}

/** A folder's files (not recursive) as a build context. */
export function folderFiles(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (fs.statSync(p).isFile()) files[name] = fs.readFileSync(p, "utf8");
  }
  return files;
}

/** A build argument's value as a recipe's Dockerfile pins it (`ARG NAME=value`). */
export function pinnedArg(dockerfile: string, name: string): string {
  const value = new RegExp(`^ARG ${name}=(\\S+)$`, "m").exec(dockerfile)?.[1];
  if (!value) throw new EngineError(`the recipe pins no ${name}`);
  return value;
}

/** The npm release the default image carries (Dockerfile.sandbox's NPM_VERSION). */
export function defaultImageNpmVersion(): string {
  return pinnedArg(fs.readFileSync(dockerfilePath(), "utf8"), "NPM_VERSION");
}

export function defaultImageTag(dockerfile?: string): string {
  return recipeTag(sandboxRecipe(dockerfile));
}

export async function imageExists(docker: Docker, name: string): Promise<boolean> {
  try {
    await withTimeout("an image inspect", docker.getImage(name).inspect());
    return true;
  } catch {
    return false;
  }
}

function contextTar(files: Record<string, string>): NodeJS.ReadableStream {
  const pack = tarPack();
  for (const [name, content] of Object.entries(files))
    pack.entry({ name, mode: name.endsWith(".sh") ? 0o755 : 0o644 }, content);
  pack.finalize();
  return pack as unknown as NodeJS.ReadableStream;
}

interface BuildEvent {
  stream?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/** `tag` and `noCache` are for the benchmark's cold starts: a build from nothing, beside the cached one. */
export interface BuildOptions {
  tag?: string;
  noCache?: boolean;
  /** Pulled by digest, where published, before anything is built (never under a `tag` of one's own). */
  prebuilt?: PrebuiltImages;
}

/** What makes a recipe's base: for another architecture, its name and architecture, and the emulator with them. */
function ensureEngineCommand(recipe: BuildRecipe): string {
  const base = recipe.architecture
    ? `AGENT_CI_BASE_IMAGE=${recipe.baseImage} AGENT_CI_BASE_ARCH=${recipe.architecture} `
    : "";
  return `${base}bash scripts/ensure-engine.sh`;
}

/**
 * Builds the recipe unless its tag exists already; returns the tag. The build's output goes to its log
 * (buildLogPath); `progress` gets a line when the build starts (with the log's path) and one when it ends,
 * with its duration. A failed build's error carries the log's last lines and its path.
 */
export async function ensureBuilt(
  docker: Docker,
  recipe: BuildRecipe,
  progress: (line: string) => void = () => {},
  options: BuildOptions = {},
): Promise<string> {
  const tag = options.tag ?? recipeTag(recipe);
  if (await imageExists(docker, tag)) return tag;
  if (!options.tag && (await options.prebuilt?.pull(docker, recipe, progress))) return tag;
  // The default base comes from scripts/ensure-engine.sh; one for another architecture is pulled here.
  const present =
    (await imageExists(docker, recipe.baseImage)) ||
    (recipe.architecture !== undefined &&
      (await pullImage(docker, recipe.baseImage, recipe.architecture).then(
        () => true,
        () => false,
      )));
  if (!present) {
    throw new EngineError(
      `the base image ${recipe.baseImage} is missing and no registry may be reachable: run \`${ensureEngineCommand(recipe)}\` ` +
        `(it pulls it, or builds it locally with debootstrap), or set ${baseImageVariable(recipe.architecture)} to an image you have`,
    );
  }
  const logPath = buildLogPath(tag);
  fs.mkdirSync(path.dirname(logPath), { recursive: true });
  const log = fs.createWriteStream(logPath);
  const logClosed = new Promise<void>((resolve) => log.on("close", resolve).on("error", () => resolve()));
  const started = performance.now();
  progress(
    `building ${recipe.what} ${tag}${recipe.architecture ? ` for ${recipe.architecture}, under emulation` : ""} (first run on this engine only; a few minutes; log: ${logPath})`,
  );
  // The last lines, for the error: what failed is at the end, and the log holds the rest.
  const tail: string[] = [];
  const record = (line: string) => {
    log.write(`${line}\n`);
    tail.push(line);
    if (tail.length > LOG_TAIL_LINES) tail.shift();
  };
  const building = (async () => {
    const stream = await docker.buildImage(contextTar(recipe.files), {
      t: tag,
      nocache: Boolean(options.noCache),
      // A failed step's container is removed too (the engine keeps it by default): nothing is left behind.
      forcerm: true,
      buildargs: { BASE_IMAGE: recipe.baseImage },
      labels: { "agent-ci.image": recipe.label },
      ...(recipe.architecture ? { platform: `linux/${recipe.architecture}` } : {}),
    });
    await new Promise<void>((resolve, reject) => {
      docker.modem.followProgress(
        stream,
        (err: Error | null) => (err ? reject(err) : resolve()),
        (event: BuildEvent) => {
          const error = event.error ?? event.errorDetail?.message;
          if (error) record(`ERROR ${error}`);
          for (const line of (event.stream ?? "").split("\n")) if (line.trim()) record(line);
        },
      );
    });
  })();
  // "exec format error" from a build for another architecture: the engine's host does not emulate it.
  const emulation = recipe.architecture
    ? `\n(${recipe.architecture} programs run on this engine only under emulation: register qemu-user-static with binfmt_misc on its host, e.g. \`${ensureEngineCommand(recipe)}\` as root; Docker Desktop does it itself)`
    : "";
  let failure: string | undefined;
  try {
    await withTimeout(`the build of ${recipe.what}`, building, BUILD_TIMEOUT_MS);
    if (!(await imageExists(docker, tag))) failure = "no image came out of it";
  } catch (e) {
    failure = (e as Error).message;
  } finally {
    log.end();
    await logClosed;
  }
  const elapsed = formatDuration(performance.now() - started);
  if (failure !== undefined) {
    throw new EngineError(
      `building ${recipe.what} failed after ${elapsed}: ${failure}\n${tail.join("\n")}\n(the whole build log: ${logPath})${emulation}`,
    );
  }
  progress(`built ${recipe.what} in ${elapsed}`);
  return tag;
}

/** Pulls (where published) or builds the default image if needed, and returns its tag. */
export function ensureDefaultImage(
  docker: Docker,
  progress?: (line: string) => void,
  prebuilt?: PrebuiltImages,
): Promise<string> {
  return ensureBuilt(docker, sandboxRecipe(), progress, { prebuilt });
}

export interface ResolvedImage {
  name: string;
  id: string;
  isDefault: boolean;
  /** The image's own environment (its Config.Env, PATH included), which the Bash tool keeps. */
  env: Record<string, string>;
  /** Its architecture, in the engine's naming (amd64, arm64); the toolbelt is built for it. */
  architecture: string;
}

async function pullImage(docker: Docker, name: string, architecture?: string): Promise<void> {
  const stream = await docker.pull(name, architecture ? { platform: `linux/${architecture}` } : {});
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve())),
  );
}

/** The user's image (`--image`, `image:`, else AGENT_CI_IMAGE), or undefined for the default. */
export function userImage(requested: string | undefined): string | undefined {
  return requested ?? (process.env.AGENT_CI_IMAGE || undefined);
}

/**
 * Resolves the image a run uses: the user's (`--image`, `image:`, else AGENT_CI_IMAGE, e.g. a prebuilt
 * default image in a registry; it must exist locally or be pullable) or the default, built here.
 */
export async function resolveImage(
  docker: Docker,
  requested: string | undefined,
  progress?: (line: string) => void,
  prebuilt?: PrebuiltImages,
): Promise<ResolvedImage> {
  const image = userImage(requested);
  const name = image ?? (await ensureDefaultImage(docker, progress, prebuilt));
  if (image && !(await imageExists(docker, image))) {
    try {
      await pullImage(docker, image);
    } catch (e) {
      throw new EngineError(
        `image ${image} is not on this engine and pulling it failed: ${(e as Error).message}`,
      );
    }
  }
  const info = await withTimeout("an image inspect", docker.getImage(name).inspect());
  const env: Record<string, string> = {};
  for (const entry of info.Config.Env ?? []) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return { name, id: info.Id, isDefault: image === undefined, env, architecture: info.Architecture };
}
