// Bundles an MCP server with its dependencies into one ES module (for the MCP test image), with esbuild
// from plain Node: a .mjs beside the TypeScript, as scripts/embedded.mjs is.
import { build } from "esbuild";

/** @param {string} entry @returns {Promise<string>} */
export async function bundleServer(entry) {
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node18",
    write: false,
    legalComments: "none",
    logLevel: "silent",
    // Bundled CommonJS dependencies call require() for Node's builtins.
    banner: {
      js: "import { createRequire as __mcpRequire } from 'node:module'; const require = __mcpRequire(import.meta.url);",
    },
  });
  return out.outputFiles[0].text;
}
