// The runner's results service on 127.0.0.1, as the toolkit's clients talk to it (@actions/artifact v2+,
// @actions/cache's v2 service): Twirp JSON methods at ACTIONS_RESULTS_URL/twirp/github.actions.results.api.v1.
// <Service>/<Method>, authorised by the runtime token (a JWT: `scp` names the run and job, `ac` the cache
// scopes the job may read and write), and Azure Blob Storage at signed URLs: an upload as Put Blob, or Put
// Block then Put Block List (what the Azure SDK sends, by size); a download as a plain GET. The services
// (fake-artifacts.ts, fake-actions-cache.ts) give the methods; the blobs are shared here.
import crypto from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenOnLoopback } from "./loopback.js";

const TWIRP = "/twirp/github.actions.results.api.v1.";
export const RUN_BACKEND_ID = "c4d1e2f3-0000-4000-8000-000000000001";
export const JOB_BACKEND_ID = "c4d1e2f3-0000-4000-8000-000000000002";

/** The runtime token's claims the services read. */
export interface RuntimeClaims {
  scp: string;
  /** The cache scopes, as the runner issues them: JSON text of [{Scope, Permission}] (read 1, write 2). */
  ac?: string;
}

/** A method's answer: its status and JSON body; "hang": the service never answers (the request stays open). */
export type TwirpAnswer = { status: number; body: unknown } | "hang";

/** One service's methods, given the request's JSON and the token's claims. */
export type TwirpService = (
  method: string,
  request: Record<string, unknown>,
  claims: RuntimeClaims,
) => TwirpAnswer | Promise<TwirpAnswer>;

/** Blobs at signed URLs: made by a service, uploaded by the client, read back by the service or downloaded. */
export interface BlobStore {
  /** A signed URL for the blob `name` (a path: `<container>/<id>/<file>`). */
  signedUrl(name: string): string;
  /** The blob's bytes once its upload was committed. */
  get(name: string): Buffer | undefined;
  /** Serves bytes a service kept (from an earlier run's service) as the blob `name`: its signed URL. */
  serve(name: string, data: Buffer): string;
}

export interface FakeResultsService {
  url: string;
  /** ACTIONS_RESULTS_URL and ACTIONS_RUNTIME_TOKEN, as the runner sets them. */
  env: Record<string, string>;
  blobs: BlobStore;
  close(): Promise<void>;
}

function base64url(value: string): string {
  return Buffer.from(value).toString("base64url");
}

/** A JWT shaped as the runner's (unsigned here: the clients only decode it). */
function runtimeToken(claims: RuntimeClaims): string {
  const header = base64url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
  const payload = base64url(JSON.stringify({ ...claims, exp: Math.floor(Date.now() / 1000) + 3600 }));
  return `${header}.${payload}.${base64url(crypto.randomBytes(32).toString("hex"))}`;
}

/** The run's and job's scope, as the runner puts it in `scp`. */
export const RESULTS_SCOPE = `Actions.ExampleScope Actions.Results:${RUN_BACKEND_ID}:${JOB_BACKEND_ID}`;

export async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

export const twirpError = (status: number, code: string, msg: string): TwirpAnswer => ({
  status,
  body: { code, msg },
});

/** `services` are made with the blob store they sign URLs in; `claims` go into the runtime token. */
export async function startFakeResultsService(options: {
  services: (blobs: BlobStore) => Record<string, TwirpService>;
  claims?: Partial<RuntimeClaims>;
}): Promise<FakeResultsService> {
  const claims: RuntimeClaims = { scp: RESULTS_SCOPE, ...options.claims };
  const token = runtimeToken(claims);
  const blocks = new Map<string, Map<string, Buffer>>();
  const committed = new Map<string, Buffer>();
  const signed = new Set<string>();
  let url = "";

  const blobs: BlobStore = {
    signedUrl(name) {
      signed.add(name);
      const sig = crypto.randomBytes(24).toString("base64url");
      return `${url}/devstoreaccount1/${name.split("/").map(encodeURIComponent).join("/")}?sv=2023-11-03&sp=rcw&sig=${sig}`;
    },
    get: (name) => committed.get(name),
    serve(name, data) {
      committed.set(name, data);
      return blobs.signedUrl(name);
    },
  };
  const services = options.services(blobs);

  async function twirp(route: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [service = "", method = ""] = route.split("/");
    const handler = services[service];
    if (!handler) return json(res, 404, { code: "bad_route", msg: `no service ${service}` });
    if (req.headers.authorization !== `Bearer ${token}`)
      return json(res, 401, { code: "unauthenticated", msg: "bad runtime token" });
    const request = JSON.parse((await body(req)).toString("utf8")) as Record<string, unknown>;
    const answer = await handler(method, request, claims);
    if (answer === "hang") return; // the request stays open until the server closes
    json(res, answer.status, answer.body);
  }

  /** Azure Blob Storage on the signed URL: Put Blob, Put Block (comp=block), Put Block List, Get Blob. */
  async function blob(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = new URL(req.url ?? "/", url);
    const name = decodeURIComponent(target.pathname.replace(/^\/devstoreaccount1\//, ""));
    if (!signed.has(name) || !target.searchParams.get("sig")) {
      res.writeHead(403).end();
      return;
    }
    if (req.method === "GET") {
      const data = committed.get(name);
      if (!data) res.writeHead(404).end();
      else res.writeHead(200, { "content-length": data.length, "x-ms-blob-type": "BlockBlob" }).end(data);
      return;
    }
    const data = await body(req);
    const comp = target.searchParams.get("comp");
    const pending = blocks.get(name) ?? new Map<string, Buffer>();
    blocks.set(name, pending);
    if (comp === "block") pending.set(target.searchParams.get("blockid") ?? "", data);
    else if (comp === "blocklist") {
      const ids = [...data.toString("utf8").matchAll(/<(?:Latest|Uncommitted|Committed)>([^<]*)</g)].map(
        (m) => m[1] ?? "",
      );
      committed.set(name, Buffer.concat(ids.map((id) => pending.get(id) ?? Buffer.alloc(0))));
    } else committed.set(name, data);
    res.writeHead(201, {
      etag: `"0x${crypto.randomBytes(8).toString("hex").toUpperCase()}"`,
      "last-modified": new Date().toUTCString(),
      "x-ms-request-id": crypto.randomUUID(),
      "x-ms-version": "2023-11-03",
      "x-ms-request-server-encrypted": "true",
      "content-length": "0",
    });
    res.end();
  }

  const server = createServer((req, res) => {
    const route = req.url ?? "";
    const handled = route.startsWith(TWIRP)
      ? twirp(route.slice(TWIRP.length), req, res)
      : req.method === "PUT" || req.method === "GET"
        ? blob(req, res)
        : Promise.resolve(void res.writeHead(404).end());
    handled.catch((error: Error) => {
      if (!res.headersSent) json(res, 500, { code: "internal", msg: error.message });
    });
  });
  const listening = await listenOnLoopback(server);
  url = listening.url;
  return {
    url,
    env: { ACTIONS_RESULTS_URL: `${url}/`, ACTIONS_RUNTIME_TOKEN: token },
    blobs,
    close: listening.close,
  };
}
