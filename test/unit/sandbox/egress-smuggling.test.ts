// Request smuggling through the egress proxy (B10): an attacker's client in the sandbox writes raw bytes over
// TLS through a tunnel the proxy terminates to inject a secret (and over plain TCP for the HTTP it forwards),
// against a host whose own HTTP/1.1 parser records every request it read. A second request hidden in a
// body, framing the proxy reads one way and the host another, a request for another host, a TRACE, CONNECT
// or upgrade, a reused connection with bytes left on it: none reaches the host, and the secret never comes
// back to the sandbox.
import fs from "node:fs";
import type http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllowDomains } from "../../../src/sandbox/egress/allowlist.js";
import { makeInterceptionCerts } from "../../../src/sandbox/egress/interception-ca.js";
import type { ProxyInjection } from "../../../src/sandbox/egress/intercept.js";
import { createEgressProxy, type LedgerEntry } from "../../../src/sandbox/egress/proxy.js";
import { makeCertificates } from "../../support/egress-servers.js";
import {
  connectTo,
  headerOf,
  type Recorded,
  type RecordingHost,
  ResponseReader,
  startRecordingHost,
  tlsTunnel,
} from "../../support/raw-http.js";
import { until } from "../../support/until.js";

/** A token-shaped value, assembled at run time. */
const SECRET = ["npm", "_", "Zk4", "smugglevalue", "9876543210"].join("");
const PLACEHOLDER = "agent-ci-placeholder-REG_TOKEN-00112233445566778899aabb";
const basic = (token: string) => `Basic ${Buffer.from(`user:${token}`).toString("base64")}`;

/** What the host answers: its paths echo what they were sent, in the ways a host may. */
function respond(request: Recorded, res: http.ServerResponse): void {
  const auth = String(request.headers.authorization ?? "");
  const url = new URL(request.url, "https://host.invalid");
  if (url.pathname === "/echo-split") {
    // The header's value in the body, split in two chunks in the middle of the value.
    const text = `you sent: ${auth}\n`;
    const cut = text.length - 7;
    res.writeHead(200, { "content-type": "text/plain" });
    res.write(text.slice(0, cut));
    return void res.end(text.slice(cut));
  }
  if (url.pathname === "/echo-gzip") {
    const body = zlib.gzipSync(`you sent: ${auth}\n`);
    return void res.writeHead(200, { "content-encoding": "gzip", "content-length": body.length }).end(body);
  }
  if (url.pathname === "/echo-length") {
    const body = `{"authorization":${JSON.stringify(auth)}}`;
    return void res
      .writeHead(200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        "x-echo": auth,
      })
      .end(body);
  }
  // The rest echo the request's method, path and body: a smuggled request's answer shows what it swallowed.
  const body = `${request.method} ${request.url} body=${JSON.stringify(request.body)}\n`;
  res.writeHead(200, { "content-type": "text/plain", "content-length": Buffer.byteLength(body) }).end(body);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-smuggling-"));
let host: RecordingHost;
let plainHost: RecordingHost;
let proxy: http.Server;
let proxyPort: number;
let runCa: string;
const entries: LedgerEntry[] = [];

beforeAll(async () => {
  const { key, cert, caFile } = makeCertificates(dir, "127.0.0.1", ["secret.test"]);
  host = await startRecordingHost(respond, { key, cert });
  plainHost = await startRecordingHost(respond);
  const certs = await makeInterceptionCerts("run-smuggling", ["secret.test"]);
  runCa = certs.caPem;
  const hostCert = certs.hosts["secret.test"];
  if (!hostCert) throw new Error("no certificate for secret.test");
  const inject: ProxyInjection[] = [
    {
      name: "REG_TOKEN",
      header: "authorization",
      host: "secret.test",
      placeholder: PLACEHOLDER,
      value: SECRET,
      ...hostCert,
    },
  ];
  proxy = createEgressProxy({
    rules: parseAllowDomains(["secret.test", "plain.test"]),
    privateHosts: ["secret.test", "plain.test"],
    resolve: async () => [{ address: "127.0.0.1", family: 4 }],
    onEntry: (entry, _id, ended) => {
      if (ended) entries.push(entry);
    },
    inject,
    upstreamCa: [...tls.rootCertificates, fs.readFileSync(caFile, "utf8")],
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyPort = (proxy.address() as AddressInfo).port;
});

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((r) => proxy.close(r));
  await host.close();
  await plainHost.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A tunnel to secret.test through the proxy, TLS with the run's CA: what an attacker's client opens. */
const tunnel = (caller = "toolu_attacker") =>
  tlsTunnel(
    proxyPort,
    `secret.test:${host.port}`,
    "secret.test",
    runCa,
    `Proxy-Authorization: Basic ${Buffer.from(`${caller}:`).toString("base64")}\r\n`,
  );

/** The requests the host parsed from here on (what a test's client caused). */
function hostRequests(): () => Recorded[] {
  const from = host.requests.length;
  return () => host.requests.slice(from);
}

/** A chunked body holding `text`, in one chunk. */
const chunked = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n0\r\n\r\n`;

/** A request hidden in a body: a POST whose length swallows the start of whatever request comes next. */
const SMUGGLED =
  "POST /smuggled HTTP/1.1\r\nHost: secret.test\r\nContent-Type: text/plain\r\nContent-Length: 90\r\n\r\n";

describe("B10 requests through an intercepted tunnel", () => {
  it.each(["GET", "HEAD", "DELETE", "OPTIONS"])(
    "B10 a %s whose chunked body holds a second request reaches the host as one framed request, and the next request keeps the secret in its header",
    async (method) => {
      const seen = hostRequests();
      const { socket, reader } = await tunnel();
      const authority = `secret.test:${host.port}`;
      socket.write(
        `${method} /first HTTP/1.1\r\nHost: ${authority}\r\nTransfer-Encoding: chunked\r\n\r\n${chunked(SMUGGLED)}`,
      );
      const first = await reader.next(method === "HEAD");
      expect(first?.status).toBe(200);
      socket.write(
        `GET /second HTTP/1.1\r\nHost: ${authority}\r\nAuthorization: Bearer ${PLACEHOLDER}\r\n\r\n`,
      );
      const second = await reader.next();
      socket.end();
      await reader.closed();

      // The host parsed two requests: the first with the smuggled text as its body, the second whole.
      expect(seen().map((r) => [r.method, r.url, r.body])).toEqual([
        [method, "/first", SMUGGLED],
        ["GET", "/second", ""],
      ]);
      expect(seen()[1]?.headers.authorization).toBe(`Bearer ${SECRET}`);
      expect(second?.body.toString()).toBe('GET /second body=""\n');
      expect(reader.all.toString("latin1")).not.toContain(SECRET);
    },
  );

  it("B10 a body with a length goes on with that length, for every method", async () => {
    const seen = hostRequests();
    const { socket, reader } = await tunnel();
    const authority = `secret.test:${host.port}`;
    for (const method of ["GET", "DELETE", "OPTIONS", "POST"]) {
      socket.write(
        `${method} /len HTTP/1.1\r\nHost: ${authority}\r\nContent-Length: ${SMUGGLED.length}\r\n\r\n${SMUGGLED}`,
      );
      expect((await reader.next())?.status).toBe(200);
    }
    socket.end();
    expect(seen().map((r) => [r.method, r.body])).toEqual(
      ["GET", "DELETE", "OPTIONS", "POST"].map((m) => [m, SMUGGLED]),
    );
  });

  const authority = () => `secret.test:${host.port}`;
  it.each([
    [
      "both Content-Length and Transfer-Encoding",
      () =>
        `POST / HTTP/1.1\r\nHost: ${authority()}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    ],
    [
      "a coding before chunked",
      () => `POST / HTTP/1.1\r\nHost: ${authority()}\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n`,
    ],
    [
      "a coding other than chunked",
      () => `POST / HTTP/1.1\r\nHost: ${authority()}\r\nTransfer-Encoding: identity\r\n\r\n`,
    ],
    [
      "Transfer-Encoding twice",
      () =>
        `POST / HTTP/1.1\r\nHost: ${authority()}\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    ],
    [
      "Transfer-Encoding in HTTP/1.0",
      () => `POST / HTTP/1.0\r\nHost: ${authority()}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    ],
    [
      "an empty Transfer-Encoding",
      () => `POST / HTTP/1.1\r\nHost: ${authority()}\r\nTransfer-Encoding: \r\n\r\n`,
    ],
    [
      "Content-Length twice",
      () => `POST / HTTP/1.1\r\nHost: ${authority()}\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx`,
    ],
    [
      "a list as Content-Length",
      () => `POST / HTTP/1.1\r\nHost: ${authority()}\r\nContent-Length: 1, 1\r\n\r\nx`,
    ],
    [
      "a signed Content-Length",
      () => `POST / HTTP/1.1\r\nHost: ${authority()}\r\nContent-Length: +1\r\n\r\nx`,
    ],
    ["an obsolete line folding", () => `GET / HTTP/1.1\r\nHost: ${authority()}\r\nX-A: one\r\n two\r\n\r\n`],
    [
      "a folded Transfer-Encoding",
      () =>
        `POST / HTTP/1.1\r\nHost: ${authority()}\r\nTransfer-Encoding: gzip,\r\n chunked\r\n\r\n0\r\n\r\n`,
    ],
    ["Host twice", () => `GET / HTTP/1.1\r\nHost: ${authority()}\r\nHost: other.test\r\n\r\n`],
    ["an HTTP/0.9 request line", () => `GET /\r\n\r\n`],
  ])(
    "B10 refuses %s with a 400, sends nothing upstream, and drops what follows on the connection",
    async (_what, request) => {
      const seen = hostRequests();
      const { socket, reader } = await tunnel();
      // A well-formed request right behind it, with the placeholder: it must not go either.
      socket.write(
        `${request()}GET /after HTTP/1.1\r\nHost: ${authority()}\r\nAuthorization: Bearer ${PLACEHOLDER}\r\n\r\n`,
      );
      const answer = await reader.next();
      expect(answer?.status).toBe(400);
      await reader.closed();
      expect(reader.all.toString("latin1").match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 400"]);
      expect(seen()).toEqual([]);
    },
  );

  it.each([
    ["another host in Host", () => `GET / HTTP/1.1\r\nHost: other.test:${host.port}\r\n\r\n`],
    ["another port in Host", () => `GET / HTTP/1.1\r\nHost: secret.test:${host.port + 1}\r\n\r\n`],
    [
      "no port in Host (443) for a tunnel to another port",
      () => `GET / HTTP/1.1\r\nHost: secret.test\r\n\r\n`,
    ],
    [
      "another host in an absolute target",
      () => `GET https://other.test:${host.port}/ HTTP/1.1\r\nHost: secret.test:${host.port}\r\n\r\n`,
    ],
    [
      "http:// in an absolute target",
      () => `GET http://secret.test:${host.port}/ HTTP/1.1\r\nHost: secret.test:${host.port}\r\n\r\n`,
    ],
  ])("B10 answers a request naming %s with a 421 and sends nothing upstream", async (_what, request) => {
    const seen = hostRequests();
    const { socket, reader } = await tunnel();
    socket.write(`${request().replace("\r\n\r\n", `\r\nAuthorization: Bearer ${PLACEHOLDER}\r\n\r\n`)}`);
    expect((await reader.next())?.status).toBe(421);
    await reader.closed();
    expect(seen()).toEqual([]);
  });

  it("B10 forwards an absolute target naming the tunnel's host, in origin form, with the Host the proxy writes", async () => {
    const seen = hostRequests();
    const { socket, reader } = await tunnel();
    socket.write(
      `GET https://SECRET.test.:${host.port}/abs?q=1 HTTP/1.1\r\nHost: Secret.Test.:${host.port}\r\n\r\n`,
    );
    expect((await reader.next())?.status).toBe(200);
    socket.end();
    expect(seen().map((r) => [r.url, r.headers.host])).toEqual([["/abs?q=1", `secret.test:${host.port}`]]);
  });

  it.each([
    [
      "TRACE",
      () =>
        `TRACE / HTTP/1.1\r\nHost: secret.test:${host.port}\r\nAuthorization: Bearer ${PLACEHOLDER}\r\n\r\n`,
    ],
    ["CONNECT", () => `CONNECT other.test:443 HTTP/1.1\r\nHost: other.test:443\r\n\r\n`],
    [
      "an upgrade",
      () =>
        `GET / HTTP/1.1\r\nHost: secret.test:${host.port}\r\nConnection: upgrade\r\nUpgrade: websocket\r\nAuthorization: Bearer ${PLACEHOLDER}\r\n\r\n`,
    ],
  ])("B10 refuses %s inside the tunnel (501), sending nothing upstream", async (_what, request) => {
    const seen = hostRequests();
    const { socket, reader } = await tunnel();
    socket.write(request());
    expect((await reader.next())?.status).toBe(501);
    await reader.closed();
    expect(seen()).toEqual([]);
  });

  it(
    "B10 reuses a connection to the host after an exchange that ended at its framing, and drops one that received more",
    { timeout: 20_000 },
    async () => {
      const seen = hostRequests();
      const { socket, reader } = await tunnel();
      const get = (p: string) => `GET ${p} HTTP/1.1\r\nHost: secret.test:${host.port}\r\n\r\n`;
      socket.write(get("/one"));
      expect((await reader.next())?.body.toString()).toBe('GET /one body=""\n');
      socket.write(get("/two"));
      expect((await reader.next())?.body.toString()).toBe('GET /two body=""\n');
      const [one, two] = seen();
      expect(two?.connection).toBe(one?.connection);
      // The host then sends an answer no request asked for, while the connection waits: the proxy closes it.
      const connection = one?.connection ?? 0;
      host.sockets.get(connection)?.write("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nEVIL!");
      await host.closedConnection(connection);
      socket.write(get("/three"));
      expect((await reader.next())?.body.toString()).toBe('GET /three body=""\n');
      socket.end();
      expect(seen()[2]?.connection).not.toBe(connection);
    },
  );
});

describe("B10 what comes back from the injected host", () => {
  it("B10 never carries the value to the sandbox: a header, a body split across chunks, a gzip body, Basic credentials; the ledger says so", async () => {
    const seen = hostRequests();
    const { socket, reader } = await tunnel("toolu_echo");
    const send = (p: string, auth: string, extra = "") =>
      socket.write(
        `GET ${p} HTTP/1.1\r\nHost: secret.test:${host.port}\r\nAuthorization: ${auth}\r\n${extra}\r\n`,
      );
    send("/echo-split", `Bearer ${PLACEHOLDER}`);
    const split = await reader.next();
    send("/echo-gzip", `Bearer ${PLACEHOLDER}`, "Accept-Encoding: gzip, zstd\r\n");
    const gzip = await reader.next();
    send("/echo-length", basic(PLACEHOLDER));
    const length = await reader.next();
    socket.end();
    await reader.closed();

    // The host got the value each time, in the form it was asked for.
    expect(seen().map((r) => r.headers.authorization)).toEqual([
      `Bearer ${SECRET}`,
      `Bearer ${SECRET}`,
      basic(SECRET),
    ]);
    expect(seen()[1]?.headers["accept-encoding"]).toBe("gzip");
    const stars = (n: number) => "*".repeat(n);
    expect(split?.body.toString()).toBe(`you sent: Bearer ${stars(SECRET.length)}\n`);
    // Decoded for the sandbox, which asked for gzip: identity is always acceptable.
    expect(headerOf(gzip!, "content-encoding")).toBeUndefined();
    expect(gzip?.body.toString()).toBe(`you sent: Bearer ${stars(SECRET.length)}\n`);
    // The Basic credentials the proxy wrote are masked whole in the body, and put back in the header;
    // the body keeps the length the host gave it.
    const sentBasic = basic(SECRET);
    expect(length?.body.toString()).toBe(`{"authorization":"Basic ${stars(sentBasic.length - 6)}"}`);
    expect(headerOf(length!, "content-length")).toBe(String(length?.body.length));
    expect(headerOf(length!, "x-echo")).toBe(basic(PLACEHOLDER));
    expect(reader.all.toString("latin1")).not.toContain(SECRET);
    expect(reader.all.toString("latin1")).not.toContain(sentBasic.slice(6));

    const entry = await until("the tunnel's ledger entry", () =>
      entries.find((e) => e.caller === "toolu_echo"),
    );
    expect(entry).toMatchObject({
      host: "secret.test",
      injected: ["REG_TOKEN"],
      scrubbed: ["REG_TOKEN"],
    });
  });
});

describe("B10 plain HTTP forwarding", () => {
  const target = () => `http://plain.test:${plainHost.port}`;
  it("B10 a GET's chunked body goes on framed, whatever the method", async () => {
    const from = plainHost.requests.length;
    const socket = await connectTo(proxyPort);
    const reader = new ResponseReader(socket);
    socket.write(
      `GET ${target()}/first HTTP/1.1\r\nHost: plain.test:${plainHost.port}\r\nTransfer-Encoding: chunked\r\n\r\n${chunked(SMUGGLED)}`,
    );
    expect((await reader.next())?.status).toBe(200);
    socket.write(
      `DELETE ${target()}/second HTTP/1.1\r\nHost: plain.test:${plainHost.port}\r\nContent-Length: 3\r\n\r\nabc`,
    );
    expect((await reader.next())?.status).toBe(200);
    socket.end();
    expect(plainHost.requests.slice(from).map((r) => [r.method, r.url, r.body])).toEqual([
      ["GET", "/first", SMUGGLED],
      ["DELETE", "/second", "abc"],
    ]);
  });

  it.each([
    ["a coding before chunked", "Transfer-Encoding: gzip, chunked\r\n", "0\r\n\r\n", "1.1"],
    ["Transfer-Encoding in HTTP/1.0", "Transfer-Encoding: chunked\r\n", "0\r\n\r\n", "1.0"],
    ["Host twice", "Host: other.test\r\n", "", "1.1"],
    [
      "both Content-Length and Transfer-Encoding",
      "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
      "0\r\n\r\n",
      "1.1",
    ],
  ])("B10 refuses %s with a 400 and sends nothing", async (_what, headers, body, version) => {
    const from = plainHost.requests.length;
    const socket = await connectTo(proxyPort);
    const reader = new ResponseReader(socket);
    socket.write(
      `POST ${target()}/ HTTP/${version}\r\nHost: plain.test:${plainHost.port}\r\n${headers}\r\n${body}GET ${target()}/after HTTP/1.1\r\nHost: plain.test:${plainHost.port}\r\n\r\n`,
    );
    expect((await reader.next())?.status).toBe(400);
    await reader.closed();
    expect(reader.all.toString("latin1").match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 400"]);
    expect(plainHost.requests.slice(from)).toEqual([]);
  });
});
