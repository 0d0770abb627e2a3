// `npm run demo`, the README's first command: the run scripts/demo.sh starts (its arguments read from the
// script, test/support/demo-run.ts), in the default image. The example's tests must run there: the first
// `npm test` fails on the bug, the one after the fix and --verify's pass, and the CLI exits 0.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { runDemo } from "../support/demo-run.js";

describe("npm run demo", () => {
  it("fixes the example: the tests fail on the bug, pass after the fix and under --verify", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-demo-"));
    const run = runDemo(out);
    expect(run.status, run.stderr).toBe(0);
    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    const tests = report.toolCalls.filter((c) => c.tool === "Bash");
    expect(tests.map((c) => c.exitCode)).toEqual([1, 0]);
    expect(tests[0]?.resultPreview).toContain("✖ average of three");
    expect(report.verify?.exitCode, report.verify?.outputTail).toBe(0);
    expect(report.verify?.outputTail).toContain("pass 4");
  });
});
