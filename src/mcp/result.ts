// An MCP tool's result as Claude Code hands it to the model: content blocks in order (an image followed
// by a `[Image: source: …]` line naming where it was saved), resource links and embedded resources as
// one-line notes naming the server and URI (binary content saved, with its type and size), `structuredContent`
// as its JSON string in place of the text blocks (after the blocks it would otherwise hand over as text: an
// image, audio, a binary resource), a server's `isError` as a plain error string, and a result over
// MAX_MCP_OUTPUT_TOKENS saved to a file with Claude Code's note in its place (a result with images is cut
// instead, ending in Claude Code's truncation note: an image that does not fit is left out with a line saying
// so). Linear in the result's size.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import { MAX_LINE_CHARS } from "../tools/read.js";
import { binarySavedNote, extensionFor, fileSafe, saveOutput } from "../tools/saved-binary.js";
import type { ToolContent, ToolResult } from "../tools/types.js";

/** Claude Code's default for MAX_MCP_OUTPUT_TOKENS. */
export const DEFAULT_MAX_MCP_OUTPUT_TOKENS = 25_000;
/** Characters per token in the estimate (Claude Code's rough count, before any exact one). */
const CHARS_PER_TOKEN = 4;
/** Tokens an image counts for against MAX_MCP_OUTPUT_TOKENS (Claude Code's estimate, whatever its size). */
const IMAGE_TOKENS = 1_600;
/** What stands where an image was when it did not fit in the limit. */
export const IMAGE_LEFT_OUT = "[Image left out: it did not fit in the tool output limit]";
/** The image types sent to the model as image blocks (the Messages API's). */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** Claude Code's note ending a result cut to MAX_MCP_OUTPUT_TOKENS, and its advice. */
export function truncatedNote(maxTokens: number): string {
  return `\n\n[OUTPUT TRUNCATED - exceeded ${maxTokens} token limit]\n\nThe tool output was truncated. If this MCP server provides pagination or filtering tools, use them to retrieve specific portions of the data. If pagination is not available, inform the user that you are working with truncated output and results may be incomplete.`;
}

type Block = Exclude<ToolContent, string>[number];

export interface McpResultContext {
  server: string;
  tool: string;
  /** The tool_use id: saved files are named by it. */
  id: string;
  sandbox: Sandbox;
  /** MAX_MCP_OUTPUT_TOKENS. */
  maxTokens: number;
}

/** MAX_MCP_OUTPUT_TOKENS from agent-ci's environment, as Claude Code reads it. */
export function maxMcpOutputTokens(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.MAX_MCP_OUTPUT_TOKENS);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_MAX_MCP_OUTPUT_TOKENS;
}

/**
 * Saves bytes of a server's where the agent can Read them (the outputs folder), as
 * `mcp-<server>-<what>-<tool_use id>.<ext>`, returning the container path.
 */
export const saveMcpOutput = (
  ctx: Pick<McpResultContext, "server" | "id" | "sandbox">,
  what: string,
  ext: string,
  data: string | Uint8Array,
): Promise<string> =>
  saveOutput(ctx.sandbox, `mcp-${fileSafe(ctx.server)}-${what}-${fileSafe(ctx.id)}.${ext}`, data);

/**
 * The blocks of a result's content. Images, audio and binary resources are saved (`blob`, then `blob2`, …, as
 * Claude Code names them `mcp-<server>-blob-…`); `skipText` leaves out the plain text items (the structured
 * JSON stands for them).
 */
async function blocksOf(result: CallToolResult, ctx: McpResultContext, skipText = false): Promise<Block[]> {
  const blocks: Block[] = [];
  let saved = 0;
  const saveBlob = (mediaType: string | undefined, base64: string) => {
    const bytes = Buffer.from(base64, "base64");
    const name = saved++ ? `blob${saved}` : "blob";
    return saveMcpOutput(ctx, name, extensionFor(mediaType), bytes).then((file) => ({
      file,
      size: bytes.length,
    }));
  };
  for (const item of result.content ?? []) {
    switch (item.type) {
      case "text":
        if (!skipText) blocks.push({ type: "text", text: item.text });
        break;
      case "image": {
        const { file } = await saveBlob(item.mimeType, item.data);
        if (IMAGE_TYPES.has(item.mimeType))
          blocks.push({
            type: "image",
            source: { type: "base64", media_type: item.mimeType as "image/png", data: item.data },
          });
        blocks.push({ type: "text", text: `[Image: source: ${file}]` });
        break;
      }
      case "audio": {
        const { file, size } = await saveBlob(item.mimeType, item.data);
        const text = binarySavedNote(file, item.mimeType, size, `[Audio from ${ctx.server}] `);
        blocks.push({ type: "text", text });
        break;
      }
      case "resource_link":
        blocks.push({
          type: "text",
          text: `[Resource link: ${item.name}] ${item.uri}${item.description ? ` (${item.description})` : ""}`,
        });
        break;
      case "resource": {
        const r = item.resource;
        const source = `[Resource from ${ctx.server} at ${r.uri}] `;
        if ("text" in r) {
          blocks.push({ type: "text", text: `${source}${r.text}` });
        } else {
          const { file, size } = await saveBlob(r.mimeType, r.blob);
          blocks.push({ type: "text", text: binarySavedNote(file, r.mimeType, size, source) });
        }
        break;
      }
    }
  }
  return blocks;
}

/** "120,006 characters across 1 line" */
function describeSize(text: string): string {
  let lines = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++;
  if (text.endsWith("\n")) lines--;
  return `${text.length.toLocaleString("en-US")} characters across ${lines.toLocaleString("en-US")} ${lines === 1 ? "line" : "lines"}`;
}

function longestLine(text: string): number {
  let longest = 0;
  let start = 0;
  for (;;) {
    const end = text.indexOf("\n", start);
    longest = Math.max(longest, (end === -1 ? text.length : end) - start);
    if (end === -1) return longest;
    start = end + 1;
  }
}

function looksLikeJson(text: string): boolean {
  const t = text.trimStart();
  if (!t.startsWith("{") && !t.startsWith("[")) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Claude Code's note for a result saved to a file instead of sent. */
export function savedOutputNote(text: string, file: string): string {
  const lines = [
    `Error: result (${describeSize(text)}) exceeds maximum allowed tokens. Output has been saved to ${file}.`,
    `Format: ${looksLikeJson(text) ? "JSON" : "Plain text"}`,
    "Search within the file for specific content, and use jq if the content is JSON.",
    "REQUIREMENTS FOR SUMMARIZATION/ANALYSIS/REVIEW:",
    `- You MUST read the content from the file at ${file} in sequential chunks until 100% of the content has been read.`,
    ...(longestLine(text) > MAX_LINE_CHARS
      ? [
          "- Note: this file's lines are too long for Read's offset/limit chunking. If a shell tool is available, slice by character range (e.g. python read()[A:B], dd, or cut -c) instead.",
        ]
      : []),
    "- If you receive truncation warnings when reading the file, reduce the chunk size until you have read 100% of the content without truncation.",
    "- Before producing ANY summary or analysis, you MUST explicitly describe what portion of the content you have read. ***If you did not read the entire content, you MUST explicitly state this.***",
    "- If after a few attempts you cannot read the file (file not found, lines too long for Read's offset/limit, no shell access), STOP retrying. Summarize what you were able to read, explicitly state which portion you could not read and why, and proceed.",
  ];
  return `${lines.join("\n")}\n`;
}

const textOf = (blocks: Block[]) =>
  blocks
    .filter((b): b is Extract<Block, { type: "text" }> => b.type === "text")
    .map((b) => b.text)
    .join("\n");

/** Characters a block counts for against the limit: its text, or an image's estimate. */
const blockChars = (block: Block): number =>
  block.type === "text" ? block.text.length : block.type === "image" ? IMAGE_TOKENS * CHARS_PER_TOKEN : 0;

/**
 * Cuts blocks to a character budget, in order: text cut where the budget ends, an image that does not fit
 * left out with a line saying so; then Claude Code's truncation note.
 */
function cutBlocks(blocks: Block[], maxTokens: number): Block[] {
  let left = maxTokens * CHARS_PER_TOKEN;
  const out: Block[] = [];
  for (const block of blocks) {
    if (block.type === "image") {
      const size = blockChars(block);
      if (size <= left) {
        out.push(block);
        left -= size;
      } else out.push({ type: "text", text: IMAGE_LEFT_OUT });
      continue;
    }
    if (block.type !== "text") {
      out.push(block);
      continue;
    }
    if (left <= 0) continue;
    out.push(block.text.length > left ? { type: "text", text: block.text.slice(0, left) } : block);
    left -= block.text.length;
  }
  out.push({ type: "text", text: truncatedNote(maxTokens) });
  return out;
}

/** Content the structured JSON would hand over as text: an image, audio, a binary resource. */
const carriesData = (result: CallToolResult): boolean =>
  (result.content ?? []).some(
    (c) => c.type === "image" || c.type === "audio" || (c.type === "resource" && "blob" in c.resource),
  );

export async function mapMcpResult(result: CallToolResult, ctx: McpResultContext): Promise<ToolResult> {
  const title = `${ctx.server}: ${ctx.tool}`;
  if (result.isError) {
    const text = (result.content ?? []).map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");
    return {
      output: text || "the tool failed and said nothing more",
      isError: true,
      kind: "mcp_error",
      title,
    };
  }
  const maxChars = ctx.maxTokens * CHARS_PER_TOKEN;
  const structured =
    result.structuredContent === undefined ? undefined : JSON.stringify(result.structuredContent);
  if (structured !== undefined && !carriesData(result)) {
    if (structured.length <= maxChars) return { output: structured, title };
    const file = await saveMcpOutput(ctx, fileSafe(ctx.tool), "txt", structured);
    return { output: savedOutputNote(structured, file), title, metadata: { savedTo: file } };
  }
  const blocks = await blocksOf(result, ctx, structured !== undefined);
  if (structured !== undefined) blocks.push({ type: "text", text: structured });
  const text = textOf(blocks);
  const chars = blocks.reduce((n, b) => n + blockChars(b), 0);
  if (chars <= maxChars) return { output: blocks, title };
  if (blocks.some((b) => b.type === "image")) return { output: cutBlocks(blocks, ctx.maxTokens), title };
  const file = await saveMcpOutput(ctx, fileSafe(ctx.tool), "txt", text);
  return { output: savedOutputNote(text, file), title, metadata: { savedTo: file } };
}
