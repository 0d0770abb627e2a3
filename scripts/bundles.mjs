// The Actions' bundles (built by scripts/build.mjs, committed in dist/): their entries, how big each is as a
// job gets it, and the ceilings test/unit/bundle-sizes.test.ts holds (the bench shows the same figures,
// bench/bundles.ts). Read from the built files alone, so the committed dist/ can be measured without a build:
// an entry's chunks are the files its `import … from "./…"` and `import("./…")` name, and a chunk's modules
// are its source map's `sources`.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The Actions' entries: dist/<name>.js from each source (action.yml, publish/ and choose/action.yml run them). */
export const ACTION_ENTRIES = { index: "src/index.ts", publish: "src/publish.ts", choose: "src/choose.ts" };
/** The name of the Actions' shared chunks (content-hashed, committed beside the entries). */
export const ACTION_CHUNK_PREFIX = "action-chunk-";

/** dist/index.js when it bundled everything in one file, unminified, as it was (bytes). */
export const ACTION_WHOLE_BYTES = 13_250_200;
/**
 * The ceilings, in bytes, of the JavaScript each entry can load (its file and every chunk it reaches): the
 * Action half of what it was in one file; publish under its one file's 1.78 MB; choose, which reads and writes
 * reports, 1 MB.
 */
export const CEILINGS = {
  index: Math.floor(ACTION_WHOLE_BYTES / 2),
  publish: 1_500_000,
  choose: 1_000_000,
};
/**
 * The ceiling of dist/'s committed files together (the Actions with their source maps, the wasm files, the
 * notices): they were 22.8 MB.
 */
export const DIST_CEILING = 18_000_000;

const STATIC_IMPORT = /(?:\bfrom|\bimport)\s*"\.\/([^"]+\.js)"/g;
const DYNAMIC_IMPORT = /\bimport\(\s*"\.\/([^"]+\.js)"\s*\)/g;

function importsOf(dist, file, pattern) {
  const text = fs.readFileSync(path.join(dist, file), "utf8");
  return [...new Set([...text.matchAll(pattern)].map((m) => m[1]))].filter((f) =>
    fs.existsSync(path.join(dist, f)),
  );
}

/** The files `entry` loads: with `dynamic`, every one it can reach; without, only its static imports'. */
export function closure(dist, entry, { dynamic }) {
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const next of importsOf(dist, file, STATIC_IMPORT)) visit(next);
    if (dynamic) for (const next of importsOf(dist, file, DYNAMIC_IMPORT)) visit(next);
  };
  visit(entry);
  return [...seen];
}

/**
 * What a job parses before the Action's first line: the entry, the chunk it imports (each entry is
 * `import()` of its program, after turning source maps on) and that chunk's static imports.
 */
export function loadedAtStart(dist, entry) {
  const files = new Set([entry]);
  for (const main of importsOf(dist, entry, DYNAMIC_IMPORT))
    for (const file of closure(dist, main, { dynamic: false })) files.add(file);
  return [...files];
}

const bytesOf = (dist, files) => files.reduce((n, f) => n + fs.statSync(path.join(dist, f)).size, 0);

/**
 * The modules bundled into these files, from their source maps, as paths from the checkout
 * (`src/action/choose.ts`, `node_modules/zod/…`; a node_modules reached through a link counts the same).
 */
export function modulesOf(dist, files) {
  const modules = new Set();
  for (const file of files) {
    const map = path.join(dist, `${file}.map`);
    if (!fs.existsSync(map)) continue;
    for (const source of JSON.parse(fs.readFileSync(map, "utf8")).sources) {
      const at = source.search(/(?:^|\/)(?:node_modules|src|bench|scripts)\//);
      modules.add(at === -1 ? source : source.slice(at).replace(/^\//, ""));
    }
  }
  return [...modules].sort();
}

/**
 * The files in `dist` (dist/ or a build elsewhere) that git does not ignore in dist/: what is committed, and what
 * a job using an Action downloads.
 */
export function committedFiles(dist) {
  const files = fs.readdirSync(dist).filter((f) => fs.statSync(path.join(dist, f)).isFile());
  if (!files.length) return [];
  let ignored = "";
  try {
    ignored = execFileSync("git", ["check-ignore", "--no-index", "--stdin"], {
      cwd: root,
      input: files.map((f) => `dist/${f}`).join("\n"),
      encoding: "utf8",
    });
  } catch (e) {
    if (e.status !== 1) throw e; // 1: none is ignored
  }
  const out = new Set(
    ignored
      .split("\n")
      .filter(Boolean)
      .map((f) => f.slice("dist/".length)),
  );
  return files.filter((f) => !out.has(f)).sort();
}

/** Each Action's sizes, and dist/'s committed total. */
export function bundleSizes(dist) {
  const entries = Object.keys(ACTION_ENTRIES).map((name) => {
    const entry = `${name}.js`;
    const files = closure(dist, entry, { dynamic: true });
    return {
      name,
      entry,
      files,
      bytes: bytesOf(dist, files),
      atStartBytes: bytesOf(dist, loadedAtStart(dist, entry)),
      mapBytes: bytesOf(
        dist,
        files.map((f) => `${f}.map`).filter((f) => fs.existsSync(path.join(dist, f))),
      ),
      ceiling: CEILINGS[name],
    };
  });
  const committed = committedFiles(dist);
  return { entries, committed, committedBytes: bytesOf(dist, committed), ceiling: DIST_CEILING };
}
