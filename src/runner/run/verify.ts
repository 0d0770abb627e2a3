// --verify: after the agent stops, a fresh sandbox made as the agent's was (the same image, network and
// setup commands, so what setup installs is there) at the original tree, the patch applied with
// `git apply`, and the command run there with no model. Records whether the patch applied, the command's
// exit code and the tail of its output, and what of what the command runs the patch changed
// (verify-inputs.ts: its package.json scripts, its test runner's configuration, the files it names).
import path from "node:path";
import { parseGitDiff } from "../../report/index.js";
import { DockerSandbox, newRunId, type NodeInSandbox } from "../../sandbox/docker-sandbox.js";
import { WORKSPACE_ROOT, type Sandbox } from "../../sandbox/sandbox.js";
import type { RunConfig } from "../config.js";
import { runSandboxOptions, type SandboxAsk } from "./sandbox-options.js";
import { changedVerifyInputs } from "./verify-inputs.js";

export interface VerifyResult {
  command: string;
  applied: boolean;
  exitCode: number | null;
  outputTail: string;
  durationMs: number;
  /** What the command runs that the patch changed (`package.json scripts.test`); absent when nothing. */
  changedInputs?: string[];
}

const VERIFY_TIMEOUT_MS = 20 * 60_000;
const TAIL_CHARS = 4000;
const PATCH_FILE = "/tmp/agent-ci-verify.patch";
/** A package.json larger than this is not read for its scripts. */
const MAX_PACKAGE_JSON_BYTES = 1024 * 1024;

/** A workspace file's text in the sandbox, undefined when it is absent, too large or not readable. */
async function readText(sandbox: Sandbox, file: string): Promise<string | undefined> {
  try {
    const read = await sandbox.readFile(path.posix.join(WORKSPACE_ROOT, file), {
      maxSize: MAX_PACKAGE_JSON_BYTES,
    });
    return read && read.stat.size <= MAX_PACKAGE_JSON_BYTES ? read.data.toString("utf8") : undefined;
  } catch {
    return undefined;
  }
}

/** Every path the patch changes, both sides of a rename. */
function changedPaths(patch: string | Uint8Array): Set<string> {
  const text = typeof patch === "string" ? patch : Buffer.from(patch).toString("utf8");
  return new Set(parseGitDiff(text).files.flatMap((f) => (f.oldPath ? [f.path, f.oldPath] : [f.path])));
}

export async function runVerify(options: {
  runId: string;
  config: RunConfig;
  /** What the capabilities ask of the run's sandboxes: verify's is made as the agent's was. */
  asks: SandboxAsk;
  imageName: string;
  /** The agent's Node.js: verify's sandbox runs the same. */
  node: NodeInSandbox | undefined;
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
  const runId = `${options.runId}-verify-${newRunId().slice(-6)}`;
  await using sandbox = await DockerSandbox.start({
    runId,
    ...runSandboxOptions(config, options.asks, runId, false),
    workspaceDir: config.workspace,
    image: options.imageName,
    node: options.node,
    excludeFromCopy: options.excludeFromCopy,
    progress: (line) => options.log(`verify: ${line}`),
  });
  const tail = (text: string) => text.slice(-TAIL_CHARS);
  const changed = changedPaths(options.patch);
  // The package.json files the patch changes, read before it applies: the scripts verify ran before.
  const before = new Map<string, string | undefined>();
  for (const file of changed)
    if (path.posix.basename(file) === "package.json") before.set(file, await readText(sandbox, file));
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
  const after = (file: string) => readText(sandbox, file);
  const changedInputs = await changedVerifyInputs(command, {
    changed,
    before: (file) => (changed.has(file) ? Promise.resolve(before.get(file)) : after(file)),
    after,
  });
  // Quoted: a path is the patch's, and may hold a newline.
  if (changedInputs.length)
    options.log(
      `verify: the patch changes what the command runs: ${changedInputs.map((i) => JSON.stringify(i)).join(", ")}`,
    );
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
    ...(changedInputs.length ? { changedInputs } : {}),
  };
}
