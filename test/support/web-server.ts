// A local HTTPS server for WebFetch's tests (nothing outside this machine is reachable): one server on
// 127.0.0.1 answering for the test names (web.test, other.test, …) with a certificate from a CA made for the
// run, serving routes in the reference cases' `web.routes` shape, plus the hostile ones RELIABILITY W1–W4
// names (a redirect loop, a redirect to www., a gzip bomb, an endless body, a trickle, invalid UTF-8, 204, 5xx).
import { listenOnLoopback } from "./loopback.js";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { fixtureBytes } from "../../scripts/reference-fixtures.mjs";
import { makeCertificates } from "./egress-servers.js";

export const WEB_NAMES = ["web.test", "other.test", "meta.test", "private.test"] as const;

/** A route as the reference cases write it. */
export interface WebRoute {
  status?: number;
  headers?: Record<string, string>;
  content_type?: string;
  body?:
    | string
    | {
        prefix?: string;
        repeat?: { text: string; count: number };
        suffix?: string;
        /** A PNG as the recorded cases describe it (2×2 red unless given). */
        png?: { width?: number; height?: number; rgb?: [number, number, number] };
      };
}

export interface WebServer {
  port: number;
  caFile: string;
  /** Requests seen, as "host path". */
  seen: string[];
  /** Origins for a test name: https://NAME:PORT. */
  origin(name: (typeof WEB_NAMES)[number]): string;
  close(): Promise<void>;
}

function bodyOf(route: WebRoute): Buffer {
  const body = route.body;
  if (body === undefined) return Buffer.alloc(0);
  if (typeof body === "string") return Buffer.from(body);
  if (body.png) return fixtureBytes({ png: body.png });
  return Buffer.from(
    (body.prefix ?? "") +
      (body.repeat ? body.repeat.text.repeat(body.repeat.count) : "") +
      (body.suffix ?? ""),
  );
}

/** Routes every test may use, besides the ones a test passes. */
function hostileRoutes(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const url = req.url ?? "";
  if (url === "/loop") {
    res.writeHead(302, { location: "/loop" }).end();
    return true;
  }
  if (url === "/redirect-www") {
    // A redirect WebFetch follows by itself (the same site, give or take www.): the new name is decided anew.
    res.writeHead(302, { location: `https://www.${req.headers.host ?? ""}/page` }).end();
    return true;
  }
  if (url === "/gzip-bomb") {
    // 64 MB of zeros, compressed to a few dozen kilobytes.
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024));
    res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" }).end(bomb);
    return true;
  }
  if (url === "/endless") {
    res.writeHead(200, { "content-type": "text/plain" });
    const chunk = Buffer.alloc(64 * 1024, "a");
    const pump = () => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once("drain", pump);
    };
    pump();
    return true;
  }
  if (url === "/trickle") {
    res.writeHead(200, { "content-type": "text/plain" });
    const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write("x")), 200);
    res.on("close", () => clearInterval(timer));
    return true;
  }
  if (url === "/latin1-bad-utf8") {
    res
      .writeHead(200, { "content-type": "text/plain; charset=utf-8" })
      .end(Buffer.from([0x61, 0xff, 0xfe, 0x62]));
    return true;
  }
  if (url === "/no-content") {
    res.writeHead(204).end();
    return true;
  }
  if (url === "/server-error") {
    res.writeHead(500, { "content-type": "text/html" }).end("<html><body>boom</body></html>");
    return true;
  }
  if (url === "/binary") {
    res.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.from([0, 1, 2, 3]));
    return true;
  }
  return false;
}

export async function startWebServer(routes: Record<string, WebRoute> = {}): Promise<WebServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-web-"));
  const { key, cert, caFile } = makeCertificates(dir, "127.0.0.1", WEB_NAMES);
  const seen: string[] = [];
  let port = 0;
  const server = https.createServer({ key, cert }, (req, res) => {
    const host = (req.headers.host ?? "").replace(/:\d+$/, "");
    seen.push(`${host} ${req.url ?? ""}`);
    if (hostileRoutes(req, res)) return;
    const route = routes[(req.url ?? "").split("?")[0] ?? ""];
    if (!route) {
      res.writeHead(404, { "content-type": "text/html" }).end("<html><body>not here</body></html>");
      return;
    }
    const headers: Record<string, string> = { ...(route.headers ?? {}) };
    for (const [name, value] of Object.entries(headers))
      headers[name] = value
        .replaceAll("$WEB2", `https://other.test:${port}`)
        .replaceAll("$WEB", `https://web.test:${port}`);
    headers["content-type"] ??= route.content_type ?? "text/html; charset=utf-8";
    res.writeHead(route.status ?? 200, headers).end(bodyOf(route));
  });
  const listening = await listenOnLoopback(server);
  port = listening.port;
  return {
    port,
    caFile,
    seen,
    origin: (name) => `https://${name}:${port}`,
    async close() {
      await listening.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
