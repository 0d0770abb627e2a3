#!/usr/bin/env node
// The `agent-ci` command: the bundled CLI in dist/ (run `npm run build` in a clone of the repository).
import fs from "node:fs";
import module from "node:module";
import { URL } from "node:url";

// `agent-ci --version` (commander's `-V` too) is answered here, from package.json as the bundle's version is,
// without loading the bundle: the version alone needs no parser of the command line.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { version } = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`${version}\n`);
} else {
  // Node 22.1+ keeps the compiled bundle in a cache on disk (NODE_COMPILE_CACHE, else the temp folder), so a
  // later start skips parsing the chunks it loads; an older Node starts without it. The bundle is imported
  // after, so it is compiled through the cache.
  module.enableCompileCache?.();
  const { main } = await import("../dist/cli.js");

  await main();
  // The command is done and its files are written. Leave now, even when an Engine API request that timed out
  // is still open (a hung Docker daemon must not keep the process alive: RELIABILITY D6); stdout and stderr
  // are flushed first.
  process.stdout.write("", () => process.stderr.write("", () => process.exit(process.exitCode ?? 0)));
}
