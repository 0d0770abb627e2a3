// A run's policy engine is made before the Bash parser is loaded (the parser loads while the container
// starts, run-stages.ts): until it is, a Bash call is denied, never allowed; every other decision is already
// the engine's own. This file loads the parser itself, so its first test runs before any load.
import { expect, it } from "vitest";
import { createPolicyEngineNow, loadBashParser, loadPolicy } from "../../../src/policy/index.js";

it("denies a Bash call decided before the parser is loaded, then decides it as createPolicyEngine would", async () => {
  const policy = loadPolicy({
    mode: "bypassPermissions",
    sources: [{ source: { kind: "cli", label: "cli", trusted: true }, deny: ["Bash(rm:*)"] }],
  });
  const engine = createPolicyEngineNow(policy);
  const bash = (command: string) => engine.decide({ tool: "Bash", input: { command }, readOnly: false });
  const early = bash("ls");
  expect(early.behavior).toBe("deny");
  expect(early.reason).toMatch(/Bash parser is not loaded yet/);
  const read = engine.decide({ tool: "Read", input: { file_path: "/workspace/a.txt" }, readOnly: true });
  expect(read.behavior).toBe("allow");
  await loadBashParser();
  expect(bash("ls").behavior).toBe("allow");
  expect(bash("rm -rf x")).toMatchObject({ behavior: "deny", decidedBy: "rule" });
});
