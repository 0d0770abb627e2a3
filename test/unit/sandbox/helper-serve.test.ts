// The helper's side of a connection (helper/serve.ts), over in-memory streams: requests are read with the
// shared framing however the bytes arrive, each goes to its operation's handler, and every answer, or
// failure, comes back with its request's id, in the order the handlers finish.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { encodeFrame, FrameDecoder, FrameError } from "../../../src/sandbox/helper/framing.js";
import type { RawFrame } from "../../../src/sandbox/helper/protocol.js";
import { fail, type Handlers, serve } from "../../../src/sandbox/helper/serve.js";

type Answer = RawFrame["header"] & Record<string, unknown>;

function connection(handlers: Partial<Handlers>) {
  const input = new PassThrough();
  const output = new PassThrough();
  const broken: FrameError[] = [];
  serve(handlers as Handlers, input, output, (e) => broken.push(e));
  const decoder = new FrameDecoder<Answer>();
  const answers: Array<{ header: Answer; body: Buffer }> = [];
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  output.on("data", (chunk: Buffer) => {
    answers.push(...decoder.push(chunk));
    for (const w of waiting) if (answers.length >= w.count) w.resolve();
  });
  const answered = (count: number) =>
    new Promise<void>((resolve) => {
      if (answers.length >= count) resolve();
      else waiting.push({ count, resolve });
    });
  return { input, answers, answered, broken };
}

describe("the helper's serve", () => {
  it("answers each request with its id, whichever byte the requests are split at", async () => {
    const requests = Buffer.concat([
      encodeFrame({ op: "resolve", id: 1, path: "a", confine: true }),
      encodeFrame({ op: "write", id: 2, path: "b", confine: true }, Buffer.from("body")),
    ]);
    for (let at = 0; at <= requests.length; at += 7) {
      const { input, answers, answered } = connection({
        resolve: (req) => ({ header: { realPath: `/workspace/${req.path}` } }),
        write: (req, body) => ({
          header: { stat: null as never },
          body: Buffer.concat([Buffer.from(`${req.path}:`), body]),
        }),
      });
      input.write(requests.subarray(0, at));
      input.write(requests.subarray(at));
      await answered(2);
      expect(answers.map((a) => a.header)).toEqual([
        { id: 1, ok: true, realPath: "/workspace/a" },
        { id: 2, ok: true, stat: null },
      ]);
      expect(answers[1]!.body.toString()).toBe("b:body");
    }
  });

  it("serves requests concurrently: a quick answer is not held behind a slow one", async () => {
    let release: () => void = () => {};
    const slow = new Promise<void>((resolve) => (release = resolve));
    const { input, answers, answered } = connection({
      "bg-read": async () => {
        await slow;
        return { header: { status: "running", exitCode: null, signal: null, runtimeMs: 1 } };
      },
      "bg-kill": () => ({ header: {} }),
    });
    input.write(
      Buffer.concat([
        encodeFrame({ op: "bg-read", id: 1, job: "x" }),
        encodeFrame({ op: "bg-kill", id: 2, job: "x" }),
      ]),
    );
    await answered(1);
    expect(answers.map((a) => a.header.id)).toEqual([2]);
    release();
    await answered(2);
    expect(answers.map((a) => a.header.id)).toEqual([2, 1]);
  });

  it("answers a failure with its code: the helper's own, Node's, or EHELPER", async () => {
    const { input, answers, answered } = connection({
      stat: () => {
        throw fail("EOUTSIDE", "outside the workspace");
      },
      read: () => {
        throw Object.assign(new Error("ENOENT: no such file"), { code: "ENOENT" });
      },
      remove: async () => {
        throw new Error("no code");
      },
    });
    input.write(
      Buffer.concat([
        encodeFrame({ op: "stat", id: 1, path: "x", confine: true }),
        encodeFrame({ op: "read", id: 2, path: "x", confine: true }),
        encodeFrame({ op: "remove", id: 3, path: "x", confine: true }),
        encodeFrame({ op: "no-such-op", id: 4 }),
        encodeFrame({ op: "toString", id: 5 }),
      ]),
    );
    await answered(5);
    const byId = new Map(answers.map((a) => [a.header.id, a.header]));
    expect(byId.get(1)).toEqual({ id: 1, ok: false, code: "EOUTSIDE", message: "outside the workspace" });
    expect(byId.get(2)).toEqual({ id: 2, ok: false, code: "ENOENT", message: "ENOENT: no such file" });
    expect(byId.get(3)).toEqual({ id: 3, ok: false, code: "EHELPER", message: "no code" });
    expect(byId.get(4)).toMatchObject({
      ok: false,
      code: "EBADOP",
      message: expect.stringContaining("no-such-op"),
    });
    expect(byId.get(5)).toMatchObject({ ok: false, code: "EBADOP" });
  });

  it("says the stream is broken when what arrives is not a frame", async () => {
    const { input, broken } = connection({});
    const junk = Buffer.from("\0\0\0\x03abc\0\0\0\0");
    const gone = new Promise<void>((resolve) => input.once("data", () => setImmediate(resolve)));
    input.write(junk);
    await gone;
    expect(broken).toHaveLength(1);
    expect(broken[0]).toBeInstanceOf(FrameError);
  });
});
