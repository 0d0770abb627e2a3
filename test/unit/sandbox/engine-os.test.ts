// An engine that runs Windows containers (Docker on a GitHub-hosted Windows runner) is refused when it is
// first reached, naming its OS, before any image is asked for. No such engine runs here: a fake Engine API on
// a Unix socket answers the ping and the version request with what Docker's Windows engine sends.
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterEach, describe, expect, it } from "vitest";
import { pingEngine } from "../../../src/sandbox/engine/engine.js";
import { EngineError } from "../../../src/sandbox/sandbox.js";

let server: http.Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** An Engine API on a fresh Unix socket that reports `osName`; every other request is a 404. */
async function fakeEngine(osName: string): Promise<{ socket: string; requests: string[] }> {
  const socket = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-engine-")), "docker.sock");
  const requests: string[] = [];
  server = http.createServer((req, res) => {
    const url = req.url ?? "";
    requests.push(`${req.method} ${url}`);
    if (url.endsWith("/_ping")) return res.writeHead(200, { "Content-Type": "text/plain" }).end("OK");
    if (url.endsWith("/version"))
      return res.writeHead(200, { "Content-Type": "application/json" }).end(
        JSON.stringify({
          Platform: { Name: "Docker Engine - Community" },
          Version: "24.0.7",
          ApiVersion: "1.43",
          MinAPIVersion: "1.24",
          Os: osName,
          Arch: "amd64",
          KernelVersion: "10.0 20348 (20348.1.amd64fre.fe_release.210507-1500)",
          Components: [{ Name: "Engine", Version: "24.0.7", Details: { Os: osName } }],
        }),
      );
    res.writeHead(404, { "Content-Type": "application/json" }).end('{"message":"page not found"}');
  });
  await new Promise<void>((resolve) => server!.listen(socket, resolve));
  return { socket, requests };
}

describe("reaching an engine", () => {
  it("refuses one that runs Windows containers, naming its OS, and asks it for nothing more", async () => {
    const engine = await fakeEngine("windows");
    const error = await pingEngine(new Docker({ socketPath: engine.socket })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as Error).message).toMatch(
      /runs windows containers; agent-ci's sandbox is a Linux container/,
    );
    expect(engine.requests.map((r) => r.replace(/\/v[\d.]+\//, "/"))).toEqual(
      expect.arrayContaining(["GET /_ping", "GET /version"]),
    );
    expect(engine.requests).toHaveLength(2);
  });

  it("takes one that runs Linux containers", async () => {
    const engine = await fakeEngine("linux");
    const facts = await pingEngine(new Docker({ socketPath: engine.socket }));
    expect(facts).toMatchObject({ version: "24.0.7", apiVersion: "1.43", architecture: "amd64" });
  });
});
