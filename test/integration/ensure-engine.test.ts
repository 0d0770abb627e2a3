// scripts/ensure-engine.sh keeps what it runs out of the terminal: a step says when it starts and where its
// log is, and a failed step prints the log's last lines and its path, and leaves nothing behind.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const SCRIPT = path.resolve(import.meta.dirname, "../../scripts/ensure-engine.sh");

describe("ensure-engine.sh", () => {
  it("builds a missing base with its output in a log, and on failure prints the log's tail and path", () => {
    const state = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-state-"));
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-tmp-"));
    // No registry answers here and the mirror refuses: the pull fails, then debootstrap does.
    const result = spawnSync("bash", [SCRIPT], {
      encoding: "utf8",
      env: {
        ...process.env,
        AGENT_CI_STATE_DIR: state,
        AGENT_CI_BASE_IMAGE: `agent-ci-test-missing-base:${crypto.randomUUID().slice(0, 8)}`,
        AGENT_CI_DEBIAN_MIRROR: "http://127.0.0.1:1/debian",
        TMPDIR: tmp,
      },
    });
    const log = path.join(state, "debootstrap.log");
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ensure-engine: base image: building .* \(log: .*\)$/);
    expect(lines[0]).toContain(log);
    expect(lines.at(-1)).toBe(`ensure-engine: debootstrap failed; the whole log: ${log}`);
    expect(lines.length).toBeLessThanOrEqual(22);
    expect(result.stderr).toContain("Failed getting release file");
    expect(fs.readFileSync(log, "utf8")).toContain("Failed getting release file");
    expect(fs.readdirSync(tmp)).toEqual([]);
    fs.rmSync(state, { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  });
});
