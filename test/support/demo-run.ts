// The run `npm run demo` starts: scripts/demo.sh's arguments to `node bin/agent-ci.js`, read from the script
// so the tests that run the demo and the script cannot drift.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** The arguments demo.sh passes to `node bin/agent-ci.js` (its exec line, continued with `\`, before "$@"). */
export function demoArgs(): string[] {
  const script = fs.readFileSync(path.resolve("scripts/demo.sh"), "utf8");
  const command = /^exec node bin\/agent-ci\.js ((?:[^\n]*\\\n)*[^\n]*)"\$@"$/m.exec(script)?.[1];
  if (!command) throw new Error('scripts/demo.sh has no `exec node bin/agent-ci.js … "$@"` line');
  return [...command.replace(/\\\n/g, " ").matchAll(/'([^']*)'|(\S+)/g)].map(
    ([, quoted, bare]) => quoted ?? bare ?? "",
  );
}

/** Runs the demo into `out` with no API key (the scripted model), as `npm run demo -- --out <out>` does. */
export function runDemo(out: string) {
  return spawnSync("node", ["bin/agent-ci.js", ...demoArgs(), "--out", out], {
    encoding: "utf8",
    env: { ...process.env, ANTHROPIC_API_KEY: "" },
    timeout: 300_000,
  });
}
