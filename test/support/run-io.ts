// Where a test's run writes: a fresh output folder of its own, and the run's IO with nothing shown.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { RunIO } from "../../src/runner/run.js";

/** A new empty folder for one run's output (report, patch, events), under the system's temp folder. */
export function tempOut(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-out-"));
}

/** The run's IO as a test gives it: no progress lines, and each stream dropped unless `over` collects it. */
export function quietIo(over: Partial<RunIO> = {}): RunIO {
  return { stdout: () => {}, stderr: () => {}, progress: false, ...over };
}
