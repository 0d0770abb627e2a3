// The runner's artifact service, as @actions/artifact (v2+, what actions/upload-artifact@v4 uses) talks to it:
// the results service's ArtifactService (CreateArtifact → a signed blob URL, FinalizeArtifact → the artifact's
// id; the request names the run and job the runtime token's `scp` holds) and the blob upload to the signed URL
// (fake-results.ts). Each finalized artifact is unzipped into `dir` (its files by their path in the zip) and
// recorded in `uploads`.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import {
  type BlobStore,
  JOB_BACKEND_ID,
  RUN_BACKEND_ID,
  twirpError,
  type TwirpService,
} from "./fake-results.js";

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

/** The ArtifactService's methods, recording into `recorder`. */
export function artifactService(recorder: ArtifactRecorder, blobs: BlobStore): TwirpService {
  const pending = new Map<string, { blob: string; expiresAt?: string }>();
  let nextId = 4711;
  return (method, request) => {
    if (
      request.workflow_run_backend_id !== RUN_BACKEND_ID ||
      request.workflow_job_run_backend_id !== JOB_BACKEND_ID
    )
      return twirpError(400, "invalid_argument", "unknown workflow run or job");
    const name = String(request.name);
    if (method === "CreateArtifact") {
      const blob = `actions-results/${crypto.randomBytes(8).toString("hex")}/${name}.zip`;
      const expiresAt = typeof request.expires_at === "string" ? request.expires_at : undefined;
      pending.set(name, { blob, expiresAt });
      return { status: 200, body: { ok: true, signed_upload_url: blobs.signedUrl(blob) } };
    }
    if (method === "FinalizeArtifact") {
      const upload = pending.get(name);
      const data = upload && blobs.get(upload.blob);
      if (!upload || !data) return twirpError(404, "not_found", `no upload for ${name}`);
      const hash = `sha256:${crypto.createHash("sha256").update(data).digest("hex")}`;
      const given = (request.hash as string | undefined) ?? hash;
      if (given !== hash || Number(request.size) !== data.length)
        return twirpError(400, "invalid_argument", "size or hash does not match the upload");
      const files = unzip(data);
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
      return { status: 200, body: { ok: true, artifact_id: String(nextId++) } };
    }
    return twirpError(404, "bad_route", `no method ${method}`);
  };
}
