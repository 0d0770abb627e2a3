// report.html's script (src/report/html-client/, TypeScript for the browser) bundled into one IIFE string, which
// renderHtml inlines into the page. Two callers, one set of options:
// - from source (vitest, tsx), src/report/html-client-js.ts calls bundleReportClient() when first imported;
// - scripts/build.mjs swaps that module for the bundled text (reportClientPlugin), so dist/ holds the string and
//   the published package runs without esbuild.
import { build } from "esbuild";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ENTRY = path.join(root, "src/report/html-client/main.ts");
/** The module renderHtml imports the script from; it bundles at import time, the build replaces it. */
const SOURCE_MODULE = path.join(root, "src/report/html-client-js.ts");

export async function bundleReportClient() {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2020",
    charset: "ascii",
    legalComments: "none",
    logLevel: "silent",
  });
  const [file] = result.outputFiles;
  if (file === undefined) throw new Error(`esbuild wrote nothing for ${ENTRY}`);
  return file.text;
}

/** esbuild plugin: html-client-js.ts becomes `export const REPORT_CLIENT_JS = "<bundle>"`. */
export function reportClientPlugin() {
  return {
    name: "report-client",
    setup(pluginBuild) {
      let replaced = false;
      pluginBuild.onLoad({ filter: /html-client-js\.ts$/ }, async (args) => {
        if (path.resolve(args.path) !== SOURCE_MODULE) return undefined;
        replaced = true;
        return {
          contents: `export const REPORT_CLIENT_JS = ${JSON.stringify(await bundleReportClient())};`,
          loader: "js",
        };
      });
      pluginBuild.onEnd((result) => {
        if (result.errors.length === 0 && !replaced)
          throw new Error(
            `${path.relative(root, SOURCE_MODULE)} was not bundled: the report page would need esbuild`,
          );
      });
    },
  };
}
