// Long-lived processes in the run's container that are not the agent's: an MCP server is one. Each runs
// as a user of its own (uid SERVICE_UID_BASE + n, the agent's group), so the agent's commands cannot read
// its environment (/proc/<pid>/environ, `ps e`), trace it or signal it, and one service cannot signal
// another; the shared group is how both may write the workspace (docs/mcp.md). A service starts in its
// own home, never in /workspace: a pull request's files there (`server.py` for `python3 -m server`, an
// `.npmrc` or `node_modules/` for `npx`) must not become the server's code or configuration. The home is
// a tmpfs of its own owned by its user, below read-only directories only, so nothing the agent writes
// lies on the path npm walks up to find a project (and its `.npmrc`): a tmpfs of the container where the
// engine takes its owner options (Docker), a tmpfs volume of the run where it takes them only there (Podman
// 4.3). A home in /tmp would not do: the agent writes /tmp. A service is spoken to over its own
// exec stream, held open for the whole run: stdin, and stdout and stderr demultiplexed. This interface is
// all that leaves src/sandbox/; the engine's types stay inside.
import type { Readable, Writable } from "node:stream";
import type Docker from "dockerode";
import { PassThrough, type Duplex } from "node:stream";
import { createTmpfsVolume, volumeMount, withTimeout } from "../engine/engine.js";
import { AGENT_UID } from "../engine/profile.js";
import { toolbeltProgram } from "../image/toolbelt.js";

/** Services' users: 2000, 2001, … (below the range images give their own users, above the agent's and keeper's). */
export const SERVICE_UID_BASE = 2000;
/**
 * Each service's home and working directory: a tmpfs the engine mounts for it (its user's, mode 0700) in the
 * read-only root, so neither it nor any directory above it is the agent's to write.
 */
export const serviceHome = (index: number): string => `/run/agent-ci-service-${index}`;

/** A home's tmpfs options but its size: its user's, the agent's group, no one else's; no devices, no setuid. */
const homeOptions = (index: number): string =>
  `rw,exec,nosuid,nodev,uid=${SERVICE_UID_BASE + index},gid=${AGENT_UID},mode=0700`;

const indices = (count: number): number[] => Array.from({ length: count }, (_, index) => index);

/** The homes as the container's own tmpfs mounts, for a run with `count` services (container/spec.ts). */
export function serviceHomeMounts(count: number, sizeOption: string): Record<string, string> {
  return Object.fromEntries(
    indices(count).map((index) => [serviceHome(index), `${homeOptions(index)},size=${sizeOption}`]),
  );
}

/** A home's tmpfs volume (engines with `serviceHomes: "volume"`), by name (the watchdog removes it). */
export const serviceHomeVolumeName = (runId: string, index: number): string =>
  `agent-ci-${runId}-service-${index}`;

/** The homes' volumes, mounted at the homes (container/spec.ts). */
export function serviceHomeVolumeMounts(runId: string, count: number): Docker.MountSettings[] {
  return indices(count).map((index) => volumeMount(serviceHomeVolumeName(runId, index), serviceHome(index)));
}

/**
 * Creates the homes' tmpfs volumes. No size: Podman's local driver takes `size` for a disk quota, which a
 * tmpfs has not; what a service writes there counts against the container's memory limit.
 */
export async function createServiceHomeVolumes(docker: Docker, runId: string, count: number): Promise<void> {
  await Promise.all(
    indices(count).map((index) =>
      createTmpfsVolume(docker, runId, serviceHomeVolumeName(runId, index), homeOptions(index)),
    ),
  );
}

/**
 * What every service's environment sets, over the sandbox's: Python leaves the working directory off
 * `sys.path` (PYTHONSAFEPATH), and npm reads its user config from the service's home, so the only `.npmrc`
 * it reads besides the image's own is the service's.
 */
export function serviceEnv(index: number): Record<string, string> {
  const home = serviceHome(index);
  return { HOME: home, PYTHONSAFEPATH: "1", npm_config_userconfig: `${home}/.npmrc` };
}

export interface ServiceRequest {
  /** Which service of the run (0, 1, …): its user is SERVICE_UID_BASE + index, its home serviceHome(index). */
  index: number;
  /** A name for messages ([A-Za-z0-9_-]). */
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
 * The service's command behind a small bash prelude: its home refused unless it is the service's own (the
 * mount that makes it so is missing), a umask that keeps what it writes group-writable (the agent may edit
 * it), its home as working directory, then `exec`. The workspace is where the server's arguments say
 * (`/workspace`), never where it starts.
 */
export function serviceArgv(request: ServiceRequest): string[] {
  const prelude = [
    '{ [ -O "$HOME" ] || { echo "agent-ci: $HOME is not this server\'s own" >&2; exit 126; }; }',
    'umask 002 && cd "$HOME" && exec "$@"',
  ].join(" && ");
  return [toolbeltProgram("bash"), "-c", prelude, "agent-ci-service", request.command, ...request.args];
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
