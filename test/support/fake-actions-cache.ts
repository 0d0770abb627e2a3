// The Actions cache as the runner's results service serves it (@actions/cache's v2 service): CacheService's
// CreateCacheEntry (→ a signed upload URL), FinalizeCacheEntryUpload (the blob's size checked → an entry id)
// and GetCacheEntryDownloadURL (→ a signed download URL and the key matched), with GitHub's scoping: the
// runtime token's `ac` claim lists the job's cache scopes (a ref each, with read 1 / write 2 permission bits);
// an entry is written to the first scope the job may write, and read from the scopes it may read, in their
// order: the primary key exactly, then each restore key by prefix (the newest entry), all at the request's
// version. A pull request's job may write its own ref (refs/pull/N/merge) and read the base branch: what it
// writes, no other pull request and no run on the default branch reads. The cache lives across runs (one
// `FakeActionsCache` per test), as the repository's does; a fault makes the service answer 500 or never.
import crypto from "node:crypto";
import { type BlobStore, twirpError, type TwirpService } from "./fake-results.js";

export const CACHE_READ = 1;
export const CACHE_WRITE = 2;

/** One scope of the `ac` claim, as the runner writes it. */
export interface CacheScopeClaim {
  Scope: string;
  Permission: number;
}

export interface CacheEntry {
  id: number;
  scope: string;
  key: string;
  version: string;
  /** The blob's name in the results service's store. */
  blob: string;
  /** The uploaded archive, once finalized (kept here: each run has a results service of its own). */
  data?: Buffer;
  sizeBytes?: number;
  finalized: boolean;
  created: number;
}

/** The repository's Actions cache, kept across a test's runs. */
export interface FakeActionsCache {
  entries: CacheEntry[];
  /** Every call, with the scope it wrote to or the one it matched in. */
  calls: Array<{ method: string; key: string; scope?: string }>;
  /** The service's next answers: 500 to every call, or none at all. */
  fault?: "500" | "hang";
}

export function fakeActionsCache(): FakeActionsCache {
  return { entries: [], calls: [] };
}

/**
 * The scopes the runner gives a job (the `ac` claim), from its environment: its own ref readable and writable;
 * on another ref than the default branch, the pull request's base branch (GITHUB_BASE_REF) and the default
 * branch readable too.
 */
export function jobCacheScopes(env: Record<string, string>, defaultBranch = "main"): CacheScopeClaim[] {
  const own = env.GITHUB_REF ?? `refs/heads/${defaultBranch}`;
  const readable = [env.GITHUB_BASE_REF, defaultBranch]
    .filter((b): b is string => Boolean(b))
    .map((b) => `refs/heads/${b}`)
    .filter((ref, i, all) => ref !== own && all.indexOf(ref) === i);
  return [
    { Scope: own, Permission: CACHE_READ | CACHE_WRITE },
    ...readable.map((Scope) => ({ Scope, Permission: CACHE_READ })),
  ];
}

function scopesOf(ac: string | undefined): CacheScopeClaim[] {
  const parsed = JSON.parse(ac ?? "[]") as unknown;
  return Array.isArray(parsed) ? (parsed as CacheScopeClaim[]) : [];
}

/** The CacheService's methods over `cache`, its blobs signed in `blobs`. */
export function cacheService(cache: FakeActionsCache, blobs: BlobStore): TwirpService {
  return (method, request, claims) => {
    const key = String(request.key ?? "");
    const version = String(request.version ?? "");
    if (cache.fault === "hang") return "hang";
    if (cache.fault === "500") return twirpError(500, "internal", "the cache service failed");
    const scopes = scopesOf(claims.ac);
    if (method === "CreateCacheEntry") {
      const scope = scopes.find((s) => s.Permission & CACHE_WRITE)?.Scope;
      if (!scope) return twirpError(403, "permission_denied", "cache write denied: no writable cache scope");
      if (cache.entries.some((e) => e.scope === scope && e.key === key && e.version === version))
        return twirpError(
          409,
          "already_exists",
          "cache entry with the same key, version, and scope already exists",
        );
      const blob = `actions-cache/${crypto.randomBytes(8).toString("hex")}/${encodeURIComponent(key)}`;
      const id = cache.entries.length + 1;
      cache.entries.push({ id, scope, key, version, blob, finalized: false, created: Date.now() });
      cache.calls.push({ method, key, scope });
      return { status: 200, body: { ok: true, signed_upload_url: blobs.signedUrl(blob) } };
    }
    if (method === "FinalizeCacheEntryUpload") {
      const scope = scopes.find((s) => s.Permission & CACHE_WRITE)?.Scope;
      const entry = cache.entries.find(
        (e) => e.scope === scope && e.key === key && e.version === version && !e.finalized,
      );
      const data = entry && blobs.get(entry.blob);
      if (!entry || !data) return twirpError(404, "not_found", `no upload for ${key}`);
      if (Number(request.size_bytes) !== data.length)
        return twirpError(400, "invalid_argument", "the size does not match the upload");
      entry.finalized = true;
      entry.data = data;
      entry.sizeBytes = data.length;
      cache.calls.push({ method, key, scope });
      return { status: 200, body: { ok: true, entry_id: String(entry.id) } };
    }
    if (method === "GetCacheEntryDownloadURL") {
      const restoreKeys = Array.isArray(request.restore_keys) ? request.restore_keys.map(String) : [];
      for (const { Scope, Permission } of scopes) {
        if (!(Permission & CACHE_READ)) continue;
        const inScope = cache.entries.filter(
          (e) => e.scope === Scope && e.finalized && e.version === version,
        );
        const match =
          inScope.find((e) => e.key === key) ??
          restoreKeys
            .map(
              (prefix) =>
                inScope.filter((e) => e.key.startsWith(prefix)).sort((a, b) => b.created - a.created)[0],
            )
            .find(Boolean);
        if (match?.data) {
          cache.calls.push({ method, key, scope: Scope });
          return {
            status: 200,
            body: {
              ok: true,
              signed_download_url: blobs.serve(match.blob, match.data),
              matched_key: match.key,
            },
          };
        }
      }
      cache.calls.push({ method, key });
      return { status: 200, body: { ok: false, signed_download_url: "", matched_key: "" } };
    }
    return twirpError(404, "bad_route", `no method ${method}`);
  };
}
