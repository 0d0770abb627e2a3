// Bundles the CLI, the three Actions and the benchmark into dist/ with esbuild, and copies the files they load
// at run time: the tree-sitter wasm files of the Bash parser; THIRD_PARTY_NOTICES lists the packages bundled,
// with their licenses. The programs agent-ci carries as text (report.html's script, the egress sidecar's proxy,
// the in-container exec helper, the watchdog's worker) go in as strings (embeddedPlugin), so dist/ never loads
// esbuild.
// The Actions' files are committed (action.yml runs dist/index.js, publish/action.yml dist/publish.js,
// choose/action.yml dist/choose.js, each with the chunks it imports); test/action/dist.test.ts rebuilds with
// `--outdir <tmp>` and fails when the committed files differ: run `npm run build` after changing src/.
// test/unit/bundle-sizes.test.ts holds their sizes under the ceilings of scripts/bundles.mjs.
import { build } from "esbuild";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ACTION_CHUNK_PREFIX, ACTION_ENTRIES } from "./bundles.mjs";
import { embeddedInputs, embeddedPlugin } from "./embedded.mjs";
import { thirdPartyNotices } from "./notices.mjs";
import { lazySshPlugin, unusedModulesPlugin, zodEnglishOnlyPlugin } from "./unused-modules.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outdirFlag = process.argv.indexOf("--outdir");
const distDir = path.join(root, "dist");
const dist = outdirFlag === -1 ? distDir : path.resolve(process.argv[outdirFlag + 1]);
// Each program is split into chunks (esbuild's code splitting, ES modules) along its `import()`s, so that it
// loads only the code it runs:
// - The CLI: `agent-ci --version` starts without parsing the run's machinery, and a run loads the cloud SDKs,
//   the MCP SDK or turndown only when it uses them. Its chunks sit beside cli.js (cli-chunk-*.js, built, not
//   committed, as cli.js) so `import.meta.url` finds the wasm files there.
// - The three Actions, in one build: their entries share the chunks of what they have in common (the Actions'
//   runtime, zod, the report), and each loads only what its own imports reach: the choose Action reads and
//   writes reports with neither the runner nor an engine client. These files are committed, so they are
//   minified (half the size, and half the parsing at a job's start) with a source map beside each file
//   (`sources` only, not their text): each entry turns source maps on before it loads its first chunk, so a
//   stack in the Action's log names src/ files and lines.
// The benchmark stays one file.
const splitEntries = { cli: "src/cli.ts" };
const wholeEntries = { bench: "bench/bench.ts" };
const CHUNK_PREFIX = "cli-chunk-";

fs.mkdirSync(dist, { recursive: true });
// Chunks are named by their content: a rebuild must not leave an earlier build's chunks (or their maps) behind.
for (const file of fs.readdirSync(dist))
  if (file.startsWith(CHUNK_PREFIX) || file.startsWith(ACTION_CHUNK_PREFIX)) fs.rmSync(path.join(dist, file));
const common = {
  absWorkingDir: root,
  metafile: true,
  outdir: dist,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  sourcemap: false,
  legalComments: "none",
  logLevel: "warning",
  // dockerode's ssh transport pulls in optional native add-ons (ssh2, cpu-features); agent-ci reaches the
  // engine over a socket or TCP, so they are left out.
  loader: { ".node": "empty" },
  plugins: [embeddedPlugin(), unusedModulesPlugin(), zodEnglishOnlyPlugin(), lazySshPlugin()],
  banner: {
    js: [
      'import { createRequire as __agentCiCreateRequire } from "node:module";',
      'import { fileURLToPath as __agentCiFileURLToPath } from "node:url";',
      'import { dirname as __agentCiDirname } from "node:path";',
      "const require = __agentCiCreateRequire(import.meta.url);",
      "const __filename = __agentCiFileURLToPath(import.meta.url);",
      "const __dirname = __agentCiDirname(__filename);",
    ].join("\n"),
  },
};
const entryPoints = (entries) =>
  Object.fromEntries(
    Object.entries(entries)
      .filter(([, file]) => fs.existsSync(path.join(root, file)))
      .map(([name, file]) => [name, path.join(root, file)]),
  );
const [cliResult, actionResult, wholeResult] = await Promise.all([
  build({
    ...common,
    entryPoints: entryPoints(splitEntries),
    splitting: true,
    chunkNames: `${CHUNK_PREFIX}[hash]`,
  }),
  build({
    ...common,
    outdir: distDir,
    write: false,
    entryPoints: entryPoints(ACTION_ENTRIES),
    splitting: true,
    chunkNames: `${ACTION_CHUNK_PREFIX}[hash]`,
    minify: true,
    sourcemap: "linked",
    sourcesContent: false,
  }),
  build({ ...common, entryPoints: entryPoints(wholeEntries) }),
]);

// The Actions' files are made as if for dist/ and written where asked: a map names its sources relative to
// itself, and a chunk's name is a hash that covers its map, so a build elsewhere (`--outdir <tmp>`) is the same,
// byte for byte, as the committed one (test/action/dist.test.ts), and a stack in the Action points into the
// checkout the runner downloaded (src/…).
for (const file of actionResult.outputFiles) {
  const to = path.join(dist, path.relative(distDir, file.path));
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.writeFileSync(to, file.contents);
}

const copy = (from, to) => {
  fs.mkdirSync(path.dirname(path.join(dist, to)), { recursive: true });
  fs.copyFileSync(path.join(root, from), path.join(dist, to));
};
// The bundles drop comments, license headers included: the licenses travel in this file instead.
fs.writeFileSync(
  path.join(dist, "THIRD_PARTY_NOTICES"),
  thirdPartyNotices(
    [
      ...[cliResult, actionResult, wholeResult].flatMap((result) => Object.keys(result.metafile.inputs)),
      ...embeddedInputs,
    ],
    root,
  ),
);
copy("node_modules/web-tree-sitter/web-tree-sitter.wasm", "web-tree-sitter.wasm");
copy("node_modules/tree-sitter-bash/tree-sitter-bash.wasm", "tree-sitter-bash.wasm");
