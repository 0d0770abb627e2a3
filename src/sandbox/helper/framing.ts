// The in-container helper's framing, the one implementation both ends use: the host (helper/client.ts,
// channel.ts) and the helper itself (helper/, bundled into the container). A frame is a u32 BE header
// length, the header as JSON, a u32 BE body length, the body's bytes. This module imports nothing: it is
// carried into the container and runs on the toolbelt's Node as well as on the host's.

/** A decoded frame. The header's type is the reader's claim: the framing only knows it is a JSON object. */
export interface Frame<Header extends object> {
  header: Header;
  body: Buffer;
}

/** The stream is not made of frames (a header that is not a JSON object): it cannot be read further. */
export class FrameError extends Error {
  override name = "FrameError";
}

const EMPTY = Buffer.alloc(0);

export function encodeFrame(header: object, body: Uint8Array = EMPTY): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  const frame = Buffer.allocUnsafe(8 + json.length + body.length);
  frame.writeUInt32BE(json.length, 0);
  json.copy(frame, 4);
  frame.writeUInt32BE(body.length, 4 + json.length);
  frame.set(body, 8 + json.length);
  return frame;
}

function parseHeader(bytes: Buffer): object {
  let header: unknown;
  try {
    header = JSON.parse(bytes.toString("utf8"));
  } catch {
    // The header's text is not quoted: a request's carries the command's environment.
    throw new FrameError(`a frame's ${bytes.length}-byte header is not JSON`);
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) {
    const kind = header === null ? "null" : Array.isArray(header) ? "an array" : typeof header;
    throw new FrameError(`a frame's header is JSON but not an object (${kind})`);
  }
  return header;
}

/**
 * Splits a byte stream into frames; `push` returns the frames complete so far and keeps the rest. Chunks of a
 * frame are only gathered, and joined once the frame is whole: joining on every chunk made a 17 MB read
 * quadratic (seconds, not milliseconds). After a FrameError the stream is out of step: drop it.
 */
export class FrameDecoder<Header extends object> {
  private chunks: Buffer[] = [];
  private length = 0;
  /** Bytes the frame being received needs, once its lengths say; nothing is parsed before that. */
  private needed = 0;

  push(chunk: Buffer): Array<Frame<Header>> {
    this.chunks.push(chunk);
    this.length += chunk.length;
    if (this.length < this.needed) return [];
    let pending = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.length);
    const frames: Array<Frame<Header>> = [];
    this.needed = 0;
    for (;;) {
      if (pending.length < 4) break;
      const headerLength = pending.readUInt32BE(0);
      if (pending.length < 8 + headerLength) {
        this.needed = 8 + headerLength;
        break;
      }
      const total = 8 + headerLength + pending.readUInt32BE(4 + headerLength);
      if (pending.length < total) {
        this.needed = total;
        break;
      }
      const header = parseHeader(pending.subarray(4, 4 + headerLength)) as Header;
      // A copy: the body outlives the chunk it came in, which would otherwise be kept whole.
      const body = Buffer.from(pending.subarray(8 + headerLength, total));
      pending = pending.subarray(total);
      frames.push({ header, body });
    }
    this.chunks = pending.length ? [pending] : [];
    this.length = pending.length;
    return frames;
  }
}
