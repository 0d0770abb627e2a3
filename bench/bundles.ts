// The Actions' bundles (AGENT_CI_BENCH_ONLY=bundles): what each entry can load and what the Action parses before
// its first line, their source maps, and dist/'s committed files (what every job that uses an Action downloads,
// and gzipped, as the runner fetches the repository), each with its ceiling (scripts/bundles.mjs, held by
// test/unit/bundle-sizes.test.ts); and the Action's start: `node dist/index.js` with no workflow around it, which
// fails at once on its first line, spawned to that line and to its exit, next to `node -e 0`.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { bundleSizes } from "../scripts/bundles.mjs";
import { CLI_NODE, summarize, type Row } from "./stats.js";

export const BUNDLES_SECTION = "Bundles (dist/, as committed)";
const SECTION = BUNDLES_SECTION;
const REPS = 20;
/** What each file was when every entry bundled everything in one unminified file (bytes). */
const ONE_FILE_BYTES = { index: 13_250_200, publish: 1_779_816, choose: 5_839_258, dist: 22_802_028 };
const MB = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;

/** Spawns `node <args>` and resolves with the time to its first byte on stdout and to its exit (ms). */
function firstLine(args: readonly string[], cwd: string): Promise<{ firstMs: number; exitMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let firstMs = Number.NaN;
    const child = spawn(CLI_NODE, args, { cwd, env: { PATH: process.env.PATH ?? "" }, stdio: "pipe" });
    child.stdout.once("data", () => (firstMs = performance.now() - t0));
    child.stdout.resume();
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", () =>
      Number.isNaN(firstMs)
        ? reject(new Error(`node ${args.join(" ")} printed nothing`))
        : resolve({ firstMs, exitMs: performance.now() - t0 }),
    );
  });
}

export async function benchBundles(repoRoot: string, log: (line: string) => void): Promise<Row[]> {
  const dist = path.join(repoRoot, "dist");
  const sizes = bundleSizes(dist);
  const gzipped = sizes.committed.reduce(
    (n, f) => n + zlib.gzipSync(fs.readFileSync(path.join(dist, f))).length,
    0,
  );
  const rows: Row[] = [];
  const what = {
    index: "the Action: dist/index.js and every chunk it can load",
    publish: "the publish Action: dist/publish.js and its chunks",
    choose: "the choose Action: dist/choose.js and its chunks",
  } as const;
  for (const entry of sizes.entries) {
    rows.push({
      section: SECTION,
      measurement: `${what[entry.name]} (${entry.files.length} files, minified)`,
      unit: "MB",
      agentCi: entry.bytes,
      native: null,
      note: `ceiling ${MB(entry.ceiling)}; ${MB(ONE_FILE_BYTES[entry.name])} when it was one file`,
    });
    if (entry.name === "index")
      rows.push({
        section: SECTION,
        measurement:
          "· parsed before its first line (the entry, its program's chunk and that chunk's imports)",
        unit: "MB",
        agentCi: entry.atStartBytes,
        native: null,
      });
    rows.push({
      section: SECTION,
      measurement: "· their source maps (beside them, `sources` only)",
      unit: "MB",
      agentCi: entry.mapBytes,
      native: null,
    });
  }
  rows.push(
    {
      section: SECTION,
      measurement: `dist/'s committed files: the Actions, their maps, the Bash parser's wasm, the notices (${sizes.committed.length} files)`,
      unit: "MB",
      agentCi: sizes.committedBytes,
      native: null,
      note: `ceiling ${MB(sizes.ceiling)}; ${MB(ONE_FILE_BYTES.dist)} when each Action was one file`,
    },
    {
      section: SECTION,
      measurement: "· gzipped, file by file (as a job downloads the repository)",
      unit: "MB",
      agentCi: gzipped,
      native: null,
    },
  );

  log(
    `bundles: node dist/index.js (no workflow: it fails on its first line) × ${REPS}, next to node -e 'console.log(0)'`,
  );
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-bench-bundles-"));
  try {
    // Alternately, after two untimed rounds, so that drift on a busy machine hits both alike.
    const action = () => firstLine([path.join(dist, "index.js")], cwd);
    const floor = () => firstLine(["-e", "console.log(0)"], cwd);
    for (let i = 0; i < 2; i++) {
      await action();
      await floor();
    }
    const measured: Array<{ firstMs: number; exitMs: number }> = [];
    const floors: number[] = [];
    for (let i = 0; i < REPS; i++) {
      measured.push(await action());
      floors.push((await floor()).firstMs);
    }
    rows.push(
      {
        section: SECTION,
        measurement:
          "the Action's start: `node dist/index.js` spawned to its first log line vs `node -e 'console.log(0)'`",
        unit: "ms",
        agentCi: summarize(measured.map((r) => r.firstMs)),
        native: summarize(floors),
        note: "an input missing (no workflow around it): the Action's first line is its error",
      },
      {
        section: SECTION,
        measurement: "· to its exit",
        unit: "ms",
        agentCi: summarize(measured.map((r) => r.exitMs)),
        native: null,
      },
    );
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
  return rows;
}

/** The ceilings as the bench's targets: each Action's bundle and dist/'s committed files. */
export function bundleTargets(repoRoot: string): Array<{ target: string; met: boolean; value: string }> {
  const sizes = bundleSizes(path.join(repoRoot, "dist"));
  return [
    ...sizes.entries.map((entry) => ({
      target: `dist/${entry.entry} and every chunk it can load ≤ ${MB(entry.ceiling)}`,
      met: entry.bytes <= entry.ceiling,
      value: MB(entry.bytes),
    })),
    {
      target: `dist/'s committed files ≤ ${MB(sizes.ceiling)}`,
      met: sizes.committedBytes <= sizes.ceiling,
      value: MB(sizes.committedBytes),
    },
  ];
}
