// Bundles the CLI (and the Action entry and the benchmark) into dist/ with esbuild, and copies the files
// they load at run time: the tree-sitter wasm files of the Bash parser; THIRD_PARTY_NOTICES lists the
// packages bundled, with their licenses. The programs agent-ci carries as
// text (report.html's script, the egress sidecar's proxy, the in-container exec helper, the watchdog's
// worker) go in as strings (embeddedPlugin), so dist/ never loads esbuild.
// dist/ is committed (action.yml runs dist/index.js); test/action/dist.test.ts rebuilds with
// `--outdir <tmp>` and fails when the committed files differ: run `npm run build` after changing src/.
import { build } from "esbuild";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { embeddedInputs, embeddedPlugin } from "./embedded.mjs";
import { thirdPartyNotices } from "./notices.mjs";
import { lazySshPlugin, unusedModulesPlugin, zodEnglishOnlyPlugin } from "./unused-modules.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outdirFlag = process.argv.indexOf("--outdir");
const dist = outdirFlag === -1 ? path.join(root, "dist") : path.resolve(process.argv[outdirFlag + 1]);
// The CLI is split into chunks (esbuild's code splitting, ES modules): a command loads only the code it uses, so
// `agent-ci --version` starts without parsing the run's machinery, and a run loads the cloud SDKs, the MCP
// SDK or turndown only when it uses them (their `import()` is a chunk of its own). The chunks sit beside
// cli.js (cli-chunk-*.js, built, not committed, as cli.js) so `import.meta.url` finds the wasm files there.
// The Actions and the benchmark stay one file each: action.yml runs the committed dist/index.js alone.
const splitEntries = { cli: "src/cli.ts" };
const wholeEntries = {
  index: "src/index.ts",
  publish: "src/publish.ts",
  choose: "src/choose.ts",
  bench: "bench/bench.ts",
};
const CHUNK_PREFIX = "cli-chunk-";

fs.mkdirSync(dist, { recursive: true });
// Chunks are named by their content: a rebuild must not leave an earlier build's chunks behind.
for (const file of fs.readdirSync(dist)) if (file.startsWith(CHUNK_PREFIX)) fs.rmSync(path.join(dist, file));
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
const results = await Promise.all([
  build({
    ...common,
    entryPoints: entryPoints(splitEntries),
    splitting: true,
    chunkNames: `${CHUNK_PREFIX}[hash]`,
  }),
  build({ ...common, entryPoints: entryPoints(wholeEntries) }),
]);

const copy = (from, to) => {
  fs.mkdirSync(path.dirname(path.join(dist, to)), { recursive: true });
  fs.copyFileSync(path.join(root, from), path.join(dist, to));
};
// The bundles drop comments, license headers included: the licenses travel in this file instead.
fs.writeFileSync(
  path.join(dist, "THIRD_PARTY_NOTICES"),
  thirdPartyNotices(
    [...results.flatMap((result) => Object.keys(result.metafile.inputs)), ...embeddedInputs],
    root,
  ),
);
copy("node_modules/web-tree-sitter/web-tree-sitter.wasm", "web-tree-sitter.wasm");
copy("node_modules/tree-sitter-bash/tree-sitter-bash.wasm", "tree-sitter-bash.wasm");
