// The agent-ci command as a user runs it: `node bin/agent-ci.js …` in a process of its own, its exit code
// and its whole stdout and stderr once it ends (or both in one log, as a workflow step's).
import { spawn, type ChildProcessByStdio } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";

export const CLI = path.resolve(import.meta.dirname, "../../bin/agent-ci.js");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A CLI process under way: the output so far, and its whole run once it ends. */
export interface CliProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  stdout: () => string;
  stderr: () => string;
  done: Promise<CliRun>;
}

/** Starts the CLI with `args`, the test's environment plus `env`, and no stdin. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}): CliProcess {
  const child = spawn("node", [CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  // Decoded as a stream: a character split between two chunks stays whole.
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const done = new Promise<CliRun>((resolve) =>
    child.on("close", (code) => resolve({ code, stdout, stderr })),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

/** Runs the CLI with `args`, the test's environment plus `env`, and no stdin. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return startCli(args, env).done;
}

/**
 * Runs the CLI with stdout and stderr into one file, in the order it wrote them, as a workflow step's log
 * holds them (the runner reads both, with one set of masks).
 */
export async function runCliLog(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; log: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-log-"));
  const file = path.join(dir, "step.log");
  const fd = fs.openSync(file, "w");
  try {
    const child = spawn("node", [CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", fd, fd],
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    return { code, log: fs.readFileSync(file, "utf8") };
  } finally {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
