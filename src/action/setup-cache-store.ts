// The setup cache's store on a GitHub runner: the Actions cache, through @actions/cache. Each job on a hosted
// runner has a fresh engine, so a setup snapshot travels from the job that made it to later jobs as an image
// archive saved under `agent-ci-setup-<namespace>-<key>` (src/sandbox/setup/store.ts). GitHub's own scopes
// apply on top of agent-ci's namespaces: an entry saved on a pull request's ref is read only by that pull
// request's runs, one saved on the default branch by every run (docs/setup-cache.md).
//
// @actions/cache keeps its failures to itself (a restore that failed is told as a miss, a save that failed
// returns -1, each after a line in the log), so a restore looks the entry up before it downloads it; a lookup
// that fails is a miss here too. It has no time limit on a service that does not answer, so each call is
// bounded here; a call given up on leaves its request open, and the Action's process then exits once
// its run is done (`workLeftBehind`) rather than wait for it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { SnapshotStore } from "../sandbox/setup/store.js";

/** How long a restore (the lookup and the download) and a save (the archive and the upload) may take. */
export const STORE_TIMEOUT_MS = { restore: 5 * 60_000, save: 10 * 60_000 };

let abandoned = 0;
/** Whether a call to the Actions cache was given up on and may still hold the process open. */
export function workLeftBehind(): boolean {
  return abandoned > 0;
}

/** The Actions cache is there: its service and the job's runtime token (@actions/cache's own test). */
export function actionsCacheAvailable(env: Record<string, string | undefined>): boolean {
  const url = env.ACTIONS_CACHE_SERVICE_V2 ? env.ACTIONS_RESULTS_URL : env.ACTIONS_CACHE_URL;
  return Boolean(url && env.ACTIONS_RUNTIME_TOKEN);
}

async function bounded<T>(what: string, work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abandoned += 1;
      reject(new Error(`the Actions cache did not finish ${what} within ${Math.round(ms / 1000)} s`));
    }, ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The Actions cache as a snapshot store. The archive's path is part of an entry's version for the cache
 * service (as is the compression the runner's tar uses), so it is the same on every runner: under RUNNER_TEMP,
 * by the entry's key.
 */
export function actionsCacheStore(options: {
  env: Record<string, string | undefined>;
  warn: (line: string) => void;
  timeoutMs?: Partial<typeof STORE_TIMEOUT_MS>;
}): SnapshotStore {
  const limits = { ...STORE_TIMEOUT_MS, ...options.timeoutMs };
  const root = path.join(options.env.RUNNER_TEMP || os.tmpdir(), "agent-ci-setup-cache");
  const archive = (key: string) => {
    const dir = path.join(root, key);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    return { dir, file: path.join(dir, "snapshot.tar") };
  };
  return {
    name: "the Actions cache",
    warn: options.warn,
    async fetch(key) {
      const { restoreCache } = await import("@actions/cache");
      const { dir, file } = archive(key);
      const done = () => fs.rmSync(dir, { recursive: true, force: true });
      try {
        // A lookup first: restoreCache tells a failed download as it tells a miss, and an entry known to be
        // there that does not arrive is a failure to say.
        const restore = (lookupOnly: boolean) => restoreCache([file], key, [], { lookupOnly });
        if ((await bounded("the lookup", restore(true), limits.restore)) === undefined) {
          done();
          return undefined;
        }
        const matched = await bounded("the restore", restore(false), limits.restore);
        if (matched === undefined)
          throw new Error(
            "its entry is there but did not arrive (the line above from @actions/cache says why)",
          );
        if (!fs.existsSync(file)) throw new Error(`its entry ${matched} holds no snapshot archive`);
        return { file, done };
      } catch (e) {
        done();
        throw e;
      }
    },
    async put(key, write) {
      const { saveCache } = await import("@actions/cache");
      const { dir, file } = archive(key);
      try {
        await write(file);
        const id = await bounded("the save", saveCache([file], key), limits.save);
        if (id === -1)
          throw new Error("it did not take the entry (the line above from @actions/cache says why)");
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
