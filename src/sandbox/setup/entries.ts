// The setup cache's entries on the engine, as `agent-ci cache ls|rm` shows and removes them: every image labelled
// a setup snapshot, once per tag (agent-ci-setup:<namespace>-<key>), with what its labels record and what the
// engine says of it. An image that lost its tag (a snapshot written again under the same one) is an entry too,
// untagged: `rm --all` and `rm --expired` remove it. The package-cache volumes (package-cache.ts) are entries
// too, one per namespace and platform, removed by name, `--all` or `--expired` (their age is the volume's).
import type Docker from "dockerode";
import { ageInDays, expiredReason } from "../../setup-cache/expiry.js";
import { type CacheProducer, LABELS, PACKAGE_CACHE_KIND, SNAPSHOT_KIND } from "../../setup-cache/trust.js";
import { withTimeout } from "../engine/engine.js";
import { producerOf, SNAPSHOT_REPOSITORY } from "./snapshot.js";

export interface CacheEntry {
  /** A package-cache volume's name; undefined: the entry is a snapshot image. */
  volume?: string;
  /** agent-ci-setup:<namespace>-<key>; undefined: the image has no tag left (or the entry is a volume). */
  tag: string | undefined;
  /** The image's id (sha256:…); empty for a volume. */
  image: string;
  key: string;
  /** Where the entry sits (its tag's namespace), else what its labels record. */
  namespace: string;
  producer: CacheProducer;
  /** The snapshot's own layer: what removing it frees (the base image's layers are shared); a volume's size. */
  bytes: number;
  /** When the engine made the image, epoch ms. */
  createdMs: number;
}

const PREFIX = `${SNAPSHOT_REPOSITORY}:`;
/** A tag's namespace: the part before its key (64 hex digits). */
const namespaceOfTag = (tag: string): string | undefined =>
  /^(.+)-[0-9a-f]{64}$/.exec(tag.slice(PREFIX.length))?.[1];

/** Every entry on the engine, newest first. */
export async function listCacheEntries(docker: Docker): Promise<CacheEntry[]> {
  const images = await withTimeout(
    "an image list",
    docker.listImages({ filters: { label: [`${LABELS.kind}=${SNAPSHOT_KIND}`] } }),
  );
  const entries = await Promise.all(
    images.map(async (image) => {
      const labels = image.Labels ?? {};
      const history = await withTimeout("an image history", docker.getImage(image.Id).history()).catch(
        () => [] as Array<{ Size?: number }>,
      );
      const tags = (image.RepoTags ?? []).filter((t) => t.startsWith(PREFIX));
      return (tags.length ? tags : [undefined]).map((tag): CacheEntry => ({
        tag,
        image: image.Id,
        key: labels[LABELS.key] ?? "",
        namespace: (tag && namespaceOfTag(tag)) ?? labels[LABELS.namespace] ?? "",
        producer: producerOf(labels),
        bytes: (history as Array<{ Size?: number }>)[0]?.Size ?? image.Size,
        createdMs: image.Created * 1000,
      }));
    }),
  );
  return [...entries.flat(), ...(await listPackageCaches(docker))].sort((a, b) => b.createdMs - a.createdMs);
}

/** The package-cache volumes, with their sizes as the engine's disk usage counts them. */
async function listPackageCaches(docker: Docker): Promise<CacheEntry[]> {
  const listed = await withTimeout(
    "a volume list",
    docker.listVolumes({ filters: { label: [`${LABELS.volume}=${PACKAGE_CACHE_KIND}`] } }),
  );
  const volumes = listed.Volumes ?? [];
  if (!volumes.length) return [];
  const usage = (await withTimeout("a disk usage", docker.df()).catch(() => ({}))) as {
    Volumes?: Array<{ Name: string; UsageData?: { Size?: number } }>;
  };
  const sizes = new Map((usage.Volumes ?? []).map((v) => [v.Name, v.UsageData?.Size ?? 0]));
  return volumes.map((v) => {
    const labels = v.Labels ?? {};
    return {
      volume: v.Name,
      tag: undefined,
      image: "",
      key: "",
      namespace: labels[LABELS.namespace] ?? "",
      producer: producerOf(labels),
      bytes: Math.max(0, sizes.get(v.Name) ?? 0),
      createdMs: Date.parse((v as { CreatedAt?: string }).CreatedAt ?? "") || 0,
    };
  });
}

/** How `cache rm` names an entry it removed or kept. */
export function entryName(entry: CacheEntry): string {
  return entry.volume ?? entry.tag ?? `${entry.image} (untagged)`;
}

/**
 * What `cache rm` removes: the entries of a key (whole, or a prefix that names one key) or a package-cache
 * volume by name, all, or the expired.
 */
export type CacheSelection =
  { key: string } | { all: true } | { expired: true; maxAgeDays: number; now: number };

/** The entries a selection names; a key that names none, or a prefix that names several keys, is an error. */
export function selectEntries(entries: readonly CacheEntry[], selection: CacheSelection): CacheEntry[] {
  if ("all" in selection) return [...entries];
  if ("expired" in selection)
    return entries.filter(
      (e) => expiredReason(e.createdMs, selection.now, selection.maxAgeDays) !== undefined,
    );
  const volume = entries.filter((e) => e.volume === selection.key);
  if (volume.length) return volume;
  const given = selection.key.replace(/^agent-ci-setup:(?:.+-)?(?=[0-9a-f]{64}$)/, "");
  const keys = [...new Set(entries.map((e) => e.key).filter((k) => k && k.startsWith(given)))];
  if (!given || keys.length === 0) throw new CacheSelectionError(`no setup cache entry has the key ${given}`);
  if (keys.length > 1)
    throw new CacheSelectionError(
      `${given} is the start of ${keys.length} keys (${keys.map((k) => k.slice(0, 12)).join(", ")}): give more of it`,
    );
  return entries.filter((e) => e.key === keys[0]);
}

/** A `cache rm` argument that names no entry, or more than one key. */
export class CacheSelectionError extends Error {
  override readonly name = "CacheSelectionError";
}

/**
 * Removes the entries: a tag is untagged (its image goes with its last tag), an untagged image removed. An entry
 * the engine keeps (a container still uses its image) is reported with the engine's reason, not forced.
 */
export async function removeCacheEntries(
  docker: Docker,
  entries: readonly CacheEntry[],
): Promise<Array<{ entry: CacheEntry; error?: string }>> {
  const done: Array<{ entry: CacheEntry; error?: string }> = [];
  for (const entry of entries) {
    try {
      if (entry.volume) await withTimeout("a volume remove", docker.getVolume(entry.volume).remove());
      else await withTimeout("an image remove", docker.getImage(entry.tag ?? entry.image).remove());
      done.push({ entry });
    } catch (e) {
      const err = e as { statusCode?: number; message?: string };
      if (err.statusCode === 404) done.push({ entry });
      else done.push({ entry, error: (err.message ?? String(e)).trim() });
    }
  }
  return done;
}

const shortKey = (key: string) => key.slice(0, 12) || "(no key)";

function size(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(1)} kB`;
  return `${bytes} B`;
}

function producerText(p: CacheProducer): string {
  const at = [p.ref.replace(/^refs\/heads\//, ""), p.commit.slice(0, 7)].filter(Boolean).join("@");
  const pr = p.pullRequest === undefined ? "" : ` #${p.pullRequest}`;
  return `${p.event || "?"}${pr}${at ? ` ${at}` : ""} run ${p.runId || "?"}`;
}

/** `cache ls`'s table: one line per entry, with its age and whether it is past `maxAgeDays`. */
export function formatEntries(entries: readonly CacheEntry[], maxAgeDays: number, now: number): string {
  if (!entries.length) return "no setup cache entries on this engine\n";
  const rows = [
    ["KEY", "NAMESPACE", "PRODUCER", "SIZE", "CREATED"],
    ...entries.map((e) => [
      e.volume ? "packages" : shortKey(e.key),
      e.tag ? e.namespace : `${e.namespace || "?"} (untagged)`,
      producerText(e.producer),
      size(e.bytes),
      `${ageInDays(e.createdMs, now)} days ago${expiredReason(e.createdMs, now, maxAgeDays) ? " (expired)" : ""}`,
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n")}\n`;
}
