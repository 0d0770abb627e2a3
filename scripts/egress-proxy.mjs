// The egress sidecar's program (src/sandbox/egress/proxy-main.ts and the libraries it uses) bundled into
// one CommonJS string, which agent-ci writes into the sidecar container and runs on the toolbelt's Node
// (Debian's, so the target is its version). Two callers, one set of options, as for report.html's script:
// - from source (vitest, tsx), src/sandbox/egress/proxy-source.ts calls bundleEgressProxy() when imported;
// - scripts/build.mjs swaps that module for the bundled text (egressProxyPlugin), so dist/ needs no esbuild.
import { build } from "esbuild";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ENTRY = path.join(root, "src/sandbox/egress/proxy-main.ts");
const SOURCE_MODULE = path.join(root, "src/sandbox/egress/proxy-source.ts");

export async function bundleEgressProxy() {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: "cjs",
    platform: "node",
    target: "node18",
    charset: "ascii",
    legalComments: "none",
    logLevel: "silent",
  });
  const [file] = result.outputFiles;
  if (file === undefined) throw new Error(`esbuild wrote nothing for ${ENTRY}`);
  return file.text;
}

/** esbuild plugin: proxy-source.ts becomes `export const EGRESS_PROXY_JS = "<bundle>"`. */
export function egressProxyPlugin() {
  return {
    name: "egress-proxy",
    setup(pluginBuild) {
      let replaced = false;
      pluginBuild.onLoad({ filter: /proxy-source\.ts$/ }, async (args) => {
        if (path.resolve(args.path) !== SOURCE_MODULE) return undefined;
        replaced = true;
        return { contents: `export const EGRESS_PROXY_JS = ${JSON.stringify(await bundleEgressProxy())};`, loader: "js" };
      });
      pluginBuild.onEnd((result) => {
        if (result.errors.length === 0 && !replaced) throw new Error(`${path.relative(root, SOURCE_MODULE)} was not bundled: the egress sidecar would need esbuild`);
      });
    },
  };
}
