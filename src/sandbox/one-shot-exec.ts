// A command run once by the engine's exec rather than through the helper: for what comes before the helper
// (the copy-in, /tmp's mode, the CA) and for killing everything after --setup.
import { PassThrough, type Duplex } from "node:stream";
import type Docker from "dockerode";
import { BASE_ENV, envList } from "./command-env.js";
import { withTimeout } from "./engine.js";
import { TOOLBELT_BIN } from "./toolbelt.js";

/** A command run once by the engine's exec (not the helper), its output's tail kept for an error. */
export async function oneShotExec(
  docker: Docker,
  container: Docker.Container,
  cmd: string[],
  user: string,
  stdin?: (sink: NodeJS.WritableStream) => Promise<void>,
): Promise<{ exitCode: number; output: string }> {
  const exec = await withTimeout(
    "an exec create",
    container.exec({
      Cmd: cmd,
      AttachStdin: Boolean(stdin),
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      User: user,
      Env: envList({ ...BASE_ENV, PATH: TOOLBELT_BIN }),
    }),
  );
  const stream = (await withTimeout(
    "an exec start",
    exec.start({ hijack: true, stdin: Boolean(stdin) }),
  )) as Duplex;
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
