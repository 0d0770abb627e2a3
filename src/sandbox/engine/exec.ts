// The engine's execs, made one way: the long-lived ones (the helpers, the egress proxy) speak over their
// attached streams; a one-shot command (the copy-in, /tmp's mode, the CA, killing everything after
// --setup) is what comes before the helper or must not go through it.
import { PassThrough, type Duplex } from "node:stream";
import type Docker from "dockerode";
import { BASE_ENV, envList } from "../container/command-env.js";
import { withTimeout } from "./engine.js";
import { TOOLBELT_BIN } from "../image/toolbelt.js";

/** What an exec runs: as whom, with what environment, and whether its stdin is attached. */
export interface ExecSpec {
  cmd: string[];
  user: string;
  env: string[];
  stdin: boolean;
  workingDir?: string;
}

/** An exec created and started with its streams attached (`Tty: false`: stdout and stderr multiplexed). */
export async function startExec(
  container: Docker.Container,
  { cmd, user, env, stdin, workingDir }: ExecSpec,
): Promise<{ exec: Docker.Exec; stream: Duplex }> {
  const exec = await withTimeout(
    "an exec create",
    container.exec({
      Cmd: cmd,
      AttachStdin: stdin,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      User: user,
      ...(workingDir ? { WorkingDir: workingDir } : {}),
      Env: env,
    }),
  );
  const stream = (await withTimeout("an exec start", exec.start({ hijack: true, stdin }))) as Duplex;
  return { exec, stream };
}

/** A command run once by the engine's exec (not the helper), its output's tail kept for an error. */
export async function oneShotExec(
  docker: Docker,
  container: Docker.Container,
  cmd: string[],
  user: string,
  stdin?: (sink: NodeJS.WritableStream) => Promise<void>,
): Promise<{ exitCode: number; output: string }> {
  const { exec, stream } = await startExec(container, {
    cmd,
    user,
    env: envList({ ...BASE_ENV, PATH: TOOLBELT_BIN }),
    stdin: Boolean(stdin),
  });
  const out = new PassThrough();
  let output = "";
  out.on("data", (d: Buffer) => {
    output = (output + d.toString("utf8")).slice(-8000);
  });
  docker.modem.demuxStream(stream, out, out);
  const ended = new Promise<void>((resolve, reject) => {
    stream.on("end", resolve);
    stream.on("close", resolve);
    stream.on("error", reject);
  });
  if (stdin) await stdin(stream);
  await ended;
  const info = await withTimeout("an exec inspect", exec.inspect());
  return { exitCode: info.ExitCode ?? -1, output };
}
