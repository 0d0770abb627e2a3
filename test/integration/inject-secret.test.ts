// `--inject-secret` through the CLI on the real engine: a private npm registry on this host's bridge address
// (HTTPS with a test CA, reached under a name the sidecar maps) that serves a small package only with the
// right token. The token is given to agent-ci in its environment; the sandbox holds a placeholder, and the
// egress proxy puts the token in for the registry only. npm installs the package, while nothing in the
// sandbox (its environment, every readable file, every process's environment and command line) and nothing
// agent-ci writes holds the token; the placeholder sent to another allowed host arrives as the placeholder.
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import Docker from "dockerode";
import tar from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { DockerSandbox, newRunId } from "../../src/sandbox/docker-sandbox.js";
import { egressOptions } from "../../src/sandbox/egress/allowlist.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { hostAddressForContainers, makeCertificates } from "../support/egress-servers.js";
import { type RecordingHost, startRecordingHost } from "../support/raw-http.js";
import { until } from "../support/until.js";
import { makeWorkspace } from "../support/workspace.js";

const docker = new Docker();
/** The registry's token: assembled at run time, fresh for each run of the test. */
const TOKEN = ["npm", "regtoken", randomBytes(16).toString("hex")].join("_");
/** A pattern that matches the token but is not the token (its last character in brackets): a grep for it never finds its own command line. */
const TOKEN_PATTERN = `${TOKEN.slice(0, -1)}[${TOKEN.slice(-1)}]`;
const PACKAGE = "tiny-private-pkg";

/** A one-file npm package as `npm pack` would make it. */
async function packageTarball(): Promise<Buffer> {
  const pack = tar.pack();
  const files: Record<string, string> = {
    "package/package.json": JSON.stringify({ name: PACKAGE, version: "1.0.0", main: "index.js" }),
    "package/index.js": 'module.exports = "private package loaded";\n',
  };
  for (const [name, body] of Object.entries(files)) pack.entry({ name, mode: 0o644 }, body);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack.pipe(zlib.createGzip())) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

interface Seen {
  host: string;
  url: string;
  authorization?: string;
}

/** The registry (registry.test) and another host (other.test) on one HTTPS server; every request recorded. */
async function startRegistry(address: string): Promise<{
  port: number;
  caFile: string;
  seen: Seen[];
  close: () => Promise<void>;
}> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-inject-registry-"));
  const { key, cert, caFile } = makeCertificates(dir, address, ["registry.test", "other.test"]);
  const tarball = await packageTarball();
  const integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`;
  const shasum = createHash("sha1").update(tarball).digest("hex");
  const seen: Seen[] = [];
  let port = 0;
  const server = https.createServer({ key, cert }, (req, res) => {
    const host = (req.headers.host ?? "").replace(/:\d+$/, "");
    seen.push({ host, url: req.url ?? "", authorization: req.headers.authorization });
    if (host === "other.test") return void res.writeHead(200).end("other.test saw the request\n");
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return void res
        .writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" })
        .end('{"error":"a token is required"}');
    const base = `https://registry.test:${port}`;
    if (req.url === `/${PACKAGE}`) {
      const version = {
        name: PACKAGE,
        version: "1.0.0",
        main: "index.js",
        dist: { tarball: `${base}/${PACKAGE}/-/${PACKAGE}-1.0.0.tgz`, integrity, shasum },
      };
      return void res
        .writeHead(200, { "content-type": "application/json" })
        .end(
          JSON.stringify({ name: PACKAGE, "dist-tags": { latest: "1.0.0" }, versions: { "1.0.0": version } }),
        );
    }
    if (req.url === `/${PACKAGE}/-/${PACKAGE}-1.0.0.tgz`)
      return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(tarball);
    res.writeHead(404).end("{}");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, address, resolve);
  });
  port = (server.address() as AddressInfo).port;
  return {
    port,
    caFile,
    seen,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every file under `dir`, as text. */
function allFiles(dir: string): Array<{ file: string; text: string }> {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const file = path.join(e.parentPath, e.name);
      return { file, text: fs.readFileSync(file, "latin1") };
    });
}

describe("--inject-secret through the CLI", () => {
  let registry: Awaited<ReturnType<typeof startRegistry>>;
  let host: string;

  beforeAll(async () => {
    host = await hostAddressForContainers(docker);
    registry = await startRegistry(host);
  });
  afterAll(async () => {
    await registry?.close();
  });

  it("B8 --inject-secret: npm installs from a private registry with the token the proxy adds, while the sandbox, its files, its processes and every output hold only the placeholder", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-inject-cli-"));
    const registryUrl = `https://registry.test:${registry.port}/`;
    const npmrc = [`registry=${registryUrl}`, `//registry.test:${registry.port}/:_authToken=\${REG_TOKEN}`]
      .map((line) => `'${line}'`)
      .join(" ");
    const bash = (id: string, command: string) => [
      { id, name: "Bash", input: { command, timeout: 600_000 } },
    ];
    const turns = [
      bash(
        "toolu_install",
        `npm install --no-audit --no-fund --no-update-notifier ${PACKAGE}@1.0.0 2>&1; echo "rc=$?"; node -e 'console.log(require("${PACKAGE}"))'`,
      ),
      bash("toolu_env", "env"),
      bash(
        "toolu_grep",
        // Each grep looks for the token and for a control that must be found (the package's text in its
        // file, the placeholder in the processes' environments), so a grep that read nothing cannot pass.
        `P='${TOKEN_PATTERN}'; F='private package loade[d]'; E='agent-ci-placeholder-REG_TOKE[N]'; ` +
          `grep -rsaoE "$P|$F" / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev; ` +
          `grep -saoE "$P|$E" /proc/[0-9]*/environ /proc/[0-9]*/cmdline; echo grep-done`,
      ),
      bash(
        "toolu_other",
        `curl -sS -H "Authorization: Bearer $REG_TOKEN" https://other.test:${registry.port}/echo`,
      ),
    ];
    const scriptFile = path.join(dir, "script.json");
    fs.writeFileSync(scriptFile, JSON.stringify({ turns }));
    const out = path.join(dir, "out");
    const workspace = makeWorkspace({
      "package.json": JSON.stringify({ name: "app", version: "1.0.0", private: true }, null, 2),
    });
    const child = spawn(
      "node",
      [
        path.resolve("bin/agent-ci.js"),
        "run",
        ...["--workspace", workspace, "--script", scriptFile, "--out", out],
        ...["--mode", "bypassPermissions", "--network", "allowlist"],
        ...["--allow-domain", "registry.test", "--allow-domain", "other.test"],
        ...["--allow-private-host", `registry.test=${host}`, "--allow-private-host", `other.test=${host}`],
        ...["--ca-cert", registry.caFile],
        ...["--inject-secret", "REG_TOKEN=authorization:registry.test"],
        // Setup configures npm (it reads ${REG_TOKEN} from its environment: the placeholder) and reaches
        // the registry too.
        ...["--setup", `mkdir -p ~ && printf '%s\\n' ${npmrc} > ~/.npmrc && npm view ${PACKAGE} version`],
      ],
      {
        env: { ...process.env, ANTHROPIC_API_KEY: "", REG_TOKEN: TOKEN },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    expect(code, stderr).toBe(0);
    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    const result = (id: string) => report.toolCalls.find((c) => c.id === id)?.resultPreview ?? "";

    // npm reached the registry with the token, for the package and its tarball.
    expect(result("toolu_install"), result("toolu_install")).toContain("rc=0");
    expect(result("toolu_install")).toContain("private package loaded");
    const fromRegistry = registry.seen.filter((s) => s.host === "registry.test");
    expect(fromRegistry.map((s) => s.url)).toEqual(
      expect.arrayContaining([`/${PACKAGE}`, `/${PACKAGE}/-/${PACKAGE}-1.0.0.tgz`]),
    );
    expect(fromRegistry.every((s) => s.authorization === `Bearer ${TOKEN}`)).toBe(true);

    // The sandbox's environment holds the placeholder, and nothing readable in it holds the token.
    const placeholder = /REG_TOKEN=(agent-ci-placeholder-REG_TOKEN-[0-9a-f]{24})\b/.exec(
      result("toolu_env"),
    )?.[1];
    expect(placeholder, result("toolu_env")).toBeDefined();
    expect(result("toolu_env").match(/REG_TOKEN=.*/g)).toEqual([`REG_TOKEN=${placeholder}`]);
    const found = result("toolu_grep").trim().split("\n");
    expect(found).toContain(`/workspace/node_modules/${PACKAGE}/index.js:private package loaded`);
    expect(found.some((line) => /^\/proc\/\d+\/environ:agent-ci-placeholder-REG_TOKEN$/.test(line))).toBe(
      true,
    );
    expect(
      found.filter((line) => !/:(private package loaded|agent-ci-placeholder-REG_TOKEN)$/.test(line)),
    ).toEqual(["grep-done"]);

    // The placeholder sent to another allowed host arrives as the placeholder.
    expect(result("toolu_other")).toContain("other.test saw the request");
    expect(registry.seen.filter((s) => s.host === "other.test")).toEqual([
      { host: "other.test", url: "/echo", authorization: `Bearer ${placeholder}` },
    ]);

    // The ledger says the proxy put it in, for the registry only, and names no value.
    const connections = report.egress?.connections ?? [];
    expect(report.egress?.injectSecrets).toEqual(["REG_TOKEN=authorization:registry.test"]);
    expect(
      connections.filter((c) => c.host === "registry.test").some((c) => c.injected?.includes("REG_TOKEN")),
    ).toBe(true);
    expect(
      connections.filter((c) => c.host === "registry.test" && c.injected?.length).map((c) => c.caller),
    ).toEqual(expect.arrayContaining(["setup", "toolu_install"]));
    expect(connections.filter((c) => c.host === "other.test").map((c) => c.injected)).toEqual([undefined]);

    // Nothing agent-ci wrote or printed holds the token.
    for (const { file, text } of allFiles(out)) expect(text.includes(TOKEN), file).toBe(false);
    expect(stdout.includes(TOKEN) || stderr.includes(TOKEN)).toBe(false);
    expect(
      await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${report.runId}`] } }),
    ).toEqual([]);
  }, 600_000);
});

/**
 * An attacker's client for the sandbox, in Node (the image's): CONNECT and TLS through the proxy written as
 * bytes, then each request of its argv (`\r`, `\n` and `$REG_TOKEN` written out) as the bytes they say, the
 * next one once the answer to the one before has come (its body ends with `<end>`); prints every byte read.
 */
const RAW_CLIENT = String.raw`
const net = require("node:net");
const tls = require("node:tls");
const [authority, ...written] = process.argv.slice(1);
const requests = written.map((r) =>
  r.replace(/\\r/g, "\r").replace(/\\n/g, "\n").replace("$REG_TOKEN", process.env.REG_TOKEN));
const plain = net.connect(3128, "127.0.0.1", () =>
  plain.write("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n"));
let head = "";
plain.on("data", function onHead(chunk) {
  head += chunk.toString("latin1");
  if (!head.includes("\r\n\r\n")) return;
  plain.off("data", onHead);
  const secure = tls.connect({ socket: plain, servername: authority.split(":")[0] }, () =>
    secure.write(requests.shift()));
  let got = "";
  let answered = 0;
  secure.on("data", (data) => {
    got += data.toString("latin1");
    const ends = got.split("<end>").length - 1;
    if (ends === answered) return;
    answered = ends;
    if (requests.length) secure.write(requests.shift());
    else secure.end();
  });
  secure.on("close", () => process.stdout.write(got));
  secure.on("error", (e) => process.stdout.write(got + "\nclient error: " + e.message));
});
`;

describe("B10 --inject-secret through the sidecar, from an attacker's client in the sandbox", () => {
  let host: string;
  let recording: RecordingHost;
  let sandbox: DockerSandbox;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-inject-smuggle-"));

  beforeAll(async () => {
    host = await hostAddressForContainers(docker);
    const { key, cert, caFile } = makeCertificates(dir, host, ["secret.test"]);
    recording = await startRecordingHost(
      (request, res) => {
        // Echoes what it parsed, the Authorization header too (as an echo endpoint, an issue comment would).
        const body = `${request.method} ${request.url} auth=${String(request.headers.authorization)} body=${JSON.stringify(request.body)} <end>\n`;
        res
          .writeHead(200, { "content-type": "text/plain", "content-length": Buffer.byteLength(body) })
          .end(body);
      },
      { key, cert },
      host,
    );
    sandbox = await DockerSandbox.start({
      runId: newRunId(),
      workspaceDir: makeWorkspace({ "README.md": "smuggling\n" }),
      network: "allowlist",
      caCertPem: fs.readFileSync(caFile, "utf8"),
      egress: egressOptions(
        ["secret.test"],
        [`secret.test=${host}`],
        ["REG_TOKEN=authorization:secret.test"],
        (name) => (name === "REG_TOKEN" ? TOKEN : undefined),
      ),
    });
  });
  afterAll(async () => {
    await sandbox?.dispose();
    await recording?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("B10 a GET whose chunked body holds a second request reaches the host as one request, and the secret comes back to the sandbox from no echo", async () => {
    const authority = `secret.test:${recording.port}`;
    const smuggled = `POST /smuggled HTTP/1.1\r\nHost: ${authority}\r\nContent-Length: 90\r\n\r\n`;
    const chunk = `${Buffer.byteLength(smuggled).toString(16)}\r\n${smuggled}\r\n0\r\n\r\n`;
    const first = `GET /first HTTP/1.1\r\nHost: ${authority}\r\nTransfer-Encoding: chunked\r\n\r\n${chunk}`;
    const second = `GET /second HTTP/1.1\r\nHost: ${authority}\r\nAuthorization: Bearer $REG_TOKEN\r\n\r\n`;
    const quote = (text: string) => `'${text.replace(/\r/g, "\\r").replace(/\n/g, "\\n")}'`;
    const res = await sandbox.exec({
      script: `node -e '${RAW_CLIENT}' ${authority} ${quote(first)} ${quote(second)}`,
      mergeStderr: true,
      timeoutMs: 60_000,
      caller: "toolu_smuggle",
    });
    expect(res.exitCode, res.stdout.toString()).toBe(0);
    const out = res.stdout.toString("latin1");
    expect(recording.requests.map((r) => [r.method, r.url, r.body])).toEqual([
      ["GET", "/first", smuggled],
      ["GET", "/second", ""],
    ]);
    expect(recording.requests[1]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    // The host echoed the token; the sandbox read it masked.
    expect(out).toContain(`GET /second auth=Bearer ${"*".repeat(TOKEN.length)} body=""`);
    expect(out).not.toContain(TOKEN);
    // The tunnel's last report (its bytes, what was injected and kept back) comes once it has closed.
    const entry = await until("the tunnel's last report", async () => {
      await sandbox.egress?.sync();
      return sandbox.egress?.entries.find((e) => e.caller === "toolu_smuggle" && e.bytesUp > 0);
    });
    expect(entry).toMatchObject({
      host: "secret.test",
      injected: ["REG_TOKEN"],
      scrubbed: ["REG_TOKEN"],
    });
  });
});
