// --verify: after the agent stops, a fresh sandbox made as the agent's was (the same image, network and
// setup commands, so what setup installs is there) at the original tree, the patch applied with
// `git apply`, and the command run there with no model. Records whether the patch applied, the command's
// exit code and the tail of its output.
import { DockerSandbox, newRunId } from "../../sandbox/docker-sandbox.js";
import type { RunConfig } from "../config.js";
import { runSandboxOptions } from "./sandbox-options.js";

export interface VerifyResult {
  command: string;
  applied: boolean;
  exitCode: number | null;
  outputTail: string;
  durationMs: number;
}

const VERIFY_TIMEOUT_MS = 20 * 60_000;
const TAIL_CHARS = 4000;
const PATCH_FILE = "/tmp/agent-ci-verify.patch";

export async function runVerify(options: {
  runId: string;
  config: RunConfig;
  imageName: string;
  /** The patch's exact bytes (a text diff may hold bytes that are not UTF-8). */
  patch: string | Uint8Array;
  log: (line: string) => void;
  signal: AbortSignal;
  /** The run's own copy exclusions (Read deny rules): a patched test must not reach what the agent could not. */
  excludeFromCopy: (relPath: string) => string | undefined;
}): Promise<VerifyResult> {
  const { config } = options;
  const command = config.verify ?? "";
  const started = performance.now();
  options.log(`verify: applying the patch to a fresh container and running: ${command}`);
  await using sandbox = await DockerSandbox.start({
    runId: `${options.runId}-verify-${newRunId().slice(-6)}`,
    ...runSandboxOptions(config),
    workspaceDir: config.workspace,
    image: options.imageName,
    excludeFromCopy: options.excludeFromCopy,
    progress: (line) => options.log(`verify: ${line}`),
  });
  const tail = (text: string) => text.slice(-TAIL_CHARS);
  if (options.patch.length) {
    await sandbox.writeFile(PATCH_FILE, options.patch, { confine: false });
    const applied = await sandbox.exec({
      argv: ["git", "apply", "--binary", "--whitespace=nowarn", PATCH_FILE],
      timeoutMs: 120_000,
    });
    if (applied.exitCode !== 0) {
      return {
        command,
        applied: false,
        exitCode: null,
        outputTail: tail(applied.stderr.toString("utf8")),
        durationMs: performance.now() - started,
      };
    }
  }
  const res = await sandbox.exec({ script: command, timeoutMs: VERIFY_TIMEOUT_MS, signal: options.signal });
  const output = Buffer.concat([res.stdout, res.stderr]).toString("utf8");
  return {
    command,
    applied: true,
    exitCode: res.timedOut ? null : (res.exitCode ?? 128),
    outputTail: tail(
      res.timedOut ? `${output}\n(timed out after ${VERIFY_TIMEOUT_MS / 60_000} min)` : output,
    ),
    durationMs: performance.now() - started,
  };
}
