// The agent-ci command as a user runs it: `node bin/agent-ci.js …` in a process of its own, its exit code
// and its whole stdout and stderr once it ends.
import { spawn } from "node:child_process";
import path from "node:path";

export const CLI = path.resolve(import.meta.dirname, "../../bin/agent-ci.js");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with `args`, the test's environment plus `env`, and no stdin. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn("node", [CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
