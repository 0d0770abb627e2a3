// Read: a file as numbered lines (`N<TAB>text`, from 1), 2,000 lines by default and 2,000 characters a
// line; images and PDFs as content blocks, notebooks as cells; other binary files refused.
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import { z } from "zod";
import { SandboxFsError, type FileStat } from "../sandbox/sandbox.js";
import { defineTool, plainError, toolError } from "./define-tool.js";
import { notebookBlocks, parseNotebook } from "./notebook.js";
import { outsideWorkspace, resolveInWorkspace } from "./paths.js";
import type { ToolContext, ToolResult } from "./types.js";

export const DEFAULT_READ_LINES = 2000;
export const MAX_LINE_CHARS = 2000;
/** Files up to this size are read whole (and hashed for read-before-edit); larger ones window by window. */
export const MAX_WHOLE_READ_BYTES = 16 * 1024 * 1024;
const CHUNK_BYTES = 4 * 1024 * 1024;
/** About Claude Code's 25,000-token cap on one Read. */
export const MAX_READ_OUTPUT_CHARS = 100_000;
const MAX_IMAGE_BYTES = 3_750_000;
const MAX_PDF_BYTES = 32 * 1024 * 1024;

const IMAGE_TYPES: Record<string, "image/png" | "image/jpeg" | "image/gif" | "image/webp"> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};

const BINARY_EXTENSIONS = new Set(
  (
    ".bin .exe .dll .so .dylib .o .a .lib .obj .class .jar .war .pyc .pyo .wasm .node .zip .tar .gz .tgz .bz2 .xz " +
    ".7z .rar .zst .lz4 .iso .dmg .deb .rpm .mp3 .mp4 .m4a .mov .avi .mkv .webm .wav .flac .ogg .ttf .otf .woff " +
    ".woff2 .eot .ico .bmp .tif .tiff .psd .sqlite .sqlite3 .db .parquet .pkl .npy .npz .pt .onnx .xlsx .docx .pptx"
  ).split(" "),
);

export const ReadInput = z.strictObject({
  file_path: z.string().describe("The absolute path to the file to read (under /workspace)"),
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .describe(
      "The line number to start reading from (1 or 0 = the first line). Only give it for large files",
    ),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .describe("The number of lines to read. Only give it for large files"),
});
export type ReadInput = z.infer<typeof ReadInput>;

const DESCRIPTION = `Reads a file from the sandbox's filesystem (the repository is at /workspace).

Usage:
- file_path must be an absolute path under /workspace (relative paths resolve against the working directory)
- By default it reads up to ${DEFAULT_READ_LINES} lines from the start of the file; use offset and limit for long files
- Lines longer than ${MAX_LINE_CHARS} characters are cut
- Results are numbered lines: the line number, a tab, then the line
- Images (PNG, JPG, GIF, WebP) are shown to you as images, PDFs as documents, .ipynb notebooks as cells
- It reads files, not directories: use ls through Bash for a directory
- Read several files in parallel when you need them; reading a file that does not exist is an error, not a crash`;

/** Splits text into display lines; a final newline leaves an empty last line, as Claude Code shows it. */
function displayLines(text: string): string[] {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  return body.split("\n").map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}

function numbered(lines: string[], firstLine: number): string {
  return lines
    .map((line, i) => {
      const shown =
        line.length > MAX_LINE_CHARS
          ? `${line.slice(0, MAX_LINE_CHARS)}… [line cut at ${MAX_LINE_CHARS} characters]`
          : line;
      return `${firstLine + i}\t${shown}`;
    })
    .join("\n");
}

function looksBinary(data: Buffer): boolean {
  return data.subarray(0, 8192).includes(0);
}

/** The lines [offset, offset+limit) of a file too big to read whole, read chunk by chunk. */
async function windowOfLargeFile(
  ctx: ToolContext,
  file: string,
  stat: FileStat,
  offset: number,
  limit: number,
) {
  const wanted: string[] = [];
  let lineNo = 1;
  let carry = "";
  // A character split across two chunks is decoded whole; a line longer than can be shown is kept only as
  // far as it is shown, so a huge single line costs one chunk of host memory, not the whole file.
  const decoder = new StringDecoder("utf8");
  for (let start = 0; start < stat.size && wanted.length < limit; start += CHUNK_BYTES) {
    const chunk = await ctx.sandbox.readFile(file, { start, length: CHUNK_BYTES });
    if (!chunk) break;
    const parts = (carry + decoder.write(chunk.data)).split("\n");
    carry = (parts.pop() ?? "").slice(0, MAX_LINE_CHARS + 1);
    for (const line of parts) {
      if (lineNo >= offset && wanted.length < limit)
        wanted.push(line.endsWith("\r") ? line.slice(0, -1) : line);
      lineNo += 1;
    }
  }
  carry += decoder.end();
  // The loop ended at the end of the file: the last line (empty after a final newline) is line `lineNo`.
  if (wanted.length < limit && lineNo >= offset) wanted.push(carry);
  return { lines: wanted, lineCount: lineNo };
}

function offsetPastEnd(offset: number, lineCount: number, file: string): ToolResult {
  return {
    output: `<system-reminder>Warning: the file exists but is shorter than the provided offset (${offset}). The file has ${lineCount} lines.</system-reminder>`,
    title: `${file} (offset past the end)`,
  };
}

function binaryRefusal(what: string): ToolResult {
  return toolError(
    "binary_file",
    `This tool cannot read binary files. The file appears to be ${what}. Use a shell command or script that can read the format (for example xxd, file, or a Python script).`,
  );
}

function tooLargeForOneRead(chars: number): ToolResult {
  return toolError(
    "too_large",
    `File content (${chars} characters) exceeds the maximum allowed for one Read (${MAX_READ_OUTPUT_CHARS}). Use offset and limit to read parts of the file, or Grep to search for specific content.`,
  );
}

function fsErrorResult(e: unknown, given: string, cwd: string): ToolResult {
  if (!(e instanceof SandboxFsError)) throw e;
  if (e.code === "EISDIR")
    return plainError("is_directory", `EISDIR: illegal operation on a directory, read '${given}'`);
  if (e.code === "EOUTSIDE") return outsideWorkspace(given);
  if (e.code === "ENOTREG")
    return toolError(
      "invalid_input",
      `${given} is not a regular file (a FIFO, socket or device); only regular files can be read.`,
    );
  if (e.code === "ELOOP") return toolError("invalid_input", `${given} is a symlink loop.`);
  return plainError("sandbox_error", `${e.message} (current working directory: ${cwd})`);
}

/** Which lines a Read shows: from `offset` (1-based), `limit` of them. */
interface LineWindow {
  offset: number;
  limit: number;
}

/**
 * A file too large to read whole: never an image, PDF or binary; otherwise only the window of lines asked for,
 * read in chunks, with a reminder that the rest is there.
 */
async function readLargeFile(
  ctx: ToolContext,
  given: string,
  file: string,
  stat: FileStat,
  { offset, limit }: LineWindow,
): Promise<ToolResult> {
  const ext = path.posix.extname(file).toLowerCase();
  if (IMAGE_TYPES[ext] || ext === ".pdf" || BINARY_EXTENSIONS.has(ext)) {
    return toolError("too_large", `${given} is ${stat.size} bytes, too large to read.`);
  }
  const head = await ctx.sandbox.readFile(stat.realPath, { start: 0, length: 8192 });
  if (head && looksBinary(head.data))
    return binaryRefusal(`binary (${stat.size} bytes, it contains NUL bytes)`);
  const { lines, lineCount } = await windowOfLargeFile(ctx, stat.realPath, stat, offset, limit);
  if (!lines.length) return offsetPastEnd(offset, lineCount, file);
  const window = numbered(lines, offset);
  if (window.length > MAX_READ_OUTPUT_CHARS) return tooLargeForOneRead(window.length);
  ctx.state.recordRead(stat.realPath, undefined, stat, true);
  return {
    output: `${window}\n<system-reminder>The file is ${stat.size} bytes; this shows lines ${offset}-${offset + lines.length - 1}. Use offset and limit to read other parts.</system-reminder>`,
    title: `${file} (lines ${offset}-${offset + lines.length - 1} of a ${stat.size}-byte file)`,
  };
}

/** An image or a PDF, handed to the model as a content block when not too large; undefined for other files. */
function readMedia(file: string, data: Buffer): ToolResult | undefined {
  const ext = path.posix.extname(file).toLowerCase();
  const mediaType = IMAGE_TYPES[ext];
  if (mediaType) {
    if (data.length > MAX_IMAGE_BYTES)
      return toolError(
        "too_large",
        `The image is ${data.length} bytes; at most ${MAX_IMAGE_BYTES} can be shown.`,
      );
    return {
      output: [
        { type: "image", source: { type: "base64", data: data.toString("base64"), media_type: mediaType } },
      ],
      title: `${file} (image, ${data.length} bytes)`,
    };
  }
  if (ext === ".pdf") {
    if (data.length > MAX_PDF_BYTES)
      return toolError("too_large", `The PDF is ${data.length} bytes; at most ${MAX_PDF_BYTES} can be read.`);
    return {
      output: [
        {
          type: "document",
          source: { type: "base64", data: data.toString("base64"), media_type: "application/pdf" },
        },
      ],
      title: `${file} (PDF, ${data.length} bytes)`,
    };
  }
  return undefined;
}

/**
 * A file read whole that is not an image or PDF: a notebook as its cells, binary refused, text as numbered
 * lines of the window asked for; what was read recorded (as partial when the window left lines out).
 */
function readText(
  ctx: ToolContext,
  file: string,
  data: Buffer,
  stat: FileStat,
  { offset, limit }: LineWindow,
  limitGiven: boolean,
): ToolResult {
  const ext = path.posix.extname(file).toLowerCase();
  if (ext === ".ipynb") {
    const nb = parseNotebook(data.toString("utf8"));
    if (nb) {
      const blocks = notebookBlocks(nb, file);
      const chars = blocks.reduce((n, b) => n + (b.type === "text" ? b.text.length : 0), 0);
      if (chars > MAX_READ_OUTPUT_CHARS) return tooLargeForOneRead(chars);
      ctx.state.recordRead(stat.realPath, data, stat);
      return { output: blocks, title: `${file} (notebook, ${nb.cells.length} cells)` };
    }
  }
  if (BINARY_EXTENSIONS.has(ext) || looksBinary(data)) {
    return binaryRefusal(
      BINARY_EXTENSIONS.has(ext)
        ? `a binary ${ext} file`
        : `binary (${data.length} bytes, it contains NUL bytes)`,
    );
  }

  if (data.length === 0) {
    ctx.state.recordRead(stat.realPath, data, stat);
    return {
      output: "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",
      title: `${file} (empty)`,
    };
  }
  const all = displayLines(data.toString("utf8"));
  if (offset > all.length) {
    ctx.state.recordRead(stat.realPath, data, stat, true);
    return offsetPastEnd(offset, all.length, file);
  }
  const shown = all.slice(offset - 1, offset - 1 + limit);
  let output = numbered(shown, offset);
  if (output.length > MAX_READ_OUTPUT_CHARS) {
    ctx.state.recordRead(stat.realPath, data, stat, true);
    return tooLargeForOneRead(output.length);
  }
  const last = offset + shown.length - 1;
  ctx.state.recordRead(stat.realPath, data, stat, offset > 1 || last < all.length);
  if (!limitGiven && last < all.length) {
    output += `\n<system-reminder>Showing lines ${offset}-${last} of ${all.length}. Use offset and limit to read the rest.</system-reminder>`;
  }
  return { output, title: `${file} (lines ${offset}-${last} of ${all.length})` };
}

export const ReadTool = defineTool<ReadInput>({
  name: "Read",
  description: DESCRIPTION,
  inputSchema: ReadInput,
  maxResultSizeChars: Number.POSITIVE_INFINITY,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  targetPath: (input) => input.file_path,

  async call(input, ctx) {
    const gate = resolveInWorkspace(input.file_path, ctx.state.cwd, { allowOutputs: true });
    if (!gate.ok) return gate.error;
    const file = gate.path;
    // One request: the file whole when it is small enough, else only its stat (the large-file path below).
    let read: Awaited<ReturnType<typeof ctx.sandbox.readFile>>;
    try {
      read = await ctx.sandbox.readFile(file, { maxSize: MAX_WHOLE_READ_BYTES });
    } catch (e) {
      return fsErrorResult(e, input.file_path, ctx.state.cwd);
    }
    if (!read)
      return plainError(
        "not_found",
        `File does not exist. Note: your current working directory is ${ctx.state.cwd}.`,
      );
    const { data, stat } = read;

    // Claude Code reads from the start for offset 0 as for 1.
    const window = { offset: Math.max(input.offset ?? 1, 1), limit: input.limit ?? DEFAULT_READ_LINES };
    if (stat.size > MAX_WHOLE_READ_BYTES) return readLargeFile(ctx, input.file_path, file, stat, window);
    return readMedia(file, data) ?? readText(ctx, file, data, stat, window, input.limit !== undefined);
  },
});
