// The host side of the in-container helper (helper/): frames requests onto the exec's stdin (or the direct
// socket, once adopted: channel.ts), demultiplexes Docker's stdout/stderr frames, and matches responses to
// requests by id.
import type { Socket } from "node:net";
import { PassThrough, type Duplex } from "node:stream";
import { encodeFrame, FrameDecoder, FrameError } from "./framing.js";
import type { HelperOp, HelperOps, HelperResult, RawFrame, RequestHeader } from "./protocol.js";
import { SandboxGoneError } from "../sandbox.js";

interface Waiter {
  resolve: (r: RawFrame) => void;
  reject: (e: Error) => void;
}

export class HelperClient {
  private nextId = 1;
  private readonly waiters = new Map<number, Waiter>();
  private readonly decoder = new FrameDecoder<RawFrame["header"]>();
  private closedError: Error | undefined;
  private stderrTail = "";
  /** The direct channel once adopted: requests are written to it instead of the exec stream. */
  private socket: Socket | undefined;
  private onClose: (cause?: unknown, reason?: string) => void;
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
      for (const frame of this.decode(this.decoder, chunk)) {
        if (frame.header.id === 0) markReady();
        else this.answer(frame);
      }
    });
    stderr.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-2000);
    });
    this.onClose = (cause?: unknown, reason?: string) => {
      if (this.closedError) return;
      const said = stderrSummary(this.stderrTail);
      const detail = said ? `: ${said}` : "";
      this.closedError = new SandboxGoneError(reason ?? `the sandbox helper stopped${detail}`, { cause });
      failReady(this.closedError);
      for (const waiter of this.waiters.values()) waiter.reject(this.closedError);
      this.waiters.clear();
    };
    stream.on("end", () => this.onClose());
    stream.on("close", () => this.onClose());
    stream.on("error", (e) => this.onClose(e));
  }

  /** The frames complete so far; none, and the helper stopped, when what it sent is not frames. */
  private decode(decoder: FrameDecoder<RawFrame["header"]>, chunk: Buffer): RawFrame[] {
    try {
      return decoder.push(chunk);
    } catch (e) {
      if (!(e instanceof FrameError)) throw e;
      this.onClose(e, `the sandbox helper's answers could not be read (${e.message}); it was stopped`);
      this.close();
      return [];
    }
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
    const decoder = new FrameDecoder<RawFrame["header"]>();
    socket.on("data", (chunk: Buffer) => {
      for (const frame of this.decode(decoder, chunk)) this.answer(frame);
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

  /** One operation of the protocol; the answer is typed by the operation asked (helper/protocol.ts). */
  request<K extends HelperOp>(
    op: K,
    request: HelperOps[K]["request"],
    body?: Uint8Array,
  ): Promise<HelperResult<K>> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise<RawFrame>((resolve, reject) => {
      this.waiters.set(id, { resolve, reject });
      const header: RequestHeader<K> = { ...request, op, id };
      (this.socket ?? this.stream).write(encodeFrame(header, body));
    }).then((frame) => ({ ok: frame.header.ok, header: frame.header, body: frame.body }) as HelperResult<K>);
  }

  close(): void {
    this.socket?.destroy();
    this.stream.end();
    this.stream.destroy();
  }
}

/**
 * What a stopped helper last said on stderr, in one line: the error a Node.js crash threw (its stack and
 * properties follow it, and its last lines name only the Node.js version), else the last three lines.
 */
export function stderrSummary(tail: string): string {
  const lines = tail
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.find((l) => /^\w*Error: /.test(l)) ?? lines.slice(-3).join(" | ");
}
