// What an intercepted host sends back, on its way to the sandbox (intercept.ts): an injected value must not
// return. A response body is read decoded (the proxy asks the host only for the content codings it can read,
// and decodes them) and every occurrence of a value is masked, `*` for each byte, by a streaming replace that
// keeps the last bytes of each chunk until the next one, so a value split across chunks is caught; the body
// keeps its length, so a Content-Length the host sent still holds when nothing was decoded.
import { Transform, type TransformCallback } from "node:stream";
import zlib from "node:zlib";

/** The content codings the proxy decodes (RFC 9110 §8.4.1), each by a zlib stream. */
const DECODERS: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(),
  "x-gzip": () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

/**
 * The Accept-Encoding the proxy sends the host: the codings of the client's list that it decodes, with their
 * weights; `identity` when none is left (or the client named none), so that the host sends none it cannot read.
 */
export function acceptEncoding(header: string | undefined): string {
  const known = (header ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => {
      const [coding = "", ...params] = item.split(";").map((part) => part.trim().toLowerCase());
      const refused = params.some((p) => /^q=0(\.0{0,3})?$/.test(p));
      return Object.hasOwn(DECODERS, coding) && !refused;
    });
  return known.length ? known.join(", ") : "identity";
}

/**
 * The decoders for a response's Content-Encoding, in the order they apply (the last coding applied first
 * comes off first); a string naming a coding the proxy cannot read otherwise.
 */
export function decodersFor(header: string | undefined): Transform[] | string {
  const codings = (header ?? "")
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding && coding !== "identity");
  const unknown = codings.find((coding) => !Object.hasOwn(DECODERS, coding));
  if (unknown !== undefined) return `a content coding the proxy does not read (${unknown})`;
  return codings.reverse().map((coding) => DECODERS[coding]!());
}

const MASK = "*".charCodeAt(0);

/**
 * Masks every occurrence of `patterns` (non-empty byte strings) in a stream, `*` for each byte, and calls
 * `onMask(index)` for each one found. The output has the input's length. Linear: each chunk is searched once
 * with the bytes kept from the one before (one less than the longest pattern).
 */
export class MaskStream extends Transform {
  private kept = Buffer.alloc(0);
  private readonly keep: number;

  constructor(
    private readonly patterns: readonly Buffer[],
    private readonly onMask: (index: number) => void,
  ) {
    super();
    this.keep = Math.max(0, ...patterns.map((p) => p.length - 1));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const data = Buffer.concat([this.kept, chunk]);
    this.mask(data);
    const cut = Math.max(0, data.length - this.keep);
    if (cut) this.push(data.subarray(0, cut));
    this.kept = data.subarray(cut);
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.kept.length) this.push(this.kept);
    callback();
  }

  /** Masks the patterns in `data` in place (a buffer of this stream's own). */
  private mask(data: Buffer): void {
    this.patterns.forEach((pattern, index) => {
      if (!pattern.length) return;
      for (let at = data.indexOf(pattern); at !== -1; at = data.indexOf(pattern, at + pattern.length)) {
        data.fill(MASK, at, at + pattern.length);
        this.onMask(index);
      }
    });
  }
}
