// The host side of the helper's framing: frames are found whatever the chunking of the stream.
import { describe, expect, it } from "vitest";
import { encodeFrame, FrameDecoder } from "../../src/sandbox/helper-client.js";

const frames = [
  encodeFrame({ id: 1, ok: true }),
  encodeFrame({ id: 2, ok: true, stat: { size: 3 } }, Buffer.from("abc")),
  encodeFrame({ id: 3, ok: false, code: "ENOENT" }, Buffer.alloc(0)),
  encodeFrame({ id: 4, ok: true }, Buffer.alloc(300_000, 7)),
];
const stream = Buffer.concat(frames);

function decodeIn(chunkSize: number) {
  const decoder = new FrameDecoder();
  const out = [];
  for (let at = 0; at < stream.length; at += chunkSize)
    out.push(...decoder.push(stream.subarray(at, at + chunkSize)));
  return out;
}

describe("FrameDecoder", () => {
  it.each([1, 3, 7, 64, 4096, 65_536, stream.length])("decodes every frame from %i-byte chunks", (size) => {
    const out = decodeIn(size);
    expect(out.map((f) => f.header.id)).toEqual([1, 2, 3, 4]);
    expect(out[1]!.body.toString()).toBe("abc");
    expect(out[1]!.header).toMatchObject({ stat: { size: 3 } });
    expect(out[2]!.body.length).toBe(0);
    expect(out[3]!.body.equals(Buffer.alloc(300_000, 7))).toBe(true);
  });

  it("returns nothing until a frame is whole, then the frame", () => {
    const decoder = new FrameDecoder();
    const big = frames[3]!;
    expect(decoder.push(big.subarray(0, 2))).toEqual([]);
    expect(decoder.push(big.subarray(2, 100_000))).toEqual([]);
    expect(decoder.push(big.subarray(100_000, big.length - 1))).toEqual([]);
    expect(decoder.push(big.subarray(big.length - 1)).map((f) => f.header.id)).toEqual([4]);
  });
});
