// agent-ci against a remote engine: DOCKER_HOST=tcp://127.0.0.1:PORT with DOCKER_TLS_VERIFY=1 and
// DOCKER_CERT_PATH, as `docker -H tcp://… --tlsverify` is reached. A running dockerd cannot gain a TLS
// listener without a restart, so the "remote" end here is a TLS-terminating proxy (mutual TLS: the client
// must present a certificate from the test CA) in front of the local engine's socket. Certificates are
// made with openssl for this run. Everything, hijacked exec streams included, goes through the proxy.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerSandbox, newRunId } from "../../src/sandbox/docker-sandbox.js";
import { egressOptions } from "../../src/sandbox/egress/allowlist.js";
import { createDockerClient } from "../../src/sandbox/engine/docker-client.js";
import { LABEL_RUN, pingEngine } from "../../src/sandbox/engine/engine.js";
import { EngineError } from "../../src/sandbox/sandbox.js";
import { hostAddressForContainers, startOriginServers } from "../support/egress-servers.js";
import { applyToCopy, makeWorkspace } from "../support/workspace.js";
import { EXAMPLE, labelled, runScripted } from "./support.js";
import { ENGINE_SERVER, makeCa, makeCert } from "../support/tls-certs.js";

const ENV_KEYS = ["DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"] as const;

function localEngineSocket(): string {
  const host = process.env.DOCKER_HOST;
  if (host?.startsWith("unix://")) return host.slice("unix://".length);
  if (host) throw new Error(`the TLS proxy needs a local engine socket; DOCKER_HOST is ${host}`);
  return "/var/run/docker.sock";
}

describe("agent-ci through a remote engine over TCP with mutual TLS", () => {
  const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-tls-"));
  const dirs = {
    ca: path.join(root, "ca"),
    server: path.join(root, "server"),
    client: path.join(root, "client"),
    otherCa: path.join(root, "other-ca"),
    stranger: path.join(root, "stranger"),
  };
  let server: tls.Server;
  let port = 0;
  let authorized = 0;
  let refused = 0;
  /** Bytes the proxy carried from agent-ci to the engine. */
  let carried = 0;
  const open = new Set<net.Socket>();
  const setEnv = (certPath: string) => {
    process.env.DOCKER_HOST = `tcp://127.0.0.1:${port}`;
    process.env.DOCKER_TLS_VERIFY = "1";
    process.env.DOCKER_CERT_PATH = certPath;
  };

  beforeAll(async () => {
    const socketPath = localEngineSocket();
    makeCa(dirs.ca, "agent-ci test CA");
    makeCert(dirs.ca, dirs.server, ENGINE_SERVER, "agent-ci-server");
    makeCert(dirs.ca, dirs.client, "client", "agent-ci-client");
    makeCa(dirs.otherCa, "someone else's CA");
    makeCert(dirs.otherCa, dirs.stranger, "client", "agent-ci-client");
    const read = (dir: string, name: string) => fs.readFileSync(path.join(dir, name));
    server = tls.createServer(
      {
        key: read(dirs.server, "key.pem"),
        cert: read(dirs.server, "cert.pem"),
        ca: read(dirs.ca, "ca.pem"),
        requestCert: true,
        rejectUnauthorized: true,
        // The copy-in ends stdin and then reads tar's answer: half-close both ways, as dockerd's own TLS
        // listener does (Go's tls.Conn.CloseWrite).
        allowHalfOpen: true,
      },
      (client) => {
        authorized += 1;
        const engine = net.connect({ path: socketPath, allowHalfOpen: true });
        open.add(client).add(engine);
        client.on("close", () => open.delete(client));
        engine.on("close", () => open.delete(engine));
        client.on("data", (d: Buffer) => {
          carried += d.length;
        });
        client.pipe(engine).pipe(client);
        client.on("error", () => engine.destroy());
        engine.on("error", () => client.destroy());
      },
    );
    server.on("connection", (raw: net.Socket) => {
      open.add(raw);
      raw.on("close", () => open.delete(raw));
    });
    server.on("tlsClientError", () => {
      refused += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as net.AddressInfo).port;
    setEnv(dirs.client);
  });

  afterAll(async () => {
    for (const k of ENV_KEYS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    for (const socket of open) socket.destroy(); // keep-alive connections of the https agent
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("answers a ping over https with the client certificate", async () => {
    const docker = createDockerClient();
    expect((docker.modem as unknown as { protocol: string }).protocol).toBe("https");
    const before = authorized;
    const engine = await pingEngine(docker);
    expect(engine.apiVersion).toMatch(/^\d+\.\d+$/);
    expect(authorized).toBeGreaterThan(before);
  });

  it("runs a scripted fix end to end through the proxy; the patch applies; no container is left", async () => {
    const before = carried;
    const run = await runScripted({
      script: path.join(EXAMPLE, "fix.script.json"),
      mode: "acceptEdits",
      allow: ["Bash(npm test)"],
    });
    expect(run.outcome.exitReason, run.logs.join("\n")).toBe("completed");
    expect(run.report?.toolCalls.map((c) => c.tool)).toEqual(["Bash", "Grep", "Read", "Edit", "Bash"]);
    expect(run.report?.toolCalls.at(-1)?.exitCode).toBe(0);
    expect(run.report?.warnings.filter((w) => w.kind === "weak_hardening")).toEqual([]);
    const copy = applyToCopy(EXAMPLE, Buffer.from(run.patch));
    expect(fs.readFileSync(path.join(copy, "src/calc.js"), "utf8")).toContain("return sum / values.length;");
    // The run's API calls (create, exec attach, the copy-in's tar stream, inspect, remove) came through TLS.
    expect(carried - before).toBeGreaterThan(fs.statSync(path.join(EXAMPLE, "src/calc.js")).size);
    expect(await labelled(createDockerClient(), run.outcome.runId)).toEqual([]);
  }, 180_000);

  // The egress sidecar needs nothing from the client's host but API calls: the same allowlist holds when the
  // engine is reached over TLS (origin servers on the engine host's bridge, reachable here on loopback).
  it("keeps --network allowlist's only way out through the sidecar over the remote engine", async () => {
    const docker = createDockerClient();
    const host = await hostAddressForContainers(docker);
    const origins = await startOriginServers(host);
    const runId = newRunId();
    const before = carried;
    try {
      await using sandbox = await DockerSandbox.start({
        runId,
        workspaceDir: makeWorkspace({ "a.txt": "a\n" }),
        network: "allowlist",
        egress: egressOptions(["allowed.test"], [`allowed.test=${host}`, `blocked.test=${host}`]),
      });
      const sh = async (script: string) =>
        (await sandbox.exec({ script, mergeStderr: true, timeoutMs: 60_000 })).stdout.toString("utf8");
      expect(await sh(`curl -sS http://allowed.test:${origins.httpPort}/remote`)).toBe(
        "hello from allowed.test over http\n",
      );
      expect(await sh(`curl -sS http://blocked.test:${origins.httpPort}/`)).toContain(
        "agent-ci's network policy refused blocked.test",
      );
      expect(
        await sh(
          `curl -sS -m 5 --noproxy '*' http://${host}:${origins.httpPort}/ && echo REACHED || echo NO-ROUTE`,
        ),
      ).toMatch(/NO-ROUTE\n$/);
      expect(carried).toBeGreaterThan(before);
    } finally {
      await origins.close();
    }
    expect(await labelled(docker, runId)).toEqual([]);
    expect((await docker.listVolumes({ filters: { label: [`${LABEL_RUN}=${runId}`] } })).Volumes).toEqual([]);
  }, 180_000);

  it("fails before anything starts, saying where it looked, when the client certificate is not the engine's CA's", async () => {
    setEnv(dirs.stranger);
    try {
      const before = refused;
      // The stranger's ca.pem does not vouch for the server either: both sides refuse.
      const error = await pingEngine(createDockerClient()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect((error as Error).message).toContain(
        `no Docker engine answers at DOCKER_HOST=tcp://127.0.0.1:${port}`,
      );
      // With the right CA but the stranger's certificate, the server refuses the handshake.
      fs.copyFileSync(path.join(dirs.ca, "ca.pem"), path.join(dirs.stranger, "ca.pem"));
      const refusedByServer = await pingEngine(createDockerClient()).catch((e: unknown) => e);
      expect(refusedByServer).toBeInstanceOf(EngineError);
      expect(refused).toBeGreaterThan(before);
    } finally {
      setEnv(dirs.client);
    }
  });

  it("refuses plain http on the TLS port (DOCKER_TLS_VERIFY unset and no certificates)", async () => {
    delete process.env.DOCKER_TLS_VERIFY;
    delete process.env.DOCKER_CERT_PATH;
    try {
      const docker = new Docker();
      expect((docker.modem as unknown as { protocol: string }).protocol).toBe("http");
      await expect(pingEngine(docker)).rejects.toBeInstanceOf(EngineError);
    } finally {
      setEnv(dirs.client);
    }
  });
});
