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

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outdirFlag = process.argv.indexOf("--outdir");
const dist = outdirFlag === -1 ? path.join(root, "dist") : path.resolve(process.argv[outdirFlag + 1]);
const entries = {
  cli: "src/cli.ts",
  index: "src/index.ts",
  publish: "src/publish.ts",
  choose: "src/choose.ts",
  bench: "bench/bench.ts",
};

fs.mkdirSync(dist, { recursive: true });
const result = await build({
  absWorkingDir: root,
  metafile: true,
  entryPoints: Object.fromEntries(
    Object.entries(entries)
      .filter(([, file]) => fs.existsSync(path.join(root, file)))
      .map(([name, file]) => [name, path.join(root, file)]),
  ),
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
  plugins: [embeddedPlugin()],
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
});

const copy = (from, to) => {
  fs.mkdirSync(path.dirname(path.join(dist, to)), { recursive: true });
  fs.copyFileSync(path.join(root, from), path.join(dist, to));
};
// The bundles drop comments, license headers included: the licenses travel in this file instead.
fs.writeFileSync(
  path.join(dist, "THIRD_PARTY_NOTICES"),
  thirdPartyNotices([...Object.keys(result.metafile.inputs), ...embeddedInputs], root),
);
copy("node_modules/web-tree-sitter/web-tree-sitter.wasm", "web-tree-sitter.wasm");
copy("node_modules/tree-sitter-bash/tree-sitter-bash.wasm", "tree-sitter-bash.wasm");
