// Prompt caching: each request marks up to three of the API's four cache breakpoints — the system prompt,
// the last tool definition and the last cacheable block of the last message — so each turn reads the
// conversation so far from the cache. Marks go on copies; the caller's arrays are untouched.
import type Anthropic from "@anthropic-ai/sdk";
import type { ContentBlockParam, MessageParam } from "./driver.js";

const MAX_CACHE_BREAKPOINTS = 4;
const EPHEMERAL: Anthropic.CacheControlEphemeral = { type: "ephemeral" };

/** The request's system prompt, tools and messages with their cache breakpoints. */
export function withCacheBreakpoints(
  request: { system: string; tools: Anthropic.Tool[]; messages: MessageParam[] },
  cacheConversation: boolean,
): { system?: Anthropic.TextBlockParam[]; tools?: Anthropic.Tool[]; messages: MessageParam[] } {
  let breakpoints = countBreakpoints(request.messages);
  const out: { system?: Anthropic.TextBlockParam[]; tools?: Anthropic.Tool[]; messages: MessageParam[] } = {
    messages: request.messages,
  };
  if (request.system) {
    out.system = [{ type: "text", text: request.system, cache_control: EPHEMERAL }];
    breakpoints += 1;
  }
  if (request.tools.length > 0) {
    out.tools = withLastToolCached(request.tools);
    breakpoints += 1;
  }
  if (cacheConversation && breakpoints < MAX_CACHE_BREAKPOINTS)
    out.messages = withLastMessageCached(request.messages);
  return out;
}

function withLastToolCached(tools: Anthropic.Tool[]): Anthropic.Tool[] {
  const copy = [...tools];
  const last = copy.at(-1);
  if (last) copy[copy.length - 1] = { ...last, cache_control: EPHEMERAL };
  return copy;
}

const CACHEABLE_BLOCKS = new Set(["text", "image", "document", "search_result", "tool_use", "tool_result"]);

/** Marks the last cacheable block of the last message, on copies (the caller's array is untouched). */
function withLastMessageCached(messages: MessageParam[]): MessageParam[] {
  const last = messages.at(-1);
  if (!last || last.role === "system") return messages;
  const blocks: ContentBlockParam[] =
    typeof last.content === "string"
      ? last.content
        ? [{ type: "text", text: last.content }]
        : []
      : [...last.content];
  let at = blocks.length - 1;
  while (at >= 0 && !CACHEABLE_BLOCKS.has(blocks[at]?.type ?? "")) at -= 1;
  const target = blocks[at];
  if (!target) return messages;
  blocks[at] = { ...target, cache_control: EPHEMERAL } as ContentBlockParam;
  return [...messages.slice(0, -1), { ...last, content: blocks }];
}

function countBreakpoints(messages: MessageParam[]): number {
  let count = 0;
  for (const message of messages) {
    if (typeof message.content === "string") continue;
    for (const block of message.content ?? []) {
      if ("cache_control" in block && block.cache_control) count += 1;
    }
  }
  return count;
}
