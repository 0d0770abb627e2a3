// The end of a run, with the container removed while the host writes the patch file and the conversation
// (run.ts's finishRun): whatever those writes do, the container is gone when the run returns, and the record,
// written once the removal ended, says what the teardown did. The real engine.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { parseRunConfig } from "../../src/runner/config.js";
import { runAgent } from "../../src/runner/run.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { quietIo, tempOut } from "../support/run-io.js";
import { makeWorkspace } from "../support/workspace.js";

const docker = new Docker();

function scriptOf(turns: unknown[]): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-script-")), "script.json");
  fs.writeFileSync(file, JSON.stringify({ turns, final: "done" }));
  return file;
}

describe("teardown overlapped with the run's last writes", () => {
  it("removes the container and records its teardown when the patch file cannot be written", async () => {
    const workspace = makeWorkspace({ "a.txt": "one\n" }, { git: true });
    const out = tempOut();
    // patch.diff is a directory: its write fails while the container is being removed.
    fs.mkdirSync(path.join(out, "patch.diff", "held"), { recursive: true });
    const config = parseRunConfig({
      workspace,
      out,
      mode: "bypassPermissions",
      script: scriptOf([[{ name: "Write", input: { file_path: "/workspace/b.txt", content: "two\n" } }]]),
    });
    const outcome = await runAgent(config, quietIo());

    const left = await docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_RUN}=${outcome.runId}`] },
    });
    expect(left).toEqual([]);
    expect(outcome.exitReason).toBe("completed");
    expect(outcome.error).toMatch(/the patch could not be written/);
    expect(outcome.exitCode).not.toBe(0);

    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    expect(report.patch.files.map((f) => f.path)).toEqual(["b.txt"]);
    const phases = report.phases ?? [];
    const names = phases.map((p) => p.name);
    expect(names.slice(-3)).toEqual(["calls", "patch", "teardown"]);
    // The removal began once the patch was taken, and the record has its whole span.
    const patch = phases.find((p) => p.name === "patch")!;
    const teardown = phases.find((p) => p.name === "teardown")!;
    expect(teardown.startOffsetMs).toBeGreaterThanOrEqual(patch.startOffsetMs + patch.durationMs - 1);
    expect(report.durationMs).toBeGreaterThanOrEqual(teardown.startOffsetMs + teardown.durationMs - 1);
    for (const name of ["report.md", "report.html", "events.jsonl", "conversation.jsonl"])
      expect(fs.existsSync(path.join(out, name))).toBe(true);
  });
});
