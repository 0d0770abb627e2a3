// Binary content a tool saves where the agent can Read it, in Claude Code's words: an MCP server's image,
// audio or binary resource, an image WebFetch was answered with. Claude Code saves them under its session's
// tool-results folder; agent-ci saves them in the run's outputs folder in the sandbox, named by the tool_use
// id, so the path the model is given is one it can Read.
import { OUTPUTS_DIR, type Sandbox } from "../sandbox/sandbox.js";

/** File extensions for saved bytes, by media type (others: bin). */
const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/svg+xml": "svg",
  "audio/mpeg": "mp3",
  "audio/wav": "wav",
  "audio/ogg": "ogg",
  "text/plain": "txt",
  "text/html": "html",
  "text/markdown": "md",
  "text/csv": "csv",
  "application/json": "json",
  "application/pdf": "pdf",
  "application/zip": "zip",
};

/** The extension a file of this media type is saved with (parameters such as `; charset` ignored). */
export function extensionFor(mediaType: string | undefined): string {
  return EXTENSIONS[(mediaType ?? "").split(";")[0]!.trim().toLowerCase()] ?? "bin";
}

/** A name part made safe for a file name (a server's name, a tool_use id). */
export const fileSafe = (text: string): string => text.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 80);

/** A size as Claude Code writes it in these notes: "72 bytes", "1.5KB", "3MB". */
export function formatFileSize(bytes: number): string {
  const units = ["KB", "MB", "GB"];
  if (bytes < 1024) return `${bytes} bytes`;
  let size = bytes / 1024;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit++;
  }
  return `${size.toFixed(1).replace(/\.0$/, "")}${units[unit]}`;
}

/**
 * Claude Code's note for saved binary content: `<source>Binary content (<type>, <size>) saved to <path>`, where
 * `source` names where it came from (`[Resource from <server> at <uri>] `, `[Audio from <server>] `).
 */
export function binarySavedNote(
  file: string,
  mediaType: string | undefined,
  bytes: number,
  source = "",
): string {
  return `${source}Binary content (${mediaType || "unknown type"}, ${formatFileSize(bytes)}) saved to ${file}`;
}

/** Writes `data` to the outputs folder as `name` (a file name made with `fileSafe` parts), returning its path. */
export async function saveOutput(sandbox: Sandbox, name: string, data: string | Uint8Array): Promise<string> {
  const file = `${OUTPUTS_DIR}/${name}`;
  await sandbox.writeFile(file, data, { confine: false });
  return file;
}
