// Patch facts for the report: stats of the run's patch (files, +/−, bytes, sha256, secret findings) and the
// structured patch of one Edit/Write call.
import { createHash } from "node:crypto";
import { structuredPatch } from "diff";
import { parseGitDiff } from "./diff-parse.js";
import { scanForSecrets, type RedactorOptions } from "./redact.js";
import type { CallPatch, PatchSummary } from "./schema.js";

/** Stats of the patch file, with secrets in added lines reported as findings (the patch itself is untouched). */
export function summarizePatch(
  patch: string | Uint8Array,
  options: { secrets?: RedactorOptions["secrets"] } = {},
): PatchSummary {
  const bytes = typeof patch === "string" ? Buffer.from(patch, "utf8") : Buffer.from(patch);
  const text = typeof patch === "string" ? patch : bytes.toString("utf8");
  const files = parseGitDiff(text).files.map((file) => ({
    path: file.path,
    ...(file.oldPath !== undefined && file.oldPath !== file.path ? { oldPath: file.oldPath } : {}),
    added: file.added,
    removed: file.removed,
    binary: file.binary,
    status: file.status,
  }));
  return {
    files,
    added: files.reduce((sum, file) => sum + file.added, 0),
    removed: files.reduce((sum, file) => sum + file.removed, 0),
    bytes: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    empty: text.trim() === "",
    secretFindings: scanForSecrets(text, { secrets: options.secrets }),
  };
}

/**
 * What one Edit/Write call changed, as `diff.structuredPatch` gives it (3 lines of context).
 * `before` is null for a file the call created.
 */
export function callPatch(file: string, before: string | null, after: string): CallPatch {
  const patch = structuredPatch(file, file, before ?? "", after, undefined, undefined, { context: 3 });
  return {
    file,
    hunks: patch.hunks.map((hunk) => ({
      oldStart: hunk.oldStart,
      oldLines: hunk.oldLines,
      newStart: hunk.newStart,
      newLines: hunk.newLines,
      lines: hunk.lines,
    })),
  };
}
