// A run's context before any stage: every secret it knows (its own and its MCP servers' values) is told to
// onSecret, to be masked in a runner's log, before the run prints anything.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseRunConfig } from "../../../src/runner/config.js";
import { capabilitiesFor, capabilitySecrets } from "../../../src/runner/capabilities/index.js";
import { newRunContext } from "../../../src/runner/run/new-context.js";

describe("newRunContext", () => {
  it("tells onSecret each secret long enough to redact, its MCP servers' included, before any line", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-context-"));
    const script = path.join(dir, "script.json");
    fs.writeFileSync(script, JSON.stringify({ turns: [] }));
    const given = ["given", "secret", "value"].join("-");
    const server = ["server", "token", "value"].join("-");
    const config = parseRunConfig({
      workspace: dir,
      script,
      mcpConfig: [
        JSON.stringify({ mcpServers: { srv: { command: "srv", env: { DEBUG: "1", TOKEN: server } } } }),
      ],
    });
    const told: string[] = [];
    const lines: string[] = [];
    newRunContext(
      config,
      {
        stdout: (line) => lines.push(line),
        stderr: (line) => lines.push(line),
        progress: false,
        onSecret: (v) => told.push(v),
      },
      { runId: "r", outDir: dir, secrets: [given, ...capabilitySecrets(capabilitiesFor(config))] },
    );
    expect(told).toEqual([given, server]);
    expect(lines).toEqual([]);
  });
});
