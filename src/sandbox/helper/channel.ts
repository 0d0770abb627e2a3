// The helper's direct channel where the engine runs on this machine's kernel and sees its files (a local
// Docker or Podman): a Unix socket this process listens on, in a directory of its own bind-mounted
// read-only into the run's container. The helper connects to it and every request goes over it instead
// of through the engine's exec stream, where each answer crosses containerd's shim and dockerd in
// 32 KiB steps (an 81 KB read took ~8 ms there and ~5 ms here, on a busy two-core machine).
//
// The container sees an empty directory with one socket, and only while a helper is starting: the
// socket is removed once the helper has connected, and a connection must first send the token the
// helper was given on its exec stream. Where the engine does not see this host's files (a remote
// engine, a VM without the path shared), the bind cannot be made or the socket cannot be reached, and
// the helper stays on the exec stream.
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { processAlive } from "../engine/engine.js";
import { FrameDecoder, type Frame } from "./framing.js";
import type { HelloHeader } from "./protocol.js";

/** Where the run's container sees the channel's directory. */
export const CHANNEL_DIR = "/run/agent-ci-channel";
const SOCKET = "helper.sock";
/** The host directories' names: the prefix, the owning process's pid, a random suffix. */
const DIR_PREFIX = "agent-ci-channel-";
export const CHANNEL_SOCKET = `${CHANNEL_DIR}/${SOCKET}`;
/** A hello frame is a short header; a connection sending more before one is not a helper. */
const MAX_HELLO_BYTES = 4096;

/** One helper start's listener: the connection that said the token, and how to stop listening. */
export interface ChannelListener {
  connection: Promise<net.Socket>;
  close: () => void;
}

export class HelperChannel {
  private constructor(
    private readonly dir: string,
    /** Resolves once the leftovers of dead runs are removed (`open`). */
    readonly swept: Promise<void>,
  ) {}

  /**
   * A fresh directory for one run; undefined where this host cannot make one (the helper uses the stream).
   * Its name carries this process's pid: directories left by a run that could not remove its own (killed
   * with SIGKILL, or ended by the watchdog) are removed meanwhile once their process is gone. That sweep
   * lists the temp folder in the background: a busy one (tens of thousands of entries) took tens of ms.
   */
  static open(): HelperChannel | undefined {
    const swept = sweepLeftovers(os.tmpdir());
    try {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${DIR_PREFIX}${process.pid}-`));
      // Any container user may reach the socket (the agent's uid, remapped or not); nobody may list or add.
      fs.chmodSync(dir, 0o711);
      return new HelperChannel(dir, swept);
    } catch {
      return undefined;
    }
  }

  get mount(): Docker.MountSettings {
    return { Type: "bind", Source: this.dir, Target: CHANNEL_DIR, ReadOnly: true };
  }

  /**
   * Listens for one helper: `connection` resolves with the first connection that sends `token` (others are
   * closed); `close` stops listening and removes the socket, whether or not a helper came.
   */
  async listen(token: string): Promise<ChannelListener> {
    const file = path.join(this.dir, SOCKET);
    fs.rmSync(file, { force: true });
    const server = net.createServer();
    /** Connections that have not (yet) said the token: closed with the server. */
    const waiting = new Set<net.Socket>();
    const close = () => {
      server.close();
      for (const socket of waiting) socket.destroy();
      fs.rmSync(file, { force: true });
    };
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(file, () => resolve());
      });
      fs.chmodSync(file, 0o666);
    } catch (e) {
      close();
      throw e;
    }
    const expected = Buffer.from(token);
    const connection = new Promise<net.Socket>((resolve) => {
      server.on("connection", (socket) => {
        waiting.add(socket);
        socket.on("close", () => waiting.delete(socket));
        const decoder = new FrameDecoder<Partial<HelloHeader>>();
        let received = 0;
        const onData = (chunk: Buffer) => {
          received += chunk.length;
          let first: Frame<Partial<HelloHeader>> | undefined;
          try {
            if (received > MAX_HELLO_BYTES) throw new Error("too long for a hello");
            [first] = decoder.push(chunk);
          } catch {
            socket.destroy(); // not a helper: what it sent is not a hello frame
            return;
          }
          if (!first) return;
          socket.off("data", onData);
          socket.pause(); // until the helper client reads it: nothing else comes before a request anyway
          const hello = Buffer.from(String(first.header.hello ?? ""));
          if (hello.length === expected.length && crypto.timingSafeEqual(hello, expected)) {
            waiting.delete(socket);
            resolve(socket);
          } else socket.destroy();
        };
        socket.on("data", onData);
        socket.on("error", () => socket.destroy());
      });
    });
    return { connection, close };
  }

  close(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Removes the channel directories of runs whose process is gone; never fails. */
async function sweepLeftovers(parent: string): Promise<void> {
  let names: string[];
  try {
    names = (await fs.promises.readdir(parent)).filter((name) => name.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(name.slice(DIR_PREFIX.length).split("-", 1)[0]);
    if (!pid || processAlive(pid)) continue;
    // Another user's, or removed meanwhile by another run's sweep: left alone.
    await fs.promises.rm(path.join(parent, name), { recursive: true, force: true }).catch(() => undefined);
  }
}

/** A token for one helper start. */
export const channelToken = (): string => crypto.randomBytes(24).toString("hex");
