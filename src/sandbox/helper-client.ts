// The host side of the in-container helper (helper/helper.cjs): frames requests onto the exec's stdin (or
// the direct socket, once adopted: channel.ts), demultiplexes Docker's stdout/stderr frames, and matches
// responses to requests by id.
import type { Socket } from "node:net";
import { PassThrough, type Duplex } from "node:stream";
import type { HelperOp, HelperOps, HelperResult, RawFrame } from "./helper-protocol.js";
import { SandboxGoneError } from "./sandbox.js";

interface Waiter {
  resolve: (r: RawFrame) => void;
  reject: (e: Error) => void;
}

export function encodeFrame(header: object, body?: Uint8Array): Buffer {
  const h = Buffer.from(JSON.stringify(header));
  const b = body ? Buffer.from(body) : Buffer.alloc(0);
  const hl = Buffer.alloc(4);
  hl.writeUInt32BE(h.length);
  const bl = Buffer.alloc(4);
  bl.writeUInt32BE(b.length);
  return Buffer.concat([hl, h, bl, b]);
}

/**
 * Splits a byte stream into frames; returns the frames complete so far and keeps the rest. Chunks of a
 * frame are only gathered up, and joined once the frame is whole: joining on every chunk made a 17 MB
 * read quadratic (seconds, not milliseconds).
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private length = 0;
  /** Bytes the frame being received needs, once its header says; nothing is parsed before that. */
  private needed = 0;

  push(chunk: Buffer): RawFrame[] {
    this.chunks.push(chunk);
    this.length += chunk.length;
    if (this.length < this.needed) return [];
    let pending = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.length);
    const frames: RawFrame[] = [];
    this.needed = 0;
    for (;;) {
      if (pending.length < 4) break;
      const hl = pending.readUInt32BE(0);
      if (pending.length < 8 + hl) {
        this.needed = 8 + hl;
        break;
      }
      const total = 8 + hl + pending.readUInt32BE(4 + hl);
      if (pending.length < total) {
        this.needed = total;
        break;
      }
      const header = JSON.parse(pending.subarray(4, 4 + hl).toString("utf8")) as RawFrame["header"];
      const body = Buffer.from(pending.subarray(8 + hl, total));
      pending = pending.subarray(total);
      frames.push({ header, body });
    }
    this.chunks = pending.length ? [pending] : [];
    this.length = pending.length;
    return frames;
  }
}

export class HelperClient {
  private nextId = 1;
  private readonly waiters = new Map<number, Waiter>();
  private readonly decoder = new FrameDecoder();
  private closedError: Error | undefined;
  private stderrTail = "";
  /** The direct channel once adopted: requests are written to it instead of the exec stream. */
  private socket: Socket | undefined;
  private onClose: (cause?: unknown) => void;
  readonly ready: Promise<void>;

  constructor(
    private readonly stream: Duplex,
    demux: (stream: Duplex, stdout: PassThrough, stderr: PassThrough) => void,
  ) {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    demux(stream, stdout, stderr);
    let markReady: () => void = () => {};
    let failReady: (e: Error) => void = () => {};
    this.ready = new Promise((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    // A helper that dies before saying ready must not leave an unhandled rejection behind.
    this.ready.catch(() => {});
    stdout.on("data", (chunk: Buffer) => {
      for (const frame of this.decoder.push(chunk)) {
        if (frame.header.id === 0) markReady();
        else this.answer(frame);
      }
    });
    stderr.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-2000);
    });
    this.onClose = (cause?: unknown) => {
      if (this.closedError) return;
      const detail = this.stderrTail.trim()
        ? `: ${this.stderrTail.trim().split("\n").slice(-3).join(" | ")}`
        : "";
      this.closedError = new SandboxGoneError(`the sandbox helper stopped${detail}`, { cause });
      failReady(this.closedError);
      for (const waiter of this.waiters.values()) waiter.reject(this.closedError);
      this.waiters.clear();
    };
    stream.on("end", () => this.onClose());
    stream.on("close", () => this.onClose());
    stream.on("error", (e) => this.onClose(e));
  }

  private answer(frame: RawFrame): void {
    const waiter = this.waiters.get(frame.header.id);
    this.waiters.delete(frame.header.id);
    waiter?.resolve(frame);
  }

  /**
   * Sends every later request over `socket` (the helper's direct channel, channel.ts); answers to requests
   * already sent still come on the exec stream. The helper is gone when either closes: the other is ended.
   */
  adopt(socket: Socket): void {
    const decoder = new FrameDecoder();
    socket.on("data", (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) this.answer(frame);
    });
    const gone = (cause?: unknown) => {
      this.onClose(cause);
      this.stream.destroy();
    };
    socket.on("end", () => gone());
    socket.on("close", () => gone());
    socket.on("error", (e) => gone(e));
    this.stream.on("close", () => socket.destroy());
    socket.resume();
    this.socket = socket;
  }

  get alive(): boolean {
    return this.closedError === undefined;
  }

  /** One operation of the protocol; the answer is typed by the operation asked (helper-protocol.ts). */
  request<K extends HelperOp>(
    op: K,
    request: HelperOps[K]["request"],
    body?: Uint8Array,
  ): Promise<HelperResult<K>> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise<RawFrame>((resolve, reject) => {
      this.waiters.set(id, { resolve, reject });
      (this.socket ?? this.stream).write(encodeFrame({ ...request, op, id }, body));
    }).then((frame) => ({ ok: frame.header.ok, header: frame.header, body: frame.body }) as HelperResult<K>);
  }

  close(): void {
    this.socket?.destroy();
    this.stream.end();
    this.stream.destroy();
  }
}
