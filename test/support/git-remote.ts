/**
 * A git remote over smart HTTP on 127.0.0.1, served by the real `git http-backend` (CGI), so `agent-ci
 * publish` fetches and pushes the way it does against github.com: with the token as an Authorization
 * header, over the same protocol. `refusePush` answers 403 to every push, as GitHub does for a token
 * without contents: write. Each repository lives under `root` as `<owner>/<name>.git`.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";

export interface GitRemoteOptions {
  /** When set, requests without `x-access-token:<token>` basic auth get 401. */
  token?: string;
}

export interface GitRemote {
  /** Server root, e.g. http://127.0.0.1:1234 */
  url: string;
  root: string;
  /** `<url>/<owner>/<name>.git` */
  repoUrl(owner: string, name: string): string;
  /** Path of the bare repository on disk. */
  repoDir(owner: string, name: string): string;
  refusePush: boolean;
  /** Every request's service and whether it carried the expected token. */
  requests: Array<{ method: string; path: string; service: string; authorized: boolean }>;
  close(): Promise<void>;
}

/** A bare copy of `source` (a git checkout) at `<root>/<owner>/<name>.git`. */
export function addBareRepo(remote: GitRemote, owner: string, name: string, source: string): string {
  const dir = remote.repoDir(owner, name);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  execFileSync("git", ["clone", "-q", "--bare", source, dir], { stdio: "pipe" });
  // GitHub serves any reachable commit by id; a plain bare repository needs this to do the same.
  execFileSync("git", ["config", "uploadpack.allowReachableSHA1InWant", "true"], { cwd: dir });
  return dir;
}

function cgi(req: IncomingMessage, res: ServerResponse, root: string, pathInfo: string, query: string): void {
  const child = spawn("git", ["http-backend"], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: "1",
      PATH_INFO: pathInfo,
      QUERY_STRING: query,
      REQUEST_METHOD: req.method ?? "GET",
      CONTENT_TYPE: String(req.headers["content-type"] ?? ""),
      HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"] ?? ""),
      GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
      REMOTE_USER: "x-access-token",
      REMOTE_ADDR: "127.0.0.1",
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  req.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let headersDone = false;
  child.stdout.on("data", (chunk: Buffer) => {
    if (headersDone) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end === -1) return;
    headersDone = true;
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon === -1) continue;
      const key = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (key.toLowerCase() === "status") status = Number.parseInt(value, 10);
      else headers[key] = value;
    }
    res.writeHead(status, headers);
    res.write(head.subarray(end + 4));
  });
  child.stderr.resume();
  child.on("close", () => {
    if (!headersDone) res.writeHead(500);
    res.end();
  });
}

export async function startGitRemote(options: GitRemoteOptions = {}): Promise<GitRemote> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-remote-"));
  const expected = options.token
    ? `basic ${Buffer.from(`x-access-token:${options.token}`).toString("base64")}`
    : undefined;
  const remote: GitRemote = {
    url: "",
    root,
    repoUrl: (owner, name) => `${remote.url}/${owner}/${name}.git`,
    repoDir: (owner, name) => path.join(root, owner, `${name}.git`),
    refusePush: false,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const service =
      url.searchParams.get("service") ??
      (url.pathname.endsWith("/git-receive-pack") ? "git-receive-pack" : "git-upload-pack");
    const auth = String(req.headers.authorization ?? "");
    const authorized = expected === undefined || auth.toLowerCase() === expected.toLowerCase();
    remote.requests.push({ method: req.method ?? "GET", path: url.pathname, service, authorized });
    if (!authorized) {
      req.resume();
      res.writeHead(401, { "www-authenticate": 'Basic realm="GitHub"' });
      res.end("Unauthorized\n");
      return;
    }
    if (remote.refusePush && service === "git-receive-pack") {
      req.resume();
      res.writeHead(403, { "content-type": "text/plain" });
      res.end("Permission to acme/widgets.git denied to github-actions[bot].\n");
      return;
    }
    cgi(req, res, root, decodeURIComponent(url.pathname), url.search.slice(1));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  remote.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return remote;
}
