// git on the host, for `agent-ci publish`: argv only (never a shell string), hooks off, no prompt, and the
// token in the environment (GIT_CONFIG_*), never in argv where the process list would show it.
import { execFile } from "node:child_process";

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
}

/** Config every call gets: no hooks, no fsmonitor daemon, no credential prompt. */
const SAFE_CONFIG = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"] as const;

/** Runs `git <args>` and returns stdout; a non-zero exit is a GitError carrying the (redacted) stderr. */
export function git(args: readonly string[], options: GitOptions): Promise<string> {
  const config = options.config ?? [];
  const env: NodeJS.ProcessEnv = {
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
  const redact = options.redact ?? ((text: string) => text);
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      [...SAFE_CONFIG, ...args],
      { cwd: options.cwd, env, maxBuffer: 256 * 1024 * 1024, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const code = typeof error.code === "number" ? error.code : null;
        const detail = redact(stderr.trim() || error.message);
        reject(new GitError(`git ${args[0] ?? ""} failed: ${detail}`, args, code, detail));
      },
    );
    // Nothing to say on stdin; a git that exits first must not turn the closed pipe into an EPIPE throw.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end();
  });
}

/**
 * The header config that authenticates git over HTTPS with a token, the way actions/checkout does, scoped
 * to the remote's origin. The first, empty entry resets headers set before (a checkout's persisted
 * credentials), so exactly one Authorization header is sent.
 */
export function authConfig(remoteUrl: string, token: string | undefined): Array<[string, string]> {
  if (!token || !/^https?:\/\//i.test(remoteUrl)) return [];
  const key = `http.${new URL(remoteUrl).origin}/.extraheader`;
  const basic = Buffer.from(`x-access-token:${token}`).toString("base64");
  return [
    [key, ""],
    [key, `AUTHORIZATION: basic ${basic}`],
  ];
}
