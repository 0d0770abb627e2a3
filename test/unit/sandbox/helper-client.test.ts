// The host's client of the helper over an in-memory stream standing in for the exec's: requests go out as
// frames with their own ids, answers are matched by id whatever order they come in, and a helper whose
// output is not frames is reported gone, with the reason, to every call waiting on it.
import { spawnSync } from "node:child_process";
import { Duplex, type PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { HelperClient, stderrSummary } from "../../../src/sandbox/helper/client.js";
import { encodeFrame, FrameDecoder } from "../../../src/sandbox/helper/framing.js";
import type { RequestHeader } from "../../../src/sandbox/helper/protocol.js";
import { SandboxGoneError } from "../../../src/sandbox/sandbox.js";

function fakeExec() {
  const requests = new FrameDecoder<RequestHeader<"resolve">>();
  const received: Array<RequestHeader<"resolve">> = [];
  const stream = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, done) {
      received.push(...requests.push(chunk).map((f) => f.header));
      done();
    },
  });
  // What the helper writes is its stdout; the engine's multiplexing is not what is tested here.
  const demux = (s: Duplex, stdout: PassThrough) => s.on("data", (chunk: Buffer) => stdout.write(chunk));
  const client = new HelperClient(stream, demux);
  return { client, received, helperSays: (bytes: Buffer) => stream.push(bytes) };
}

describe("HelperClient", () => {
  it("matches answers to requests by id, in whatever order they come", async () => {
    const { client, received, helperSays } = fakeExec();
    helperSays(encodeFrame({ id: 0, ok: true, ready: true, pid: 1, node: "v18" }));
    await client.ready;
    const a = client.request("resolve", { path: "a", confine: true });
    const b = client.request("resolve", { path: "b", confine: true });
    expect(received.map((r) => [r.op, r.id, r.path])).toEqual([
      ["resolve", 1, "a"],
      ["resolve", 2, "b"],
    ]);
    helperSays(
      Buffer.concat([
        encodeFrame({ id: 2, ok: true, realPath: "/workspace/b" }),
        encodeFrame({ id: 1, ok: false, code: "EOUTSIDE", message: "outside" }),
      ]),
    );
    expect(await b).toMatchObject({ ok: true, header: { realPath: "/workspace/b" } });
    expect(await a).toMatchObject({ ok: false, header: { code: "EOUTSIDE" } });
  });

  it("reports the helper gone, saying why, when what it writes is not frames", async () => {
    const { client, helperSays } = fakeExec();
    helperSays(encodeFrame({ id: 0, ok: true, ready: true, pid: 1, node: "v18" }));
    await client.ready;
    const pending = client.request("resolve", { path: "a", confine: true });
    const junk = Buffer.from("not json");
    const frame = Buffer.alloc(8 + junk.length);
    frame.writeUInt32BE(junk.length, 0);
    junk.copy(frame, 4);
    helperSays(frame);
    await expect(pending).rejects.toThrow(SandboxGoneError);
    await expect(pending).rejects.toThrow(
      /answers could not be read \(a frame's 8-byte header is not JSON\)/,
    );
    expect(client.alive).toBe(false);
    await expect(client.request("resolve", { path: "b", confine: true })).rejects.toThrow(SandboxGoneError);
  });

  it("names what a crashed Node.js helper threw, not the version line its crash output ends with", () => {
    const crash = spawnSync(
      process.execPath,
      ["-e", "require('fs').mkdirSync(process.execPath + '/.agent-ci')"],
      { encoding: "utf8" },
    );
    expect(crash.stderr.trim().split("\n").at(-1)).toMatch(/^Node\.js v/);
    expect(stderrSummary(crash.stderr)).toMatch(/^Error: ENOTDIR: not a directory, mkdir /);
    expect(stderrSummary("one\r\ntwo\n\nthree\nfour\n")).toBe("two | three | four");
  });
});
