// What Edit and Write share: the read-before-write check against the host-side record, loading a file
// as text that can be written back byte for byte, and the structured patch for the report.
import { structuredPatch, type StructuredPatch } from "diff";
import { SandboxFsError, type FileStat } from "../sandbox/sandbox.js";
import { plainError, toolError } from "./define-tool.js";
import { outsideWorkspace, resolveInWorkspace } from "./paths.js";
import { sha256 } from "./state.js";
import type { ToolContext, ToolResult } from "./types.js";

/** Files larger than this are not edited (Read still windows them). */
export const MAX_EDIT_FILE_BYTES = 16 * 1024 * 1024;
/** Longest content or new_string accepted (T13: rejected at parse, no partial file). */
export const MAX_EDIT_INPUT_CHARS = 10 * 1024 * 1024;
export const NO_READ_BACK = "(file state is current in your context — no need to Read it back)";

export type Loaded =
  | { exists: false; path: string }
  | { exists: true; path: string; stat: FileStat; data: Buffer; text: string };

/** Resolves and loads the target; a ToolResult when the model has to be told something instead. */
export async function loadTarget(ctx: ToolContext, filePath: string): Promise<Loaded | ToolResult> {
  const gate = resolveInWorkspace(filePath, ctx.state.cwd);
  if (!gate.ok) return gate.error;
  // One request: the file whole, or only its stat when it is too large to edit.
  let read: { data: Buffer; stat: FileStat } | null;
  try {
    read = await ctx.sandbox.readFile(gate.path, { maxSize: MAX_EDIT_FILE_BYTES });
  } catch (e) {
    if (!(e instanceof SandboxFsError)) throw e;
    if (e.code === "EOUTSIDE") return outsideWorkspace(filePath);
    if (e.code === "EISDIR")
      return plainError("is_directory", `EISDIR: illegal operation on a directory, write '${filePath}'`);
    if (e.code === "ENOTREG") return toolError("invalid_input", `${filePath} is not a regular file.`);
    throw e;
  }
  if (!read) return { exists: false, path: gate.path };
  const { stat, data } = read;
  // Never through a symlink, even one that stays inside (P5): the model names the file it means.
  if (stat.isSymlink) {
    return toolError(
      "invalid_input",
      `${filePath} is a symbolic link to ${stat.realPath}; it is not written through. Edit or write ${stat.realPath} instead.`,
    );
  }
  if (stat.size > MAX_EDIT_FILE_BYTES) {
    return toolError(
      "too_large",
      `${filePath} is ${stat.size} bytes; files over ${MAX_EDIT_FILE_BYTES} bytes are not edited. Use a script through Bash.`,
    );
  }
  return { exists: true, path: stat.realPath, stat, data, text: data.toString("utf8") };
}

export function isToolResult(value: Loaded | ToolResult): value is ToolResult {
  return "output" in value;
}

/** Read-before-write: the model must have read this file in this run, and it must not have changed since. */
export function checkFreshness(
  ctx: ToolContext,
  loaded: Extract<Loaded, { exists: true }>,
): ToolResult | undefined {
  const record = ctx.state.reads.get(loaded.path);
  if (!record)
    return toolError("not_read", "File has not been read yet. Read it first before writing to it.");
  const unchanged = record.sha256
    ? record.sha256 === sha256(loaded.data)
    : record.mtimeMs === loaded.stat.mtimeMs && record.size === loaded.stat.size;
  if (!unchanged) {
    return toolError(
      "modified_since_read",
      "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.",
    );
  }
  return undefined;
}

/** Text that does not survive a UTF-8 round trip (Latin-1, binary) is not edited as text (T6, T7). */
export function refuseNonText(
  loaded: Extract<Loaded, { exists: true }>,
  filePath: string,
): ToolResult | undefined {
  if (loaded.data.subarray(0, 8192).includes(0)) {
    return toolError(
      "binary_file",
      `${filePath} is a binary file; it cannot be edited as text. Use a script through Bash.`,
    );
  }
  if (!Buffer.from(loaded.text, "utf8").equals(loaded.data)) {
    return toolError(
      "invalid_input",
      `${filePath} is not valid UTF-8 (Latin-1 or another encoding?); editing it as text would corrupt it. Use a script through Bash (e.g. iconv or sed).`,
    );
  }
  return undefined;
}

export function patchOf(file: string, before: string, after: string): StructuredPatch {
  return structuredPatch(file, file, before, after, "", "", { context: 3 });
}

/**
 * Writes and records the new content as read, so a following Edit needs no Read. An edit does not show the
 * model the rest of the file: what it had seen of it (all, or a part) stays what it has seen.
 */
export async function writeAndRecord(
  ctx: ToolContext,
  file: string,
  content: string,
  options: { keepPartial?: boolean } = {},
): Promise<FileStat> {
  const partial = Boolean(options.keepPartial && ctx.state.reads.get(file)?.partial);
  const stat = await ctx.sandbox.writeFile(file, content);
  ctx.state.recordRead(stat.realPath, Buffer.from(content), stat, partial);
  return stat;
}

/** The note that the model need not Read the file back, when it has in fact seen the whole of it. */
export function readBackNote(ctx: ToolContext, file: string): string {
  return ctx.state.reads.get(file)?.partial ? "" : ` ${NO_READ_BACK}`;
}
