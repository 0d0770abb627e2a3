// The server name a tunnel's TLS ClientHello asks for (its server_name extension, RFC 6066 §3), which the
// egress proxy checks against the tunnel's CONNECT host. The bytes come from the sandbox, so they are read as
// hostile: every length is checked against the bytes that enclose it, each byte is read at most once, and
// anything malformed or ambiguous gives undefined (the proxy refuses the tunnel) — it never throws.
// Stricter than a server needs to be, as OpenSSL is: one server_name extension, holding exactly one name, of
// type host_name, in the letters a DNS name is written with; the name is read as the server will read it
// (byte for byte: a byte outside ASCII is refused, never folded into a letter).

const RECORD_HANDSHAKE = 0x16;
const HANDSHAKE_CLIENT_HELLO = 0x01;
const EXTENSION_SERVER_NAME = 0x0000;
const NAME_TYPE_HOST_NAME = 0x00;
/** legacy_version (2 bytes) and random (32 bytes): the fixed start of a ClientHello's body. */
const HELLO_FIXED_BYTES = 2 + 32;
const MAX_SESSION_ID = 32;
/** A DNS name's longest text form, with a trailing dot. */
const MAX_HOST_NAME = 254;

/** Reads [pos, end) of `data` front to back; a read that does not fit gives undefined. */
class Reader {
  constructor(
    private readonly data: Uint8Array,
    private pos: number,
    private readonly end: number,
  ) {}

  get left(): number {
    return this.end - this.pos;
  }

  /** A big-endian unsigned integer of `size` bytes. */
  uint(size: 1 | 2 | 3): number | undefined {
    if (this.left < size) return undefined;
    let value = 0;
    for (let i = 0; i < size; i++) value = value * 256 + (this.data[this.pos++] ?? 0);
    return value;
  }

  /** The next `length` bytes, as a reader of their own. */
  take(length: number | undefined): Reader | undefined {
    if (length === undefined || length > this.left) return undefined;
    const part = new Reader(this.data, this.pos, this.pos + length);
    this.pos += length;
    return part;
  }

  /** A TLS vector: its length in `size` bytes, then its contents. */
  vector(size: 1 | 2 | 3): Reader | undefined {
    return this.take(this.uint(size));
  }

  /** What is left, as text, if it is a host name's letters (digits, ASCII letters, `.`, `-`, `_`). */
  hostName(): string | undefined {
    if (this.left < 1 || this.left > MAX_HOST_NAME) return undefined;
    let text = "";
    while (this.left > 0) {
      const byte = this.data[this.pos++] ?? 0;
      const ok =
        (byte >= 0x30 && byte <= 0x39) || // 0-9
        (byte >= 0x41 && byte <= 0x5a) || // A-Z
        (byte >= 0x61 && byte <= 0x7a) || // a-z
        byte === 0x2d || // -
        byte === 0x2e || // .
        byte === 0x5f; // _
      if (!ok) return undefined;
      text += String.fromCharCode(byte);
    }
    return text;
  }
}

/**
 * The host name the ClientHello in `record` (one whole TLS record, header included) names, or undefined
 * when it names none or is not a well-formed ClientHello.
 */
export function clientHelloServerName(record: Uint8Array): string | undefined {
  const input = new Reader(record, 0, record.length);
  if (input.uint(1) !== RECORD_HANDSHAKE || !input.take(2)) return undefined;
  const fragment = input.vector(2);
  // A ClientHello larger than its record (continued in the next one) is not read: undefined.
  if (fragment?.uint(1) !== HANDSHAKE_CLIENT_HELLO) return undefined;
  const hello = fragment.vector(3);
  if (!hello?.take(HELLO_FIXED_BYTES)) return undefined;
  // Each with the sizes RFC 8446 allows, so that no byte is read as two fields.
  const sessionId = hello.vector(1);
  if (!sessionId || sessionId.left > MAX_SESSION_ID) return undefined;
  const cipherSuites = hello.vector(2);
  if (!cipherSuites || cipherSuites.left < 2 || cipherSuites.left % 2 !== 0) return undefined;
  const compressionMethods = hello.vector(1);
  if (!compressionMethods || compressionMethods.left < 1) return undefined;
  const extensions = hello.vector(2);
  if (!extensions || hello.left !== 0) return undefined;
  let name: string | undefined;
  let seen = false;
  while (extensions.left > 0) {
    const type = extensions.uint(2);
    const data = extensions.vector(2);
    if (type === undefined || !data) return undefined;
    if (type !== EXTENSION_SERVER_NAME) continue;
    // An extension twice is forbidden (RFC 8446 §4.2): which one a server reads is not ours to guess.
    if (seen) return undefined;
    seen = true;
    name = serverNameExtension(data);
    if (name === undefined) return undefined;
  }
  return name;
}

/** The one host_name of a server_name extension's ServerNameList. */
function serverNameExtension(data: Reader): string | undefined {
  const list = data.vector(2);
  if (!list || data.left !== 0) return undefined;
  if (list.uint(1) !== NAME_TYPE_HOST_NAME) return undefined;
  const name = list.vector(2);
  if (!name || list.left !== 0) return undefined;
  return name.hostName();
}
