// The helper's framing, the one implementation the host and the in-container helper share: frames are
// found whatever the chunking of the stream, bodies of any size come through whole, and a stream that is
// not made of frames is refused with a clear error rather than read out of step.
import { describe, expect, it } from "vitest";
import { encodeFrame, type Frame, FrameDecoder, FrameError } from "../../../src/sandbox/helper/framing.js";

type Header = { id: number } & Record<string, unknown>;

// Header text with what a command's environment may hold: NUL, \r, non-ASCII.
const frames = [
  encodeFrame({ id: 1, ok: true }),
  encodeFrame({ id: 2, ok: true, stat: { size: 3 } }, Buffer.from("abc")),
  encodeFrame({ id: 3, ok: false, code: "ENOENT", message: "a\0b\r\nc é ✓" }, Buffer.alloc(0)),
  encodeFrame({ id: 4, ok: true }, Buffer.alloc(300_000, 7)),
  encodeFrame({ id: 5 }, Buffer.from([0, 0, 0, 0, 0xff])),
];
const stream = Buffer.concat(frames);

function decodeChunks(chunks: Buffer[]): Array<Frame<Header>> {
  const decoder = new FrameDecoder<Header>();
  return chunks.flatMap((chunk) => decoder.push(chunk));
}

function chunked(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

function expectAll(out: Array<Frame<Header>>): void {
  expect(out.map((f) => f.header.id)).toEqual([1, 2, 3, 4, 5]);
  expect(out[1]!.body.toString()).toBe("abc");
  expect(out[1]!.header).toMatchObject({ stat: { size: 3 } });
  expect(out[2]!.header.message).toBe("a\0b\r\nc é ✓");
  expect(out[2]!.body.length).toBe(0);
  expect(out[3]!.body.equals(Buffer.alloc(300_000, 7))).toBe(true);
  expect([...out[4]!.body]).toEqual([0, 0, 0, 0, 0xff]);
}

describe("encodeFrame", () => {
  it("writes the header's length, the header, the body's length and the body", () => {
    const frame = encodeFrame({ id: 7 }, Buffer.from("xy"));
    const json = Buffer.from('{"id":7}');
    expect(frame.readUInt32BE(0)).toBe(json.length);
    expect(frame.subarray(4, 4 + json.length).equals(json)).toBe(true);
    expect(frame.readUInt32BE(4 + json.length)).toBe(2);
    expect(frame.subarray(8 + json.length).toString()).toBe("xy");
  });

  it("counts the header in bytes, not characters", () => {
    const frame = encodeFrame({ s: "é✓" });
    expect(frame.readUInt32BE(0)).toBe(Buffer.byteLength(JSON.stringify({ s: "é✓" })));
  });
});

describe("FrameDecoder", () => {
  it("decodes many frames from one chunk", () => {
    expectAll(decodeChunks([stream]));
  });

  it.each([1, 3, 7, 64, 4096, 65_536])("decodes every frame from %i-byte chunks", (size) => {
    expectAll(decodeChunks(chunked(stream, size)));
  });

  it("decodes the frames whichever byte the stream is split at", () => {
    // The small frames and the first bytes of the large one: every split point through lengths and headers.
    const small = Buffer.concat([frames[0]!, frames[1]!, frames[2]!, frames[4]!]);
    for (let at = 0; at <= small.length; at++) {
      const out = decodeChunks([small.subarray(0, at), small.subarray(at)]);
      expect(
        out.map((f) => f.header.id),
        `split at byte ${at}`,
      ).toEqual([1, 2, 3, 5]);
      expect(out[1]!.body.toString()).toBe("abc");
      expect([...out[3]!.body]).toEqual([0, 0, 0, 0, 0xff]);
    }
  });

  it("returns nothing until a frame is whole, then the frame", () => {
    const decoder = new FrameDecoder<Header>();
    const big = frames[3]!;
    expect(decoder.push(big.subarray(0, 2))).toEqual([]);
    expect(decoder.push(big.subarray(2, 6))).toEqual([]);
    expect(decoder.push(big.subarray(6, 100_000))).toEqual([]);
    expect(decoder.push(big.subarray(100_000, big.length - 1))).toEqual([]);
    const [frame, ...rest] = decoder.push(Buffer.concat([big.subarray(big.length - 1), frames[0]!]));
    expect(frame!.header.id).toBe(4);
    expect(rest.map((f) => f.header.id)).toEqual([1]);
  });

  it("carries a large body whole, in the chunks a pipe delivers", () => {
    const body = Buffer.alloc(24 << 20);
    for (let i = 0; i < body.length; i += 4093) body[i] = i % 251;
    const frame = encodeFrame({ id: 9, ok: true, bytes: body.length }, body);
    const out = decodeChunks(chunked(frame, 65_536));
    expect(out).toHaveLength(1);
    expect(out[0]!.header).toEqual({ id: 9, ok: true, bytes: body.length });
    expect(out[0]!.body.equals(body)).toBe(true);
  });

  it("gives each body its own bytes, not a view of the chunk it came in", () => {
    const chunk = Buffer.from(frames[1]!);
    const [frame] = decodeChunks([chunk]);
    chunk.fill(0);
    expect(frame!.body.toString()).toBe("abc");
  });

  it("carries a header of megabytes (a long script) whole", () => {
    const script = "x".repeat(5 << 20);
    const out = decodeChunks(chunked(encodeFrame({ id: 1, script }), 65_536));
    expect(out[0]!.header.script).toBe(script);
  });

  function rawFrame(header: string): Buffer {
    const h = Buffer.from(header);
    const frame = Buffer.alloc(8 + h.length);
    frame.writeUInt32BE(h.length, 0);
    h.copy(frame, 4);
    frame.writeUInt32BE(0, 4 + h.length);
    return frame;
  }

  it.each([
    ["not JSON", '{"id":1,"env":{"TOKEN":"s3cr', /a frame's 28-byte header is not JSON/],
    ["a JSON string", '"ready"', /not an object \(string\)/],
    ["a JSON array", "[1,2]", /not an object \(an array\)/],
    ["JSON null", "null", /not an object \(null\)/],
  ])("refuses a header that is %s with a FrameError", (_what, header, message) => {
    const decoder = new FrameDecoder<Header>();
    let error: unknown;
    try {
      decoder.push(frames[0]!.subarray(0, 3));
      decoder.push(Buffer.concat([frames[0]!.subarray(3), rawFrame(header)]));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FrameError);
    expect((error as Error).message).toMatch(message);
    // The header's text is not repeated: a request's header carries the command's environment.
    expect((error as Error).message).not.toContain("s3cr");
  });
});
