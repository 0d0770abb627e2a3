// The `agent-ci` command as users run it (the bundle in dist/, built by `npm test`): help, errors that
// say what to do, exit codes, and SIGINT/SIGTERM mid-run leaving a complete record and no container.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { LABEL_RUN } from "../../src/sandbox/engine.js";

const CLI = path.resolve("bin/agent-ci.js");
const EXAMPLE = path.resolve("examples/buggy-calc");

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync("node", [CLI, ...args], { encoding: "utf8", env: { ...process.env, ANTHROPIC_API_KEY: "", ...env }, timeout: 120_000 });
}

function sleepScript(): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-script-")), "s.json");
  fs.writeFileSync(
    file,
    JSON.stringify({
      turns: [[{ name: "Write", input: { file_path: "/workspace/kept.txt", content: "kept\n" } }], [{ name: "Bash", input: { command: "sleep 120" } }]],
    }),
  );
  return file;
}

describe("agent-ci CLI", () => {
  it("prints help and its version", () => {
    const help = cli(["run", "--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("--script <file>");
    expect(help.stdout).toContain("Exit codes:");
    expect(cli(["--version"]).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("explains a missing task or key and exits 2", () => {
    const noTask = cli(["run", "--workspace", EXAMPLE]);
    expect(noTask.status).toBe(2);
    expect(noTask.stderr).toMatch(/ANTHROPIC_API_KEY is not set: set it to run a model, or use --script/);
    const badMode = cli(["run", "--mode", "yolo"]);
    expect(badMode.status).not.toBe(0);
    expect(badMode.stderr).toMatch(/Allowed choices are default, plan, acceptEdits, bypassPermissions/);
  });

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`on ${signal} mid-run writes the patch and a complete record and leaves no container`, async () => {
      const out = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-out-"));
      const args = ["run", "--workspace", EXAMPLE, "--script", sleepScript(), "--mode", "bypassPermissions", "--out", out, "--output-format", "stream-json"];
      const child = spawn("node", [CLI, ...args], { env: { ...process.env, ANTHROPIC_API_KEY: "" }, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      // Signalled once the sleep's turn is streamed (turn 0's Write result is in by then).
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", () => {
          if (/"type":"assistant".*"name":"Bash"/.test(stdout)) resolve();
        });
        child.on("exit", () => reject(new Error(`exited early: ${stderr}`)));
      });
      child.kill(signal);
      const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
      expect(code).toBe(130);
      const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
      expect(report.exitReason).toBe("cancelled");
      expect(report.patch.files.map((f) => f.path)).toEqual(["kept.txt"]);
      const left = await new Docker().listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${report.runId}`] } });
      expect(left).toEqual([]);
    });
  }

  it("ends a run whose event loop is blocked with the timeout code: the watchdog writes the record and removes the container", async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-out-"));
    const args = ["run", "--workspace", EXAMPLE, "--script", sleepScript(), "--mode", "bypassPermissions", "--out", out, "--timeout", "5"];
    // The test-only hook blocks the main thread for good once the sandbox is up: neither the run's own timer
    // nor anything else on that thread can end the run.
    const child = spawn("node", [CLI, ...args], { env: { ...process.env, ANTHROPIC_API_KEY: "", AGENT_CI_TEST_BLOCK_EVENT_LOOP: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    expect(code, stderr).toBe(5);
    expect(stderr).toContain("the watchdog ended the run");
    expect(fs.existsSync(path.join(out, "patch.diff"))).toBe(true);
    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    expect(report.exitReason).toBe("timeout");
    expect(report.error?.kind).toBe("Watchdog");
    for (const name of ["report.md", "report.html"]) expect(fs.existsSync(path.join(out, name))).toBe(true);
    const left = await new Docker().listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${report.runId}`] } });
    expect(left).toEqual([]);
  });
});
