// Local origin servers for the egress proxy's tests (nothing outside this machine is reachable): plain HTTP
// servers and one HTTPS server with a certificate from a CA made with openssl for this run, for the names
// the tests map to them (allowed.test, blocked.test). Each answers with its own name, so a test sees which
// server a request reached.
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { DEFAULT_BASE_IMAGE } from "../../src/sandbox/image/image.js";
import { makeCa, makeCert } from "./tls-certs.js";

export const TEST_NAMES = ["allowed.test", "blocked.test", "private.test"] as const;

export interface OriginServers {
  /** Where the servers listen. */
  address: string;
  httpPort: number;
  httpsPort: number;
  /** The CA that signed the HTTPS server's certificate (PEM file). */
  caFile: string;
  /** Requests each server saw, as "name path". */
  seen: string[];
  close(): Promise<void>;
}

/** A CA and a server certificate for the test names (and the address, for the IP-literal tests). */
export function makeCertificates(
  dir: string,
  address: string,
  names: readonly string[] = TEST_NAMES,
): { key: Buffer; cert: Buffer; caFile: string } {
  makeCa(dir, "agent-ci egress test CA");
  makeCert(dir, dir, { server: { names, addresses: [address] } }, names[0]);
  return {
    key: fs.readFileSync(path.join(dir, "key.pem")),
    cert: fs.readFileSync(path.join(dir, "cert.pem")),
    caFile: path.join(dir, "ca.pem"),
  };
}

/**
 * `address` is where containers reach this host (in the certificate); `listenOn` where the servers listen:
 * the same, or every address where the engine's bridge appears only with its first container (Podman).
 */
export async function startOriginServers(address = "127.0.0.1", listenOn = address): Promise<OriginServers> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-egress-"));
  const { key, cert, caFile } = makeCertificates(dir, address);
  const seen: string[] = [];
  const handler = (scheme: string) => (req: http.IncomingMessage, res: http.ServerResponse) => {
    const name = (req.headers.host ?? "").replace(/:\d+$/, "");
    seen.push(`${scheme}://${name}${req.url ?? ""}`);
    res.writeHead(200, { "content-type": "text/plain" }).end(`hello from ${name} over ${scheme}\n`);
  };
  const plain = http.createServer(handler("http"));
  const secure = https.createServer({ key, cert }, handler("https"));
  const listen = (server: http.Server) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, listenOn, () => resolve((server.address() as AddressInfo).port));
    });
  const [httpPort, httpsPort] = await Promise.all([listen(plain), listen(secure)]);
  return {
    address,
    httpPort,
    httpsPort,
    caFile,
    seen,
    async close() {
      plain.closeAllConnections();
      secure.closeAllConnections();
      await Promise.all([new Promise((r) => plain.close(r)), new Promise((r) => secure.close(r))]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * An address of this host that containers on a bridge network reach (the default bridge's gateway), for
 * origin servers the egress sidecar connects to. Docker leaves the gateway out of the default bridge's IPAM
 * settings when docker0 already had its address as the daemon started; a container on it still reports it.
 */
export async function hostAddressForContainers(docker: import("dockerode")): Promise<string> {
  for (const name of ["bridge", "podman"]) {
    const info = (await docker
      .getNetwork(name)
      .inspect()
      .catch(() => undefined)) as { IPAM?: { Config?: Array<{ Gateway?: string }> } } | undefined;
    const gateway = info?.IPAM?.Config?.find((c) => c.Gateway && !c.Gateway.includes(":"))?.Gateway;
    if (gateway) return gateway;
  }
  const probe = await docker.createContainer({
    Image: DEFAULT_BASE_IMAGE,
    Entrypoint: ["sleep", "60"],
    HostConfig: { NetworkMode: "bridge" },
  });
  try {
    await probe.start();
    const gateway = (await probe.inspect()).NetworkSettings.Networks.bridge?.Gateway;
    if (gateway) return gateway;
  } finally {
    await probe.remove({ force: true });
  }
  throw new Error("no bridge network with an IPv4 gateway on this engine");
}
