// How the helper serves a connection (its stdin and stdout, or the host's socket): frames in, each request
// handed to its operation's handler, the answer framed back on the same connection. Requests are served
// concurrently; an answer repeats its request's id. A new operation is a new entry in HelperOps
// (helper/protocol.ts) and in the handler table (main.ts): the types hold the two together.
import type { Readable, Writable } from "node:stream";
import { encodeFrame, FrameDecoder, FrameError } from "./framing.js";
import type { FailureHeader, HelperOp, HelperOps, RequestHeader } from "./protocol.js";

/** Where a request came from; its answer goes back there, as may frames a handler sends later. */
export interface Connection {
  send(header: object, body?: Uint8Array): void;
}

export interface Reply<K extends HelperOp> {
  header: HelperOps[K]["response"];
  body?: Buffer;
}

export type Handler<K extends HelperOp> = (
  request: HelperOps[K]["request"],
  body: Buffer,
  from: Connection,
) => Reply<K> | Promise<Reply<K>>;

export type Handlers = { [K in HelperOp]: Handler<K> };

/** A failure the host is told about by code (the response's `code`), as Node's own errors carry theirs. */
export class HelperError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const fail = (code: string, message: string): HelperError => new HelperError(code, message);

function failure(id: number, err: unknown): FailureHeader {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return {
    id,
    ok: false,
    code: typeof code === "string" && code ? code : "EHELPER",
    message: String(message || err),
  };
}

function dispatch<K extends HelperOp>(
  handlers: Handlers,
  request: RequestHeader<K>,
  body: Buffer,
  from: Connection,
): Promise<Reply<K>> {
  if (!Object.prototype.hasOwnProperty.call(handlers, request.op))
    return Promise.reject(fail("EBADOP", `the helper has no operation ${JSON.stringify(request.op)}`));
  const handler: Handler<K> = handlers[request.op];
  return Promise.resolve().then(() => handler(request, body, from));
}

/**
 * Serves the requests arriving on `input`, answering on `output`. A stream that is not made of frames
 * (`broken`) cannot be answered in step: the caller decides what ends.
 */
export function serve(
  handlers: Handlers,
  input: Readable,
  output: Writable,
  broken: (error: FrameError) => void,
): Connection {
  const connection: Connection = { send: (header, body) => output.write(encodeFrame(header, body)) };
  const decoder = new FrameDecoder<RequestHeader<HelperOp>>();
  input.on("data", (chunk: Buffer) => {
    let requests;
    try {
      requests = decoder.push(chunk);
    } catch (e) {
      if (!(e instanceof FrameError)) throw e;
      broken(e);
      return;
    }
    for (const { header, body } of requests) {
      dispatch(handlers, header, body, connection).then(
        (reply) => connection.send({ id: header.id, ok: true, ...reply.header }, reply.body),
        (err: unknown) => connection.send(failure(header.id, err)),
      );
    }
  });
  return connection;
}
