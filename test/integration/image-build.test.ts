// A first build's output goes to a log file, not the terminal: the progress callback (the run's stderr)
// gets one line when a build starts, naming the log, and one when it ends, with its duration; a failed
// build's error carries the log's last lines and its path.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  buildLogPath,
  DEFAULT_BASE_IMAGE,
  ensureBuilt,
  recipeTag,
  type BuildRecipe,
} from "../../src/sandbox/image/image.js";

const docker = new Docker();
const built: string[] = [];

function recipe(run: string): BuildRecipe {
  return {
    what: "a test image",
    repository: "agent-ci-test-build-log",
    files: { Dockerfile: `ARG BASE_IMAGE\nFROM \${BASE_IMAGE}\nRUN ${run}\n` },
    baseImage: DEFAULT_BASE_IMAGE,
    label: "test-build-log",
  };
}

describe("an image build", () => {
  let stateDir: string;
  beforeEach(() => {
    stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-state-"));
    vi.stubEnv("AGENT_CI_STATE_DIR", stateDir);
  });
  afterEach(async () => {
    for (const tag of built.splice(0))
      await docker
        .getImage(tag)
        .remove({ force: true })
        .catch(() => {});
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it("writes its output to a log and prints a start line with the log's path and an end line with its duration", async () => {
    const nonce = crypto.randomUUID();
    const r = recipe(`for i in $(seq 1 300); do echo "line $i of ${nonce}"; done`);
    built.push(recipeTag(r));
    const lines: string[] = [];
    const tag = await ensureBuilt(docker, r, (line) => lines.push(line));
    const log = buildLogPath(tag);
    expect(log.startsWith(stateDir)).toBe(true);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`log: ${log}`);
    expect(lines[1]).toMatch(/^built a test image in \d/);
    expect(fs.readFileSync(log, "utf8")).toContain(`line 300 of ${nonce}`);
    // Built: a second call prints nothing.
    await ensureBuilt(docker, r, (line) => lines.push(line));
    expect(lines).toHaveLength(2);
  });

  it("fails with the log's last lines and its path", async () => {
    const nonce = crypto.randomUUID();
    const r = recipe(`for i in $(seq 1 300); do echo "line $i of ${nonce}"; done; exit 3`);
    built.push(recipeTag(r));
    const lines: string[] = [];
    const error = await ensureBuilt(docker, r, (line) => lines.push(line)).then(
      () => undefined,
      (e: Error) => e,
    );
    const log = buildLogPath(recipeTag(r));
    expect(error?.message).toContain(`line 300 of ${nonce}`);
    expect(error?.message).not.toContain(`line 100 of ${nonce}`);
    expect(error?.message).toContain(`(the whole build log: ${log})`);
    expect(fs.readFileSync(log, "utf8")).toContain(`line 100 of ${nonce}`);
    expect(lines).toHaveLength(1);
    // The failed step's container is not left behind.
    const containers = await docker.listContainers({ all: true });
    expect(containers.filter((c) => c.Command.includes(nonce))).toEqual([]);
  });
});
