// HTTP as an attacker's client speaks it, for the egress proxy's framing tests: bytes written as given on a
// plain or TLS socket (never Node's http client, which frames what it sends and would hide a hole), the
// answers read back off the wire; and a host that parses what reaches it the way an HTTP/1.1 server does
// (Node's own parser) and records every request it parsed, so that a smuggled second request shows.
import http from "node:http";
import https from "node:https";
import net, { type AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import tls from "node:tls";

/** A response as read off the wire: its status, headers (lower-case names, as received) and body. */
export interface RawResponse {
  status: number;
  headers: Array<[string, string]>;
  /** The body without its framing (chunks joined). */
  body: Buffer;
  /** Every byte of the response as it came, framing included. */
  raw: Buffer;
}

/** The value of a response's header, the first of that name. */
export const headerOf = (response: RawResponse, name: string): string | undefined =>
  response.headers.find(([n]) => n === name)?.[1];

/**
 * Reads the responses a socket carries, one at a time, by the framing each declares (a length, chunks, or
 * the connection's end), keeping whatever follows for the next.
 */
export class ResponseReader {
  private buffer = Buffer.alloc(0);
  private ended = false;
  private wake: (() => void) | undefined;
  /** Every byte read, responses and anything else. */
  all = Buffer.alloc(0);

  constructor(socket: Duplex) {
    socket.on("data", (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.all = Buffer.concat([this.all, chunk]);
      this.wake?.();
    });
    const end = () => {
      this.ended = true;
      this.wake?.();
    };
    socket.on("end", end);
    socket.on("close", end);
    socket.on("error", end);
  }

  /** The next response; undefined when the connection ended first. `head`: the answer to a HEAD (no body). */
  async next(head = false): Promise<RawResponse | undefined> {
    for (;;) {
      const response = this.parse(head);
      if (response) return response;
      if (this.ended) return undefined;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  /** Resolves once the connection has ended. */
  async closed(): Promise<void> {
    while (!this.ended) {
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  private parse(head: boolean): RawResponse | undefined {
    const end = this.buffer.indexOf("\r\n\r\n");
    if (end === -1) return undefined;
    const [statusLine = "", ...lines] = this.buffer.subarray(0, end).toString("latin1").split("\r\n");
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
    const headers = lines.map((line): [string, string] => {
      const colon = line.indexOf(":");
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    });
    const value = (name: string) => headers.find(([n]) => n === name)?.[1];
    const start = end + 4;
    const body = (bodyEnd: number, content: Buffer): RawResponse => {
      const raw = this.buffer.subarray(0, bodyEnd);
      this.buffer = this.buffer.subarray(bodyEnd);
      return { status, headers, body: content, raw };
    };
    if (head || status === 204 || status === 304 || (status >= 100 && status < 200))
      return body(start, Buffer.alloc(0));
    if (value("transfer-encoding")?.toLowerCase() === "chunked") {
      const chunks: Buffer[] = [];
      for (let at = start; ;) {
        const lineEnd = this.buffer.indexOf("\r\n", at);
        if (lineEnd === -1) return undefined;
        const size = parseInt(this.buffer.subarray(at, lineEnd).toString("latin1"), 16);
        if (size === 0) {
          const trailerEnd = this.buffer.indexOf("\r\n\r\n", lineEnd);
          if (trailerEnd === -1) return undefined;
          return body(trailerEnd + 4, Buffer.concat(chunks));
        }
        if (this.buffer.length < lineEnd + 2 + size + 2) return undefined;
        chunks.push(this.buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
    }
    const length = value("content-length");
    if (length !== undefined) {
      const bodyEnd = start + Number(length);
      return this.buffer.length < bodyEnd ? undefined : body(bodyEnd, this.buffer.subarray(start, bodyEnd));
    }
    return this.ended ? body(this.buffer.length, this.buffer.subarray(start)) : undefined;
  }
}

/** A connection to a proxy on loopback. */
export function connectTo(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

/**
 * A CONNECT to `authority` through the proxy at `proxyPort`, written as bytes, then TLS over the tunnel
 * with `servername`, trusting `ca`: the socket the requests are written on, and its response reader.
 */
export async function tlsTunnel(
  proxyPort: number,
  authority: string,
  servername: string,
  ca: string,
  proxyHeaders = "",
): Promise<{ socket: tls.TLSSocket; reader: ResponseReader }> {
  const plain = await connectTo(proxyPort);
  plain.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${proxyHeaders}\r\n`);
  const answer = await new Promise<string>((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (!text.includes("\r\n\r\n")) return;
      plain.off("data", onData);
      resolve(text);
    };
    plain.on("data", onData);
    plain.once("close", () => reject(new Error(`the proxy closed the CONNECT: ${text}`)));
  });
  if (!answer.startsWith("HTTP/1.1 200")) throw new Error(`CONNECT refused: ${answer}`);
  const socket = await new Promise<tls.TLSSocket>((resolve, reject) => {
    const secure = tls.connect({ socket: plain, servername, ca }, () => resolve(secure));
    secure.once("error", reject);
  });
  return { socket, reader: new ResponseReader(socket) };
}

/** One request as the host's parser read it, and the connection it came on (numbered from 1). */
export interface Recorded {
  connection: number;
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** The body, once read whole. */
  body: string;
}

export interface RecordingHost {
  port: number;
  /** Every request parsed, in order, recorded as soon as its head was parsed. */
  requests: Recorded[];
  /** The host's side of each connection, by number (1 first). */
  sockets: Map<number, net.Socket>;
  /** Resolves once connection `n` has closed. */
  closedConnection(n: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A host on `address` (HTTPS with `tlsOptions`, else plain HTTP) that records every request Node's parser
 * read from it, and answers each with `respond` once its body is read.
 */
export async function startRecordingHost(
  respond: (request: Recorded, res: http.ServerResponse) => void,
  tlsOptions?: { key: Buffer; cert: Buffer },
  address = "127.0.0.1",
): Promise<RecordingHost> {
  const requests: Recorded[] = [];
  const sockets = new Map<number, net.Socket>();
  const numbers = new WeakMap<net.Socket, number>();
  const closed = new Map<number, Promise<void>>();
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const recorded: Recorded = {
      connection: numbers.get(req.socket) ?? 0,
      method: req.method ?? "",
      url: req.url ?? "",
      headers: req.headers,
      body: "",
    };
    requests.push(recorded);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      recorded.body = Buffer.concat(chunks).toString("latin1");
      respond(recorded, res);
    });
  };
  const server = tlsOptions ? https.createServer(tlsOptions, handler) : http.createServer(handler);
  server.on(tlsOptions ? "secureConnection" : "connection", (socket: net.Socket) => {
    const n = sockets.size + 1;
    sockets.set(n, socket);
    numbers.set(socket, n);
    closed.set(n, new Promise((resolve) => socket.once("close", () => resolve())));
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    sockets,
    async closedConnection(n) {
      await closed.get(n);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
