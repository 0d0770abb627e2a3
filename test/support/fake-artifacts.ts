// The runner's artifact service, on 127.0.0.1, as @actions/artifact (v2+, what actions/upload-artifact@v4 uses)
// talks to it: the results service's Twirp JSON API (ArtifactService CreateArtifact → a signed blob URL,
// FinalizeArtifact → the artifact's id), authorised by the runtime token (a JWT whose `scp` names the run and
// job), and Azure Blob Storage's block upload to the signed URL (Put Block, then Put Block List). The runner
// hands a step ACTIONS_RESULTS_URL and ACTIONS_RUNTIME_TOKEN; `env` is those two. Each finalized artifact is
// unzipped into `dir` (its files by their path in the zip) and recorded in `uploads`.
import crypto from "node:crypto";
import fs from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { listenOnLoopback } from "./loopback.js";

const SERVICE = "/twirp/github.actions.results.api.v1.ArtifactService/";
const RUN_BACKEND_ID = "c4d1e2f3-0000-4000-8000-000000000001";
const JOB_BACKEND_ID = "c4d1e2f3-0000-4000-8000-000000000002";
const DAY_MS = 24 * 60 * 60 * 1000;

export interface ArtifactUpload {
  name: string;
  /** The files' paths in the artifact. */
  files: string[];
  /** From the request's expires_at, in whole days (undefined: the repository's default). */
  retentionDays?: number;
}

/** Where a test reads what was uploaded: every artifact's files under `dir`, and each upload. */
export interface ArtifactRecorder {
  dir: string;
  uploads: ArtifactUpload[];
}

export function artifactRecorder(): ArtifactRecorder {
  return { dir: fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-artifact-")), uploads: [] };
}

export interface FakeArtifactService {
  url: string;
  /** ACTIONS_RESULTS_URL and ACTIONS_RUNTIME_TOKEN, as the runner sets them. */
  env: Record<string, string>;
  close(): Promise<void>;
}

function base64url(value: string): string {
  return Buffer.from(value).toString("base64url");
}

/** A JWT shaped as the runner's (unsigned here: the client only decodes it for `scp`). */
function runtimeToken(): string {
  const header = base64url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
  const claims = base64url(
    JSON.stringify({
      scp: `Actions.ExampleScope Actions.Results:${RUN_BACKEND_ID}:${JOB_BACKEND_ID}`,
      exp: Math.floor(Date.now() / 1000) + 3600,
    }),
  );
  return `${header}.${claims}.${base64url(crypto.randomBytes(32).toString("hex"))}`;
}

/** The files of a zip, read from its central directory (stored or deflated entries, as archiver writes them). */
export function unzip(zip: Buffer): Array<{ name: string; data: Buffer }> {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error("not a zip: no end of central directory");
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const files: Array<{ name: string; data: Buffer }> = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error("bad central directory entry");
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString("utf8", at + 46, at + 46 + nameLength);
    const dataAt = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(dataAt, dataAt + compressed);
    if (!name.endsWith("/"))
      files.push({ name, data: method === 8 ? zlib.inflateRawSync(raw) : Buffer.from(raw) });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return files;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

interface Pending {
  name: string;
  expiresAt?: string;
  blocks: Map<string, Buffer>;
  blob?: Buffer;
}

export async function startFakeArtifactService(recorder: ArtifactRecorder): Promise<FakeArtifactService> {
  const token = runtimeToken();
  const pending = new Map<string, Pending>();
  let nextId = 4711;
  let url = "";

  async function twirp(method: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers.authorization !== `Bearer ${token}`)
      return json(res, 401, { code: "unauthenticated", msg: "bad runtime token" });
    const request = JSON.parse((await body(req)).toString("utf8")) as Record<string, unknown>;
    if (
      request.workflow_run_backend_id !== RUN_BACKEND_ID ||
      request.workflow_job_run_backend_id !== JOB_BACKEND_ID
    )
      return json(res, 400, { code: "invalid_argument", msg: "unknown workflow run or job" });
    const name = String(request.name);
    if (method === "CreateArtifact") {
      const key = crypto.randomBytes(8).toString("hex");
      const expiresAt = typeof request.expires_at === "string" ? request.expires_at : undefined;
      pending.set(name, { name, expiresAt, blocks: new Map() });
      const sig = crypto.randomBytes(24).toString("base64url");
      return json(res, 200, {
        ok: true,
        signed_upload_url: `${url}/devstoreaccount1/actions-results/${key}/${encodeURIComponent(name)}.zip?sv=2023-11-03&sp=cw&sig=${sig}`,
      });
    }
    if (method === "FinalizeArtifact") {
      const upload = pending.get(name);
      if (!upload?.blob) return json(res, 404, { code: "not_found", msg: `no upload for ${name}` });
      const hash = `sha256:${crypto.createHash("sha256").update(upload.blob).digest("hex")}`;
      const given = (request.hash as string | undefined) ?? hash;
      if (given !== hash || Number(request.size) !== upload.blob.length)
        return json(res, 400, { code: "invalid_argument", msg: "size or hash does not match the upload" });
      const files = unzip(upload.blob);
      for (const file of files) {
        const target = path.join(recorder.dir, file.name);
        fs.mkdirSync(path.dirname(target), { recursive: true });
        fs.writeFileSync(target, file.data);
      }
      recorder.uploads.push({
        name,
        files: files.map((f) => f.name),
        retentionDays: upload.expiresAt
          ? Math.round((Date.parse(upload.expiresAt) - Date.now()) / DAY_MS)
          : undefined,
      });
      pending.delete(name);
      return json(res, 200, { ok: true, artifact_id: String(nextId++) });
    }
    return json(res, 404, { code: "bad_route", msg: `no method ${method}` });
  }

  /** Azure Blob Storage: Put Block (comp=block) and Put Block List (comp=blocklist) on the signed URL. */
  async function blob(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = new URL(req.url ?? "/", url);
    const name = decodeURIComponent(path.basename(target.pathname)).replace(/\.zip$/, "");
    const upload = pending.get(name);
    if (!upload || !target.searchParams.get("sig")) {
      res.writeHead(403).end();
      return;
    }
    const data = await body(req);
    const comp = target.searchParams.get("comp");
    if (comp === "block") upload.blocks.set(target.searchParams.get("blockid") ?? "", data);
    else if (comp === "blocklist") {
      const ids = [...data.toString("utf8").matchAll(/<(?:Latest|Uncommitted|Committed)>([^<]*)</g)].map(
        (m) => m[1] ?? "",
      );
      upload.blob = Buffer.concat(ids.map((id) => upload.blocks.get(id) ?? Buffer.alloc(0)));
    } else upload.blob = data;
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
    const handled = route.startsWith(SERVICE)
      ? twirp(route.slice(SERVICE.length), req, res)
      : req.method === "PUT"
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
    close: listening.close,
  };
}
