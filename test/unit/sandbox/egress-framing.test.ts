// The egress proxy's framing rules (framing.ts) and the masking of an injected value in what comes back
// (scrub.ts), as pure functions; egress-smuggling.test.ts drives them with raw bytes through the proxy.
import { describe, expect, it } from "vitest";
import { forwardable, requestFraming, withFraming } from "../../../src/sandbox/egress/http-framing.js";
import { acceptEncoding, decodersFor, MaskStream } from "../../../src/sandbox/egress/scrub.js";

const request = (rawHeaders: string[], httpVersion = "1.1") => ({ httpVersion, rawHeaders });

describe("requestFraming", () => {
  it.each([
    [[], { kind: "none" }],
    [["Content-Length", "0"], { kind: "length", length: 0 }],
    [["content-length", " 12 "], { kind: "length", length: 12 }],
    [["Transfer-Encoding", "Chunked"], { kind: "chunked" }],
    [["Host", "a", "Transfer-Encoding", "chunked "], { kind: "chunked" }],
  ])("reads %j", (raw, framing) => {
    expect(requestFraming(request(raw))).toEqual(framing);
  });

  it.each([
    [
      ["Content-Length", "1", "Transfer-Encoding", "chunked"],
      "1.1",
      /both Content-Length and Transfer-Encoding/,
    ],
    [["Transfer-Encoding", "gzip, chunked"], "1.1", /other than chunked/],
    [["Transfer-Encoding", ""], "1.1", /other than chunked/],
    [["Transfer-Encoding", "chunked", "Transfer-Encoding", "chunked"], "1.1", /other than chunked/],
    [["Transfer-Encoding", "chunked"], "1.0", /HTTP\/1\.0/],
    [["Content-Length", "1", "Content-Length", "1"], "1.1", /more than one Content-Length/],
    [["Content-Length", "1,1"], "1.1", /malformed Content-Length/],
    [["Content-Length", "-1"], "1.1", /malformed Content-Length/],
    [["Content-Length", "9999999999999999"], "1.1", /malformed Content-Length/],
    [["Host", "a", "host", "b"], "1.1", /more than one Host/],
    [["X-A", "one\r\n two"], "1.1", /line break/],
    [[], "0.9", /HTTP\/0\.9/],
  ])("refuses %j in HTTP/%s with a 400", (raw, version, reason) => {
    expect(requestFraming(request(raw, version))).toEqual({
      status: 400,
      reason: expect.stringMatching(reason),
    });
  });

  it("frames what goes on: a length, or chunks, never both, and nothing for no body", () => {
    const headers = forwardable({ "content-length": "5", "transfer-encoding": "chunked", accept: "*/*" });
    expect(headers).toEqual({ accept: "*/*" });
    expect(withFraming(headers, { kind: "length", length: 5 })).toEqual({
      accept: "*/*",
      "content-length": "5",
    });
    expect(withFraming(headers, { kind: "chunked" })).toEqual({
      accept: "*/*",
      "transfer-encoding": "chunked",
    });
    expect(withFraming(headers, { kind: "none" })).toEqual({ accept: "*/*" });
  });

  it("drops the headers a Connection header names, as hop-by-hop", () => {
    expect(forwardable({ connection: "close, X-Hop", "x-hop": "1", "x-end": "2" })).toEqual({ "x-end": "2" });
  });
});

describe("content codings", () => {
  it.each([
    [undefined, "identity"],
    ["gzip, deflate, br, zstd", "gzip, deflate, br"],
    ["br;q=1.0, gzip;q=0.5, *;q=0.1", "br;q=1.0, gzip;q=0.5"],
    ["gzip;q=0, zstd", "identity"],
    ["*", "identity"],
  ])("asks the host for %j as %j", (given, sent) => {
    expect(acceptEncoding(given)).toBe(sent);
  });

  it("decodes the codings it asked for, and names one it cannot read", () => {
    expect(decodersFor(undefined)).toEqual([]);
    expect(decodersFor("identity")).toEqual([]);
    expect(decodersFor("gzip, br")).toHaveLength(2);
    expect(decodersFor("gzip, zstd")).toBe("a content coding the proxy does not read (zstd)");
  });
});

/** The stream's output for `chunks`, and how many values it masked. */
async function masked(patterns: string[], chunks: string[]): Promise<{ text: string; found: number[] }> {
  const found: number[] = [];
  const stream = new MaskStream(
    patterns.map((p) => Buffer.from(p)),
    (index) => found.push(index),
  );
  const out: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => out.push(chunk));
  const done = new Promise((resolve) => stream.on("end", resolve));
  for (const chunk of chunks) stream.write(Buffer.from(chunk));
  stream.end();
  await done;
  return { text: Buffer.concat(out).toString(), found };
}

describe("MaskStream", () => {
  const value = "npm_SplitAcrossChunks01";
  const body = `{"echo":"Bearer ${value}","again":"${value}"}`;
  const expected = body.split(value).join("*".repeat(value.length));

  it("masks a value split across two chunks at every place, keeping the length", async () => {
    for (let cut = 1; cut < body.length; cut++) {
      const { text, found } = await masked([value], [body.slice(0, cut), body.slice(cut)]);
      expect(text, `cut at ${cut}`).toBe(expected);
      expect(found).toEqual([0, 0]);
    }
  });

  it("masks a value sent one byte at a time, and several values", async () => {
    expect((await masked([value], [...body])).text).toBe(expected);
    const other = "dXNlcjpucG1fU3BsaXQ=";
    const { text, found } = await masked([value, other], [`${body} Basic ${other}`]);
    expect(text).toBe(`${expected} Basic ${"*".repeat(other.length)}`);
    expect(found.sort()).toEqual([0, 0, 1]);
  });

  it("passes a body without the value unchanged", async () => {
    const text = `${value.slice(0, -1)}X and ${value.slice(1)}`;
    expect(await masked([value], [text.slice(0, 10), text.slice(10)])).toEqual({ text, found: [] });
  });
});
