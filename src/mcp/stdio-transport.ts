// The MCP SDK's `Transport` over a service process in the run's container (src/sandbox/container/service.ts):
// newline-delimited JSON-RPC on its stdin and stdout, (de)serialised by the SDK's own stdio functions and
// read with a bounded line reader (linear, where the SDK's buffer copies itself per chunk). A line that is
// not JSON-RPC (a banner some servers print before they speak) is skipped as the SDK's stdio transport
// skips it: reported through `onerror` (a warning) and noted in the server's stderr tail, both bounded in
// size and count, and reading goes on. A line over the limit ends the transport with an error that says
// so (the server's calls fail with it); memory stays bounded by the limit.
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { ServiceProcess } from "../sandbox/container/service.js";

/** The longest line a server may write (one message): a result past this ends its transport. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** How much of a server's stderr is kept (its tail), for the report and start failures. */
export const STDERR_TAIL_CHARS = 4000;
/** Lines that are not JSON-RPC reported per transport; later ones are skipped without a word. */
export const MAX_REPORTED_NOISE_LINES = 10;
/** Characters of such a line quoted in the report. */
const NOISE_LINE_CHARS = 200;

export class LineReader {
  private chunks: Buffer[] = [];
  private length = 0;

  constructor(
    private readonly maxLine: number,
    private readonly onLine: (line: string) => void,
  ) {}

  /** Feeds bytes; throws once a line grows past the limit (the caller stops reading). */
  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) break;
      const piece = chunk.subarray(start, newline);
      this.check(piece.length);
      const line = this.length ? Buffer.concat([...this.chunks, piece]) : piece;
      this.chunks = [];
      this.length = 0;
      start = newline + 1;
      const text = line.toString("utf8");
      this.onLine(text.endsWith("\r") ? text.slice(0, -1) : text);
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.check(rest.length);
      this.chunks.push(rest);
      this.length += rest.length;
    }
  }

  private check(more: number): void {
    if (this.length + more > this.maxLine) {
      this.chunks = [];
      this.length = 0;
      throw new Error(
        `the server wrote a line of more than ${this.maxLine} bytes to stdout (one message); agent-ci stopped reading it`,
      );
    }
  }
}

/**
 * A server's transport as the manager holds it: the SDK's `Transport`, with why agent-ci ended it and what the
 * server wrote to stderr.
 */
export interface ServerTransport extends Transport {
  /** Why agent-ci ended the transport (the server broke the protocol, a message over the limit), if it did. */
  readonly fault: Error | undefined;
  /** The last STDERR_TAIL_CHARS characters the server wrote to stderr ("" for a remote server). */
  readonly stderr: string;
}

export class ServiceStdioTransport implements ServerTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Why the transport ended, when the server broke the protocol (a clear message for its calls). */
  fault: Error | undefined;
  private closed = false;
  /** The close under way: every caller waits for the one kill (the SDK closes a server that failed its start too). */
  private closing: Promise<void> | undefined;
  private stderrTail = "";
  /** Lines read that were not JSON-RPC. */
  private noiseLines = 0;

  constructor(
    private readonly process: ServiceProcess,
    private readonly maxLine = MAX_LINE_BYTES,
  ) {}

  /** The last STDERR_TAIL_CHARS characters the server wrote to stderr. */
  get stderr(): string {
    return this.stderrTail;
  }

  async start(): Promise<void> {
    const reader = new LineReader(this.maxLine, (line) => this.receive(line));
    this.process.stdout.on("data", (chunk: Buffer) => {
      if (this.closed) return;
      try {
        reader.push(chunk);
      } catch (e) {
        this.fail(e as Error);
      }
    });
    this.process.stderr.on("data", (chunk: Buffer) => this.appendStderr(chunk.toString("utf8")));
    void this.process.exited.then(() => this.finish());
  }

  private receive(line: string): void {
    if (line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch {
      this.skipped(line);
      return;
    }
    this.onmessage?.(message);
  }

  /** A line that is not JSON-RPC: noted (the first few, cut short) and passed over. */
  private skipped(line: string): void {
    this.noiseLines += 1;
    if (this.noiseLines > MAX_REPORTED_NOISE_LINES) return;
    const shown = line.length > NOISE_LINE_CHARS ? `${line.slice(0, NOISE_LINE_CHARS)}…` : line;
    const more =
      this.noiseLines === MAX_REPORTED_NOISE_LINES ? " (further such lines are skipped without a note)" : "";
    const note = `the server wrote a line that is not JSON-RPC to stdout, skipped: ${JSON.stringify(shown)}${more}`;
    this.appendStderr(`[agent-ci] ${note}\n`);
    this.onerror?.(new Error(note));
  }

  private appendStderr(text: string): void {
    this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
  }

  private fail(error: Error): void {
    if (this.closed) return;
    this.fault ??= error;
    this.onerror?.(error);
    void this.close();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw this.fault ?? new Error("the server's connection is closed");
    const data = serializeMessage(message);
    await new Promise<void>((resolve, reject) => {
      this.process.stdin.write(data, (e) => (e ? reject(e) : resolve()));
    });
  }

  close(): Promise<void> {
    if (!this.closing && !this.closed) {
      this.closed = true;
      this.closing = this.end();
    }
    return this.closing ?? Promise.resolve();
  }

  private async end(): Promise<void> {
    this.process.stdin.end();
    await this.process.kill();
    this.finish();
  }

  private finished = false;
  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.closed = true;
    this.onclose?.();
  }
}
