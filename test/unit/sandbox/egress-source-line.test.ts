// The line the run's forwarder puts before each connection it hands to the egress proxy: read off when it
// is there, every other byte left for the HTTP server, and anything else (a client that reached the socket
// itself, a megabyte with no newline) served as it came.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSourceLine, SOURCE_PREFIX } from "../../../src/sandbox/egress/source-line.js";

let server: net.Server;
let port: number;
let accepted: (socket: net.Socket) => void = () => {};

beforeAll(async () => {
  server = net.createServer((socket) => accepted(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** Sends `chunks` on a fresh connection, then reads the source line and every byte after it. */
async function read(chunks: Buffer[]): Promise<{ source: number | undefined; rest: Buffer }> {
  const socket = await new Promise<net.Socket>((resolve) => {
    accepted = resolve;
    const client = net.connect(port, "127.0.0.1", () => {
      for (const chunk of chunks) client.write(chunk);
      client.end();
    });
  });
  const source = await readSourceLine(socket);
  const parts: Buffer[] = [];
  socket.on("data", (d: Buffer) => parts.push(d));
  await new Promise((resolve) => socket.on("end", resolve).resume());
  return { source, rest: Buffer.concat(parts) };
}

const request = Buffer.from("CONNECT allowed.test:443 HTTP/1.1\r\nhost: allowed.test\r\n\r\n\x16\x03\x01");

describe("readSourceLine", () => {
  it("reads the port and leaves the request whole, in one chunk or split inside the line", async () => {
    expect(await read([Buffer.concat([Buffer.from(`${SOURCE_PREFIX}40123\n`), request])])).toEqual({
      source: 40123,
      rest: request,
    });
    expect(await read([Buffer.from("agent-ci-so"), Buffer.from("urce 5\n"), request])).toEqual({
      source: 5,
      rest: request,
    });
  });

  it("serves a connection without the line, or with a malformed one, as it came", async () => {
    expect(await read([request])).toEqual({ source: undefined, rest: request });
    // A megabyte compared as bytes (a deep equality of a Buffer walks it element by element).
    const long = Buffer.from(`${SOURCE_PREFIX}${"1".repeat(1 << 20)}`);
    const longRead = await read([long, request]);
    expect(longRead.source).toBeUndefined();
    expect(longRead.rest.equals(Buffer.concat([long, request]))).toBe(true);
    const noLine = Buffer.alloc(1 << 20, "a");
    const noLineRead = await read([noLine]);
    expect(noLineRead.source).toBeUndefined();
    expect(noLineRead.rest.equals(noLine)).toBe(true);
    expect((await read([Buffer.from(`${SOURCE_PREFIX}99999\n`), request])).source).toBeUndefined();
  });
});
