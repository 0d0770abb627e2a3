// The agent phase's newest result: each stage's addition is a new phase, and the one before it is left as it was.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseRunConfig } from "../../../src/runner/config.js";
import { type AgentPhase, PhaseSoFar } from "../../../src/runner/run/run-context.js";

describe("PhaseSoFar", () => {
  it("adds what a stage made as a new phase and leaves the earlier phase unchanged", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-phase-"));
    const script = path.join(dir, "script.json");
    fs.writeFileSync(script, JSON.stringify({ turns: [] }));
    const config = parseRunConfig({ workspace: dir, script });
    const first: AgentPhase = { config, start: { phases: [] } };
    const soFar = new PhaseSoFar(first);
    const failure = { reason: "engine_error" as const, kind: "Error", message: "gone" };
    const next = soFar.add({ failure });
    expect(next).not.toBe(first);
    expect(first.failure).toBeUndefined();
    expect(soFar.current).toBe(next);
    expect(next).toEqual({ config, start: first.start, failure });
  });
});
