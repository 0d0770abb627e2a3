// The MCP room's pure parts: configuration in Claude Code's format, the bounded line reader and transport
// (a fake service process: streams in memory), the result mapping and its output limit.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { loadMcpConfig } from "../../../src/mcp/mcp-config.js";
import { describeIgnored } from "../../../src/policy/index.js";
import { IMAGE_LEFT_OUT, mapMcpResult } from "../../../src/mcp/result.js";
import {
  LineReader,
  MAX_REPORTED_NOISE_LINES,
  ServiceStdioTransport,
} from "../../../src/mcp/stdio-transport.js";
import { McpManager } from "../../../src/mcp/manager.js";
import { limitedFetch } from "../../../src/mcp/remote-limit.js";
import { mcpErrorMessage, mcpToolName, mcpTools } from "../../../src/mcp/tools.js";
import type { ServiceProcess } from "../../../src/sandbox/container/service.js";
import { FakeSandbox } from "../../support/fake-sandbox.js";

const workspace = () => fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-mcp-unit-"));
const load = (configs: string[], env: NodeJS.ProcessEnv = {}, ws = workspace(), trustWorkspace = false) =>
  loadMcpConfig({ configs, workspace: ws, trustWorkspace, env });

describe("MCP configuration", () => {
  it("reads stdio and remote servers, expanding ${VAR} and ${VAR:-default} from the host's environment", () => {
    const config = JSON.stringify({
      mcpServers: {
        gh: { command: "npx", args: ["-y", "${PKG:-server-github}"], env: { TOKEN: "${GH}" } },
        docs: { type: "http", url: "https://${HOST}/mcp", headers: { Authorization: "Bearer ${KEY}" } },
      },
    });
    const { servers, secrets } = load([config], {
      GH: "ghp-value-1",
      HOST: "docs.example.com",
      KEY: "k-123456",
    });
    expect(servers).toMatchObject([
      { name: "gh", command: "npx", args: ["-y", "server-github"], env: { TOKEN: "ghp-value-1" } },
      {
        name: "docs",
        type: "http",
        url: "https://docs.example.com/mcp",
        headers: { Authorization: "Bearer k-123456" },
      },
    ]);
    expect(secrets).toEqual(["ghp-value-1", "Bearer k-123456", "docs.example.com"]);
  });

  it("keeps what ${VAR} takes from the environment off a stdio server's command line, and a URL's value secret", () => {
    const value = ["cmdline", "secret", String(process.pid)].join("-");
    const env = { TOKEN: value, HOST: "docs.example.com" };
    const server = (entry: unknown) => JSON.stringify({ mcpServers: { srv: entry } });
    for (const entry of [
      { command: "server", args: ["--token", "${TOKEN}"] },
      { command: "${TOKEN}" },
      { command: "server", args: ["--token=${TOKEN:-none}"] },
    ]) {
      let message = "";
      try {
        load([server(entry)], env);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toMatch(
        /MCP server "srv": \$\{TOKEN\} in its command or args would put the value on the server's command line, which every process in the sandbox can read \(\/proc\/<pid>\/cmdline\)[^]*Pass it in "env" instead/,
      );
      expect(message).not.toContain(value);
    }
    // A default is the config's own text; in env the value is the server's user's alone.
    expect(load([server({ command: "s", args: ["${NOPE:-plain}"] })], env).servers[0]).toMatchObject({
      args: ["plain"],
    });
    expect(load([server({ command: "s", env: { T: "${TOKEN}" } })], env).secrets).toEqual([value]);
    const remote = load([server({ type: "http", url: "https://${HOST}/mcp?key=${TOKEN}" })], env);
    expect(remote.secrets).toEqual(["docs.example.com", value]);
  });

  it("refuses bad entries with the server named", () => {
    const bad =
      (entry: unknown, name = "srv") =>
      () =>
        load([JSON.stringify({ mcpServers: { [name]: entry } })]);
    expect(bad({ comand: "x" })).toThrow('unknown key "comand" in MCP server "srv": did you mean "command"?');
    expect(bad({ type: "http", url: "https://x.example/mcp", Headers: {} })).toThrow(
      'unknown key "Headers" in MCP server "srv": did you mean "headers"?',
    );
    expect(bad({ args: [] })).toThrow(/MCP server "srv": names no command \(stdio\) or url/);
    expect(bad({ command: "x" }, "bad name")).toThrow(/MCP server "bad name": a server's name/);
    expect(bad({ type: "http", url: "file:///etc" })).toThrow(/MCP server "srv": .*http or https/);
    expect(bad({ command: "${NOPE}" })).toThrow(/MCP server "srv": missing environment variables: NOPE/);
    expect(() => load(["{not json"])).toThrow(/not JSON/);
  });

  it("refuses a misspelt mcpServers, naming the file", () => {
    const file = path.join(workspace(), "servers.json");
    fs.writeFileSync(file, JSON.stringify({ mcpServer: { fs: { command: "x" } } }));
    expect(() => load([file])).toThrow(
      `--mcp-config ${file}: unknown key "mcpServer" at the top level: did you mean "mcpServers"?`,
    );
  });

  it("notes the keys it does not use, and goes on", () => {
    const config = JSON.stringify({
      $schema: "x",
      mcpServers: {
        srv: { command: "x", extra: 1, cwd: "/tmp" },
        web: { type: "http", url: "https://x.example/mcp", oauth: { clientId: "c" } },
      },
    });
    const { servers, ignored } = load([config]);
    expect(servers.map((s) => s.name)).toEqual(["srv", "web"]);
    expect(ignored.map(describeIgnored)).toEqual([
      '--mcp-config (inline JSON) ("$schema"): unknown key, not used: agent-ci does not know it (a newer Claude Code key, or a misspelling)',
      '--mcp-config (inline JSON) ("extra"): unknown key in MCP server "srv", not used: agent-ci does not know it (a newer Claude Code key, or a misspelling)',
      '--mcp-config (inline JSON) (cwd): Claude Code key in MCP server "srv" that agent-ci does not use',
      '--mcp-config (inline JSON) (oauth): Claude Code key in MCP server "web" that agent-ci does not use',
    ]);
    expect(ignored.map((i) => i.severity)).toEqual(["warning", "warning", "info", "info"]);
  });

  it("uses the workspace's .mcp.json only when trusted, and says it was ignored otherwise", () => {
    const ws = workspace();
    fs.writeFileSync(path.join(ws, ".mcp.json"), JSON.stringify({ mcpServers: { w: { command: "w" } } }));
    const untrusted = load([], {}, ws);
    expect(untrusted.servers).toEqual([]);
    expect(untrusted.ignored[0]?.source).toBe("workspace:.mcp.json");
    expect(load([], {}, ws, true).servers.map((s) => s.name)).toEqual(["w"]);
  });

  it("names tools as Claude Code does", () => {
    expect(mcpToolName("my.server", "do thing/now")).toBe("mcp__my_server__do_thing_now");
  });

  it("refuses a tool whose input schema is not valid JSON Schema, by the draft it declares", () => {
    const [config] = load([JSON.stringify({ mcpServers: { s: { command: "x" } } })]).servers;
    const manager = new McpManager({ servers: [config!] });
    const object = (extra: Record<string, unknown>) => ({ type: "object" as const, ...extra });
    Object.assign(manager.servers[0]!, {
      status: "connected",
      tools: [
        { name: "plain", inputSchema: object({ properties: { a: { type: "string" } } }) },
        {
          name: "draft07",
          inputSchema: object({ $schema: "http://json-schema.org/draft-07/schema#", definitions: {} }),
        },
        { name: "nested", inputSchema: object({ properties: { a: { type: "nonsense" } } }) },
        { name: "required", inputSchema: object({ required: "a" }) },
        { name: "other-draft", inputSchema: object({ $schema: "http://json-schema.org/draft-04/schema#" }) },
      ],
    });
    const { tools, refused } = mcpTools(manager, new Set(), { maxOutputTokens: 25_000 });
    expect(tools.map((t) => t.name)).toEqual(["mcp__s__plain", "mcp__s__draft07", "mcp__s__other-draft"]);
    expect(refused).toEqual([
      {
        server: "s",
        tool: "nested",
        reason: expect.stringMatching(
          /^its input schema is not a valid JSON Schema: schema\/properties\/a\/type/,
        ),
      },
      { server: "s", tool: "required", reason: expect.stringMatching(/schema\/required must be array/) },
    ]);
  });
});

describe("an MCP error's message", () => {
  it("carries the SDK's prefix once, however often the server and client added it, in linear time", () => {
    const prefix = "MCP error -32602: ";
    expect(mcpErrorMessage(new Error(`${prefix}${prefix}Resource x not found`))).toBe(
      `${prefix}Resource x not found`,
    );
    expect(mcpErrorMessage(new Error("plain"))).toBe("plain");
    const many = `${prefix.repeat(200_000)}end`;
    expect(mcpErrorMessage(new Error(many))).toBe(`${prefix}end`);
  });
});

describe("the line reader", () => {
  it("splits lines across chunks, linearly, and refuses a line over its limit with bounded memory", () => {
    const lines: string[] = [];
    const reader = new LineReader(1000, (l) => lines.push(l));
    reader.push(Buffer.from('{"a":1}\r\n{"b"'));
    reader.push(Buffer.from(":2}\n"));
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    const chunk = Buffer.alloc(400, 0x61);
    reader.push(chunk);
    reader.push(chunk);
    expect(() => reader.push(chunk)).toThrow(/more than 1000 bytes/);
  });
});

function fakeProcess(): ServiceProcess & {
  stdout: PassThrough;
  stderr: PassThrough;
  written: string[];
  end(code: number): void;
} {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const written: string[] = [];
  stdin.on("data", (d: Buffer) => written.push(d.toString("utf8")));
  let exit: (code: number | null) => void = () => {};
  const exited = new Promise<number | null>((resolve) => (exit = resolve));
  return { stdin, stdout, stderr, exited, written, end: (code) => exit(code), kill: async () => exit(null) };
}

describe("the stdio transport", () => {
  it("makes every close wait for the one kill (the SDK closes a server that failed its start, then agent-ci does)", async () => {
    let killed = () => {};
    const killing = new Promise<void>((resolve) => (killed = resolve));
    const kills: number[] = [];
    const proc = { ...fakeProcess(), kill: () => (kills.push(1), killing) };
    const transport = new ServiceStdioTransport(proc);
    await transport.start();
    const order: string[] = [];
    void transport.close().then(() => order.push("first close"));
    const second = transport.close().then(() => order.push("second close"));
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    killed();
    await second;
    expect(order).toEqual(["first close", "second close"]);
    expect(kills).toHaveLength(1);
  });

  it("passes JSON-RPC both ways and keeps the stderr tail", async () => {
    const proc = fakeProcess();
    const transport = new ServiceStdioTransport(proc);
    const got: unknown[] = [];
    transport.onmessage = (m) => got.push(m);
    await transport.start();
    await transport.send({ jsonrpc: "2.0", id: 1, method: "ping" });
    expect(proc.written.join("")).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    proc.stdout.write('{"jsonrpc":"2.0","id":1,"result":{}}\n');
    proc.stderr.write("x".repeat(10_000) + "the end");
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }]);
    expect(transport.stderr.endsWith("the end")).toBe(true);
    expect(transport.stderr.length).toBe(4000);
  });

  it("skips a line that is not JSON-RPC and reads on, noting the first few, cut short, in stderr and warnings", async () => {
    const proc = fakeProcess();
    const transport = new ServiceStdioTransport(proc);
    const got: unknown[] = [];
    const warnings: string[] = [];
    let closed = false;
    transport.onmessage = (m) => got.push(m);
    transport.onerror = (e) => warnings.push(e.message);
    transport.onclose = () => (closed = true);
    await transport.start();
    proc.stdout.write("Code Runner MCP Server running on stdio\n");
    proc.stdout.write(`${"b".repeat(1_000_000)}\n`);
    for (let i = 0; i < 50; i++) proc.stdout.write(`noise ${i}\n`);
    proc.stdout.write('{"jsonrpc":"2.0","id":1,"result":{}}\n');
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }]);
    expect(closed).toBe(false);
    expect(transport.fault).toBeUndefined();
    expect(warnings).toHaveLength(MAX_REPORTED_NOISE_LINES);
    expect(warnings[0]).toBe(
      'the server wrote a line that is not JSON-RPC to stdout, skipped: "Code Runner MCP Server running on stdio"',
    );
    expect(warnings[1]).toBe(
      `the server wrote a line that is not JSON-RPC to stdout, skipped: "${"b".repeat(200)}…"`,
    );
    expect(warnings.at(-1)).toMatch(/"noise 7" \(further such lines are skipped without a note\)$/);
    expect(transport.stderr).toContain(
      '[agent-ci] the server wrote a line that is not JSON-RPC to stdout, skipped: "Code Runner MCP Server running on stdio"\n',
    );
    expect(transport.stderr).not.toContain("noise 8");
    await transport.send({ jsonrpc: "2.0", id: 2, method: "ping" });
    expect(proc.written.join("")).toBe('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  });

  it("ends on a line over the limit", async () => {
    const proc = fakeProcess();
    const transport = new ServiceStdioTransport(proc, 1024);
    await transport.start();
    proc.stdout.write(Buffer.alloc(4096, 0x7b));
    await new Promise((r) => setImmediate(r));
    expect(transport.fault?.message).toMatch(/a line of more than 1024 bytes/);
  });
});

describe("a remote server's message limit", () => {
  const LIMIT = 1_000_000;
  /** A response whose body is made as it is read, `chunks` of `chunk`; `pulled` counts what was read. */
  function lazyFetch(chunk: string, chunks: number, type: string, length?: number) {
    const state = { pulled: 0 };
    const bytes = Buffer.from(chunk);
    const fetch = async () => {
      let left = chunks;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (left-- <= 0) return controller.close();
          state.pulled += bytes.length;
          controller.enqueue(new Uint8Array(bytes));
        },
      });
      const headers: Record<string, string> = { "content-type": type };
      if (length !== undefined) headers["content-length"] = String(length);
      return new Response(body, { status: 200, headers });
    };
    return { fetch, state };
  }

  it("stops reading a JSON answer at the limit, before holding it whole, and says so once", async () => {
    const { fetch, state } = lazyFetch("a".repeat(64 * 1024), 1600, "application/json"); // 100 MB
    const heard: Error[] = [];
    const response = await limitedFetch((e) => heard.push(e), LIMIT, fetch)("http://x/mcp");
    await expect(response.text()).rejects.toThrow(
      `the server sent a message of more than ${LIMIT} bytes; agent-ci stopped reading it`,
    );
    expect(heard).toHaveLength(1);
    expect(state.pulled).toBeLessThan(LIMIT + 4 * 64 * 1024);
    // A declared length over the limit is refused before any of it is read.
    const declared = lazyFetch("a", 10, "application/json", LIMIT + 1);
    await expect(limitedFetch(() => undefined, LIMIT, declared.fetch)("http://x/mcp")).rejects.toThrow(
      /more than 1000000 bytes/,
    );
    expect(declared.state.pulled).toBeLessThanOrEqual(1); // the stream's own first pull
  });

  it("limits an event stream per event: many small events pass, one large event is cut, an end across chunks counts", async () => {
    const event = `data: ${"e".repeat(1000)}\n\n`;
    const small = lazyFetch(event, 2000, "text/event-stream"); // 2 MB of small events
    const passed = await (await limitedFetch(() => undefined, LIMIT, small.fetch)("http://x/mcp")).text();
    expect(passed.length).toBe(event.length * 2000);
    // Each chunk ends an event with its first byte: "\n" + "\n" across chunks is a blank line.
    const straddling = lazyFetch(`\ndata: ${"s".repeat(100_000)}\n`, 25, "text/event-stream");
    const joined = await (await limitedFetch(() => undefined, LIMIT, straddling.fetch)("http://x/")).text();
    expect(joined.length).toBeGreaterThan(LIMIT * 2);
    const large = lazyFetch(`data: ${"x".repeat(64 * 1024)}`, 100, "text/event-stream");
    const response = await limitedFetch(() => undefined, LIMIT, large.fetch)("http://x/mcp");
    await expect(response.text()).rejects.toThrow(/more than 1000000 bytes \(one event\)/);
  });
});

describe("MCP result mapping", () => {
  const ctx = (maxTokens = 25_000) => ({
    server: "everything",
    tool: "echo",
    id: "toolu_1",
    sandbox: new FakeSandbox(),
    maxTokens,
  });

  it("maps text, structured content, links, embedded resources and errors as Claude Code does", async () => {
    expect((await mapMcpResult({ content: [{ type: "text", text: "hi" }] }, ctx())).output).toEqual([
      { type: "text", text: "hi" },
    ]);
    expect(
      (await mapMcpResult({ content: [{ type: "text", text: "x" }], structuredContent: { a: 1 } }, ctx()))
        .output,
    ).toBe('{"a":1}');
    const linked = await mapMcpResult(
      {
        content: [
          { type: "resource_link", uri: "demo://a", name: "a", description: "the a" },
          { type: "resource", resource: { uri: "demo://b", text: "bee" } },
        ],
      },
      ctx(),
    );
    expect(linked.output).toEqual([
      { type: "text", text: "[Resource link: a] demo://a (the a)" },
      { type: "text", text: "[Resource from everything at demo://b] bee" },
    ]);
    const failed = await mapMcpResult({ content: [{ type: "text", text: "boom" }], isError: true }, ctx());
    expect(failed).toMatchObject({ output: "boom", isError: true });
  });

  it("saves a result over the limit and says where, in linear time (a 50 MB result)", async () => {
    const c = ctx();
    const big = "y".repeat(50 * 1024 * 1024);
    const result = await mapMcpResult({ content: [{ type: "text", text: big }] }, c);
    const note = result.output as string;
    expect(note).toMatch(
      /^Error: result \(52,428,800 characters across 1 line\) exceeds maximum allowed tokens\. Output has been saved to \/tmp\/agent-ci-outputs\/mcp-everything-echo-toolu_1\.txt\./,
    );
    expect(note).toContain("lines are too long for Read's offset/limit chunking");
    expect(c.sandbox.text("/tmp/agent-ci-outputs/mcp-everything-echo-toolu_1.txt")?.length).toBe(big.length);
  });

  it("cuts a result with an image instead of saving it, and 10,000 blocks stay linear", async () => {
    const blocks = Array.from({ length: 10_000 }, (_, i) => ({
      type: "text" as const,
      text: `block ${i} `.repeat(20),
    }));
    // An image counts 1,600 tokens: it fits in 2,000, and the text gets what is left.
    const result = await mapMcpResult(
      { content: [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }, ...blocks] },
      ctx(2000),
    );
    const out = result.output as Array<{ type: string; text?: string }>;
    expect(out[0]?.type).toBe("image");
    expect(out[1]?.text).toMatch(
      /^\[Image: source: \/tmp\/agent-ci-outputs\/mcp-everything-blob-toolu_1\.png\]$/,
    );
    expect(out.at(-1)?.text).toMatch(/^\n\n\[OUTPUT TRUNCATED - exceeded 2000 token limit\]\n\n/);
    const chars = out.slice(0, -1).reduce((n, b) => n + (b.text?.length ?? 0), 0);
    expect(chars).toBeLessThan(8000 - 6400 + 300);
  });

  it("leaves out an image that does not fit in the limit, in its place, before the truncation note", async () => {
    const result = await mapMcpResult(
      {
        content: [
          { type: "text", text: "before" },
          { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
          { type: "text", text: "after" },
        ],
      },
      ctx(1000),
    );
    expect(result.output).toEqual([
      { type: "text", text: "before" },
      { type: "text", text: IMAGE_LEFT_OUT },
      { type: "text", text: "[Image: source: /tmp/agent-ci-outputs/mcp-everything-blob-toolu_1.png]" },
      { type: "text", text: "after" },
      {
        type: "text",
        text: "\n\n[OUTPUT TRUNCATED - exceeded 1000 token limit]\n\nThe tool output was truncated. If this MCP server provides pagination or filtering tools, use them to retrieve specific portions of the data. If pagination is not available, inform the user that you are working with truncated output and results may be incomplete.",
      },
    ]);
  });

  it("gives an image's blocks and then the structured JSON in place of the text, when a server sends both", async () => {
    const c = ctx();
    const structured = { content: [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }] };
    const image = await mapMcpResult(
      {
        content: [
          { type: "text", text: "a picture" },
          { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        ],
        structuredContent: structured,
      },
      c,
    );
    expect(image.output).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "text", text: "[Image: source: /tmp/agent-ci-outputs/mcp-everything-blob-toolu_1.png]" },
      { type: "text", text: JSON.stringify(structured) },
    ]);
  });

  it("saves binary content and names where it came from, its type and size, as Claude Code words it", async () => {
    const c = ctx();
    const b64 = (text: string) => Buffer.from(text).toString("base64");
    const result = await mapMcpResult(
      {
        content: [
          {
            type: "resource",
            resource: { uri: "demo://b", mimeType: "text/plain", blob: b64("x".repeat(55)) },
          },
          { type: "resource", resource: { uri: "demo://c", blob: b64("y".repeat(1536)) } },
          { type: "audio", data: b64("z".repeat(3 * 1024 * 1024)), mimeType: "audio/wav" },
          { type: "image", data: "PHN2Zz4=", mimeType: "image/svg+xml" },
        ],
      },
      c,
    );
    const out = "/tmp/agent-ci-outputs";
    expect(result.output).toEqual([
      {
        type: "text",
        text: `[Resource from everything at demo://b] Binary content (text/plain, 55 bytes) saved to ${out}/mcp-everything-blob-toolu_1.txt`,
      },
      {
        type: "text",
        text: `[Resource from everything at demo://c] Binary content (unknown type, 1.5KB) saved to ${out}/mcp-everything-blob2-toolu_1.bin`,
      },
      {
        type: "text",
        text: `[Audio from everything] Binary content (audio/wav, 3MB) saved to ${out}/mcp-everything-blob3-toolu_1.wav`,
      },
      // An image type the API does not take is saved and named, not sent as an image.
      { type: "text", text: `[Image: source: ${out}/mcp-everything-blob4-toolu_1.svg]` },
    ]);
    expect(c.sandbox.text(`${out}/mcp-everything-blob-toolu_1.txt`)).toBe("x".repeat(55));
    expect(c.sandbox.text(`${out}/mcp-everything-blob2-toolu_1.bin`)).toBe("y".repeat(1536));
    expect(c.sandbox.text(`${out}/mcp-everything-blob4-toolu_1.svg`)).toBe("<svg>");
  });
});
