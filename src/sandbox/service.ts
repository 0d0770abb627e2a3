// Long-lived processes in the run's container that are not the agent's: an MCP server is one. Each runs
// as a user of its own (uid SERVICE_UID_BASE + n, the agent's group), so the agent's commands cannot read
// its environment (/proc/<pid>/environ, `ps e`), trace it or signal it, and one service cannot signal
// another; the shared group is how both may write the workspace (README "MCP servers"). A service is
// spoken to over its own exec stream, held open for the whole run: stdin, and stdout and stderr
// demultiplexed. This interface is all that leaves src/sandbox/; the engine's types stay inside.
import type { Readable, Writable } from "node:stream";
import type Docker from "dockerode";
import { PassThrough, type Duplex } from "node:stream";
import { withTimeout } from "./engine.js";
import { AGENT_UID } from "./engine-profile.js";
import { toolbeltProgram } from "./toolbelt.js";
import { WORKSPACE_ROOT } from "./sandbox.js";

/** Services' users: 2000, 2001, … (below the range images give their own users, above the agent's and keeper's). */
export const SERVICE_UID_BASE = 2000;
/** Each service's home, made by itself at its start (mode 0700, in /tmp whose sticky bit keeps it its own). */
export const serviceHome = (name: string): string => `/tmp/agent-ci-service-${name}`;

export interface ServiceRequest {
  /** Which service of the run (0, 1, …): its user is SERVICE_UID_BASE + index. */
  index: number;
  /** A name for its home folder and messages ([A-Za-z0-9_-]). */
  name: string;
  command: string;
  args: string[];
  /** The service's own variables (secrets among them); on top of the sandbox's base environment. */
  env: Record<string, string>;
  /** The egress ledger's caller for its connections (network allowlist). */
  caller: string;
}

export interface ServiceProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Resolves with the exit code (null when it could not be read) once the process has ended. */
  readonly exited: Promise<number | null>;
  /** Ends the service and everything it started (every process of its user). */
  kill(): Promise<void>;
}

export interface ServiceHost {
  startService(request: ServiceRequest): Promise<ServiceProcess>;
}

/** The user (uid:gid) a service runs as: its own uid, the agent's group. */
export const serviceUser = (index: number): string => `${SERVICE_UID_BASE + index}:${AGENT_UID}`;

/**
 * The service's command behind a small bash prelude: its own home (0700), a umask that keeps what it
 * writes group-writable (the agent may edit it), the workspace as working directory, then `exec`.
 */
export function serviceArgv(request: ServiceRequest): string[] {
  const prelude = 'mkdir -p -m 700 "$HOME" && umask 002 && cd "$0" && exec "$@"';
  return [toolbeltProgram("bash"), "-c", prelude, WORKSPACE_ROOT, request.command, ...request.args];
}

/**
 * Starts `argv` as `user` in `container` with stdin, stdout and stderr attached (no TTY: the streams stay
 * apart). `kill` runs `kill -9 -1` as that user, which ends only its processes.
 */
export async function startServiceExec(
  container: Docker.Container,
  options: { argv: string[]; user: string; env: Record<string, string> },
): Promise<ServiceProcess> {
  const exec = await withTimeout(
    "an exec create",
    container.exec({
      Cmd: options.argv,
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      User: options.user,
      WorkingDir: "/",
      Env: Object.entries(options.env).map(([k, v]) => `${k}=${v}`),
    }),
  );
  const stream = (await withTimeout("an exec start", exec.start({ hijack: true, stdin: true }))) as Duplex;
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  (container.modem as Docker["modem"]).demuxStream(stream, stdout, stderr);
  const exited = new Promise<number | null>((resolve) => {
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      stdout.end();
      stderr.end();
      withTimeout("an exec inspect", exec.inspect(), 10_000).then(
        (info) => resolve(info.ExitCode ?? null),
        () => resolve(null),
      );
    };
    stream.on("end", end);
    stream.on("close", end);
    stream.on("error", end);
  });
  const stdin = new PassThrough();
  stdin.pipe(stream);
  stream.on("error", () => stdin.destroy());
  return {
    stdin,
    stdout,
    stderr,
    exited,
    async kill() {
      try {
        const killer = await withTimeout(
          "an exec create",
          container.exec({
            Cmd: [toolbeltProgram("bash"), "-c", "kill -9 -1 2>/dev/null; true"],
            AttachStdout: true,
            AttachStderr: true,
            Tty: false,
            User: options.user,
          }),
        );
        const done = (await withTimeout(
          "an exec start",
          killer.start({ hijack: true, stdin: false }),
        )) as Duplex;
        done.resume();
        await withTimeout(
          "a kill",
          new Promise<void>((resolve) => {
            done.on("end", resolve);
            done.on("close", resolve);
            done.on("error", () => resolve());
          }),
          10_000,
        );
      } catch {
        // The container is gone already (its processes with it).
      }
      stream.destroy();
      await withTimeout("a service's end", exited, 10_000).catch(() => null);
    },
  };
}
