// Programs agent-ci carries as text, each bundled by esbuild into one file's contents:
// - report.html's script (src/report/html-client/, TypeScript for the browser), inlined into the page;
// - the egress sidecar's proxy (src/sandbox/egress/proxy-main.ts), written into the sidecar container and run
//   on the toolbelt's Node (the version toolbelt/Dockerfile pins is the target);
// - the exec helper (src/sandbox/helper/main.ts), started in the run's container with `node -e`, on the
//   toolbelt's Node too;
// - the run's watchdog (src/runner/run/watchdog-worker.ts), a worker thread started from its text (`eval`), on
//   the Node that runs agent-ci.
// Two callers, one set of options per program:
// - from source (vitest, tsx), the module that exports the text calls bundleEmbedded() when first imported;
// - scripts/build.mjs swaps that module for the bundled text (embeddedPlugin), so dist/ needs no esbuild.
import { build } from "esbuild";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** esbuild's target for the toolbelt's Node: its major version, read from the recipe that installs it. */
export function toolbeltNodeTarget() {
  const dockerfile = fs.readFileSync(path.join(root, "toolbelt", "Dockerfile"), "utf8");
  const major = /^ARG NODE_VERSION=(\d+)\./m.exec(dockerfile)?.[1];
  if (!major) throw new Error("toolbelt/Dockerfile names no NODE_VERSION");
  return `node${major}`;
}
const TOOLBELT_NODE = toolbeltNodeTarget();

const PROGRAMS = {
  reportClient: {
    entry: "src/report/html-client/main.ts",
    module: "src/report/html-client-js.ts",
    exportName: "REPORT_CLIENT_JS",
    options: { format: "iife", platform: "browser", target: "es2020" },
  },
  egressProxy: {
    entry: "src/sandbox/egress/proxy-main.ts",
    module: "src/sandbox/egress/proxy-source.ts",
    exportName: "EGRESS_PROXY_JS",
    options: { format: "cjs", platform: "node", target: TOOLBELT_NODE },
  },
  sandboxHelper: {
    entry: "src/sandbox/helper/main.ts",
    module: "src/sandbox/helper/source.ts",
    exportName: "HELPER_JS",
    options: { format: "cjs", platform: "node", target: TOOLBELT_NODE },
  },
  watchdogWorker: {
    entry: "src/runner/run/watchdog-worker.ts",
    module: "src/runner/run/watchdog-source.ts",
    exportName: "WATCHDOG_WORKER_JS",
    options: { format: "cjs", platform: "node", target: "node20" },
  },
};

/** Every source file the embedded programs bundled so far were made from (for THIRD_PARTY_NOTICES). */
export const embeddedInputs = new Set();

export async function bundleEmbedded(name) {
  const program = PROGRAMS[name];
  if (!program) throw new Error(`no embedded program named ${name}`);
  const entry = path.join(root, program.entry);
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    charset: "ascii",
    legalComments: "none",
    logLevel: "silent",
    metafile: true,
    ...program.options,
  });
  for (const input of Object.keys(result.metafile.inputs)) embeddedInputs.add(input);
  const [file] = result.outputFiles;
  if (file === undefined) throw new Error(`esbuild wrote nothing for ${entry}`);
  return file.text;
}

/** esbuild plugin: each program's module becomes `export const <NAME> = "<bundle>"`. */
export function embeddedPlugin() {
  const byModule = new Map(
    Object.entries(PROGRAMS).map(([name, p]) => [path.join(root, p.module), { name, ...p }]),
  );
  const names = [...byModule.keys()].map((file) => path.basename(file).replace(/[.]/g, "\\."));
  return {
    name: "embedded-programs",
    setup(pluginBuild) {
      pluginBuild.onLoad({ filter: new RegExp(`(^|/)(${names.join("|")})$`) }, async (args) => {
        const program = byModule.get(path.resolve(args.path));
        // A module of that name elsewhere would be bundled as source and load esbuild at run time.
        if (!program)
          throw new Error(
            `${args.path} is not one of the embedded programs' modules (${[...byModule.keys()].join(", ")})`,
          );
        return {
          contents: `export const ${program.exportName} = ${JSON.stringify(await bundleEmbedded(program.name))};`,
          loader: "js",
        };
      });
    },
  };
}
