// git on the host, for every layer that reads or writes the user's repository outside the container: the
// copy-in's file lists, the run's base commit, review's diff, publish's commit and push. The repository may
// be hostile (a pull request's checkout), so every call gets the same safe configuration: argv only (never
// a shell string), hooks off, no fsmonitor daemon, no credential prompt, C locale for messages we parse,
// and extra config (a token header) through the environment (GIT_CONFIG_*), never argv where the process
// list would show it.
import { execFile, execFileSync } from "node:child_process";

export class GitError extends Error {
  override readonly name = "GitError";
  constructor(
    message: string,
    readonly args: readonly string[],
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(message);
  }
}

export interface GitOptions {
  cwd: string;
  /** Extra environment (GIT_INDEX_FILE, author, dates). */
  env?: Record<string, string>;
  /** Config entries passed through GIT_CONFIG_COUNT/KEY/VALUE, in order. */
  config?: ReadonlyArray<readonly [string, string]>;
  redact?: (text: string) => string;
  /** How stdout is decoded: `latin1` keeps every byte as one character (output that need not be UTF-8). */
  encoding?: "utf8" | "latin1";
}

/** Config every call gets, ahead of the subcommand: no hooks, no fsmonitor daemon. */
const SAFE_CONFIG = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"] as const;

/** Whole file lists and diffs of big repositories are read at once. */
const MAX_BUFFER = 1024 * 1024 * 1024;

function gitEnv(options: GitOptions): NodeJS.ProcessEnv {
  const config = options.config ?? [];
  return {
    ...process.env,
    GIT_TERMINAL_PROMPT: "0",
    GIT_ASKPASS: "",
    SSH_ASKPASS: "",
    LC_ALL: "C",
    ...options.env,
    GIT_CONFIG_COUNT: String(config.length),
    ...Object.fromEntries(
      config.flatMap(([key, value], i) => [
        [`GIT_CONFIG_KEY_${i}`, key],
        [`GIT_CONFIG_VALUE_${i}`, value],
      ]),
    ),
  };
}

function gitError(args: readonly string[], options: GitOptions, error: Error, stderr: string): GitError {
  const status = (error as { status?: unknown; code?: unknown }).status ?? (error as { code?: unknown }).code;
  const redact = options.redact ?? ((text: string) => text);
  const detail = redact(stderr.trim() || error.message);
  return new GitError(
    `git ${args[0] ?? ""} failed: ${detail}`,
    args,
    typeof status === "number" ? status : null,
    detail,
  );
}

/** Runs `git <args>` and returns stdout; a non-zero exit is a GitError carrying the (redacted) stderr. */
export function git(args: readonly string[], options: GitOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      [...SAFE_CONFIG, ...args],
      { cwd: options.cwd, env: gitEnv(options), maxBuffer: MAX_BUFFER, encoding: options.encoding ?? "utf8" },
      (error, stdout, stderr) => (error ? reject(gitError(args, options, error, stderr)) : resolve(stdout)),
    );
    // Nothing to say on stdin; a git that exits first must not turn the closed pipe into an EPIPE throw.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end();
  });
}

/** Runs `git <args>` and returns stdout as bytes (a blob's contents, a `-z` listing with any path bytes). */
export function gitBytes(args: readonly string[], options: GitOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      [...SAFE_CONFIG, ...args],
      { cwd: options.cwd, env: gitEnv(options), maxBuffer: MAX_BUFFER, encoding: "buffer" },
      (error, stdout, stderr) =>
        error ? reject(gitError(args, options, error, stderr.toString("utf8"))) : resolve(stdout),
    );
    child.stdin?.on("error", () => undefined);
    child.stdin?.end();
  });
}

/** `git` for the few synchronous callers (a commit id, a diff read before the run starts). */
export function gitSync(args: readonly string[], options: GitOptions): string {
  try {
    return execFileSync("git", [...SAFE_CONFIG, ...args], {
      cwd: options.cwd,
      env: gitEnv(options),
      maxBuffer: MAX_BUFFER,
      encoding: options.encoding ?? "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (error) {
    throw gitError(args, options, error as Error, String((error as { stderr?: unknown }).stderr ?? ""));
  }
}
