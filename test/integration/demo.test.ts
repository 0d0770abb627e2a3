// `npm run demo`, the README's first command: the run scripts/demo.sh starts (its arguments read from the
// script, so the two cannot drift), in the default image. The example's tests must run there: the first
// `npm test` fails on the bug, the one after the fix and --verify's pass, and the CLI exits 0.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";

/** The arguments demo.sh passes to `node bin/agent-ci.js` (its exec line, continued with `\`, before "$@"). */
function demoArgs(): string[] {
  const script = fs.readFileSync(path.resolve("scripts/demo.sh"), "utf8");
  const command = /^exec node bin\/agent-ci\.js ((?:[^\n]*\\\n)*[^\n]*)"\$@"$/m.exec(script)?.[1];
  if (!command) throw new Error('scripts/demo.sh has no `exec node bin/agent-ci.js … "$@"` line');
  return [...command.replace(/\\\n/g, " ").matchAll(/'([^']*)'|(\S+)/g)].map(
    ([, quoted, bare]) => quoted ?? bare ?? "",
  );
}

describe("npm run demo", () => {
  it("fixes the example: the tests fail on the bug, pass after the fix and under --verify", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-demo-"));
    const run = spawnSync("node", ["bin/agent-ci.js", ...demoArgs(), "--out", out], {
      encoding: "utf8",
      env: { ...process.env, ANTHROPIC_API_KEY: "" },
      timeout: 300_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    const tests = report.toolCalls.filter((c) => c.tool === "Bash");
    expect(tests.map((c) => c.exitCode)).toEqual([1, 0]);
    expect(tests[0]?.resultPreview).toContain("✖ average of three");
    expect(report.verify?.exitCode, report.verify?.outputTail).toBe(0);
    expect(report.verify?.outputTail).toContain("pass 4");
  });
});
