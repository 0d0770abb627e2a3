// Write: create a file (parents too) or overwrite one the model has read and that has not changed since.
import { z } from "zod";
import { defineTool } from "./define-tool.js";
import {
  checkFreshness,
  isToolResult,
  loadTarget,
  MAX_EDIT_INPUT_CHARS,
  NO_READ_BACK,
  patchOf,
  writeAndRecord,
} from "./file-edit-common.js";

export const WriteInput = z.strictObject({
  file_path: z.string().describe("The absolute path to the file to write (under /workspace)"),
  content: z.string().max(MAX_EDIT_INPUT_CHARS).describe("The content to write to the file"),
});
export type WriteInput = z.infer<typeof WriteInput>;

const DESCRIPTION = `Writes a file to the sandbox's filesystem, creating parent directories as needed.

Usage:
- This tool overwrites an existing file. To overwrite one, you must Read it in this run first, and it must not have changed since.
- Prefer Edit for changes to existing files: it sends only what changes.`;

export const WriteTool = defineTool<WriteInput>({
  name: "Write",
  description: DESCRIPTION,
  inputSchema: WriteInput,
  maxResultSizeChars: 100_000,
  targetPath: (input) => input.file_path,

  async call(input, ctx) {
    const loaded = await loadTarget(ctx, input.file_path);
    if (isToolResult(loaded)) return loaded;
    if (!loaded.exists) {
      await writeAndRecord(ctx, loaded.path, input.content);
      return {
        output: `File created successfully at: ${input.file_path} ${NO_READ_BACK}`,
        title: `created ${loaded.path} (${Buffer.byteLength(input.content)} bytes)`,
        metadata: { patch: patchOf(loaded.path, "", input.content) },
      };
    }
    const stale = checkFreshness(ctx, loaded);
    if (stale) return stale;
    await writeAndRecord(ctx, loaded.path, input.content);
    return {
      output: `The file ${input.file_path} has been updated successfully. ${NO_READ_BACK}`,
      title: `overwrote ${loaded.path} (${Buffer.byteLength(input.content)} bytes)`,
      metadata: { patch: patchOf(loaded.path, loaded.text, input.content) },
    };
  },
});
