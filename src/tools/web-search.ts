// WebSearch(query, allowed_domains, blocked_domains): a side call to the model carrying the API's own
// `web_search_20250305` server tool; the search runs at Anthropic, not from this machine or the sandbox.
// The result is Claude Code's: the query, the links as JSON, the model's summary, a reminder to cite.
// Offered only when a rule allows WebSearch (or in bypassPermissions), and never without a network.
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import type { WebFacts } from "../report/schema.js";
import { defineTool, toolError } from "./define-tool.js";
import type { Tool } from "./types.js";
import type { WebServices } from "./web-services.js";

/** Searches one WebSearch call may run (the server tool's `max_uses`). */
export const MAX_SEARCHES_PER_CALL = 8;
const SEARCH_MAX_TOKENS = 4_096;

export const WebSearchInput = z.strictObject({
  query: z.string().min(2).describe("The search query to use"),
  allowed_domains: z.array(z.string()).optional().describe("Only include search results from these domains"),
  blocked_domains: z.array(z.string()).optional().describe("Never include search results from these domains"),
});
export type WebSearchInput = z.infer<typeof WebSearchInput>;

export const WEB_SEARCH_DESCRIPTION = `Search the web. Returns result blocks with titles and URLs.

- \`allowed_domains\` / \`blocked_domains\` filter results.
- After answering from results, end with a "Sources:" list of the URLs you used as markdown links.`;

const SEARCH_SYSTEM =
  "You run a web search for another Claude model, which is waiting on the result and can search again. Search once, then reply with a brief summary of the results.";

/** The tool result Claude Code returns: the query, then each result block (links as JSON) and text in order. */
export function searchResultText(
  query: string,
  content: readonly Anthropic.ContentBlock[],
): {
  text: string;
  queries: string[];
  results: Array<{ title: string; url: string }>;
} {
  const parts: string[] = [];
  const queries: string[] = [];
  const results: Array<{ title: string; url: string }> = [];
  for (const block of content) {
    if (block.type === "server_tool_use") {
      const q = (block.input as { query?: unknown } | null)?.query;
      if (typeof q === "string") queries.push(q);
    } else if (block.type === "web_search_tool_result") {
      if (Array.isArray(block.content)) {
        const links = block.content.map((r) => ({ title: r.title, url: r.url }));
        results.push(...links);
        parts.push(`Links: ${JSON.stringify(links)}`);
      } else {
        parts.push(`Web search error: ${block.content.error_code}`);
      }
    } else if (block.type === "text" && block.text.trim()) {
      parts.push(block.text.trim());
    }
  }
  const body = parts.length ? parts.join("\n\n") : "No results found.";
  return {
    text: `Web search results for query: "${query}"\n\n${body}\n\n\nREMINDER: You MUST include the sources above in your response to the user using markdown hyperlinks.`,
    queries,
    results,
  };
}

export function createWebSearchTool(web: WebServices): Tool<WebSearchInput> {
  return defineTool<WebSearchInput>({
    name: "WebSearch",
    description: WEB_SEARCH_DESCRIPTION,
    inputSchema: WebSearchInput,
    maxResultSizeChars: 100_000,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,

    async validateInput(input) {
      if (input.allowed_domains?.length && input.blocked_domains?.length)
        return toolError(
          "invalid_input",
          "Error: Cannot specify both allowed_domains and blocked_domains in the same request",
        );
      return undefined;
    },

    async call(input, ctx) {
      const tool: Anthropic.WebSearchTool20250305 = {
        type: "web_search_20250305",
        name: "web_search",
        max_uses: MAX_SEARCHES_PER_CALL,
        ...(input.allowed_domains?.length ? { allowed_domains: input.allowed_domains } : {}),
        ...(input.blocked_domains?.length ? { blocked_domains: input.blocked_domains } : {}),
      };
      let side;
      try {
        side = await web.sideCall(ctx.toolUseId, {
          purpose: "search",
          model: web.searchModel,
          system: SEARCH_SYSTEM,
          messages: [
            {
              role: "user",
              content: [{ type: "text", text: `Perform a web search for the query: ${input.query}` }],
            },
          ],
          tools: [tool],
          maxTokens: SEARCH_MAX_TOKENS,
          signal: ctx.signal,
        });
      } catch (e) {
        if (ctx.signal.aborted) throw e;
        return {
          output: `Web search failed: ${(e as Error).message}`,
          isError: true,
          kind: "command_failed",
          title: "search failed",
        };
      }
      if (!side)
        return toolError(
          "command_failed",
          "This scripted run has no answer for this search (no matching side entry).",
        );
      const found = searchResultText(input.query, side.content);
      const facts: WebFacts = {
        queries: found.queries.length ? found.queries : [input.query],
        results: found.results,
        searches: side.webSearchRequests,
      };
      return {
        output: found.text,
        title: `"${input.query}": ${found.results.length} results`,
        metadata: { web: facts },
      };
    },
  });
}
