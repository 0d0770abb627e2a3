// An MCP tool's result as Claude Code hands it to the model: content blocks in order (an image followed
// by a `[Image: source: …]` line naming where it was saved), resource links and embedded resources as
// one-line notes (a binary one saved, with its type and size), `structuredContent` as its JSON string
// instead of text-only blocks (the blocks when they carry an image, audio or binary data the JSON would
// hand over as text, as Claude Code does for a server that sends both), a server's `isError` as a
// plain error string, and a result over MAX_MCP_OUTPUT_TOKENS saved to a file with Claude Code's note in
// its place (a result with images is cut instead: an image that does not fit is left out with a line
// saying so). Linear in the result's size.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { OUTPUTS_DIR, type Sandbox } from "../sandbox/sandbox.js";
import { MAX_LINE_CHARS } from "../tools/read.js";
import type { ToolContent, ToolResult } from "../tools/types.js";

/** Claude Code's default for MAX_MCP_OUTPUT_TOKENS. */
export const DEFAULT_MAX_MCP_OUTPUT_TOKENS = 25_000;
/** Characters per token in the estimate (Claude Code's rough count, before any exact one). */
const CHARS_PER_TOKEN = 4;
/** Tokens an image counts for against MAX_MCP_OUTPUT_TOKENS (Claude Code's estimate, whatever its size). */
const IMAGE_TOKENS = 1_600;
/** What stands where an image was when it did not fit in the limit. */
export const IMAGE_LEFT_OUT = "[Image left out: it did not fit in the tool output limit]";

const IMAGE_EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
};
/** File extensions for an embedded binary resource's saved bytes (others: bin). */
const RESOURCE_EXTENSIONS: Record<string, string> = {
  ...IMAGE_EXTENSIONS,
  "text/plain": "txt",
  "application/json": "json",
  "application/pdf": "pdf",
};

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

const fileSafe = (text: string) => text.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 80);

/** Saves bytes where the agent can Read them (the outputs folder), returning the container path. */
async function save(
  ctx: McpResultContext,
  what: string,
  ext: string,
  data: string | Uint8Array,
): Promise<string> {
  const file = `${OUTPUTS_DIR}/mcp-${fileSafe(ctx.server)}-${what}-${fileSafe(ctx.id)}.${ext}`;
  await ctx.sandbox.writeFile(file, data, { confine: false });
  return file;
}

async function blocksOf(result: CallToolResult, ctx: McpResultContext): Promise<Block[]> {
  const blocks: Block[] = [];
  let images = 0;
  for (const item of result.content ?? []) {
    switch (item.type) {
      case "text":
        blocks.push({ type: "text", text: item.text });
        break;
      case "image": {
        const media = IMAGE_EXTENSIONS[item.mimeType];
        const name = images++ ? `blob${images}` : "blob";
        const saved = await save(ctx, name, media ?? "bin", Buffer.from(item.data, "base64"));
        if (media)
          blocks.push({
            type: "image",
            source: { type: "base64", media_type: item.mimeType as "image/png", data: item.data },
          });
        blocks.push({ type: "text", text: `[Image: source: ${saved}]` });
        break;
      }
      case "audio": {
        const saved = await save(ctx, `audio${images++}`, "bin", Buffer.from(item.data, "base64"));
        blocks.push({ type: "text", text: `[Audio: ${item.mimeType}, saved to ${saved}]` });
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
        if ("text" in r) {
          blocks.push({ type: "text", text: `[Resource from ${ctx.server} at ${r.uri}] ${r.text}` });
        } else {
          const bytes = Buffer.from(r.blob, "base64");
          const type = r.mimeType ?? "application/octet-stream";
          const saved = await save(ctx, `resource${images++}`, RESOURCE_EXTENSIONS[type] ?? "bin", bytes);
          blocks.push({
            type: "text",
            text: `Binary content (${type}, ${bytes.length.toLocaleString("en-US")} bytes) saved to ${saved}`,
          });
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
 * left out with a line saying so; then one truncation note.
 */
function cutBlocks(blocks: Block[], maxChars: number, tokens: number): Block[] {
  let left = maxChars;
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
  out.push({
    type: "text",
    text: `[OUTPUT TRUNCATED - the result was about ${tokens.toLocaleString("en-US")} tokens, over the limit of ${Math.round(maxChars / CHARS_PER_TOKEN).toLocaleString("en-US")} (MAX_MCP_OUTPUT_TOKENS)]`,
  });
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
  if (result.structuredContent !== undefined && !carriesData(result)) {
    const json = JSON.stringify(result.structuredContent);
    if (json.length <= maxChars) return { output: json, title };
    const file = await save(ctx, fileSafe(ctx.tool), "txt", json);
    return { output: savedOutputNote(json, file), title, metadata: { savedTo: file } };
  }
  const blocks = await blocksOf(result, ctx);
  const text = textOf(blocks);
  const chars = blocks.reduce((n, b) => n + blockChars(b), 0);
  if (chars <= maxChars) return { output: blocks, title };
  const tokens = Math.ceil(chars / CHARS_PER_TOKEN);
  if (blocks.some((b) => b.type === "image")) return { output: cutBlocks(blocks, maxChars, tokens), title };
  const file = await save(ctx, fileSafe(ctx.tool), "txt", text);
  return { output: savedOutputNote(text, file), title, metadata: { savedTo: file } };
}
