// Where the run's hooks run: inside the sandbox, through a helper of their own that runs as the hooks' user
// (its own uid, the agent's group), as an MCP server runs as its own (service.ts). The agent's commands
// cannot signal it, trace it or read its environment; the shared group is how a formatter may rewrite the
// workspace, and after each hook what it owns there is given to the group too (the helper's
// `share-workspace`), so that the agent can still read and edit it and the patch includes it. Its home (mode 0700, under /tmp whose sticky bit keeps it its own) holds the copies of the
// hook scripts taken when the run started, which the agent's user can neither change nor read.
import crypto from "node:crypto";
import { AGENT_UID } from "../engine/profile.js";
import type { HelperClient } from "../helper/client.js";
import { STATE_DIR_ENV } from "../helper/protocol.js";
import { SandboxGoneError, WORKSPACE_ROOT } from "../sandbox.js";

/** The hooks' user: below the services' range (service.ts), above the agent's and the keeper's. */
export const HOOK_UID = 1999;
export const HOOK_USER = `${HOOK_UID}:${AGENT_UID}`;
/** The ledger's caller for a hook's connections (network allowlist). */
export const HOOK_CALLER = "hook";

/** A hook script as the run started: its path relative to the workspace, and its bytes. */
export interface HookScript {
  rel: string;
  content: Buffer;
}

export interface HookExecRequest {
  /** The hook's command, run by bash in /workspace. */
  script: string;
  /** The event's JSON, on the hook's stdin. */
  input: string;
  /** The hook's own variables, on top of the sandbox's environment (CLAUDE_PROJECT_DIR). */
  env: Record<string, string>;
  timeoutMs: number;
  maxOutputBytes: number;
}

export interface HookExecResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** The hook could not be run at all (the helper is gone, the program is missing): why. */
  error?: string;
  durationMs: number;
}

export interface HookRunner {
  /** Where the scripts' copies are: `<scriptsDir>/<rel>`. */
  readonly scriptsDir: string;
  run(request: HookExecRequest): Promise<HookExecResult>;
}

export interface HookHost {
  /** Starts the hooks' helper and copies `scripts` into its home, before the agent's first call. */
  startHooks(scripts: readonly HookScript[]): Promise<HookRunner>;
}

/** What the sandbox gives the hooks' runner: a helper started as a user, and the sandbox's command environment. */
export interface HookHelperStarter {
  startAs(user: string, env: Record<string, string>, prelude: string): Promise<HelperClient>;
  /** The environment the Bash tool's scripts get (the image's, the proxy's), with `env` on top. */
  commandEnv(env: Record<string, string>): Record<string, string>;
}

/**
 * Makes the home (0700) or accepts it when it is already the hooks' own and no symlink (a helper started
 * again after a hook killed it), then the state folder, then the helper itself with umask 002 (what a hook
 * writes into the workspace stays the agent's to edit).
 */
const PRELUDE =
  '{ mkdir -m 700 -- "$HOME" 2>/dev/null || { [ ! -h "$HOME" ] && [ -O "$HOME" ]; }; } && ' +
  `mkdir -p -m 700 -- "$HOME/state" && umask 002 && exec "$@"`;

export class HookHelper implements HookRunner {
  readonly scriptsDir: string;
  private client: HelperClient | undefined;
  private starting: Promise<HelperClient> | undefined;
  private closed = false;

  private constructor(
    private readonly starter: HookHelperStarter,
    private readonly home: string,
  ) {
    this.scriptsDir = `${home}/scripts`;
  }

  static async start(starter: HookHelperStarter, scripts: readonly HookScript[]): Promise<HookHelper> {
    const helper = new HookHelper(starter, `/tmp/agent-ci-hooks-${crypto.randomBytes(6).toString("hex")}`);
    const client = await helper.helper();
    for (const script of scripts) {
      const to = `${helper.scriptsDir}/${script.rel}`;
      const res = await client.request("write", { path: to, confine: false, mode: 0o500 }, script.content);
      if (!res.ok) throw new Error(`copying the hook script ${script.rel} failed: ${res.header.message}`);
    }
    return helper;
  }

  /** The helper, started again when a hook ended it (`kill -9 -1` as the hooks' user). */
  private helper(): Promise<HelperClient> {
    if (this.closed) return Promise.reject(new SandboxGoneError("the sandbox was disposed"));
    if (this.client?.alive) return Promise.resolve(this.client);
    this.starting ??= this.starter
      .startAs(
        HOOK_USER,
        { HOME: this.home, [STATE_DIR_ENV]: `${this.home}/state`, AGENT_CI_ROOTS: WORKSPACE_ROOT },
        PRELUDE,
      )
      .then((client) => {
        this.client = client;
        return client;
      })
      .finally(() => {
        this.starting = undefined;
      });
    return this.starting;
  }

  async run(request: HookExecRequest): Promise<HookExecResult> {
    const failed = (error: string): HookExecResult => ({
      exitCode: null,
      signal: null,
      timedOut: false,
      stdout: "",
      stderr: "",
      error,
      durationMs: 0,
    });
    let client: HelperClient;
    try {
      client = await this.helper();
    } catch (e) {
      return failed(`the hooks' helper could not be started: ${(e as Error).message}`);
    }
    const env = this.starter.commandEnv({ HOME: this.home, ...request.env });
    let res;
    let ended: string | undefined;
    try {
      res = await client.request(
        "exec",
        {
          script: request.script,
          cwd: WORKSPACE_ROOT,
          env,
          timeoutMs: request.timeoutMs,
          maxOutputBytes: request.maxOutputBytes,
          stdin: true,
          caller: HOOK_CALLER,
        },
        Buffer.from(request.input),
      );
    } catch (e) {
      ended = `the hooks' helper ended during the hook: ${(e as Error).message}`;
    }
    // Also after a hook that ended the helper: what it wrote before is shared by a new one.
    const unshared = await this.share();
    if (!res) return failed(ended ?? "the hooks' helper gave no answer");
    if (!res.ok) return failed(res.header.message);
    const h = res.header;
    const outLen = h.stdoutBytes ?? 0;
    const stderr = res.body.subarray(outLen).toString("utf8");
    return {
      exitCode: h.exitCode,
      signal: h.signal,
      timedOut: Boolean(h.timedOut),
      stdout: res.body.subarray(0, outLen).toString("utf8"),
      // Said beside the hook's own words, never in place of its verdict (a block stays a block).
      stderr: unshared
        ? `${stderr}${stderr && !stderr.endsWith("\n") ? "\n" : ""}agent-ci: ${unshared}\n`
        : stderr,
      ...(h.spawnError ? { error: h.spawnError } : {}),
      durationMs: h.durationMs,
    };
  }

  /**
   * Gives the agent's group what the hooks' user has on what it owns in the workspace (a formatter's private
   * temporary file moved over the original), by a helper started again if the hook ended it. Why it could
   * not, or undefined.
   */
  private async share(): Promise<string | undefined> {
    try {
      const res = await (await this.helper()).request("share-workspace", {});
      return res.ok ? undefined : `sharing what the hook wrote with the agent failed: ${res.header.message}`;
    } catch (e) {
      return `sharing what the hook wrote with the agent failed: ${(e as Error).message}`;
    }
  }

  close(): void {
    this.closed = true;
    this.client?.close();
  }
}
