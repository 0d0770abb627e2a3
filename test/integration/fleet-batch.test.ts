// `agent-ci batch` on the engine: nine scripted tasks, three sandboxes at a time, through the CLI's own entry.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";

const EXAMPLE = path.resolve(import.meta.dirname, "../../examples/buggy-calc");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-batch-"));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

describe("agent-ci batch", () => {
  it("runs 9 tasks 3 at a time: 9 records, no container left", { timeout: 600_000 }, async () => {
    const tasks = path.join(work, "tasks.jsonl");
    const lines = Array.from({ length: 9 }, (_, i) =>
      JSON.stringify({ id: `t${i + 1}`, workspace: EXAMPLE, script: path.join(EXAMPLE, "fix.script.json") }),
    );
    fs.writeFileSync(tasks, `${lines.join("\n")}\n`);
    const out = path.join(work, "out");
    const before = process.exitCode;
    await main([
      "node",
      "agent-ci",
      "batch",
      tasks,
      "--parallel",
      "3",
      "--batch-out",
      out,
      "--mode",
      "acceptEdits",
    ]);
    const code = process.exitCode;
    process.exitCode = before;
    const folders = fs.readdirSync(out).sort();
    expect(folders).toHaveLength(9);
    const reports = folders.map(
      (f) =>
        JSON.parse(fs.readFileSync(path.join(out, f, "report.json"), "utf8")) as {
          runId: string;
          outcome: string;
        },
    );
    expect(new Set(reports.map((r) => r.runId)).size).toBe(9);
    expect(code).toBe(0);
    const docker = new Docker();
    for (const report of reports) {
      const left = await docker.listContainers({
        all: true,
        filters: { label: [`${LABEL_RUN}=${report.runId}`] },
      });
      expect(left).toEqual([]);
    }
  });
});
