// A remote MCP server's responses, read through a byte limit on agent-ci's own process: the SDK's HTTP
// transports hold a JSON response whole (`response.json()`) and an event of an event stream whole until its
// blank line, so a server that answers with 100 MB (an image, a runaway result) would be held whole in the
// host's memory. Each message may be as large as a stdio server's line (one message either way); past it
// the body is cancelled (the connection with it), the request fails with a clear error, and the connection
// is ended as a stdio server's is. An event stream is limited per event, so a long-lived stream of small
// messages is never cut.
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { MAX_LINE_BYTES } from "./stdio-transport.js";

/** The largest message agent-ci reads from a remote server: a stdio server's line limit. */
export const MAX_RESPONSE_BYTES = MAX_LINE_BYTES;

/** Statuses whose response may carry no body (`new Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
/** An event ends at a blank line: LF LF, CR CR, or CRLF CRLF (the event-stream format). */
const EVENT_ENDS = ["\n\n", "\r\r", "\r\n\r\n"].map((s) => Buffer.from(s));
/** Bytes of one chunk kept to find an event end that straddles two chunks. */
const CARRY = 3;

export class ResponseTooLargeError extends Error {
  override readonly name = "ResponseTooLargeError";
}

/** Where the last event of `bytes` ended (the index just past its blank line), or -1. */
function lastEventEnd(bytes: Buffer): number {
  let end = -1;
  for (const mark of EVENT_ENDS) {
    const at = bytes.lastIndexOf(mark);
    if (at >= 0) end = Math.max(end, at + mark.length);
  }
  return end;
}

/**
 * A counter of one body's bytes: the whole body, or an event stream's bytes since its last event ended.
 * Linear: each chunk is scanned once (with a few carried bytes).
 */
function byteLimit(
  limit: number,
  perEvent: boolean,
  over: () => Error,
): TransformStream<Uint8Array, Uint8Array> {
  let pending = 0;
  let carry = Buffer.alloc(0);
  return new TransformStream({
    transform(chunk, controller) {
      if (perEvent) {
        const window = Buffer.concat([carry, chunk]);
        const end = lastEventEnd(window);
        pending = end >= 0 ? window.length - end : pending + chunk.byteLength;
        carry = window.subarray(Math.max(0, window.length - CARRY));
      } else {
        pending += chunk.byteLength;
      }
      if (pending > limit) {
        controller.error(over());
        return;
      }
      controller.enqueue(chunk);
    },
  });
}

/**
 * `fetch` with each successful response's body read through the limit. `onOver` hears of a body cut, once
 * per body, before the reader does (the transport is ended there: an event stream's reader only logs).
 */
export function limitedFetch(
  onOver: (error: ResponseTooLargeError) => void,
  limit = MAX_RESPONSE_BYTES,
  base: FetchLike = fetch,
): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (!response.ok || response.body === null || NULL_BODY_STATUSES.has(response.status)) return response;
    const type = response.headers.get("content-type") ?? "";
    const perEvent = /^\s*text\/event-stream/i.test(type);
    const over = (): ResponseTooLargeError => {
      const error = new ResponseTooLargeError(
        `the server sent a message of more than ${limit} bytes${perEvent ? " (one event)" : ""}; agent-ci stopped reading it`,
      );
      onOver(error);
      return error;
    };
    const declared = Number(response.headers.get("content-length") ?? "");
    if (!perEvent && declared > limit) {
      const error = over();
      await response.body.cancel(error).catch(() => undefined);
      throw error;
    }
    return new Response(response.body.pipeThrough(byteLimit(limit, perEvent, over)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
