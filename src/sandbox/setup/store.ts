// Setup snapshots beyond the engine: a store (the Action's: the Actions cache) keeps an entry's image as an
// archive (`docker save`) under a key derived from its tag, so that a runner whose engine is fresh finds what
// an earlier runner's setup made. A run looks on its engine first; a tag the engine lacks is fetched from the
// store and loaded (`docker load`), then checked exactly as an image the engine had (its labels, its
// producer, its age). An archive is streamed between the engine and a file on the host, never held whole in
// memory, and must carry that one tag and no other name (a load would otherwise retag any image on the
// engine, the run's base image included). A store that fails, or does not answer, is a warning and a note in
// the record: the run goes on as without it.
import fs from "node:fs";
import { pipeline } from "node:stream/promises";
import type Docker from "dockerode";
import { extract as tarExtract } from "tar-stream";
import { formatBytes, formatDuration } from "../../report/format.js";
import { withTimeout } from "../engine/engine.js";
import { snapshotStoreKey } from "./snapshot.js";

/** How long the engine may take to load or save an image archive. */
const ARCHIVE_TIMEOUT_MS = 10 * 60_000;

/** Where snapshots travel beyond this engine, as archives in files on the host. */
export interface SnapshotStore {
  /** How the log and the record name it ("the Actions cache"). */
  readonly name: string;
  /** The archive saved under `key`, fetched into a file (`done` removes it); undefined: none is saved. */
  fetch(key: string): Promise<{ file: string; done(): void } | undefined>;
  /** Saves under `key` the archive that `write` writes into the file it is given. */
  put(key: string, write: (file: string) => Promise<void>): Promise<void>;
  /** A failure to read or write it, for the log (the Action: a warning annotation). */
  warn(line: string): void;
}

/** What a store did in a run, as report.json's setupCache records it. */
export interface SnapshotStoreRecord {
  name: string;
  /** Entries loaded onto the engine from the store (each then checked as any entry is). */
  restored: Array<{ tag: string; storeKey: string; bytes: number; ms: number }>;
  /** The entry this run saved there. */
  saved?: { tag: string; storeKey: string; bytes: number; ms: number };
  /** Why a read or a write failed (the run went on as without the store). */
  failures: string[];
}

export const newStoreRecord = (store: SnapshotStore): SnapshotStoreRecord => ({
  name: store.name,
  restored: [],
  failures: [],
});

/** A name as the engine spells it in an archive's OCI index (docker.io/library/x:y) or its manifest (x:y). */
const shortName = (name: string) => name.replace(/^docker\.io\/(?:library\/)?/, "");

/**
 * The names an image archive would give images when loaded: manifest.json's RepoTags, the legacy
 * `repositories` file's, and an OCI index's image names. Read as a stream; layers are skipped unread.
 */
export async function archiveNames(file: string): Promise<{ images: number; names: string[] }> {
  const wanted = new Set(["manifest.json", "repositories", "index.json"]);
  const found = new Map<string, string>();
  const extract = tarExtract();
  extract.on("entry", (header, stream, next) => {
    const name = header.name.replace(/^\.\//, "");
    if (!wanted.has(name)) {
      stream.on("end", next).resume();
      return;
    }
    const chunks: Buffer[] = [];
    stream.on("data", (d: unknown) => chunks.push(d as Buffer));
    stream.on("end", () => {
      found.set(name, Buffer.concat(chunks).toString("utf8"));
      next();
    });
  });
  await pipeline(fs.createReadStream(file), extract);
  const manifest = JSON.parse(found.get("manifest.json") ?? "null") as Array<{ RepoTags?: string[] }> | null;
  if (!Array.isArray(manifest)) throw new Error("the archive has no manifest.json: it is no image archive");
  const names = manifest.flatMap((m) => m.RepoTags ?? []);
  const repositories = JSON.parse(found.get("repositories") ?? "{}") as Record<
    string,
    Record<string, string>
  >;
  for (const [repo, tags] of Object.entries(repositories))
    for (const tag of Object.keys(tags)) names.push(`${repo}:${tag}`);
  const index = JSON.parse(found.get("index.json") ?? "{}") as {
    manifests?: Array<{ annotations?: Record<string, string> }>;
  };
  for (const m of index.manifests ?? []) {
    const image = m.annotations?.["io.containerd.image.name"];
    if (image) names.push(image);
  }
  return { images: manifest.length, names: [...new Set(names.map(shortName))] };
}

/** Loads an image archive onto the engine, streamed from the file; the engine's error where it refused it. */
async function loadArchive(docker: Docker, file: string): Promise<void> {
  const stream = await docker.loadImage(fs.createReadStream(file), { quiet: true });
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(
      stream,
      (err: Error | null) => (err ? reject(err) : resolve()),
      (event: { error?: string; errorDetail?: { message?: string } }) => {
        const error = event.error ?? event.errorDetail?.message;
        if (error) reject(new Error(error));
      },
    ),
  );
}

/**
 * Fetches `tag` from the store and loads it onto the engine: true when it did (the caller then checks it as
 * any entry), false when the store holds none or failed (a failure is warned and recorded).
 */
export async function restoreFromStore(
  docker: Docker,
  store: SnapshotStore,
  tag: string,
  record: SnapshotStoreRecord,
  log?: (line: string) => void,
): Promise<boolean> {
  const storeKey = snapshotStoreKey(tag);
  const started = performance.now();
  try {
    const fetched = await store.fetch(storeKey);
    if (!fetched) return false;
    try {
      const { images, names } = await archiveNames(fetched.file);
      if (images !== 1 || names.length !== 1 || names[0] !== tag)
        throw new Error(
          `its archive names ${names.length ? names.map((n) => JSON.stringify(n.slice(0, 120))).join(", ") : "no image"}, not ${tag} alone: it was not loaded`,
        );
      const bytes = fs.statSync(fetched.file).size;
      await withTimeout("an image load", loadArchive(docker, fetched.file), ARCHIVE_TIMEOUT_MS);
      const ms = Math.round(performance.now() - started);
      record.restored.push({ tag, storeKey, bytes, ms });
      log?.(
        `setup cache: ${tag} restored from ${store.name} (${storeKey}, ${formatBytes(bytes)}, ${formatDuration(ms)})`,
      );
      return true;
    } finally {
      fetched.done();
    }
  } catch (e) {
    const failure = `${storeKey} could not be restored from ${store.name}: ${(e as Error).message}`;
    record.failures.push(failure);
    store.warn(`setup cache: ${failure}`);
    return false;
  }
}

/** Saves `tag` (on the engine) to the store, streamed from the engine into the file the store uploads. Never rejects. */
export async function saveToStore(
  docker: Docker,
  store: SnapshotStore,
  tag: string,
  record: SnapshotStoreRecord,
  log?: (line: string) => void,
): Promise<void> {
  const storeKey = snapshotStoreKey(tag);
  const started = performance.now();
  let bytes = 0;
  try {
    await store.put(storeKey, async (file) => {
      // The engine writes the whole archive out before it answers: its time is a load's, not an API call's.
      const image = await withTimeout("an image save", docker.getImage(tag).get(), ARCHIVE_TIMEOUT_MS);
      await pipeline(image, fs.createWriteStream(file));
      bytes = fs.statSync(file).size;
    });
    const ms = Math.round(performance.now() - started);
    record.saved = { tag, storeKey, bytes, ms };
    log?.(
      `setup cache: ${tag} saved to ${store.name} as ${storeKey} (${formatBytes(bytes)}, ${formatDuration(ms)})`,
    );
  } catch (e) {
    const failure = `${tag} was not saved to ${store.name}: ${(e as Error).message}`;
    record.failures.push(failure);
    store.warn(`setup cache: ${failure}`);
  }
}
