// The egress proxy on loopback, against local origin servers: names resolve through a map given to the
// proxy (the sidecar uses its /etc/hosts), so no outside network is needed.
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllowDomains } from "../../../src/sandbox/egress/allowlist.js";
import { createEgressProxy, type LedgerEntry } from "../../../src/sandbox/egress/proxy.js";
import { buildClientHello, serverNames } from "../../support/client-hello.js";
import { type OriginServers, startOriginServers } from "../../support/egress-servers.js";
import { tlsTunnel } from "../../support/raw-http.js";
import { until } from "../../support/until.js";

const NAMES: Record<string, string> = {
  "allowed.test": "127.0.0.1",
  "blocked.test": "127.0.0.1",
  "private.test": "127.0.0.1",
  "metadata.test": "169.254.169.254",
};

let origins: OriginServers;
let proxy: http.Server;
let proxyPort: number;
let ca: Buffer;
const entries: LedgerEntry[] = [];
const waiters: Array<() => void> = [];
/** Every report of the ledger, as it came: an attempt once decided, then as it changed and ended. */
const reports: Array<{ entry: LedgerEntry; id: number; ended: boolean }> = [];

/** Resolves once the ledger holds an entry for `host` with this kind (entries come when a connection ends). */
function entryFor(
  host: string,
  kind: LedgerEntry["kind"],
  decision?: LedgerEntry["decision"],
): Promise<LedgerEntry> {
  return new Promise((resolve) => {
    const look = () => {
      const found = entries.find(
        (e) => e.host === host && e.kind === kind && (!decision || e.decision === decision),
      );
      if (found) resolve(found);
      else waiters.push(look);
    };
    look();
  });
}

beforeAll(async () => {
  origins = await startOriginServers();
  ca = fs.readFileSync(origins.caFile);
  proxy = createEgressProxy({
    rules: parseAllowDomains(["allowed.test", "private.test", "metadata.test", "nowhere.test"]),
    privateHosts: ["allowed.test", "blocked.test", "metadata.test"],
    resolve: async (host) => {
      const address = NAMES[host];
      if (!address) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
      return [{ address, family: 4 }];
    },
    // Each attempt as it ended (the proxy reports it earlier too, once decided).
    onEntry: (entry, id, ended) => {
      reports.push({ entry, id, ended });
      if (!ended) return;
      entries.push(entry);
      for (const w of waiters.splice(0)) w();
    },
    // The sidecar asks agent-ci, which asks the run's helper; here every uncredentialed client is one call's.
    attribute: async () => "toolu_traced",
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyPort = (proxy.address() as AddressInfo).port;
});

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((r) => proxy.close(r));
  await origins.close();
});

function get(url: string, caller?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = {};
    if (caller) headers["proxy-authorization"] = `Basic ${Buffer.from(`${caller}:`).toString("base64")}`;
    const req = http.request({ host: "127.0.0.1", port: proxyPort, path: url, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject).end();
  });
}

/** CONNECT host:port, then TLS with `servername` over the tunnel and GET /. */
function tunnel(target: string, servername: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: "127.0.0.1",
      port: proxyPort,
      method: "CONNECT",
      path: target,
      headers: { "proxy-authorization": `Basic ${Buffer.from("toolu_7:").toString("base64")}` },
    });
    req.on("connect", (res, socket, head) => {
      if (res.statusCode !== 200) {
        let body = head.toString("utf8");
        socket.setEncoding("utf8").on("data", (d: string) => (body += d));
        socket.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        return;
      }
      const secure = tls.connect({ socket, servername, ca }, () => {
        secure.write(`GET /tls HTTP/1.1\r\nhost: ${servername}\r\nconnection: close\r\n\r\n`);
      });
      let body = "";
      secure.setEncoding("utf8").on("data", (d: string) => (body += d));
      secure.on("end", () => resolve({ status: 200, body }));
      secure.on("error", () => resolve({ status: 200, body }));
    });
    req.on("error", reject).end();
  });
}

describe("the egress proxy", () => {
  it("forwards plain HTTP to an allowed name and records it", async () => {
    const res = await get(`http://allowed.test:${origins.httpPort}/plain`, "toolu_1");
    expect(res).toEqual({ status: 200, body: "hello from allowed.test over http\n" });
    const entry = await entryFor("allowed.test", "http");
    expect(entry).toMatchObject({
      decision: "allowed",
      port: origins.httpPort,
      address: "127.0.0.1",
      caller: "toolu_1",
      attributedBy: "credentials",
    });
    expect(entry.bytesUp).toBeGreaterThan(0);
    expect(entry.bytesDown).toBeGreaterThan(0);
  });

  it("refuses a name off the allowlist with the policy's message", async () => {
    const res = await get(`http://blocked.test:${origins.httpPort}/`);
    expect(res.status).toBe(403);
    expect(res.body).toContain("agent-ci's network policy refused blocked.test");
    expect(res.body).toContain("allowed: allowed.test, private.test");
    expect(await entryFor("blocked.test", "http")).toMatchObject({
      decision: "denied",
      reason: "not on the allowlist",
      // No credentials: the caller comes from the connection's process.
      caller: "toolu_traced",
      attributedBy: "process",
    });
    expect(origins.seen).not.toContain("http://blocked.test/");
  });

  it("tunnels TLS to an allowed name whose SNI matches", async () => {
    const res = await tunnel(`allowed.test:${origins.httpsPort}`, "allowed.test");
    expect(res.body).toContain("hello from allowed.test over https");
    const entry = await entryFor("allowed.test", "connect");
    expect(entry).toMatchObject({ decision: "allowed", caller: "toolu_7" });
    expect(entry.bytesDown).toBeGreaterThan(0);
  });

  it("has a tunnel's attempt in the ledger, with its caller, by the time its client has the answer, and completes it when the tunnel ends", async () => {
    const credentials = `Proxy-Authorization: Basic ${Buffer.from("toolu_open:").toString("base64")}\r\n`;
    const authority = `allowed.test:${origins.httpsPort}`;
    const { socket, reader } = await tlsTunnel(
      proxyPort,
      authority,
      "allowed.test",
      ca.toString(),
      credentials,
    );
    socket.write(`GET /open HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
    expect((await reader.next())?.body.toString()).toBe("hello from allowed.test over https\n");
    // The tunnel is still open: its attempt is there already, as a call that ended now would read it.
    const open = reports.filter((r) => r.entry.caller === "toolu_open");
    expect(open.map((r) => [r.entry.host, r.entry.kind, r.entry.decision, r.ended])).toEqual([
      ["allowed.test", "connect", "allowed", false],
    ]);
    socket.end();
    const ended = await until("the tunnel's last report", () =>
      entries.find((e) => e.caller === "toolu_open"),
    );
    expect(reports.filter((r) => r.entry.caller === "toolu_open").map((r) => r.id)).toEqual([
      open[0]?.id,
      open[0]?.id,
    ]);
    expect(ended.bytesDown).toBeGreaterThan(0);
  });

  it("cuts a tunnel whose SNI names another host", async () => {
    const before = origins.seen.length;
    expect((await tunnel(`allowed.test:${origins.httpsPort}`, "blocked.test")).body).toBe("");
    expect(await entryFor("allowed.test", "connect", "denied")).toMatchObject({
      reason: "the TLS server name blocked.test differs from the CONNECT host",
    });
    expect(origins.seen.length).toBe(before);
  });

  it("cuts a tunnel whose server name has a byte outside ASCII (read as ASCII, it was the CONNECT host)", async () => {
    // `sni` read the name as ASCII, unsetting each byte's high bit: the proxy saw "allowed.test" where the
    // server would see another name.
    const count = entries.length;
    const hello = buildClientHello([[0, serverNames([0, Buffer.from("\xe1llowed.test", "latin1")])]]);
    const req = http.request({
      host: "127.0.0.1",
      port: proxyPort,
      method: "CONNECT",
      path: `allowed.test:${origins.httpsPort}`,
    });
    req.on("connect", (_res, socket) => {
      socket.on("error", () => {});
      socket.write(hello);
    });
    req.end();
    const entry = await new Promise<LedgerEntry>((resolve) => {
      const look = () => (entries[count] ? resolve(entries[count]) : waiters.push(look));
      look();
    });
    expect(entry).toMatchObject({
      host: "allowed.test",
      kind: "connect",
      decision: "denied",
      reason: "the tunnel's TLS ClientHello names no server (SNI)",
    });
  });

  it.each([
    ["an IP literal", "127.0.0.1", /IP address/],
    ["the metadata address", "169.254.169.254", /IP address/],
    ["a name resolving to the metadata address, even opted in", "metadata.test", /metadata/],
    ["a name resolving to loopback without the opt-in", "private.test", /non-public address 127\.0\.0\.1/],
    ["a name that does not resolve", "nowhere.test", /does not resolve/],
  ])("refuses CONNECT to %s", async (_what, host, reason) => {
    const res = await tunnel(`${host}:443`, host);
    expect(res.status).toBe(403);
    expect(res.body).toContain(`refused ${host}:443`);
    expect(await entryFor(host, "connect")).toMatchObject({
      decision: "denied",
      reason: expect.stringMatching(reason),
    });
  });

  it("refuses a request not in absolute form", async () => {
    expect((await get("/relative")).status).toBe(400);
  });
});

describe("the egress proxy's plain HTTP forwarding", () => {
  /** What the origin saw of each request: method, path, headers, body. */
  interface Seen {
    method: string;
    url: string;
    headers: http.IncomingHttpHeaders;
    body: Buffer;
  }
  const seen: Seen[] = [];
  let origin: http.Server;
  let originPort: number;
  let closedPort: number;
  let forwarder: http.Server;
  let forwarderPort: number;
  const ledger: LedgerEntry[] = [];
  const ledgerWaiters: Array<() => void> = [];

  /** The next ledger entry after the first `count`. */
  const entryAfter = (count: number) =>
    new Promise<LedgerEntry>((resolve) => {
      const look = () => (ledger[count] ? resolve(ledger[count]) : ledgerWaiters.push(look));
      look();
    });

  beforeAll(async () => {
    origin = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
        if (req.url === "/cut") {
          // The answer begins, then the connection dies: the client must see it cut.
          res.writeHead(200, { "content-type": "text/plain", "content-length": "1000" });
          res.write("the first part");
          setImmediate(() => req.socket.destroy());
          return;
        }
        if (req.url === "/big") {
          res.writeHead(200, { "content-type": "application/octet-stream" });
          res.end(Buffer.alloc(4 * 1024 * 1024, 0x61));
          return;
        }
        res.writeHead(201, "Made It", [
          ["content-type", "text/plain"],
          ["set-cookie", "a=1"],
          ["set-cookie", "b=2"],
          ["x-origin", "yes"],
          ["keep-alive", "timeout=99"],
          ["proxy-authenticate", "Basic realm=origin"],
          ["upgrade", "h2c"],
        ]);
        res.end(`${req.method} ${req.url} ${body.length}\n`);
      });
    });
    await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
    originPort = (origin.address() as AddressInfo).port;
    // A port nothing listens on: one a server had and gave back.
    const gone = http.createServer();
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    closedPort = (gone.address() as AddressInfo).port;
    await new Promise((r) => gone.close(r));
    forwarder = createEgressProxy({
      rules: parseAllowDomains(["echo.test"]),
      privateHosts: ["echo.test"],
      resolve: async () => [{ address: "127.0.0.1", family: 4 }],
      onEntry: (entry, _id, ended) => {
        if (!ended) return;
        ledger.push(entry);
        for (const w of ledgerWaiters.splice(0)) w();
      },
    });
    await new Promise<void>((resolve) => forwarder.listen(0, "127.0.0.1", resolve));
    forwarderPort = (forwarder.address() as AddressInfo).port;
  });

  afterAll(async () => {
    forwarder.closeAllConnections();
    origin.closeAllConnections();
    await Promise.all([new Promise((r) => forwarder.close(r)), new Promise((r) => origin.close(r))]);
  });

  /** A request through the proxy; the body is written in the given chunks (chunked unless a length is set). */
  function send(
    method: string,
    url: string,
    headers: http.OutgoingHttpHeaders = {},
    chunks: Buffer[] = [],
  ): Promise<{ res: http.IncomingMessage; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port: forwarderPort, method, path: url, headers },
        (res) => {
          const parts: Buffer[] = [];
          res.on("data", (c: Buffer) => parts.push(c));
          res.on("end", () => resolve({ res, body: Buffer.concat(parts) }));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      for (const chunk of chunks) req.write(chunk);
      req.end();
    });
  }

  it("re-issues an absolute-form request in origin form with the end-to-end headers only", async () => {
    const count = ledger.length;
    const { res, body } = await send("GET", `http://echo.test:${originPort}/path?q=1`, {
      "proxy-authorization": `Basic ${Buffer.from("toolu_fwd:").toString("base64")}`,
      "proxy-connection": "keep-alive",
      "keep-alive": "timeout=5",
      te: "trailers",
      "x-custom": "kept",
    });
    expect(res.statusCode).toBe(201);
    expect(body.toString()).toBe("GET /path?q=1 0\n");
    const got = seen.at(-1);
    expect(got?.url).toBe("/path?q=1");
    expect(got?.headers).toMatchObject({ host: `echo.test:${originPort}`, "x-custom": "kept" });
    for (const name of ["proxy-authorization", "proxy-connection", "keep-alive", "te"])
      expect(got?.headers[name], name).toBeUndefined();
    expect(await entryAfter(count)).toMatchObject({
      host: "echo.test",
      kind: "http",
      decision: "allowed",
      caller: "toolu_fwd",
      address: "127.0.0.1",
    });
  });

  it("answers with the origin's status, reason and end-to-end headers, and not its hop-by-hop ones", async () => {
    const { res } = await send("GET", `http://echo.test:${originPort}/headers`);
    expect(res.statusCode).toBe(201);
    expect(res.statusMessage).toBe("Made It");
    expect(res.headers).toMatchObject({ "x-origin": "yes", "set-cookie": ["a=1", "b=2"] });
    expect(res.headers["proxy-authenticate"]).toBeUndefined();
    expect(res.headers.upgrade).toBeUndefined();
    expect(res.headers["keep-alive"]).not.toBe("timeout=99");
  });

  it.each([
    ["a POST with a length", "POST", { "content-length": String(3 * 1024 * 1024) }],
    ["a chunked POST", "POST", {}],
    ["a chunked DELETE", "DELETE", { "transfer-encoding": "chunked" }],
  ])("streams the body of %s whole, and counts its bytes", async (_what, method, headers) => {
    const chunks = [Buffer.alloc(1024 * 1024, 1), Buffer.alloc(1024 * 1024, 2), Buffer.alloc(1024 * 1024, 3)];
    const count = ledger.length;
    const { body } = await send(method, `http://echo.test:${originPort}/upload`, headers, chunks);
    expect(body.toString()).toBe(`${method} /upload ${3 * 1024 * 1024}\n`);
    expect(seen.at(-1)?.body.equals(Buffer.concat(chunks))).toBe(true);
    const entry = await entryAfter(count);
    expect(entry.bytesUp).toBeGreaterThan(3 * 1024 * 1024);
    expect(entry.bytesDown).toBeGreaterThan(0);
  });

  it("answers a HEAD with the origin's headers and no body", async () => {
    const { res, body } = await send("HEAD", `http://echo.test:${originPort}/big`);
    expect(res.statusCode).toBe(200);
    expect(body.length).toBe(0);
    expect(seen.at(-1)?.method).toBe("HEAD");
  });

  it("streams a large answer whole", async () => {
    const count = ledger.length;
    const { body } = await send("GET", `http://echo.test:${originPort}/big`);
    expect(body.equals(Buffer.alloc(4 * 1024 * 1024, 0x61))).toBe(true);
    expect((await entryAfter(count)).bytesDown).toBeGreaterThan(4 * 1024 * 1024);
  });

  it("answers 502 when the origin cannot be reached, and records why", async () => {
    const count = ledger.length;
    const { res, body } = await send("GET", `http://echo.test:${closedPort}/`);
    expect(res.statusCode).toBe(502);
    expect(body.toString()).toContain(`agent-ci's egress proxy: echo.test:${closedPort} failed:`);
    expect(await entryAfter(count)).toMatchObject({
      decision: "allowed",
      reason: expect.stringMatching(/^upstream failed: .*ECONNREFUSED/),
    });
  });

  it("cuts the client's answer when the origin's is cut, and records why", async () => {
    const count = ledger.length;
    const outcome = await send("GET", `http://echo.test:${originPort}/cut`).then(
      () => "complete",
      (e: Error) => e.message,
    );
    expect(outcome).not.toBe("complete");
    expect(await entryAfter(count)).toMatchObject({
      decision: "allowed",
      reason: expect.stringMatching(/^upstream failed: /),
    });
  });
});
