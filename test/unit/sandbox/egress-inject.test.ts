// `--inject-secret`: the syntax, the substitution, and the egress proxy on loopback answering for an
// injected host with the run's own CA, putting the secret in for that host only, over TLS it verifies.
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { egressOptions, injections, parseAllowDomains } from "../../../src/sandbox/egress/allowlist.js";
import { parseInjectRule, substituteSecret } from "../../../src/sandbox/egress/inject.js";
import { makeInterceptionCerts } from "../../../src/sandbox/egress/interception-ca.js";
import type { ProxyInjection } from "../../../src/sandbox/egress/intercept.js";
import { createEgressProxy, type LedgerEntry } from "../../../src/sandbox/egress/proxy.js";
import { makeCertificates } from "../../support/egress-servers.js";

/** A token-shaped value, assembled at run time. */
const SECRET = ["npm", "_", "Xq7", "secretvalue", "0123456789"].join("");

describe("parseInjectRule", () => {
  it.each([
    ["NPM_TOKEN=authorization:npm.example.com", { header: "authorization", host: "npm.example.com" }],
    ["TOKEN=Authorization:Registry.Example.COM:8443", { header: "authorization", port: 8443 }],
    ["PIP_TOKEN=x-api-key:pypi.corp.test", { header: "x-api-key", host: "pypi.corp.test" }],
  ])("reads %s", (text, expected) => {
    expect(parseInjectRule(text)).toMatchObject(expected);
  });

  it.each([
    "NPM_TOKEN",
    "NPM_TOKEN=npm.example.com",
    "NPM_TOKEN=ghp_value:authorization:npm.example.com",
    "1BAD=authorization:npm.example.com",
    "T=host:npm.example.com",
    "T=proxy-authorization:npm.example.com",
    "T=bad header:npm.example.com",
    "T=authorization:10.0.0.1",
    "T=authorization:*.example.com",
    "T=authorization:npm.example.com:70000",
  ])("refuses %j with a reason", (text) => {
    expect(typeof parseInjectRule(text)).toBe("string");
  });
});

describe("substituteSecret", () => {
  const placeholder = "agent-ci-placeholder-T-00ff";
  it("replaces the placeholder in a bearer token, and inside Basic credentials as git and pip send them", () => {
    expect(substituteSecret(`Bearer ${placeholder}`, placeholder, SECRET)).toBe(`Bearer ${SECRET}`);
    const basic = `Basic ${Buffer.from(`user:${placeholder}`).toString("base64")}`;
    expect(substituteSecret(basic, placeholder, SECRET)).toBe(
      `Basic ${Buffer.from(`user:${SECRET}`).toString("base64")}`,
    );
  });
  it("leaves a header without the placeholder alone", () => {
    expect(substituteSecret("Bearer other", placeholder, SECRET)).toBeUndefined();
    expect(substituteSecret(`Basic ${"A".repeat(1 << 20)}`, placeholder, SECRET)).toBeUndefined();
  });
});

describe("injections of a run", () => {
  const rules = parseAllowDomains(["npm.example.com", "*.corp.test"]);
  it("each gets a fresh placeholder and its value from the environment, read when asked", () => {
    const env: Record<string, string> = { NPM_TOKEN: SECRET };
    const [one] = injections(["NPM_TOKEN=authorization:npm.example.com"], rules, (n) => env[n]);
    expect(one?.placeholder).toMatch(/^agent-ci-placeholder-NPM_TOKEN-[0-9a-f]{24}$/);
    expect(one?.value()).toBe(SECRET);
    expect(JSON.stringify(one)).not.toContain(SECRET);
  });
  it.each([
    [["T=authorization:other.example.com"], /other\.example\.com is not on the allowlist/],
    [["T=authorization:a.corp.test", "T=authorization:b.corp.test"], /T is injected twice/],
    [["UNSET=authorization:a.corp.test"], /environment variable UNSET is not set/],
    [["NL=authorization:a.corp.test"], /control characters/],
  ])("refuses %j", (entries, reason) => {
    const env: Record<string, string> = { T: SECRET, NL: `${SECRET}\r\nx-evil: 1` };
    expect(() => egressOptions(["npm.example.com", "*.corp.test"], [], entries, (n) => env[n])).toThrow(
      reason,
    );
  });
});

describe("the egress proxy with an injected secret", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-inject-"));
  const placeholder = "agent-ci-placeholder-REG_TOKEN-0123456789abcdef01234567";
  const entries: LedgerEntry[] = [];
  const waiters: Array<() => void> = [];
  /** What the origin saw: its name and the authorization header of each request. */
  const seen: Array<{ host: string; authorization?: string }> = [];
  let origin: https.Server;
  let originPort: number;
  let proxy: http.Server;
  let proxyPort: number;
  let runCa: string;
  let originCa: string;

  /** Starts the proxy; `trustOrigin`: whether it is given the origin's CA (--ca-cert) to verify it with. */
  async function startProxy(trustOrigin: boolean): Promise<void> {
    const certs = await makeInterceptionCerts("run-test", ["secret.test"]);
    runCa = certs.caPem;
    const hostCert = certs.hosts["secret.test"];
    if (!hostCert) throw new Error("no certificate for secret.test");
    const inject: ProxyInjection[] = [
      {
        name: "REG_TOKEN",
        header: "authorization",
        host: "secret.test",
        placeholder,
        value: SECRET,
        ...hostCert,
      },
    ];
    proxy = createEgressProxy({
      rules: parseAllowDomains(["secret.test", "other.test"]),
      privateHosts: ["secret.test", "other.test"],
      resolve: async () => [{ address: "127.0.0.1" }],
      onEntry: (entry, _id, ended) => {
        if (!ended) return;
        entries.push(entry);
        for (const w of waiters.splice(0)) w();
      },
      inject,
      upstreamCa: trustOrigin ? [...tls.rootCertificates, originCa] : undefined,
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    proxyPort = (proxy.address() as AddressInfo).port;
  }
  async function stopProxy(): Promise<void> {
    proxy.closeAllConnections();
    await new Promise((r) => proxy.close(r));
  }

  beforeAll(async () => {
    const { key, cert, caFile } = makeCertificates(dir, "127.0.0.1", ["secret.test", "other.test"]);
    originCa = fs.readFileSync(caFile, "utf8");
    origin = https.createServer({ key, cert }, (req, res) => {
      const host = (req.headers.host ?? "").replace(/:\d+$/, "");
      seen.push({ host, authorization: req.headers.authorization });
      let body = "";
      req.setEncoding("utf8").on("data", (d: string) => (body += d));
      // It echoes the header back, as some servers do in a header of their own.
      const echo = req.headers.authorization ? { "x-echo": req.headers.authorization } : {};
      req.on("end", () => res.writeHead(200, echo).end(`${host} got ${req.method} ${body.length}\n`));
    });
    await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
    originPort = (origin.address() as AddressInfo).port;
  });
  afterAll(async () => {
    origin.closeAllConnections();
    await new Promise((r) => origin.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Resolves with the ledger's entry for a CONNECT to `host` once its tunnel ended. */
  function entryFor(host: string): Promise<LedgerEntry> {
    return new Promise((resolve) => {
      const look = () => {
        const found = entries.find((e) => e.host === host && e.kind === "connect");
        if (found) resolve(found);
        else waiters.push(look);
      };
      look();
    });
  }

  /** CONNECT, TLS trusting `ca`, then `requests` requests on the one connection (the last closes it). */
  function requestsThrough(
    host: string,
    ca: string,
    headers: Array<Record<string, string>>,
  ): Promise<{ status: number; body: string; echo?: string }[]> {
    return new Promise((resolve, reject) => {
      const req = http.request({
        host: "127.0.0.1",
        port: proxyPort,
        method: "CONNECT",
        path: `${host}:${originPort}`,
      });
      req.on("connect", (_res, socket) => {
        const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
        agent.createConnection = () => tls.connect({ socket, servername: host, ca });
        const results: { status: number; body: string; echo?: string }[] = [];
        const next = (i: number) => {
          const h = headers[i];
          if (!h) {
            agent.destroy();
            socket.destroy();
            resolve(results);
            return;
          }
          const body = "x".repeat(i * 1000);
          https
            .request({ host, port: originPort, method: "POST", path: "/", headers: h, agent }, (res) => {
              let text = "";
              res.setEncoding("utf8").on("data", (d: string) => (text += d));
              res.on("end", () => {
                const echo = res.headers["x-echo"]?.toString();
                results.push({ status: res.statusCode ?? 0, body: text, ...(echo ? { echo } : {}) });
                next(i + 1);
              });
            })
            .on("error", (e) => {
              // As a client does when its TLS fails: the connection is closed.
              socket.destroy();
              reject(e);
            })
            .end(body);
        };
        next(0);
      });
      req.on("error", reject).end();
    });
  }

  it("puts the secret in for the injected host over TLS, every request of the connection, and records that it did", async () => {
    await startProxy(true);
    try {
      const results = await requestsThrough("secret.test", runCa, [
        { authorization: `Bearer ${placeholder}` },
        { authorization: `Basic ${Buffer.from(`user:${placeholder}`).toString("base64")}` },
        {},
      ]);
      // The host's echo of the header comes back with the placeholder, not the value.
      const basic = (token: string) => `Basic ${Buffer.from(`user:${token}`).toString("base64")}`;
      expect(results).toEqual([
        { status: 200, body: "secret.test got POST 0\n", echo: `Bearer ${placeholder}` },
        { status: 200, body: "secret.test got POST 1000\n", echo: basic(placeholder) },
        { status: 200, body: "secret.test got POST 2000\n" },
      ]);
      expect(seen.splice(0)).toEqual([
        { host: "secret.test", authorization: `Bearer ${SECRET}` },
        { host: "secret.test", authorization: basic(SECRET) },
        { host: "secret.test", authorization: undefined },
      ]);
      const entry = await entryFor("secret.test");
      expect(entry).toMatchObject({ decision: "allowed", injected: ["REG_TOKEN"], address: "127.0.0.1" });
      expect(entry.bytesUp).toBeGreaterThan(3000);
      expect(JSON.stringify(entries)).not.toContain(SECRET);

      // Another allowed host gets the placeholder as it was sent: its tunnel is not opened.
      const other = await requestsThrough("other.test", originCa, [
        { authorization: `Bearer ${placeholder}` },
      ]);
      expect(other).toEqual([
        { status: 200, body: "other.test got POST 0\n", echo: `Bearer ${placeholder}` },
      ]);
      expect(seen.splice(0)).toEqual([{ host: "other.test", authorization: `Bearer ${placeholder}` }]);
      expect((await entryFor("other.test")).injected).toBeUndefined();
    } finally {
      await stopProxy();
      entries.splice(0);
    }
  });

  it("records a sandbox client that does not trust the run's CA, and sends nothing", async () => {
    await startProxy(true);
    try {
      await expect(
        requestsThrough("secret.test", originCa, [{ authorization: `Bearer ${placeholder}` }]),
      ).rejects.toThrow(/self-signed|unable to (get|verify)/);
      expect(seen).toEqual([]);
      const entry = await entryFor("secret.test");
      expect(entry.reason).toMatch(/the client must trust the CA agent-ci installs/);
      expect(entry.injected).toBeUndefined();
    } finally {
      await stopProxy();
      entries.splice(0);
    }
  });

  it("sends nothing to a host whose certificate it cannot verify", async () => {
    await startProxy(false);
    try {
      const [result] = await requestsThrough("secret.test", runCa, [
        { authorization: `Bearer ${placeholder}` },
      ]);
      expect(result?.status).toBe(502);
      expect(result?.body).toMatch(/secret\.test:\d+ failed: .*(self-signed|unable to (get|verify))/);
      expect(seen).toEqual([]);
      const entry = await entryFor("secret.test");
      expect(entry.reason).toMatch(/upstream failed/);
    } finally {
      await stopProxy();
      entries.splice(0);
    }
  });
});
