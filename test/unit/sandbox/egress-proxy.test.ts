// The egress proxy on loopback, against local origin servers: names resolve through a map given to the
// proxy (the sidecar uses its /etc/hosts), so no outside network is needed.
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllowDomains } from "../../../src/sandbox/egress/allowlist.js";
import { createEgressProxy, type LedgerEntry } from "../../../src/sandbox/egress/proxy.js";
import { type OriginServers, startOriginServers } from "../../support/egress-servers.js";

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
    onEntry: (entry) => {
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

  it("cuts a tunnel whose SNI names another host", async () => {
    const before = origins.seen.length;
    expect((await tunnel(`allowed.test:${origins.httpsPort}`, "blocked.test")).body).toBe("");
    expect(await entryFor("allowed.test", "connect", "denied")).toMatchObject({
      reason: "the TLS server name blocked.test differs from the CONNECT host",
    });
    expect(origins.seen.length).toBe(before);
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
