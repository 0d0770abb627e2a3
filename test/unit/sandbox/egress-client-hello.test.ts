// The egress proxy's reading of a tunnel's TLS server name: from ClientHellos Node's own client sends, and
// from hostile bytes, which must give undefined (the tunnel is refused), never an exception or a name the
// server would read differently.
import { describe, expect, it } from "vitest";
import { clientHelloServerName } from "../../../src/sandbox/egress/client-hello.js";
import {
  buildClientHello,
  captureClientHello,
  HELLO_LENGTHS,
  serverNames,
} from "../../support/client-hello.js";
import { seededRandom } from "../../support/seeded-random.js";

/** A name the server reads as written, to check a result against. */
const HOST_TEXT = /^[A-Za-z0-9._-]{1,254}$/;

const withName = (name: Buffer | string) => buildClientHello([[0, serverNames([0, name])]]);

/** Never throws; undefined or a host name. */
function safely(bytes: Uint8Array): string | undefined {
  const name = clientHelloServerName(bytes);
  if (name !== undefined) expect(name).toMatch(HOST_TEXT);
  return name;
}

describe("the server name of a TLS ClientHello", () => {
  it("is read from the ClientHello Node's TLS client sends", async () => {
    const hello = await captureClientHello({ servername: "registry.npmjs.org" });
    expect(clientHelloServerName(hello)).toBe("registry.npmjs.org");
    // Any upper case as sent: the proxy compares names normalised.
    expect(clientHelloServerName(await captureClientHello({ servername: "Pypi.ORG" }))).toBe("Pypi.ORG");
  });

  it("is undefined for a ClientHello that names no server (Node sends none for an IP address)", async () => {
    const hello = await captureClientHello({});
    expect(hello[0]).toBe(0x16);
    expect(clientHelloServerName(hello)).toBeUndefined();
  });

  it("is undefined for every truncation of a real ClientHello", async () => {
    const hello = await captureClientHello({ servername: "allowed.test" });
    for (let length = 0; length < hello.length; length++)
      expect(safely(hello.subarray(0, length)), `the first ${length} bytes`).toBeUndefined();
  });

  it("never throws over a real ClientHello with any one byte changed to any value", async () => {
    const hello = await captureClientHello({ servername: "allowed.test" });
    const copy = Buffer.from(hello);
    for (let at = 0; at < copy.length; at++) {
      for (const value of [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff]) {
        copy[at] = value;
        safely(copy);
      }
      copy[at] = hello[at] ?? 0;
    }
  });

  it("is read from a hand-built ClientHello, among other extensions, and the builder's offsets are right", () => {
    const hello = buildClientHello([
      [0x000a, Buffer.of(0, 2, 0, 0x1d)],
      [0, serverNames([0, "allowed.test"])],
      [0x002b, Buffer.of(2, 3, 4)],
    ]);
    expect(clientHelloServerName(hello)).toBe("allowed.test");
    const plain = withName("allowed.test");
    expect(clientHelloServerName(plain)).toBe("allowed.test");
    // The last length field is the name's, right before it.
    expect(plain.readUInt16BE(59)).toBe("allowed.test".length);
    expect(plain.subarray(61).toString("latin1")).toBe("allowed.test");
  });

  it.each(HELLO_LENGTHS)(
    "is undefined when the $field length claims more than is there",
    ({ offset, size }) => {
      for (const more of [1, 2, 255]) {
        const hello = withName("allowed.test");
        const claimed = hello.readUIntBE(offset, size) + more;
        if (claimed >= 2 ** (8 * size)) continue;
        hello.writeUIntBE(claimed, offset, size);
        expect(safely(hello)).toBeUndefined();
      }
      const hello = withName("allowed.test");
      hello.writeUIntBE(2 ** (8 * size) - 1, offset, size);
      expect(safely(hello)).toBeUndefined();
    },
  );

  it.each(HELLO_LENGTHS.filter((f) => f.field !== "session_id"))(
    "is undefined when the $field length claims less than is there",
    ({ offset, size }) => {
      const hello = withName("allowed.test");
      hello.writeUIntBE(hello.readUIntBE(offset, size) - 1, offset, size);
      expect(safely(hello)).toBeUndefined();
    },
  );

  it.each([
    ["not a handshake record", () => Buffer.concat([Buffer.of(0x17), withName("a.test").subarray(1)])],
    [
      "a handshake that is not a ClientHello (a ServerHello)",
      () => {
        const hello = withName("a.test");
        hello[5] = 0x02;
        return hello;
      },
    ],
    ["no extensions at all", () => buildClientHello(undefined)],
    ["an empty extension list", () => buildClientHello([])],
    ["an empty server_name extension", () => buildClientHello([[0, Buffer.alloc(0)]])],
    ["an empty server name list", () => buildClientHello([[0, serverNames()]])],
    ["an empty host name", () => withName("")],
    [
      "two server_name extensions",
      () =>
        buildClientHello([
          [0, serverNames([0, "a.test"])],
          [0, serverNames([0, "a.test"])],
        ]),
    ],
    ["two host names in the list", () => buildClientHello([[0, serverNames([0, "a.test"], [0, "b.test"])]])],
    ["a name of another type than host_name", () => buildClientHello([[0, serverNames([1, "a.test"])]])],
    [
      "bytes after the list inside the extension",
      () => buildClientHello([[0, Buffer.concat([serverNames([0, "a.test"]), Buffer.of(0)])]]),
    ],
    [
      "bytes after the extensions inside the ClientHello",
      () => {
        const hello = withName("a.test");
        // One byte more in the record and the handshake than the extensions take.
        const longer = Buffer.concat([hello, Buffer.of(0)]);
        longer.writeUInt16BE(longer.readUInt16BE(3) + 1, 3);
        longer.writeUIntBE(longer.readUIntBE(6, 3) + 1, 6, 3);
        return longer;
      },
    ],
    ["a host name with a NUL", () => withName("allowed.test\0.evil.test")],
    ["a host name with a space", () => withName("allowed.test evil.test")],
    ["a host name with a colon", () => withName("allowed.test:443")],
    // `sni` read this as ASCII, unsetting each byte's high bit: "allowed.test" to the proxy, not to the server.
    ["a host name with a byte outside ASCII", () => withName(Buffer.from("\xe1llowed.test", "latin1"))],
    ["a UTF-8 host name", () => withName("bücher.test")],
    ["a host name longer than a DNS name", () => withName(`${"a".repeat(63)}.`.repeat(4) + "test")],
  ])("is undefined for %s", (_what, make) => {
    expect(safely(make())).toBeUndefined();
  });

  it("reads a ClientHello whose handshake is followed by more in its record", () => {
    const hello = withName("a.test");
    const longer = Buffer.concat([hello, Buffer.of(0x14, 0, 0, 0)]);
    longer.writeUInt16BE(longer.readUInt16BE(3) + 4, 3);
    expect(clientHelloServerName(longer)).toBe("a.test");
  });

  it.each([0x00, 0x01, 0x16, 0xff])("is undefined, at once, for megabytes of the byte %i", (byte) => {
    expect(safely(Buffer.alloc(8 * 1024 * 1024, byte))).toBeUndefined();
  });

  it("is undefined for a record header over megabytes of one byte", () => {
    for (const byte of [0x00, 0x01, 0xff]) {
      const data = Buffer.alloc(8 * 1024 * 1024, byte);
      data.set([0x16, 0x03, 0x01, 0x40, 0x00, 0x01], 0);
      expect(safely(data)).toBeUndefined();
    }
  });

  it("never throws on seeded random bytes, nor on seeded random changes to a ClientHello", async () => {
    const random = seededRandom(0x5eed);
    const below = (n: number) => Math.floor(random() * n);
    for (let i = 0; i < 20_000; i++) {
      const bytes = Buffer.alloc(below(700));
      for (let j = 0; j < bytes.length; j++) bytes[j] = below(256);
      // Half of them start as a handshake record holding a ClientHello, to get past the first checks.
      if (i % 2 && bytes.length >= 6)
        bytes.set([0x16, 0x03, 0x01, (bytes.length - 5) >> 8, (bytes.length - 5) & 0xff, 1]);
      safely(bytes);
    }
    const hello = await captureClientHello({ servername: "allowed.test" });
    let named = 0;
    for (let i = 0; i < 20_000; i++) {
      const copy = Buffer.from(hello.subarray(0, hello.length - below(8)));
      for (let k = below(4) + 1; k > 0; k--) copy[below(copy.length)] = below(256);
      if (safely(copy) === "allowed.test") named += 1;
    }
    // Most changes land in the random, the session id or the key shares: the name is still read.
    expect(named).toBeGreaterThan(0);
  });
});
