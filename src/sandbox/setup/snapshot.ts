// The setup cache on the engine (the key and the trust rules are src/setup-cache/): after a setup that
// succeeded, what it left in the workspace (beyond the files copied in) and in the home directory is copied
// out of the run's container into a container of the base image and committed as an image, labelled with its
// key, namespace and producer; a later run with the same key starts its container from that image and copies
// the snapshot into its workspace and home in place of running setup. The run's container is never
// committed itself: its root is read-only and its workspace and home are tmpfs mounts a commit would not see.
import { PassThrough, Transform, type TransformCallback } from "node:stream";
import type Docker from "dockerode";
import { pack as tarPack } from "tar-stream";
import { type CacheScope, LABELS, refuseEntry, type CacheProducer } from "../../setup-cache/trust.js";
import { SETUP_CACHE_FORMAT } from "../../setup-cache/key.js";
import { expiredReason } from "../../setup-cache/expiry.js";
import { BASE_ENV, envList } from "../container/command-env.js";
import { removeContainer, withTimeout } from "../engine/engine.js";
import { AGENT_USER } from "../engine/profile.js";
import { oneShotExec, startExec } from "../engine/exec.js";
import { EngineError, WORKSPACE_ROOT } from "../sandbox.js";
import { TOOLBELT_BIN, toolbeltProgram } from "../image/toolbelt.js";

export const SNAPSHOT_REPOSITORY = "agent-ci-setup";
/** Where a snapshot image keeps what it restores (the run's /workspace and home are mounts over the image's). */
export const SNAPSHOT_DIR = "/.agent-ci-setup";
/** The sandbox user's home (a tmpfs in the run's container). */
export const HOME = BASE_ENV.HOME ?? "/tmp/home";

/** An entry's image name: its namespace and its whole key (a tag holds 128 characters). */
export function snapshotTag(namespace: string, key: string): string {
  return `${SNAPSHOT_REPOSITORY}:${namespace}-${key}`;
}

/**
 * An entry's key in a store beyond the engine (the Actions cache), from its tag: `agent-ci-setup-<namespace>-<key>`.
 * The one mapping between the two: the tag an archive must carry is the one its key was derived from.
 */
export function snapshotStoreKey(tag: string): string {
  return tag.replace(":", "-");
}

/** The container a snapshot is committed from, by the run's id (the watchdog removes it by name). */
export function snapshotContainerName(runId: string): string {
  return `agent-ci-${runId}-snapshot`;
}

/** An entry a run may start from: its image (by id, as inspected) and where it was found. */
export interface SnapshotEntry {
  image: string;
  tag: string;
  namespace: string;
  producer: CacheProducer;
  /** How long the setup that made it took. */
  setupMs: number;
}

/** The producer an entry's labels record (empty fields where one is missing). */
export function producerOf(labels: Readonly<Record<string, string>>): CacheProducer {
  const pr = labels[LABELS.pullRequest];
  return {
    event: labels[LABELS.event] ?? "",
    ref: labels[LABELS.ref] ?? "",
    commit: labels[LABELS.commit] ?? "",
    runId: labels[LABELS.runId] ?? "",
    ...(pr ? { pullRequest: Number(pr) } : {}),
  };
}

/**
 * The first entry under the run's key in the namespaces it reads, with the ones refused on the way. A tag the
 * engine lacks is asked of `restore` (a store beyond the engine, which loads it onto the engine and says
 * whether it did); what it brings is checked exactly as an image the engine had.
 */
export async function findSnapshot(
  docker: Docker,
  key: string,
  scope: Pick<CacheScope, "read" | "defaultRef">,
  age: { maxAgeDays?: number; now: number } = { now: Date.now() },
  restore?: (tag: string) => Promise<boolean>,
): Promise<{ entry: SnapshotEntry | undefined; refused: Array<{ tag: string; reason: string }> }> {
  const refused: Array<{ tag: string; reason: string }> = [];
  const inspect = (tag: string) =>
    withTimeout("an image inspect", docker.getImage(tag).inspect()).catch(() => undefined);
  for (const namespace of scope.read) {
    const tag = snapshotTag(namespace, key);
    const info = (await inspect(tag)) ?? ((await restore?.(tag)) ? await inspect(tag) : undefined);
    if (!info) continue;
    const labels = info.Config?.Labels ?? {};
    const reason =
      refuseEntry(labels, { key, namespace, format: SETUP_CACHE_FORMAT }, scope) ??
      (age.maxAgeDays === undefined
        ? undefined
        : expiredReason(Date.parse(info.Created), age.now, age.maxAgeDays));
    if (reason) {
      refused.push({ tag, reason });
      continue;
    }
    const entry: SnapshotEntry = {
      image: info.Id,
      tag,
      namespace,
      producer: producerOf(labels),
      setupMs: Number(labels[LABELS.setupMs]) || 0,
    };
    return { entry, refused };
  }
  return { entry: undefined, refused };
}

/** A snapshot that was not written, and why (said in the record; the run goes on). */
export class SnapshotRefused extends Error {
  override readonly name = "SnapshotRefused";
}

/** A value that must never be in a snapshot, by the name the record may say. */
export interface Needle {
  name: string;
  value: string;
}

/**
 * Passes bytes through and fails on the first that contain a needle, across chunk boundaries: it keeps the
 * last (longest needle − 1) bytes of what it has seen, so the work is linear in the bytes.
 */
export class NeedleScan extends Transform {
  private carry = Buffer.alloc(0);
  private readonly needles: Array<{ name: string; bytes: Buffer }>;
  private readonly keep: number;

  constructor(needles: readonly Needle[]) {
    super();
    this.needles = needles
      .filter((n) => n.value.length > 0)
      .map((n) => ({ name: n.name, bytes: Buffer.from(n.value, "utf8") }));
    this.keep = Math.max(0, ...this.needles.map((n) => n.bytes.length - 1));
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const seen = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const found = this.needles.find((n) => seen.includes(n.bytes));
    if (found) {
      done(new SnapshotRefused(`setup left ${found.name} in what it wrote`));
      return;
    }
    this.carry = Buffer.from(seen.subarray(Math.max(0, seen.length - this.keep)));
    done(null, chunk);
  }
}

/** Runs `cmd` in the container as the agent's user and collects its stdout (stderr's tail for an error). */
export async function collect(
  docker: Docker,
  container: Docker.Container,
  cmd: string[],
): Promise<{ exitCode: number; stdout: Buffer; stderr: string }> {
  const { exec, stream } = await startExec(container, {
    cmd,
    user: AGENT_USER,
    env: envList({ ...BASE_ENV, PATH: TOOLBELT_BIN }),
    stdin: false,
  });
  const out = new PassThrough();
  const err = new PassThrough();
  const chunks: Buffer[] = [];
  let stderr = "";
  out.on("data", (d: Buffer) => chunks.push(d));
  err.on("data", (d: Buffer) => (stderr = (stderr + d.toString("utf8")).slice(-4000)));
  docker.modem.demuxStream(stream, out, err);
  await new Promise<void>((resolve, reject) => {
    stream.on("end", resolve);
    stream.on("close", resolve);
    stream.on("error", reject);
  });
  const info = await withTimeout("an exec inspect", exec.inspect());
  return { exitCode: info.ExitCode ?? -1, stdout: Buffer.concat(chunks), stderr };
}

/**
 * What setup left: every path under /workspace (its .git aside) that the copy-in did not put there, and the
 * home directory, as paths relative to / (NUL-separated, for tar's `--null -T`).
 */
async function setupOutputs(
  docker: Docker,
  container: Docker.Container,
  copied: ReadonlySet<string>,
): Promise<string[]> {
  const script = `find ${WORKSPACE_ROOT} $([ -d ${HOME} ] && echo ${HOME}) -mindepth 1 -path ${WORKSPACE_ROOT}/.git -prune -o -print0`;
  const res = await collect(docker, container, [toolbeltProgram("bash"), "-c", script]);
  if (res.exitCode !== 0) throw new SnapshotRefused(`listing setup's output failed: ${res.stderr.trim()}`);
  const prefix = `${WORKSPACE_ROOT}/`;
  return res.stdout
    .toString("utf8")
    .split("\0")
    .filter((p) => p && !(p.startsWith(prefix) && copied.has(p.slice(prefix.length))))
    .map((p) => p.slice(1));
}

/** A tar of one directory entry, to make SNAPSHOT_DIR before the snapshot is put into it. */
function directoryTar(name: string): NodeJS.ReadableStream {
  const pack = tarPack();
  pack.entry({ name: `${name}/`, type: "directory", mode: 0o755 });
  pack.finalize();
  return pack as unknown as NodeJS.ReadableStream;
}

/**
 * Streams `paths` (relative to `dir`) as a tar from the run's container, scanned for `needles`, into `into`.
 * Returns undefined, or the tar's stderr where it failed; a needle found ends it with SnapshotRefused.
 */
export async function streamTar(
  docker: Docker,
  container: Docker.Container,
  from: { dir: string; paths: readonly string[] },
  needles: readonly Needle[],
  into: (scanned: NodeJS.ReadableStream) => Promise<unknown>,
): Promise<string | undefined> {
  const { exec, stream } = await startExec(container, {
    cmd: [toolbeltProgram("tar"), "-C", from.dir, "--null", "--no-recursion", "-T", "-", "-cf", "-"],
    user: AGENT_USER,
    env: envList({ ...BASE_ENV, PATH: TOOLBELT_BIN }),
    stdin: true,
  });
  const out = new PassThrough();
  let stderr = "";
  const err = new PassThrough().on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  docker.modem.demuxStream(stream, out, err);
  const ended = new Promise<void>((resolve, reject) =>
    stream.on("end", resolve).on("close", resolve).on("error", reject),
  );
  stream.on("end", () => out.end());
  const paths = from.paths;
  stream.end(paths.length ? `${paths.join("\0")}\0` : "");
  const scan = new NeedleScan(needles);
  const failed = new Promise<never>((_, reject) => scan.on("error", reject));
  try {
    await Promise.race([Promise.all([into(out.pipe(scan)), ended]), failed]);
  } catch (e) {
    stream.destroy();
    throw e;
  }
  const info = await withTimeout("an exec inspect", exec.inspect());
  return info.ExitCode === 0 ? undefined : `exit ${info.ExitCode}: ${stderr}`;
}

/**
 * Commits what setup left in `container` as `tag`: a container of `baseImage` (never started) gets it under
 * SNAPSHOT_DIR through the engine's archive upload, streamed from a tar in the run's container and scanned
 * for `needles` on the way; the container is committed with `labels` and removed. Returns the image's size.
 */
export async function writeSnapshot(
  docker: Docker,
  run: { container: Docker.Container; runId: string; copied: ReadonlySet<string> },
  entry: { baseImage: string; tag: string; labels: Record<string, string>; needles: readonly Needle[] },
): Promise<{ image: string; bytes: number }> {
  const paths = await setupOutputs(docker, run.container, run.copied);
  const holder = await withTimeout(
    "a container create",
    docker.createContainer({
      name: snapshotContainerName(run.runId),
      Image: entry.baseImage,
      Entrypoint: [toolbeltProgram("sleep")],
      Cmd: ["infinity"],
      Labels: entry.labels,
      NetworkDisabled: true,
    }),
  );
  try {
    await holder.putArchive(directoryTar(SNAPSHOT_DIR.slice(1)), { path: "/" });
    const stderr = await streamTar(docker, run.container, { dir: "/", paths }, entry.needles, (tar) =>
      holder.putArchive(tar, { path: SNAPSHOT_DIR }),
    );
    if (stderr !== undefined) throw new SnapshotRefused(`reading setup's output failed: ${stderr.trim()}`);
    const [repo, tag] = [
      entry.tag.slice(0, entry.tag.indexOf(":")),
      entry.tag.slice(entry.tag.indexOf(":") + 1),
    ];
    const made = (await withTimeout(
      "a container commit",
      holder.commit({ repo, tag, comment: "agent-ci setup snapshot" }),
    )) as { Id: string };
    const image = await withTimeout("an image inspect", docker.getImage(made.Id).inspect());
    return { image: made.Id, bytes: image.Size };
  } finally {
    await removeContainer(holder);
  }
}

/**
 * Copies a snapshot's workspace and home (in the image at SNAPSHOT_DIR) into the run's, as the agent's user.
 * Files the copy-in brought win: the checkout is the source of truth, the snapshot fills in what setup made.
 */
export async function restoreSnapshot(docker: Docker, container: Docker.Container): Promise<void> {
  const copy = (from: string, to: string) =>
    `if [ -d ${from} ]; then mkdir -p ${to} && cd ${from} && find . -mindepth 1 -maxdepth 1 -printf '%P\\0' | tar --null -T - -cf - | tar -C ${to} --skip-old-files -xf -; fi`;
  const script = `set -eo pipefail; ${copy(`${SNAPSHOT_DIR}${WORKSPACE_ROOT}`, WORKSPACE_ROOT)}; ${copy(`${SNAPSHOT_DIR}${HOME}`, HOME)}`;
  const res = await oneShotExec(docker, container, [toolbeltProgram("bash"), "-c", script], AGENT_USER);
  if (res.exitCode !== 0)
    throw new EngineError(`restoring the setup snapshot failed (exit ${res.exitCode}): ${res.output.trim()}`);
}
