// Every text path over output agent-ci does not control is linear in its input (issue: a 1 MB line held
// the Bash tool for ten minutes). Each path gets 8 MB of each shape that makes backtracking or per-line work
// blow up; linear code handles one in about a second, quadratic code would need days. The cases run in a
// worker thread that the test can stop while a regular expression still holds it, so a regression fails
// here, naming the path and the input, instead of hanging the suite.
import path from "node:path";
import { Worker } from "node:worker_threads";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { embeddedPlugin } from "../../scripts/embedded.mjs";
import { CASES, INPUTS } from "../support/linear-cases.js";

/** Per input: far above what linear code needs on a loaded 2-core machine, far below what quadratic code needs. */
const INPUT_LIMIT_MS = 120_000;
const SOURCE = path.resolve("test/support/linear-cases.ts");
// Inside node_modules, so that the bundle's imports of packages resolve.
const BUNDLE = path.resolve("node_modules/.cache/agent-ci-linear/linear-cases.mjs");

beforeAll(async () => {
  await build({
    entryPoints: [SOURCE],
    outfile: BUNDLE,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
    packages: "external",
    define: { "import.meta.url": JSON.stringify(`file://${SOURCE}`) },
    // report.html's script goes in as text, as in dist/: the bundle cannot find the client's sources.
    plugins: [embeddedPlugin()],
  });
});

interface Outcome {
  inputName: string;
  ok: boolean;
  size?: number;
  error?: string;
}

/** Runs one case over every input; rejects, naming the input, when one does not finish in time. */
function runCase(caseName: string): Promise<Outcome[]> {
  return new Promise((resolve, reject) => {
    const outcomes: Outcome[] = [];
    const worker = new Worker(BUNDLE, { workerData: { caseName } });
    let limit: NodeJS.Timeout | undefined;
    const fail = (error: Error) => {
      clearTimeout(limit);
      void worker.terminate();
      reject(error);
    };
    worker.on("message", (message: Partial<Outcome> & { started?: boolean; done?: boolean }) => {
      clearTimeout(limit);
      if (message.done) {
        void worker.terminate();
        resolve(outcomes);
        return;
      }
      if (message.started) {
        const input = message.inputName;
        limit = setTimeout(
          () =>
            fail(
              new Error(
                `${caseName} did not finish on 8 MB of ${input} within ${INPUT_LIMIT_MS / 1000} s: not linear in its input`,
              ),
            ),
          INPUT_LIMIT_MS,
        );
        return;
      }
      outcomes.push(message as Outcome);
    });
    worker.once("error", fail);
  });
}

describe("every text path is linear in its input", () => {
  it.each(Object.keys(CASES))(
    "%s",
    { timeout: INPUT_LIMIT_MS * Object.keys(INPUTS).length },
    async (caseName) => {
      const outcomes = await runCase(caseName);
      expect(outcomes.map((o) => o.inputName)).toEqual(Object.keys(INPUTS));
      for (const outcome of outcomes) {
        expect(outcome.error, `${caseName} on ${outcome.inputName}`).toBeUndefined();
        expect(outcome.ok, `${caseName} on ${outcome.inputName}`).toBe(true);
      }
    },
  );
});
