// TLS ClientHellos for the egress proxy's SNI tests: real ones, captured from Node's own TLS client as it
// opens a connection to a loopback server that only listens, and hand-built ones whose every length field a
// test can set (the layout is RFC 8446 §4.1.2 and RFC 6066 §3).
import net from "node:net";
import tls from "node:tls";

/** The first TLS record Node's client sends with these options (its ClientHello), header included. */
export async function captureClientHello(options: tls.ConnectionOptions): Promise<Buffer> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      server.once("connection", (socket) => {
        let data = Buffer.alloc(0);
        socket.on("data", (chunk: Buffer) => {
          data = Buffer.concat([data, chunk]);
          if (data.length >= 5 && data.length >= 5 + data.readUInt16BE(3)) {
            resolve(data.subarray(0, 5 + data.readUInt16BE(3)));
            socket.destroy();
          }
        });
        socket.on("error", reject);
      });
      const client = tls.connect({ host: "127.0.0.1", port, ...options });
      client.on("error", () => {});
      client.on("close", () => reject(new Error("the client closed before its ClientHello was read")));
    });
  } finally {
    server.close();
  }
}

/** A TLS vector: its length in `size` bytes, then `data`. */
export function vector(size: 1 | 2 | 3, data: Buffer): Buffer {
  const length = Buffer.alloc(size);
  length.writeUIntBE(data.length, 0, size);
  return Buffer.concat([length, data]);
}

/** A server_name extension's data naming `names` (each `[name_type, name]`; host_name is 0). */
export function serverNames(...names: Array<[number, Buffer | string]>): Buffer {
  return vector(
    2,
    Buffer.concat(
      names.map(([type, name]) => Buffer.concat([Buffer.of(type), vector(2, Buffer.from(name))])),
    ),
  );
}

/**
 * A whole record holding a ClientHello with these extensions (`[type, data]`; server_name is 0), or, with
 * `extensions: undefined`, none. The offsets of its length fields are in HELLO_LENGTHS.
 */
export function buildClientHello(extensions: Array<[number, Buffer]> | undefined): Buffer {
  const body = Buffer.concat([
    Buffer.of(0x03, 0x03), // legacy_version
    Buffer.alloc(32, 7), // random
    vector(1, Buffer.alloc(0)), // session_id
    vector(2, Buffer.of(0x13, 0x01)), // cipher_suites
    vector(1, Buffer.of(0)), // compression_methods
    extensions === undefined
      ? Buffer.alloc(0)
      : vector(
          2,
          Buffer.concat(
            extensions.map(([type, data]) => {
              const head = Buffer.alloc(2);
              head.writeUInt16BE(type);
              return Buffer.concat([head, vector(2, data)]);
            }),
          ),
        ),
  ]);
  const handshake = Buffer.concat([Buffer.of(0x01), vector(3, body)]);
  return Buffer.concat([Buffer.of(0x16, 0x03, 0x01), vector(2, handshake)]);
}

/**
 * Where each length field of `buildClientHello([[0, serverNames([0, name])]])` is, and its size: the
 * record, the handshake, session_id, cipher_suites, compression_methods, the extensions, the server_name
 * extension, its list, the name.
 */
export const HELLO_LENGTHS: ReadonlyArray<{ field: string; offset: number; size: 1 | 2 | 3 }> = [
  { field: "record", offset: 3, size: 2 },
  { field: "handshake", offset: 6, size: 3 },
  { field: "session_id", offset: 43, size: 1 },
  { field: "cipher_suites", offset: 44, size: 2 },
  { field: "compression_methods", offset: 48, size: 1 },
  { field: "extensions", offset: 50, size: 2 },
  { field: "server_name extension", offset: 54, size: 2 },
  { field: "server name list", offset: 56, size: 2 },
  { field: "host name", offset: 59, size: 2 },
];
