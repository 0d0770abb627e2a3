// The helper's direct channel on the host side, with real Unix sockets and no engine: only a connection
// that says the token first is handed over; anything else is closed without harm; nothing is left behind.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CHANNEL_DIR, channelToken, HelperChannel } from "../../../src/sandbox/helper/channel.js";
import { encodeFrame } from "../../../src/sandbox/helper/framing.js";

let channel: HelperChannel | undefined;
afterEach(() => channel?.close());

function open(): { channel: HelperChannel; dir: string; socket: string } {
  channel = HelperChannel.open();
  if (!channel) throw new Error("no channel directory could be made");
  const dir = channel.mount.Source!;
  return { channel, dir, socket: path.join(dir, "helper.sock") };
}

/** Connects, sends `bytes`, and resolves when the server closes the connection. */
function closedAfterSending(socketPath: string, bytes: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const client = net.connect(socketPath, () => client.write(bytes));
    client.on("error", () => {}); // a reset as the server destroys it is the point
    client.on("close", () => resolve());
  });
}

describe("HelperChannel", () => {
  it("is a read-only bind of a directory only others can pass through", () => {
    const { channel, dir } = open();
    expect(channel.mount).toEqual({ Type: "bind", Source: dir, Target: CHANNEL_DIR, ReadOnly: true });
    expect(fs.statSync(dir).mode & 0o777).toBe(0o711);
  });

  it("hands over the connection that says the token, after closing those that do not", async () => {
    const { channel, socket } = open();
    const token = channelToken();
    const listening = await channel.listen(token);
    try {
      expect(fs.statSync(socket).mode & 0o777).toBe(0o666);
      await closedAfterSending(socket, encodeFrame({ id: 0, hello: channelToken() }));
      await closedAfterSending(socket, encodeFrame({ id: 0, hello: token.slice(1) }));
      await closedAfterSending(socket, encodeFrame({ id: 0 }));
      // Not a frame at all: a header that is not JSON, and a header length that never comes.
      const junk = Buffer.alloc(12);
      junk.writeUInt32BE(4, 0);
      junk.write("{{{{", 4);
      await closedAfterSending(socket, junk);
      const huge = Buffer.alloc(64 * 1024, 0x41);
      huge.writeUInt32BE(0x7fffffff, 0);
      await closedAfterSending(socket, huge);

      const client = net.connect(socket, () => client.write(encodeFrame({ id: 0, hello: token })));
      const server = await listening.connection;
      // The handed-over connection carries what comes next, from the first byte.
      const echoed = new Promise<string>((resolve) =>
        server.once("data", (d: Buffer) => resolve(d.toString())),
      );
      server.resume();
      client.write("next");
      expect(await echoed).toBe("next");
      client.destroy();
      server.destroy();
    } finally {
      listening.close();
    }
    expect(fs.existsSync(socket)).toBe(false);
  });

  it("leaves nothing behind when closed, a helper having come or not", async () => {
    const { channel, dir, socket } = open();
    const listening = await channel.listen(channelToken());
    expect(fs.existsSync(socket)).toBe(true);
    // A connection that says nothing is closed with the listener, not left open.
    const silent = net.connect(socket);
    silent.on("error", () => {});
    const silentClosed = new Promise<void>((resolve) => silent.on("close", () => resolve()));
    await new Promise<void>((resolve) => silent.on("connect", () => resolve()));
    listening.close();
    await silentClosed;
    expect(fs.existsSync(socket)).toBe(false);
    channel.close();
    expect(fs.existsSync(dir)).toBe(false);
  });

  it("removes the directories of runs whose process is gone, and only those", async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-channel-test-"));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = parent;
    try {
      const gone = spawnSync("true").pid; // exited and reaped: no process has this pid now (or soon after)
      const names = [
        `agent-ci-channel-${gone}-abc123`,
        `agent-ci-channel-${process.pid}-def456`,
        "agent-ci-channel-notapid",
        "other",
      ];
      for (const name of names) fs.mkdirSync(path.join(parent, name));
      fs.writeFileSync(path.join(parent, names[0]!, "helper.sock"), "");
      const { dir, channel: opened } = open();
      await opened.swept;
      expect(path.dirname(dir)).toBe(parent);
      expect(path.basename(dir)).toMatch(new RegExp(`^agent-ci-channel-${process.pid}-`));
      expect(fs.readdirSync(parent).sort()).toEqual([...names.slice(1), path.basename(dir)].sort());
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      channel?.close();
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });
});
