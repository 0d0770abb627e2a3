// report.json's record of the agent tools beyond files and shell: what WebFetch and WebSearch fetched and
// found, the model calls they made, the skills and slash commands of the run, and its MCP servers.
import { z } from "zod";
import { Milliseconds, NonNegativeInt, TokenUsage } from "./schema-base.js";

export const WebFacts = z
  .object({
    url: z.string().optional().describe("WebFetch: the URL asked for (after http → https), redacted."),
    finalUrl: z
      .string()
      .optional()
      .describe("WebFetch: the URL the page came from after same-host redirects."),
    status: z.number().int().optional().describe("WebFetch: the HTTP status of the last response."),
    contentType: z.string().optional(),
    bytes: NonNegativeInt.optional().describe("WebFetch: body bytes received (after decompression)."),
    fromCache: z.boolean().optional().describe("WebFetch: answered from the run's 15-minute cache."),
    redirect: z.string().optional().describe("WebFetch: a redirect to another host, returned, not followed."),
    refused: z.string().optional().describe("Why the network policy refused the fetch."),
    queries: z.array(z.string()).optional().describe("WebSearch: the queries the search ran."),
    results: z
      .array(z.object({ title: z.string(), url: z.string() }))
      .optional()
      .describe("WebSearch: the results' titles and URLs."),
    searches: NonNegativeInt.optional().describe("WebSearch: searches billed (usage.server_tool_use)."),
  })
  .meta({ id: "WebFacts" });
export type WebFacts = z.infer<typeof WebFacts>;

export const SideCall = z
  .object({
    callId: z.string().describe("The tool_use id of the call that made it (WebFetch, WebSearch)."),
    purpose: z.enum(["fetch", "search"]),
    model: z.string(),
    usage: TokenUsage,
    webSearches: NonNegativeInt.optional(),
    costUsd: z.number().nonnegative(),
  })
  .meta({ id: "SideCall" })
  .describe(
    "A model call made for a tool (WebFetch's reading model, WebSearch's search); its cost is in costUsd.",
  );
export type SideCall = z.infer<typeof SideCall>;

export const Instructions = z
  .object({
    skills: z.array(
      z.object({
        name: z.string(),
        origin: z.enum(["flag", "action", "workspace"]),
        allowedTools: z
          .array(z.string())
          .optional()
          .describe(
            "Its allowed-tools frontmatter: recorded, never applied (a skill cannot widen the policy).",
          ),
      }),
    ),
    commands: z.array(
      z.object({
        name: z.string(),
        origin: z.enum(["flag", "action", "workspace"]),
        allowedTools: z.array(z.string()).optional(),
      }),
    ),
    ignored: z
      .array(z.string())
      .describe(
        "Workspace folders (.claude/skills, .claude/commands) left unread: the workspace was not trusted.",
      ),
    problems: z.array(z.string()).describe("Files that could not be used, and why."),
    command: z
      .object({ name: z.string(), args: z.string(), model: z.string().optional() })
      .optional()
      .describe("The slash command the prompt started with, expanded into the run's first message."),
  })
  .meta({ id: "Instructions" });
export type Instructions = z.infer<typeof Instructions>;

export const McpServer = z
  .object({
    name: z.string(),
    kind: z
      .enum(["stdio", "http", "sse"])
      .describe("stdio: run in the sandbox; http, sse: a remote server called from agent-ci's process."),
    status: z
      .enum(["pending", "connected", "failed"])
      .describe("At the end of the run: connected, or failed (it did not start, or was lost)."),
    source: z
      .string()
      .describe("Where it was configured (--mcp-config, workspace:.mcp.json, action inputs)."),
    startMs: Milliseconds.optional().describe(
      "From starting it to its tool list (the last start, after a restart).",
    ),
    restarts: NonNegativeInt.describe("Times it was restarted after it was lost (at most once)."),
    tools: z
      .array(z.string())
      .describe("The tools offered from it, as the model saw them (mcp__server__tool)."),
    error: z.string().optional().describe("Why it failed to start, or why it was lost; redacted."),
    stderrTail: z.string().optional().describe("The end of its stderr (stdio servers), redacted."),
  })
  .meta({ id: "McpServer" });
export type McpServer = z.infer<typeof McpServer>;

export const Mcp = z
  .object({
    servers: z.array(McpServer),
    ignored: z
      .array(z.object({ source: z.string(), reason: z.string() }))
      .describe(
        "Configurations present but not used (the workspace's .mcp.json without trust), and keys agent-ci does not use (the key in `source`).",
      ),
    refusedTools: z
      .array(z.object({ server: z.string(), tool: z.string(), reason: z.string() }))
      .describe("Server tools left out at start (a built-in's name, a name the API would refuse)."),
  })
  .meta({ id: "Mcp" });
export type Mcp = z.infer<typeof Mcp>;
