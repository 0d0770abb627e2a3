// `--network allowlist` against the real engine, on loopback only: origin servers on this host's bridge
// address under names the sidecar maps (`--allow-private-host NAME=ADDRESS`, the documented way to a
// private host), curl in the sandbox through the proxy, and every way around it tried and failing.
import fs from "node:fs";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerSandbox, newRunId } from "../../src/sandbox/docker-sandbox.js";
import { egressOptions } from "../../src/sandbox/egress/allowlist.js";
import { egressNames } from "../../src/sandbox/egress/sidecar.js";
import { LABEL_RUN } from "../../src/sandbox/engine.js";
import { hostAddressForContainers, type OriginServers, startOriginServers } from "../support/egress-servers.js";
import { makeWorkspace } from "../support/workspace.js";

const docker = new Docker();

describe("a sandbox with --network allowlist", () => {
  let sandbox: DockerSandbox;
  let origins: OriginServers;
  let host: string;
  const runId = newRunId();

  beforeAll(async () => {
    host = await hostAddressForContainers(docker);
    origins = await startOriginServers(host);
    const workspace = makeWorkspace({ "ca.pem": fs.readFileSync(origins.caFile) });
    sandbox = await DockerSandbox.start({
      runId,
      workspaceDir: workspace,
      network: "allowlist",
      egress: egressOptions(["allowed.test", "localhost"], [`allowed.test=${host}`, `blocked.test=${host}`]),
    });
  });
  afterAll(async () => {
    await sandbox?.dispose();
    await origins?.close();
    expect(await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${runId}`] } })).toEqual([]);
    expect((await docker.listVolumes({ filters: { label: [`${LABEL_RUN}=${runId}`] } })).Volumes).toEqual([]);
  });

  const sh = async (script: string, caller = "toolu_test") => {
    const res = await sandbox.exec({ script, mergeStderr: true, timeoutMs: 60_000, caller });
    return { code: res.exitCode, out: res.stdout.toString("utf8") };
  };
  const ledger = async () => {
    await sandbox.egress?.sync();
    return sandbox.egress?.entries ?? [];
  };

  it("reaches an allowed name over HTTP and HTTPS through the proxy, tagged with the calling tool call", async () => {
    expect(await sh(`curl -sS http://allowed.test:${origins.httpPort}/plain`, "toolu_http")).toEqual({ code: 0, out: "hello from allowed.test over http\n" });
    expect(await sh(`curl -sS --cacert /workspace/ca.pem https://allowed.test:${origins.httpsPort}/tls`, "toolu_https")).toEqual({ code: 0, out: "hello from allowed.test over https\n" });
    const entries = await ledger();
    expect(entries.find((e) => e.caller === "toolu_http")).toMatchObject({ host: "allowed.test", kind: "http", decision: "allowed", address: host });
    expect(entries.find((e) => e.caller === "toolu_https")).toMatchObject({ host: "allowed.test", kind: "connect", decision: "allowed" });
  });

  it("refuses a name off the allowlist with the policy's message", async () => {
    const plain = await sh(`curl -sS http://blocked.test:${origins.httpPort}/`, "toolu_blocked");
    expect(plain.out).toContain("agent-ci's network policy refused blocked.test");
    const tls = await sh(`curl -sS --cacert /workspace/ca.pem https://blocked.test:${origins.httpsPort}/`, "toolu_blocked_tls");
    expect(tls.code).not.toBe(0);
    expect(tls.out).toMatch(/CONNECT tunnel failed, response 403/);
    const entries = await ledger();
    expect(entries.filter((e) => e.caller?.startsWith("toolu_blocked")).map((e) => [e.kind, e.decision, e.reason])).toEqual([
      ["http", "denied", "not on the allowlist"],
      ["connect", "denied", "not on the allowlist"],
    ]);
    expect(origins.seen.some((s) => s.includes("blocked.test"))).toBe(false);
  });

  it.each([
    ["an IP literal", () => `curl -sS -k https://${host}:${origins.httpsPort}/`, /IP address/],
    ["the metadata address", () => "curl -sS http://169.254.169.254/latest/meta-data/", /IP address/],
    ["a name resolving to loopback without the opt-in", () => "curl -sS --noproxy '' http://localhost:9/", /non-public address 127\.0\.0\.1/],
  ])("refuses %s at the proxy", async (what, script, reason) => {
    const caller = `toolu_${what.replace(/\W+/g, "_")}`;
    const res = await sh(script(), caller);
    expect(res.out).toMatch(/agent-ci's network policy refused|CONNECT tunnel failed, response 403/);
    expect((await ledger()).find((e) => e.caller === caller)).toMatchObject({ decision: "denied", reason: expect.stringMatching(reason) });
  });

  it("cuts a tunnel whose TLS server name differs from its CONNECT host", async () => {
    const proxy = "127.0.0.1:3128";
    const res = await sh(`openssl s_client -proxy ${proxy} -connect allowed.test:${origins.httpsPort} -servername blocked.test -CAfile /workspace/ca.pem </dev/null`, "toolu_sni");
    expect(res.code).not.toBe(0);
    expect((await ledger()).find((e) => e.caller === undefined && e.reason?.includes("TLS server name"))).toMatchObject({
      host: "allowed.test",
      decision: "denied",
      reason: "the TLS server name blocked.test differs from the CONNECT host",
    });
  });

  it("has no way out around the proxy: no direct connection, no outside DNS", async () => {
    const direct = await sh(`curl -sS -m 5 --noproxy '*' http://${host}:${origins.httpPort}/`);
    expect(direct.code).not.toBe(0);
    const tcp = await sh(`timeout 5 bash -c 'echo > /dev/tcp/${host}/${origins.httpPort}' && echo OPEN || echo CLOSED`);
    expect(tcp.out.trim().split("\n").pop()).toBe("CLOSED");
    const dns = await sh("getent hosts registry.npmjs.org deb.debian.org && echo RESOLVED || echo UNRESOLVED");
    expect(dns.out.trim().split("\n").pop()).toBe("UNRESOLVED");
    const info = await docker.getContainer(`agent-ci-${runId}`).inspect();
    expect(info.HostConfig.NetworkMode).toBe("none");
    const interfaces = await sh("ls /sys/class/net");
    expect(interfaces.out.trim()).toBe("lo");
    expect(origins.seen.filter((s) => s.startsWith(`http://${host}`))).toEqual([]);
  });

  it("leaves the sidecar and its volume to be removed with the sandbox", async () => {
    const names = egressNames(runId);
    expect((await docker.getContainer(names.sidecar).inspect()).State.Running).toBe(true);
    expect((await docker.getVolume(names.volume).inspect()).Name).toBe(names.volume);
  });
});
