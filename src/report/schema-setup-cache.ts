// report.json's record of the setup cache (docs/setup-cache.md): whether setup started from a snapshot, the
// key and what it was made of (file hashes and variable names, never a value), what was refused and why,
// what was written, and the time saved.
import { z } from "zod";
import { formatBytes } from "./format.js";
import { Milliseconds, NonNegativeInt } from "./schema-base.js";

const Producer = z
  .object({
    event: z.string().describe("The workflow event, or `cli`."),
    ref: z.string(),
    commit: z.string(),
    runId: z.string(),
    pullRequest: NonNegativeInt.optional(),
  })
  .describe("Who made the entry, as its labels record it.");

const StoreEntry = z.object({
  tag: z.string().describe("The entry's image on the engine."),
  storeKey: z.string().describe("Its key in the store (the Actions cache's key), derived from the tag."),
  bytes: NonNegativeInt.describe("The image archive's size."),
  ms: Milliseconds,
});

const Store = z
  .object({
    name: z.string().describe("The store: the Actions cache."),
    restored: z
      .array(StoreEntry)
      .describe("Entries the engine lacked, loaded from the store and then checked as any entry is."),
    saved: StoreEntry.optional().describe("The entry this run saved to the store."),
    failures: z
      .array(z.string())
      .describe(
        "Reads and writes of the store that failed or did not answer (the run went on without them).",
      ),
  })
  .describe("Where entries travel beyond the engine: the Action on a runner uses the Actions cache.");

export const SetupCache = z
  .object({
    outcome: z
      .enum(["hit", "miss", "refused"])
      .describe(
        "hit: setup was skipped and a snapshot restored; miss: no entry for the key; refused: an entry was there and was not used, being untrusted or past the max age (setup ran).",
      ),
    key: z.string().describe("SHA-256 over the inputs below, hex."),
    inputs: z.object({
      format: NonNegativeInt.describe("The cache format's version."),
      baseImage: z.string().describe("The image setup ran in, by its content id."),
      setup: z.array(z.string()),
      files: z
        .array(z.object({ path: z.string(), sha256: z.string().nullable().describe("null: absent.") }))
        .describe("The lockfiles and manifests in the key, with the SHA-256 of their bytes."),
      env: z
        .array(z.string())
        .describe("The names of setup's variables (`--env`); their values are hashed in the key."),
      network: z
        .string()
        .describe("The setup phase's network policy, allowlist and injected headers (JSON)."),
      platform: z.string(),
    }),
    read: z.array(z.string()).describe("The namespaces the run read, first match winning."),
    write: z.string().optional().describe("The namespace the run may write; absent: it writes none."),
    scope: z.string().describe("Why the run reads and writes what it does."),
    entry: z
      .object({ image: z.string(), tag: z.string(), namespace: z.string(), producer: Producer })
      .optional()
      .describe("A hit: the entry started from."),
    refused: z.array(z.object({ tag: z.string(), reason: z.string() })),
    saved: z
      .object({ image: z.string(), tag: z.string(), bytes: NonNegativeInt, ms: Milliseconds })
      .optional()
      .describe("The entry this run wrote."),
    notSaved: z.string().optional().describe("Why this run wrote no entry after its setup ran."),
    setupMs: Milliseconds.optional().describe(
      "The setup phase: the commands (a miss), or the restore and refresh (a hit).",
    ),
    savedMs: Milliseconds.optional().describe(
      "A hit: the entry's setup time less this run's restore and refresh.",
    ),
    packageCache: z
      .object({
        restored: z
          .array(z.object({ volume: z.string(), namespace: z.string(), bytes: NonNegativeInt }))
          .describe("The volumes streamed into the home's caches before setup, first one's files winning."),
        refused: z
          .array(z.object({ volume: z.string(), reason: z.string() }))
          .describe("Volumes that were there and were not restored (their labels do not fit)."),
        notRestored: z.string().optional().describe("Why restoring failed (setup ran without the rest)."),
        saved: z
          .object({ volume: z.string(), bytes: NonNegativeInt, ms: Milliseconds })
          .optional()
          .describe("The volume the home's caches were written to after setup (bytes: the stream's)."),
        notSaved: z.string().optional().describe("Why no volume was written."),
      })
      .optional()
      .describe(
        "A setup that ran: the package managers' caches (npm, pip, uv, cargo, go) restored from the engine's volumes before it and saved after it.",
      ),
    store: Store.optional(),
  })
  .meta({ id: "SetupCache" });
export type SetupCache = z.infer<typeof SetupCache>;

/** The one line the log and the tracking comment give the setup cache. */
export function setupCacheLine(
  record: Pick<SetupCache, "outcome" | "key" | "refused" | "notSaved" | "savedMs" | "packageCache"> & {
    entry?: { namespace: string; tag: string };
    saved?: unknown;
    write?: string;
    store?: Pick<z.infer<typeof Store>, "name" | "failures"> & {
      restored: Array<{ tag: string }>;
      saved?: unknown;
    };
  },
): string {
  const key = record.key.slice(0, 12);
  const { store } = record;
  const failed = store?.failures.length ? `; ${store.name}: ${store.failures.length} failed` : "";
  if (record.outcome === "hit") {
    const from = store?.restored.some((r) => r.tag === record.entry?.tag)
      ? `, restored from ${store.name}`
      : "";
    return `setup cache: hit ${key} from ${record.entry?.namespace ?? "?"}${from} (setup skipped, ~${(Math.max(0, record.savedMs ?? 0) / 1000).toFixed(1)} s saved${failed})`;
  }
  const refused = record.refused.length ? `refused: ${record.refused.map((r) => r.reason).join("; ")}; ` : "";
  const wrote = record.saved
    ? `saved to ${record.write ?? "?"}${store?.saved ? ` and to ${store.name}` : ""}`
    : `not saved: ${record.notSaved ?? "setup did not finish"}`;
  return `setup cache: ${record.outcome} ${key} (${refused}${wrote}${packageCacheText(record.packageCache)}${failed})`;
}

/** The package cache's part of the line: what was restored and where it was saved. */
function packageCacheText(packages: SetupCache["packageCache"]): string {
  if (!packages) return "";
  const parts: string[] = [];
  const bytes = packages.restored.reduce((sum, r) => sum + r.bytes, 0);
  if (packages.restored.length)
    parts.push(`restored ${formatBytes(bytes)} from ${packages.restored.map((r) => r.namespace).join(", ")}`);
  if (packages.saved) parts.push(`saved to ${packages.saved.volume}`);
  return parts.length ? `; package cache ${parts.join(", ")}` : "";
}
