// One MCP client per configured server, on the official SDK's `Client`: stdio servers run in the run's
// container (ServiceStdioTransport over the sandbox's service stream), remote ones are spoken to from
// agent-ci's own process (the SDK's streamable HTTP or SSE transport), so their headers never enter the
// container; their messages are read through a byte limit (remote-limit.ts), as a stdio server's lines are. All connect in parallel at the start; one that fails is a warning with its stderr tail and
// the run goes on without it (strict: a config error). A server that dies is restarted once; its tool
// list is read again on `notifications/tools/list_changed`. Each server keeps a status the record reads.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  type CallToolResult,
  type ReadResourceResult,
  type Resource,
  type Tool as McpToolSpec,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { WORKSPACE_ROOT } from "../sandbox/sandbox.js";
import type { ServiceHost } from "../sandbox/container/service.js";
import { AGENT_CI_VERSION } from "../version.js";
import { isStdio, type McpServerConfig } from "./mcp-config.js";
import { limitedFetch } from "./remote-limit.js";
import { ServiceStdioTransport, type ServerTransport } from "./stdio-transport.js";
import { mcpTools, type McpToolsOptions } from "./tools.js";

/** Claude Code's status words for a server in stream-json's `mcp_servers`. */
export type McpServerStatus = "pending" | "connected" | "failed";

/** How long a server may take to answer `initialize` (MCP_TIMEOUT, as Claude Code reads it). */
export const DEFAULT_START_TIMEOUT_MS = 30_000;
/** A tool call's limit (MCP_TOOL_TIMEOUT, as Claude Code reads it); the run's wall clock holds regardless. */
export const DEFAULT_TOOL_TIMEOUT_MS = 100_000_000;
/** Protocol errors of one server written to the log (an answer to no request, …): a spamming server stops there. */
const MAX_LOGGED_PROTOCOL_ERRORS = 10;
/** Characters of such an error kept in the log line (it may quote a whole message). */
const PROTOCOL_ERROR_CHARS = 300;

const isTimeout = (e: unknown): boolean =>
  e instanceof McpError && e.code === Number(ErrorCode.RequestTimeout);

export interface McpServerState {
  name: string;
  kind: "stdio" | "http" | "sse";
  /** Where it was configured. */
  source: string;
  status: McpServerStatus;
  /** Milliseconds from the start of its connection to its tool list. */
  startMs?: number;
  /** Why it failed to start, or why it was lost. */
  error?: string;
  /** The tail of its stderr (stdio servers). */
  stderrTail?: string;
  restarts: number;
  tools: McpToolSpec[];
  /** The server offers resources (ListMcpResourcesTool / ReadMcpResourceTool). */
  resources: boolean;
}

export class McpServerError extends Error {
  override readonly name = "McpServerError";
}

interface Live {
  config: McpServerConfig;
  index: number;
  state: McpServerState;
  client?: Client;
  transport?: ServerTransport;
  closing: boolean;
  restarting?: Promise<void>;
  /** Calls in flight (for the egress ledger's attribution): tool_use id → when it started. */
  calls: Map<string, number>;
  /** Protocol errors logged so far. */
  protocolErrors: number;
}

export interface McpManagerOptions {
  servers: readonly McpServerConfig[];
  /** Starts stdio servers in the sandbox; absent: stdio servers fail to start (none may run on the host). */
  host?: ServiceHost;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

/** A number of milliseconds from an environment variable, or the default. */
function envMs(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const n = Number(env[name]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** A Streamable HTTP server's transport, with why agent-ci ended it (a message over the limit). */
class RemoteHttpTransport extends StreamableHTTPClientTransport implements ServerTransport {
  fault: Error | undefined = undefined;
  readonly stderr = "";
}

/** An SSE server's transport, with why agent-ci ended it (a message over the limit). */
class RemoteSseTransport extends SSEClientTransport implements ServerTransport {
  fault: Error | undefined = undefined;
  readonly stderr = "";
}

export class McpManager {
  private readonly live: Live[];
  private readonly startTimeout: number;
  readonly toolTimeout: number;
  private readonly listeners = new Set<() => void>();
  /** Egress ledger windows: a call of a server, from its start to its end. */
  readonly callWindows: Array<{ server: string; id: string; start: number; end: number }> = [];

  constructor(private readonly options: McpManagerOptions) {
    const env = options.env ?? process.env;
    this.startTimeout = envMs(env, "MCP_TIMEOUT", DEFAULT_START_TIMEOUT_MS);
    this.toolTimeout = envMs(env, "MCP_TOOL_TIMEOUT", DEFAULT_TOOL_TIMEOUT_MS);
    this.live = options.servers.map((config, index) => ({
      config,
      index,
      closing: false,
      calls: new Map(),
      protocolErrors: 0,
      state: {
        name: config.name,
        kind: isStdio(config) ? "stdio" : config.type,
        source: config.source,
        status: "pending",
        restarts: 0,
        tools: [],
        resources: false,
      },
    }));
  }

  get servers(): McpServerState[] {
    return this.live.map((l) => l.state);
  }

  /** The servers' tools as they stand now, as `mcpTools` makes them (the run's tool set asks here). */
  tools(reserved: ReadonlySet<string>, options: McpToolsOptions): ReturnType<typeof mcpTools> {
    return mcpTools(this, reserved, options);
  }

  /** Called when a server's tool list changed (list_changed, a restart): the run's tool set is rebuilt. */
  onToolsChanged(listener: () => void): void {
    this.listeners.add(listener);
  }

  /** Connects every server at once; resolves when each has connected or failed. */
  async start(): Promise<void> {
    await Promise.all(this.live.map((l) => this.connect(l)));
  }

  private async connect(l: Live): Promise<void> {
    const started = performance.now();
    l.state.status = "pending";
    l.state.error = undefined;
    let transport: ServerTransport | undefined;
    try {
      transport = await this.openTransport(l);
      l.transport = transport;
      // As Claude Code: the workspace is the one root, and an elicitation (a question for a person) is
      // declined, since no one is there to answer it.
      const client = new Client(
        { name: "agent-ci", version: AGENT_CI_VERSION },
        { capabilities: { roots: {}, elicitation: { form: {}, url: {} } } },
      );
      client.setRequestHandler(ListRootsRequestSchema, () => ({
        roots: [{ uri: `file://${WORKSPACE_ROOT}`, name: "workspace" }],
      }));
      client.setRequestHandler(ElicitRequestSchema, () => ({ action: "decline" as const }));
      client.onclose = () => this.lost(l, client);
      // The SDK drops what it cannot pair with a request (an answer to an id never sent) and says so here;
      // the transport's own faults are reported when it closes.
      const opened = transport;
      client.onerror = (error) => {
        if (this.faultOf(opened) !== undefined) return;
        this.protocolError(l, error);
      };
      await client.connect(transport, { timeout: this.startTimeout });
      l.client = client;
      const capabilities = client.getServerCapabilities() ?? {};
      l.state.tools = capabilities.tools ? await this.listTools(client) : [];
      l.state.resources = Boolean(capabilities.resources);
      if (capabilities.tools?.listChanged) {
        client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
          l.state.tools = await this.listTools(client).catch(() => l.state.tools);
          this.changed();
        });
      }
      l.state.status = "connected";
      l.state.startMs = Math.round(performance.now() - started);
    } catch (e) {
      l.state.status = "failed";
      l.state.startMs = Math.round(performance.now() - started);
      const fault = this.faultOf(transport);
      l.state.error = fault
        ? fault.message
        : isTimeout(e)
          ? `did not answer within ${this.startTimeout} ms (MCP_TIMEOUT)`
          : (e as Error).message;
      l.state.tools = [];
      await this.closeTransport(l);
      this.options.log?.(`MCP server ${l.config.name} did not start: ${l.state.error}`);
    } finally {
      if (transport) l.state.stderrTail = transport.stderr || undefined;
    }
  }

  private async openTransport(l: Live): Promise<ServerTransport> {
    const config = l.config;
    if (isStdio(config)) {
      if (!this.options.host) throw new McpServerError("no sandbox to run a stdio server in");
      const process = await this.options.host.startService({
        index: l.index,
        name: config.name,
        command: config.command,
        args: config.args,
        env: config.env,
        caller: mcpCaller(config.name),
      });
      return new ServiceStdioTransport(process);
    }
    const url = new URL(config.url);
    const headers = config.headers;
    // A message over the limit ends the transport: the request waiting for it fails now, not at its timeout.
    const fetchLimited = limitedFetch((error) => {
      if (transport.fault) return;
      transport.fault = error;
      void transport.close().catch(() => undefined);
    });
    const transport: RemoteHttpTransport | RemoteSseTransport =
      config.type === "http"
        ? new RemoteHttpTransport(url, { requestInit: { headers }, fetch: fetchLimited })
        : new RemoteSseTransport(url, {
            requestInit: { headers },
            fetch: fetchLimited,
            eventSourceInit: {
              fetch: (input, init) =>
                fetchLimited(input, { ...init, headers: { ...(init?.headers ?? {}), ...headers } }),
            },
          });
    return transport;
  }

  /** Why agent-ci ended this transport (a protocol fault, a message over the limit), if it did. */
  private faultOf(transport: ServerTransport | undefined): Error | undefined {
    return transport?.fault;
  }

  private async listTools(client: Client): Promise<McpToolSpec[]> {
    const tools: McpToolSpec[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout: this.startTimeout });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /** The connection ended without agent-ci closing it: restart the server once. */
  private lost(l: Live, client: Client): void {
    if (l.closing || l.client !== client) return;
    const fault = this.faultOf(l.transport);
    if (l.transport) l.state.stderrTail = l.transport.stderr || undefined;
    l.client = undefined;
    l.state.status = "failed";
    l.state.error = fault ? fault.message : "the server's connection closed (the process ended?)";
    if (l.state.restarts >= 1) {
      l.state.tools = [];
      this.changed();
      return;
    }
    l.state.restarts += 1;
    this.options.log?.(`MCP server ${l.config.name} was lost (${l.state.error}); restarting it once`);
    l.restarting = this.closeTransport(l)
      .then(() => this.connect(l))
      .then(() => this.changed())
      .finally(() => (l.restarting = undefined));
  }

  private protocolError(l: Live, error: Error): void {
    l.protocolErrors += 1;
    if (l.protocolErrors > MAX_LOGGED_PROTOCOL_ERRORS) return;
    const message =
      error.message.length > PROTOCOL_ERROR_CHARS
        ? `${error.message.slice(0, PROTOCOL_ERROR_CHARS)}…`
        : error.message;
    const more =
      l.protocolErrors === MAX_LOGGED_PROTOCOL_ERRORS ? " (its further protocol errors are not logged)" : "";
    this.options.log?.(`MCP server ${l.config.name}: ${message}${more}`);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  private byName(server: string): Live | undefined {
    return this.live.find((l) => l.config.name === server);
  }

  /** A connected server's client (waiting for a restart under way), or an error saying why there is none. */
  private async clientOf(server: string): Promise<{ l: Live; client: Client }> {
    const l = this.byName(server);
    if (!l) throw new McpServerError(`no MCP server is named ${server}`);
    await l.restarting;
    if (!l.client)
      throw new McpServerError(
        `MCP server ${server} is not connected${l.state.error ? `: ${l.state.error}` : ""}`,
      );
    return { l, client: l.client };
  }

  async callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    call: { id: string; signal: AbortSignal },
  ): Promise<CallToolResult> {
    const { l, client } = await this.clientOf(server);
    const transport = l.transport;
    const start = Date.now();
    l.calls.set(call.id, start);
    // A signal of this call's own: the run's signal is shared by every call, and the SDK's listeners on it
    // would pile up one a call.
    const own = new AbortController();
    const onAbort = () => own.abort(call.signal.reason);
    call.signal.addEventListener("abort", onAbort, { once: true });
    if (call.signal.aborted) onAbort();
    try {
      return (await client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: this.toolTimeout,
        signal: own.signal,
      })) as CallToolResult;
    } catch (e) {
      throw this.explain(l, e as Error, transport);
    } finally {
      call.signal.removeEventListener("abort", onAbort);
      l.calls.delete(call.id);
      this.callWindows.push({ server, id: call.id, start, end: Date.now() });
    }
  }

  /**
   * A failed request's error, with what the transport it went out on knows (a protocol fault, the stderr
   * tail): by the time the error arrives, a restart may have replaced the server's transport.
   */
  private explain(l: Live, error: Error, transport = l.transport): Error {
    const fault = this.faultOf(transport);
    if (fault) return new McpServerError(`MCP server ${l.config.name}: ${fault.message}`);
    if (isTimeout(error))
      return new McpServerError(
        `MCP server ${l.config.name}: the call did not finish within ${this.toolTimeout} ms (MCP_TOOL_TIMEOUT)`,
      );
    if (l.state.status === "failed" || !l.client) {
      const tail = l.state.stderrTail?.trim().split("\n").slice(-5).join("\n");
      return new McpServerError(
        `MCP server ${l.config.name} stopped during the call (${error.message})${tail ? `; its stderr ended with:\n${tail}` : ""}${l.state.restarts ? "; it is being restarted once" : ""}`,
      );
    }
    return error;
  }

  async listResources(server: string): Promise<Resource[]> {
    const { l, client } = await this.clientOf(server);
    const transport = l.transport;
    const resources: Resource[] = [];
    let cursor: string | undefined;
    try {
      do {
        const page = await client.listResources(cursor ? { cursor } : {}, { timeout: this.toolTimeout });
        resources.push(...page.resources);
        cursor = page.nextCursor;
      } while (cursor);
    } catch (e) {
      throw this.explain(l, e as Error, transport);
    }
    return resources;
  }

  async readResource(server: string, uri: string, signal: AbortSignal): Promise<ReadResourceResult> {
    const { l, client } = await this.clientOf(server);
    const transport = l.transport;
    try {
      return await client.readResource({ uri }, { timeout: this.toolTimeout, signal });
    } catch (e) {
      throw this.explain(l, e as Error, transport);
    }
  }

  /**
   * The MCP call an egress connection of a server belongs to: the server's one call in flight when it
   * started, else the server's tag (`mcp.<server>`) stays.
   */
  attributeConnection(caller: string | undefined, startedAt: string): string | undefined {
    const server = caller?.startsWith(MCP_CALLER_PREFIX) ? caller.slice(MCP_CALLER_PREFIX.length) : undefined;
    if (server === undefined) return caller;
    const at = Date.parse(startedAt);
    const windows = this.callWindows.filter((w) => w.server === server && w.start <= at && at <= w.end);
    return windows.length === 1 ? windows[0]!.id : caller;
  }

  private async closeTransport(l: Live): Promise<void> {
    const transport = l.transport;
    l.transport = undefined;
    await transport?.close().catch(() => undefined);
  }

  /** Closes every client and ends every server (stdio servers also end with the container). */
  async close(): Promise<void> {
    await Promise.all(
      this.live.map(async (l) => {
        l.closing = true;
        await l.restarting?.catch(() => undefined);
        const client = l.client;
        l.client = undefined;
        await client?.close().catch(() => undefined);
        await this.closeTransport(l);
      }),
    );
  }
}

const MCP_CALLER_PREFIX = "mcp.";
/** The egress ledger's caller for a stdio server's connections (the proxy's user-name tag). */
export const mcpCaller = (server: string): string => `${MCP_CALLER_PREFIX}${server}`;
