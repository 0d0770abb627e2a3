// A man-in-the-middle for the Docker Engine API on a unix socket, for fault injection: point DOCKER_HOST at
// `proxy.dockerHost` and every request goes to the real engine, except those a test wants to hang (D6: an
// API call that never answers) or rewrite (D11: an engine that silently ignores a setting, modelled by
// dropping it from the create request). Requests are parsed only as far as needed: request line, headers,
// Content-Length bodies; a hijacked stream (exec start, attach) is passed through raw.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export interface ProxyOptions {
  /** The engine's socket (default: DOCKER_HOST if unix://, else /var/run/docker.sock). */
  target?: string;
  /** Never answer requests for which this returns true (the connection stays open, silent). */
  hang?: (method: string, path: string) => boolean;
  /** Rewrite the JSON body of POST /containers/create. */
  rewriteCreate?: (body: Record<string, unknown>) => Record<string, unknown>;
}

export interface DockerProxy {
  dockerHost: string;
  /** Requests seen, as "METHOD /path". */
  requests: string[];
  /** Requests that were hung. */
  hung: string[];
  close(): Promise<void>;
}

function defaultTarget(): string {
  const host = process.env.DOCKER_HOST;
  return host?.startsWith("unix://") ? host.slice("unix://".length) : "/var/run/docker.sock";
}

export async function startDockerProxy(options: ProxyOptions = {}): Promise<DockerProxy> {
  const target = options.target ?? defaultTarget();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-proxy-"));
  const socketPath = path.join(dir, "docker.sock");
  const sockets = new Set<net.Socket>();
  const requests: string[] = [];
  const hung: string[] = [];

  // Half-open both ways: a hijacked exec's stdin ends (the tar stream of the copy-in) while its output goes on.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    sockets.add(client);
    const upstream = net.connect({ path: target, allowHalfOpen: true });
    sockets.add(upstream);
    upstream.pipe(client);
    let pending: Buffer = Buffer.alloc(0);
    let raw = false;
    let bodyLeft = 0;
    let rawAfterBody = false;
    let stalled = false;
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", close);
    upstream.on("error", close);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());

    const pump = () => {
      while (!stalled && pending.length) {
        if (raw) {
          upstream.write(pending);
          pending = Buffer.alloc(0);
          return;
        }
        if (bodyLeft > 0) {
          const n = Math.min(bodyLeft, pending.length);
          upstream.write(pending.subarray(0, n));
          pending = pending.subarray(n);
          bodyLeft -= n;
          if (bodyLeft === 0 && rawAfterBody) raw = true;
          continue;
        }
        const end = pending.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = pending.subarray(0, end).toString("latin1");
        const [requestLine = "", ...headerLines] = head.split("\r\n");
        const [method = "", url = ""] = requestLine.split(" ");
        const pathOnly = url.split("?")[0] ?? "";
        const header = (name: string) =>
          headerLines
            .find((l) => l.toLowerCase().startsWith(`${name}:`))
            ?.slice(name.length + 1)
            .trim();
        const length = Number(header("content-length") ?? 0);
        requests.push(`${method} ${pathOnly}`);
        if (options.hang?.(method, pathOnly)) {
          hung.push(`${method} ${pathOnly}`);
          stalled = true;
          return;
        }
        const chunked = /chunked/i.test(header("transfer-encoding") ?? "");
        const upgrade = /upgrade/i.test(header("connection") ?? "") || header("upgrade") !== undefined;
        if (options.rewriteCreate && method === "POST" && /\/containers\/create$/.test(pathOnly)) {
          if (pending.length < end + 4 + length) return; // wait for the whole body
          const body = JSON.parse(pending.subarray(end + 4, end + 4 + length).toString("utf8")) as Record<
            string,
            unknown
          >;
          const rewritten = Buffer.from(JSON.stringify(options.rewriteCreate(body)));
          const lines = headerLines.filter((l) => !l.toLowerCase().startsWith("content-length:"));
          upstream.write(
            `${[requestLine, ...lines, `Content-Length: ${rewritten.length}`].join("\r\n")}\r\n\r\n`,
          );
          upstream.write(rewritten);
          pending = pending.subarray(end + 4 + length);
          continue;
        }
        upstream.write(pending.subarray(0, end + 4));
        pending = pending.subarray(end + 4);
        if (chunked) {
          raw = true; // not parsed further: the rest of this connection passes through
          continue;
        }
        bodyLeft = length;
        // A hijacked stream: the body (if any) goes first, then the connection is raw both ways.
        rawAfterBody = upgrade;
        if (upgrade && bodyLeft === 0) raw = true;
      }
    };
    client.on("data", (chunk: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      pump();
    });
    client.on("end", () => {
      if (!stalled) upstream.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    dockerHost: `unix://${socketPath}`,
    requests,
    hung,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
