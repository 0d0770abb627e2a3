// A store's archive is loaded onto the engine only when it names the one tag it was fetched for: a load would
// otherwise retag any image on the engine. Read from the archive's manifest.json, its legacy `repositories`
// file and an OCI index; refused before the engine is asked anything, with a warning and a note.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { pack as tarPack } from "tar-stream";
import { describe, expect, it } from "vitest";
import { snapshotStoreKey, snapshotTag } from "../../../src/sandbox/setup/snapshot.js";
import {
  archiveNames,
  newStoreRecord,
  restoreFromStore,
  type SnapshotStore,
} from "../../../src/sandbox/setup/store.js";

const KEY = "a".repeat(64);
const TAG = snapshotTag("trusted", KEY);

async function archive(files: Record<string, unknown>): Promise<string> {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-archive-")), "image.tar");
  const pack = tarPack();
  pack.entry({ name: "blobs/sha256/00", size: 4 }, "data");
  for (const [name, value] of Object.entries(files)) pack.entry({ name }, JSON.stringify(value));
  pack.finalize();
  const out = fs.createWriteStream(file);
  await new Promise<void>((resolve, reject) => pack.pipe(out).on("finish", resolve).on("error", reject));
  return file;
}

function storeOf(file: string, warnings: string[]): SnapshotStore {
  return {
    name: "the test store",
    fetch: () => Promise.resolve({ file, done: () => undefined }),
    put: () => Promise.reject(new Error("not here")),
    warn: (line) => warnings.push(line),
  };
}

describe("a store's archive", () => {
  it("names its images from manifest.json, repositories and an OCI index", async () => {
    const file = await archive({
      "manifest.json": [{ RepoTags: [TAG] }],
      repositories: { "agent-ci-setup": { [`trusted-${KEY}`]: "x" } },
      "index.json": {
        manifests: [{ annotations: { "io.containerd.image.name": `docker.io/library/${TAG}` } }],
      },
    });
    expect(await archiveNames(file)).toEqual({ images: 1, names: [TAG] });
  });

  it.each([
    ["another tag beside its own", { "manifest.json": [{ RepoTags: [TAG, "node:22"] }] }],
    ["another image", { "manifest.json": [{ RepoTags: [TAG] }, { RepoTags: ["agent-ci-sandbox:1"] }] }],
    [
      "an OCI index naming another image",
      {
        "manifest.json": [{ RepoTags: [TAG] }],
        "index.json": {
          manifests: [{ annotations: { "io.containerd.image.name": "docker.io/library/debian:12" } }],
        },
      },
    ],
    ["no manifest", { "index.json": { manifests: [] } }],
  ])("with %s is refused before the engine loads it", async (_what, files) => {
    const warnings: string[] = [];
    const store = storeOf(await archive(files), warnings);
    const record = newStoreRecord(store);
    // The engine is never reached: a refused archive is not loaded.
    const docker = {} as Docker;
    expect(await restoreFromStore(docker, store, TAG, record)).toBe(false);
    expect(record.restored).toEqual([]);
    expect(record.failures).toEqual([
      expect.stringContaining(`${snapshotStoreKey(TAG)} could not be restored from the test store`),
    ]);
    expect(warnings).toHaveLength(1);
  });
});
