// The run's MCP tools, made from the connected servers' tool lists (SEAMS.md: a factory per run): one
// `mcp__<server>__<tool>` per server tool, its input schema sent to the model unchanged and its input not
// checked here (the server's own -32602 answer comes back), and ListMcpResourcesTool /
// ReadMcpResourceTool when a server offers resources. Every one goes through the same pipeline, policy,
// hooks and record as the built-in tools.
import {
  ErrorCode,
  McpError,
  type ReadResourceResult,
  type Tool as McpToolSpec,
} from "@modelcontextprotocol/sdk/types.js";
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { z } from "zod";
import { mcpName } from "../policy/index.js";
import { plainError } from "../tools/define-tool.js";
import { binarySavedNote, extensionFor } from "../tools/saved-binary.js";
import type { AnyTool, ToolContext, ToolResult } from "../tools/types.js";
import type { McpManager } from "./manager.js";
import { mapMcpResult, saveMcpOutput } from "./result.js";
import { LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL } from "./names.js";

/** Claude Code's normalisation of a server's or tool's name inside `mcp__…__…`. */
export const normalizeMcpName = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, "_");
export const mcpToolName = (server: string, tool: string): string =>
  mcpName(normalizeMcpName(server), normalizeMcpName(tool));
/** What the Messages API accepts as a tool's name. */
const API_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/**
 * Checks schemas against their meta-schema, as the Messages API does: one invalid tool schema would make it
 * refuse every request of the run. Draft-07 (what many servers' schema generators declare) and 2020-12 (the
 * default); a schema declaring another draft is passed on unchecked.
 */
const metaSchemaCheckers = { draft07: new Ajv({ strict: false }), draft2020: new Ajv2020({ strict: false }) };
function schemaProblem(schema: McpToolSpec["inputSchema"]): string | undefined {
  const declared = typeof schema.$schema === "string" ? schema.$schema : undefined;
  const ajv =
    declared === undefined || declared.includes("2020-12")
      ? metaSchemaCheckers.draft2020
      : declared.includes("draft-07")
        ? metaSchemaCheckers.draft07
        : undefined;
  if (!ajv) return undefined;
  try {
    if (ajv.validateSchema(schema) === true) return undefined;
  } catch {
    return undefined; // a $schema this checker does not know: the API is left to judge it
  }
  return `its input schema is not a valid JSON Schema: ${ajv.errorsText(ajv.errors, { dataVar: "schema" })}`;
}

/** Characters of an MCP result the model gets before the pipeline's general cut (Claude Code's). */
const MCP_RESULT_MAX_CHARS = 100_000;

export { LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL };

/** Any JSON object: the server checks its own arguments. */
const AnyInput = z.record(z.string(), z.unknown());

export interface McpToolsOptions {
  /** MAX_MCP_OUTPUT_TOKENS. */
  maxOutputTokens: number;
  /**
   * May the resource tools name this server (the policy does not deny its resources)? A server it says no
   * to is left out of them: not listed, not readable, not named to the model. Default: every server.
   */
  resourcesAllowed?: (server: string) => boolean;
}

/** A refused tool (a built-in's name, a name the API would reject), for the start's warnings. */
export interface RefusedMcpTool {
  server: string;
  tool: string;
  reason: string;
}

/**
 * An error's message with the SDK's "MCP error <code>: " prefix once: a server built on the SDK sends its
 * McpError's message, prefix and all, and the client's McpError adds it again.
 */
export function mcpErrorMessage(e: unknown): string {
  const message = (e as Error).message ?? String(e);
  const prefix = /^MCP error -?\d+: /.exec(message)?.[0];
  if (!prefix) return message;
  let start = 0;
  while (message.startsWith(prefix, start)) start += prefix.length;
  return `${prefix}${message.slice(start)}`;
}

function errorResult(e: unknown): ToolResult {
  const message = mcpErrorMessage(e);
  return plainError("mcp_error", message.startsWith("MCP error") ? message : `Error: ${message}`);
}

function serverTool(
  manager: McpManager,
  server: string,
  spec: McpToolSpec,
  options: McpToolsOptions,
): AnyTool {
  const name = mcpToolName(server, spec.name);
  const readOnly = spec.annotations?.readOnlyHint === true;
  return {
    name,
    description: spec.description ?? "",
    inputSchema: AnyInput,
    apiInputSchema: spec.inputSchema,
    mcp: { server, tool: spec.name, readOnlyHint: readOnly },
    maxResultSizeChars: MCP_RESULT_MAX_CHARS,
    isReadOnly: () => readOnly,
    isConcurrencySafe: () => readOnly,
    async call(input, ctx) {
      try {
        const result = await manager.callTool(server, spec.name, input as Record<string, unknown>, {
          id: ctx.toolUseId,
          signal: ctx.signal,
        });
        return await mapMcpResult(result, {
          server,
          tool: spec.name,
          id: ctx.toolUseId,
          sandbox: ctx.sandbox,
          maxTokens: options.maxOutputTokens,
        });
      } catch (e) {
        if (ctx.signal.aborted) throw e;
        return errorResult(e);
      }
    },
  };
}

const ListResourcesInput = z.strictObject({
  server: z.string().optional().describe("Optional server name to filter resources by"),
});
const ReadResourceInput = z.strictObject({
  server: z.string().describe("The MCP server name"),
  uri: z.string().describe("The resource URI to read"),
});

/** The JSON-RPC code the MCP specification gives a missing resource. */
const RESOURCE_NOT_FOUND = -32002;

/**
 * A server's answer that the resource is not there, as Claude Code reads it: -32002 or the SDK servers'
 * -32602 ("Resource … not found"). The model gets Claude Code's message in place of the raw error.
 */
const isMissingResource = (e: unknown): boolean =>
  e instanceof McpError && (e.code === RESOURCE_NOT_FOUND || e.code === Number(ErrorCode.InvalidParams));

/** Claude Code's answer to a read of a resource that is not there: not an error, what to do next. */
export const resourceNotFound = (uri: string): string =>
  `Resource not found: ${uri} \u2014 it may have been deleted or the URI is stale. Re-run ${LIST_RESOURCES_TOOL} to refresh.`;

/**
 * A resource read's contents as Claude Code hands them over: a binary one saved where the agent can Read it,
 * its base64 replaced by the path and a note naming the server and URI.
 */
async function readContents(
  server: string,
  contents: ReadResourceResult["contents"],
  ctx: ToolContext,
): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [i, item] of contents.entries()) {
    if (!("blob" in item) || typeof item.blob !== "string") {
      out.push(item);
      continue;
    }
    const bytes = Buffer.from(item.blob, "base64");
    const what = i ? `resource${i + 1}` : "resource";
    const file = await saveMcpOutput(
      { server, id: ctx.toolUseId, sandbox: ctx.sandbox },
      what,
      extensionFor(item.mimeType),
      bytes,
    );
    const note = binarySavedNote(
      file,
      item.mimeType,
      bytes.length,
      `[Resource from ${server} at ${item.uri}] `,
    );
    out.push({ uri: item.uri, mimeType: item.mimeType, blobSavedTo: file, text: note });
  }
  return out;
}

/**
 * ListMcpResourcesTool and ReadMcpResourceTool over the servers the policy lets them reach (`allowed`): a
 * server they may not name is left out of them, as if it were not configured.
 */
function resourceTools(manager: McpManager, allowed: (server: string) => boolean): AnyTool[] {
  const named = () => manager.servers.filter((s) => allowed(s.name));
  const readable = () => named().filter((s) => s.status === "connected" && s.resources);
  /** Why a server's resources cannot be asked for (Claude Code's messages), or undefined. */
  const unreachable = (server: string): ToolResult | undefined => {
    const all = named();
    const state = all.find((s) => s.name === server);
    if (!state)
      return plainError(
        "invalid_input",
        `Server "${server}" not found. Available servers: ${all.map((s) => s.name).join(", ")}`,
      );
    // A server not connected is the manager's to explain (why, or a restart under way that the call waits for).
    if (state.status === "connected" && !state.resources)
      return plainError("invalid_input", `Server "${server}" does not support resources`);
    return undefined;
  };
  const list: AnyTool = {
    name: LIST_RESOURCES_TOOL,
    description: `
List available resources from configured MCP servers.
Each returned resource will include all standard MCP resource fields plus a 'server' field 
indicating which server the resource belongs to.

Parameters:
- server (optional): The name of a specific MCP server to get resources from. If not provided,
  resources from all servers will be returned.
`,
    inputSchema: ListResourcesInput,
    maxResultSizeChars: MCP_RESULT_MAX_CHARS,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    async call(input: z.infer<typeof ListResourcesInput>) {
      if (input.server !== undefined) {
        const refused = unreachable(input.server);
        if (refused) return refused;
      }
      const names = input.server === undefined ? readable().map((s) => s.name) : [input.server];
      try {
        const lists = await Promise.all(
          names.map(async (server) => (await manager.listResources(server)).map((r) => ({ ...r, server }))),
        );
        return { output: JSON.stringify(lists.flat()), title: `resources of ${names.join(", ")}` };
      } catch (e) {
        return errorResult(e);
      }
    },
  };
  const read: AnyTool = {
    name: READ_RESOURCE_TOOL,
    description: `
Reads a specific resource from an MCP server, identified by server name and resource URI.

Parameters:
- server (required): The name of the MCP server from which to read the resource
- uri (required): The URI of the resource to read
`,
    inputSchema: ReadResourceInput,
    maxResultSizeChars: MCP_RESULT_MAX_CHARS,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    async call(input: z.infer<typeof ReadResourceInput>, ctx) {
      const refused = unreachable(input.server);
      if (refused) return refused;
      const title = `${input.server}: ${input.uri}`;
      let result: ReadResourceResult;
      try {
        result = await manager.readResource(input.server, input.uri, ctx.signal);
      } catch (e) {
        if (ctx.signal.aborted) throw e;
        // A stale URI and a server without reads are the model's to act on, not errors (Claude Code's words).
        if (isMissingResource(e))
          return { output: resourceNotFound(input.uri), title: `${title} (not found)` };
        if (e instanceof McpError && e.code === Number(ErrorCode.MethodNotFound))
          return {
            output: `Server "${input.server}" advertises resource support but does not implement resource reads.`,
            title: `${title} (no reads)`,
          };
        return errorResult(e);
      }
      return {
        output: JSON.stringify({ contents: await readContents(input.server, result.contents, ctx) }),
        title,
      };
    },
  };
  return [list, read];
}

/**
 * The MCP tools of the run as the servers stand now: the connected servers' tools, then the resource
 * tools when any server offers resources the policy does not deny. A tool whose name is a built-in's (`reserved`), another's, or
 * one the API would refuse, or whose input schema is not valid JSON Schema, is left out and listed in
 * `refused`.
 */
export function mcpTools(
  manager: McpManager,
  reserved: ReadonlySet<string>,
  options: McpToolsOptions,
): { tools: AnyTool[]; refused: RefusedMcpTool[] } {
  const tools: AnyTool[] = [];
  const refused: RefusedMcpTool[] = [];
  const taken = new Set(reserved);
  const allowed = options.resourcesAllowed ?? (() => true);
  let withResources = false;
  for (const server of manager.servers) {
    if (server.status !== "connected") continue;
    if (server.resources && allowed(server.name)) withResources = true;
    for (const spec of server.tools) {
      const tool = serverTool(manager, server.name, spec, options);
      const reason = !API_TOOL_NAME.test(tool.name)
        ? `its name ${tool.name} is not a valid tool name for the API (letters, digits, _ and -, at most 64)`
        : taken.has(tool.name)
          ? `its name ${tool.name} is taken by another tool`
          : schemaProblem(spec.inputSchema);
      if (reason) {
        refused.push({ server: server.name, tool: spec.name, reason });
        continue;
      }
      taken.add(tool.name);
      tools.push(tool);
    }
  }
  const resource = withResources ? resourceTools(manager, allowed) : [];
  return { tools: [...resource, ...tools], refused };
}
