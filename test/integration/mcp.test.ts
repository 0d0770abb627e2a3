// MCP servers end to end against the real engine: the reference servers from npm (everything,
// filesystem, memory) and a probe server run in the run's container, spoken to with the official SDK,
// their tools under the same pipeline, policy and record as the built-in ones.
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  hostAddressForContainers,
  type OriginServers,
  startOriginServers,
} from "../support/egress-servers.js";
import { MAX_RESPONSE_BYTES } from "../../src/mcp/remote-limit.js";
import { PYTHON_SERVER } from "../support/fixture-images.js";
import { PROBE_SERVER, REFERENCE_SERVERS, resultText, runWithMcp } from "../support/mcp-run.js";

/** Each test starts one or two sandboxed runs with servers: minutes on a loaded 2-core machine. */
const RUNS_TIMEOUT = 300_000;

const ALLOW_ALL = ["mcp__everything", "mcp__fs", "mcp__memory", "Bash"];

describe("the reference MCP servers in the sandbox", { timeout: RUNS_TIMEOUT }, () => {
  it("runs their tools: text, a write that lands in the patch, an image, errors, the memory graph, the output limit", async () => {
    const big = "abcdefghi ".repeat(12_000);
    const run = await runWithMcp({
      servers: REFERENCE_SERVERS,
      config: { mode: "acceptEdits", allow: ALLOW_ALL },
      turns: [
        [{ id: "echo", name: "mcp__everything__echo", input: { message: "hello mcp" } }],
        [
          {
            id: "write",
            name: "mcp__fs__write_file",
            input: { path: "/workspace/notes.txt", content: "from the server\n" },
          },
        ],
        [{ id: "outside", name: "mcp__fs__read_text_file", input: { path: "/etc/passwd" } }],
        [
          {
            id: "edit",
            name: "Bash",
            input: { command: "echo 'and the agent' >> notes.txt && cat notes.txt" },
          },
        ],
        [
          {
            id: "entities",
            name: "mcp__memory__create_entities",
            input: {
              entities: [{ name: "agent-ci", entityType: "project", observations: ["runs MCP servers"] }],
            },
          },
        ],
        [{ id: "graph", name: "mcp__memory__read_graph", input: {} }],
        [{ id: "image", name: "mcp__everything__get-tiny-image", input: {} }],
        [
          {
            id: "throws",
            name: "mcp__everything__get-resource-reference",
            input: { resourceType: "Text", resourceId: -1 },
          },
        ],
        [{ id: "badargs", name: "mcp__everything__get-sum", input: { a: "one" } }],
        [{ id: "big", name: "mcp__everything__echo", input: { message: big } }],
        [{ id: "unknown", name: "mcp__everything__no-such-tool", input: {} }],
      ],
    });
    const { results, report } = run;
    expect(run.outcome.exitReason, run.printed).toBe("completed");
    expect(results.get("echo")).toEqual({ content: [{ type: "text", text: "Echo: hello mcp" }] });

    expect(results.get("write")?.is_error).toBeUndefined();
    expect(run.files["patch.diff"]).toContain("+from the server");
    // The agent edits what the server wrote (the shared group), and the patch has both.
    expect(resultText(results.get("edit"))).toBe("from the server\nand the agent");
    expect(run.files["patch.diff"]).toContain("+and the agent");

    expect(results.get("outside")?.is_error).toBe(true);
    expect(resultText(results.get("outside"))).toMatch(/outside allowed directories/i);

    expect(resultText(results.get("graph"))).toContain("runs MCP servers");
    expect(run.files["patch.diff"]).toContain("memory.jsonl");

    const image = results.get("image")?.content as Array<{ type: string; text?: string }>;
    expect(image.map((b) => b.type)).toEqual(["text", "image", "text", "text"]);
    expect(image[2]?.text).toMatch(
      /^\[Image: source: \/tmp\/agent-ci-outputs\/mcp-everything-blob-image\.png\]$/,
    );

    expect(results.get("throws")).toEqual({
      content: "Invalid resourceId: -1. Must be a finite positive integer.",
      is_error: true,
    });
    expect(results.get("badargs")?.is_error).toBe(true);
    expect(resultText(results.get("badargs"))).toMatch(/-32602|invalid/i);

    const note = resultText(results.get("big"));
    expect(note).toMatch(
      /^Error: result \(120,006 characters across 1 line\) exceeds maximum allowed tokens\. Output has been saved to \/tmp\/agent-ci-outputs\/mcp-everything-echo-big\.txt\.\nFormat: Plain text\n/,
    );
    expect(results.get("big")?.is_error).toBeUndefined();

    expect(results.get("unknown")).toEqual({
      content:
        "<tool_use_error>Error: No such tool available: mcp__everything__no-such-tool</tool_use_error>",
      is_error: true,
    });

    // The record: the servers, each call's server and tool, the init event.
    expect(run.init.mcp_servers).toEqual([
      { name: "everything", status: "connected" },
      { name: "fs", status: "connected" },
      { name: "memory", status: "connected" },
    ]);
    expect(run.init.tools).toContain("mcp__fs__write_file");
    expect(report.mcp?.servers.map((s) => [s.name, s.kind, s.status])).toEqual([
      ["everything", "stdio", "connected"],
      ["fs", "stdio", "connected"],
      ["memory", "stdio", "connected"],
    ]);
    expect(report.mcp?.servers.every((s) => typeof s.startMs === "number")).toBe(true);
    expect(report.toolCalls.find((c) => c.id === "write")?.mcp).toEqual({ server: "fs", tool: "write_file" });
    expect(run.files["report.md"]).toContain("MCP servers");
  });
});

describe("containment", { timeout: RUNS_TIMEOUT }, () => {
  it("keeps a server's secret from the agent: its environment, ps and kill all fail, and the secret is *** everywhere", async () => {
    const secret = ["mcp", "secret", String(Date.now()), "value"].join("-");
    const run = await runWithMcp({
      servers: { everything: { ...REFERENCE_SERVERS.everything, env: { MCP_API_TOKEN: secret } } },
      config: { mode: "bypassPermissions" },
      turns: [
        [
          {
            id: "snoop",
            name: "Bash",
            input: {
              command:
                "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c MCP_API_TOKEN; ps eww -u 2000 | grep -c MCP_API_TOKEN; pkill -9 -u 2000; echo pkill=$?",
            },
          },
        ],
        [{ id: "killall", name: "Bash", input: { command: "kill -9 -1" } }],
        [{ id: "env", name: "mcp__everything__get-env", input: {} }],
      ],
    });
    expect(run.outcome.exitReason, run.printed).toBe("completed");
    expect(resultText(run.results.get("snoop")).split("\n").slice(0, 2)).toEqual(["0", "0"]);
    expect(resultText(run.results.get("snoop"))).toMatch(/Operation not permitted/);
    expect(resultText(run.results.get("snoop"))).toMatch(/pkill=1$/);
    // The server survived the agent's kill -9 -1 and still answers; what it prints of its env is redacted.
    expect(resultText(run.results.get("env"))).toContain('"MCP_API_TOKEN": "***"');
    expect(run.printed).not.toContain(secret);
    for (const [name, text] of Object.entries(run.files)) expect(text, name).not.toContain(secret);
  });

  it("keeps a ${VAR} secret off a server's command line, where every process reads it (/proc/<pid>/cmdline): a config error naming the variable, the value in no output", async () => {
    const secret = ["cmdline", "secret", String(Date.now()), "value"].join("-");
    process.env.AGENT_CI_TEST_MCP_ARG = secret;
    try {
      const run = await runWithMcp({
        servers: {
          everything: {
            command: "mcp-server-everything",
            args: ["stdio", "--token=${AGENT_CI_TEST_MCP_ARG}"],
          },
        },
        config: { mode: "bypassPermissions" },
        turns: [[{ id: "ps", name: "Bash", input: { command: "cat /proc/[0-9]*/cmdline | tr '\\0' ' '" } }]],
      });
      expect(run.outcome.exitReason).toBe("config_error");
      expect(run.outcome.error).toMatch(
        /MCP server "everything": \$\{AGENT_CI_TEST_MCP_ARG\} in its command or args would put the value on the server's command line/,
      );
      expect(run.printed).not.toContain(secret);
      for (const [name, text] of Object.entries(run.files)) expect(text, name).not.toContain(secret);
    } finally {
      delete process.env.AGENT_CI_TEST_MCP_ARG;
    }
  });

  it("gives a server no network with --network none", async () => {
    const run = await runWithMcp({
      servers: { probe: PROBE_SERVER },
      config: { allow: ["mcp__probe"] },
      turns: [[{ id: "out", name: "mcp__probe__connect", input: { url: "http://example.com/" } }]],
    });
    expect(resultText(run.results.get("out"))).toMatch(/^failed: /);
  });

  it("restarts a server that dies in the middle of a call, once, and gives that call an error", async () => {
    const run = await runWithMcp({
      servers: { probe: PROBE_SERVER },
      config: { allow: ["mcp__probe"] },
      turns: [
        [{ id: "crash", name: "mcp__probe__crash", input: {} }],
        [{ id: "after", name: "mcp__probe__whoami", input: {} }],
      ],
    });
    expect(run.results.get("crash")?.is_error).toBe(true);
    expect(resultText(run.results.get("crash"))).toMatch(/MCP server probe stopped during the call/);
    expect(resultText(run.results.get("after"))).toMatch(/^uid=2000 gid=1000 /);
    expect(run.report.mcp?.servers[0]).toMatchObject({ name: "probe", status: "connected", restarts: 1 });
    expect(run.report.warnings.some((w) => w.kind === "mcp_server" && /restarted/.test(w.message))).toBe(
      true,
    );
  });

  it("goes on without a server that does not start, with its stderr in the report; --strict-mcp makes it a config error", async () => {
    const servers = { missing: { command: "no-such-mcp-server" }, probe: PROBE_SERVER };
    const run = await runWithMcp({
      servers,
      config: { allow: ["mcp__probe"] },
      turns: [[{ id: "who", name: "mcp__probe__whoami", input: {} }]],
    });
    expect(run.outcome.exitReason).toBe("completed");
    // The second server's own user.
    expect(resultText(run.results.get("who"))).toMatch(/^uid=2001 gid=1000 /);
    const missing = run.report.mcp?.servers.find((s) => s.name === "missing");
    expect(missing?.status).toBe("failed");
    expect(missing?.stderrTail).toMatch(/no-such-mcp-server/);
    expect(run.report.warnings.find((w) => w.kind === "mcp_server")?.message).toMatch(
      /missing did not start/,
    );

    const strict = await runWithMcp({ servers, config: { strictMcp: true }, turns: [] });
    expect(strict.outcome.exitReason).toBe("config_error");
    expect(strict.outcome.error).toMatch(/--strict-mcp: .*missing/);
  });

  it("starts the workspace's .mcp.json only when the workspace is trusted", async () => {
    const files = { ".mcp.json": JSON.stringify({ mcpServers: { probe: PROBE_SERVER } }) };
    const untrusted = await runWithMcp({
      servers: {},
      files,
      config: { mode: "bypassPermissions" },
      turns: [],
    });
    expect(untrusted.init.mcp_servers).toEqual([]);
    expect(untrusted.report.mcp?.ignored[0]?.source).toBe("workspace:.mcp.json");
    expect(untrusted.report.warnings.some((w) => w.kind === "mcp_config_ignored")).toBe(true);
    const trusted = await runWithMcp({
      servers: {},
      files,
      config: { mode: "bypassPermissions", trustWorkspaceSettings: true },
      turns: [],
    });
    expect(trusted.init.mcp_servers).toEqual([{ name: "probe", status: "connected" }]);
  });
});

describe("what a pull request plants in the workspace", { timeout: RUNS_TIMEOUT }, () => {
  it("B3 python3 -m srv gets the image's module though the workspace plants srv.py, and a workspace .npmrc's node-options or node_modules/.bin never reach an npx-started server", async () => {
    const planted = fs
      .readFileSync(PYTHON_SERVER, "utf8")
      .replace(/^WHO = .*$/m, 'WHO = "the planted srv.py"');
    expect(planted).toContain("the planted srv.py");
    const run = await runWithMcp({
      servers: {
        py: { command: "python3", args: ["-m", "srv"] },
        npx: { command: "npx", args: ["mcp-server-probe"] },
      },
      files: {
        "README.md": "mcp\n",
        "srv.py": planted,
        // npm reads the .npmrc of the project it starts in; node-options becomes NODE_OPTIONS.
        ".npmrc": "node-options=--require ./evil.js\n",
        "package.json": '{"name": "pr", "version": "1.0.0"}\n',
        "evil.js": 'require("fs").writeFileSync("/workspace/evil-ran.txt", String(process.getuid()));\n',
        // npx runs the project's own bin of that name first.
        "node_modules/.bin/mcp-server-probe": {
          content:
            "#!/bin/sh\necho planted > /workspace/planted-bin-ran\nexec /usr/local/bin/mcp-server-probe\n",
          mode: 0o755,
        },
      },
      config: { allow: ["mcp__py", "mcp__npx", "Bash"] },
      turns: [
        [{ id: "py", name: "mcp__py__who", input: {} }],
        [{ id: "npx", name: "mcp__npx__whoami", input: {} }],
        [{ id: "home", name: "Bash", input: { command: "ls /run/agent-ci-service-0; echo ls=$?" } }],
      ],
    });
    expect(run.outcome.exitReason, run.printed).toBe("completed");
    expect(resultText(run.results.get("py"))).toBe("the image's srv module in /run/agent-ci-service-0");
    expect(resultText(run.results.get("npx"))).toMatch(/^uid=2001 gid=1000 /);
    expect(run.files["patch.diff"] ?? "").not.toContain("evil-ran");
    expect(run.files["patch.diff"] ?? "").not.toContain("planted-bin-ran");
    // The server's home is its own: the agent cannot look into it.
    expect(resultText(run.results.get("home"))).toMatch(/Permission denied[^]*ls=2$/);
  });
});

describe("policy for MCP tools", { timeout: RUNS_TIMEOUT }, () => {
  const turns = [
    [{ id: "echo", name: "mcp__everything__echo", input: { message: "hi" } }],
    [{ id: "sum", name: "mcp__everything__get-sum", input: { a: 1, b: 2 } }],
  ];
  const servers = { everything: REFERENCE_SERVERS.everything };

  it("default mode: a tool allowed by a rule runs, another of the same server is denied naming the rule it needs", async () => {
    const run = await runWithMcp({ servers, turns, config: { allow: ["mcp__everything__echo"] } });
    expect(resultText(run.results.get("echo"))).toBe("Echo: hi");
    expect(run.results.get("sum")?.is_error).toBe(true);
    expect(resultText(run.results.get("sum"))).toContain(
      "it would need a rule such as mcp__everything__get-sum",
    );
    expect(run.report.denials.map((d) => [d.tool, d.narrowestAllowRule])).toEqual([
      ["mcp__everything__get-sum", "mcp__everything__get-sum"],
    ]);
  });

  it("deny beats allow; bypassPermissions runs without a rule", async () => {
    const denied = await runWithMcp({
      servers,
      turns,
      config: { allow: ["mcp__everything"], deny: ["mcp__everything__echo"] },
    });
    expect(resultText(denied.results.get("echo"))).toContain("denied by the deny rule mcp__everything__echo");
    expect(resultText(denied.results.get("sum"))).toBe("The sum of 1 and 2 is 3.");
    const bypass = await runWithMcp({ servers, turns, config: { mode: "bypassPermissions" } });
    expect(resultText(bypass.results.get("echo"))).toBe("Echo: hi");
  });

  it("B4 --deny mcp__srv refuses ReadMcpResourceTool and ListMcpResourcesTool for that server, in default and plan mode, and does not offer them for it", async () => {
    const read = { server: "everything", uri: "demo://resource/static/document/architecture.md" };
    const refused = [
      [{ id: "read", name: "ReadMcpResourceTool", input: read }],
      [{ id: "list", name: "ListMcpResourcesTool", input: { server: "everything" } }],
    ];
    const alone = await runWithMcp({
      servers: { everything: REFERENCE_SERVERS.everything },
      config: { deny: ["mcp__everything"] },
      turns: refused,
    });
    expect(alone.outcome.exitReason, alone.printed).toBe("completed");
    expect(alone.init.tools.filter((t) => /McpResource/.test(t))).toEqual([]);
    for (const id of ["read", "list"]) {
      expect(alone.results.get(id)?.is_error, id).toBe(true);
      expect(resultText(alone.results.get(id)), id).not.toMatch(/architecture/);
    }

    const plan = await runWithMcp({
      servers: { everything: REFERENCE_SERVERS.everything, memory: REFERENCE_SERVERS.memory },
      config: { mode: "plan", deny: ["mcp__everything"] },
      turns: [
        ...refused,
        [{ id: "all", name: "ListMcpResourcesTool", input: {} }],
        [{ id: "memory", name: "ListMcpResourcesTool", input: { server: "memory" } }],
      ],
    });
    expect(plan.outcome.exitReason, plan.printed).toBe("completed");
    expect(plan.init.tools).toEqual(expect.arrayContaining(["ListMcpResourcesTool", "ReadMcpResourceTool"]));
    for (const id of ["read", "list"]) {
      expect(plan.results.get(id)?.is_error, id).toBe(true);
      expect(resultText(plan.results.get(id)), id).toContain("denied by the deny rule mcp__everything");
    }
    expect(plan.report.denials.map((d) => d.tool)).toEqual(["ReadMcpResourceTool", "ListMcpResourcesTool"]);
    // Every server's list is the allowed servers' only.
    const all = JSON.parse(resultText(plan.results.get("all"))) as Array<{ server: string }>;
    expect(new Set(all.map((r) => r.server))).toEqual(new Set(["memory"]));
    expect(resultText(plan.results.get("memory"))).toContain("memory://knowledge-graph");
  });

  it("plan mode offers only read-only-hinted tools a rule allows", async () => {
    const run = await runWithMcp({
      servers: { probe: PROBE_SERVER },
      config: { mode: "plan", allow: ["mcp__probe"] },
      turns: [
        [{ id: "who", name: "mcp__probe__whoami", input: {} }],
        [{ id: "write", name: "mcp__probe__write", input: { path: "/workspace/x", content: "x" } }],
      ],
    });
    expect(run.init.tools.filter((t) => t.startsWith("mcp__"))).toEqual(["mcp__probe__whoami"]);
    expect(resultText(run.results.get("who"))).toMatch(/^uid=2000 /);
    expect(run.results.get("write")?.is_error).toBe(true);
    const unallowed = await runWithMcp({
      servers: { probe: PROBE_SERVER },
      config: { mode: "plan" },
      turns: [],
    });
    expect(unallowed.init.tools.filter((t) => t.startsWith("mcp__"))).toEqual([]);
  });
});

describe("network", { timeout: RUNS_TIMEOUT }, () => {
  let origins: OriginServers;
  let host: string;
  beforeAll(async () => {
    host = await hostAddressForContainers(new Docker());
    origins = await startOriginServers(host);
  });
  afterAll(async () => {
    await origins?.close();
  });

  it("with --network allowlist, a server's connection goes through the proxy and the ledger names the MCP call", async () => {
    const run = await runWithMcp({
      servers: { probe: PROBE_SERVER },
      config: {
        allow: ["mcp__probe"],
        network: "allowlist",
        allowDomain: ["allowed.test"],
        allowPrivateHost: [`allowed.test=${host}`],
      },
      turns: [
        [
          {
            id: "in",
            name: "mcp__probe__connect",
            input: { url: `http://allowed.test:${origins.httpPort}/` },
          },
        ],
        [
          {
            id: "out",
            name: "mcp__probe__connect",
            input: { url: `http://blocked.test:${origins.httpPort}/` },
          },
        ],
      ],
    });
    expect(resultText(run.results.get("in"))).toBe("status 200");
    expect(resultText(run.results.get("out"))).not.toBe("status 200");
    const ledger = run.report.egress?.connections ?? [];
    expect(ledger.find((c) => c.host === "allowed.test")).toMatchObject({
      decision: "allowed",
      caller: "in",
    });
    expect(ledger.find((c) => c.host === "blocked.test")).toMatchObject({
      decision: "denied",
      caller: "out",
    });
  });

  it("calls a streamable-HTTP server from agent-ci's process, its token from the host's environment and never printed", async () => {
    const token = ["remote", "token", String(Date.now())].join("-");
    const remote = await startRemoteServer(token);
    process.env.AGENT_CI_TEST_MCP_TOKEN = token;
    try {
      const run = await runWithMcp({
        servers: {
          remote: {
            type: "http",
            url: `${remote.url}/mcp`,
            headers: { Authorization: "Bearer ${AGENT_CI_TEST_MCP_TOKEN}" },
          },
        },
        config: { allow: ["mcp__remote"] },
        turns: [
          [{ id: "shout", name: "mcp__remote__shout", input: { text: "hello" } }],
          [{ id: "auth", name: "mcp__remote__auth", input: {} }],
        ],
      });
      expect(resultText(run.results.get("shout"))).toBe("HELLO");
      // The header's whole value is a secret: the server got it, every output shows ***.
      expect(resultText(run.results.get("auth"))).toBe("***");
      expect(run.report.mcp?.servers[0]).toMatchObject({ name: "remote", kind: "http", status: "connected" });
      expect(run.printed).not.toContain(token);
      for (const [name, text] of Object.entries(run.files)) expect(text, name).not.toContain(token);
    } finally {
      delete process.env.AGENT_CI_TEST_MCP_TOKEN;
      await remote.close();
    }
  });

  it("cuts a remote server's 100 MB answer at the message limit on the host, as JSON and as an event, and reconnects", async () => {
    const remote = await startFloodServer();
    try {
      const run = await runWithMcp({
        servers: {
          json: { type: "http", url: `${remote.url}/json` },
          sse: { type: "http", url: `${remote.url}/sse` },
        },
        config: { allow: ["mcp__json", "mcp__sse"] },
        turns: [
          [{ id: "json", name: "mcp__json__flood", input: {} }],
          [{ id: "sse", name: "mcp__sse__flood", input: {} }],
          [{ id: "after", name: "mcp__json__shout", input: { text: "still here" } }],
        ],
      });
      expect(run.outcome.exitReason, run.printed).toBe("completed");
      const limit = `a message of more than ${MAX_RESPONSE_BYTES} bytes`;
      expect(run.results.get("json")?.is_error).toBe(true);
      expect(resultText(run.results.get("json"))).toContain(
        `MCP server json: the server sent ${limit}; agent-ci stopped reading it`,
      );
      expect(run.results.get("sse")?.is_error).toBe(true);
      expect(resultText(run.results.get("sse"))).toContain(
        `MCP server sse: the server sent ${limit} (one event); agent-ci stopped reading it`,
      );
      // The client stopped reading: the servers never got the whole answer out.
      expect(remote.written.json).toBeLessThan(FLOOD_BYTES);
      expect(remote.written.sse).toBeLessThan(FLOOD_BYTES);
      expect(resultText(run.results.get("after"))).toBe("STILL HERE");
      expect(run.report.mcp?.servers.find((s) => s.name === "json")?.restarts).toBe(1);
    } finally {
      await remote.close();
    }
  });
});

/** What a remote server's `flood` tool answers with: 100 MB of text in one message. */
const FLOOD_BYTES = 100 * 1024 * 1024;

/**
 * The SDK's own server over streamable HTTP on loopback (stateless) with a `shout` tool, and a `flood` tool
 * answered by hand: one message of FLOOD_BYTES, as JSON (`/json`) or as one event of an event stream
 * (`/sse`), written as fast as the client reads it. `written` says how much of each flood left.
 */
async function startFloodServer(): Promise<{
  url: string;
  written: Record<string, number>;
  close(): Promise<void>;
}> {
  const written: Record<string, number> = {};
  const chunk = "a".repeat(1024 * 1024);
  const flood = async (res: http.ServerResponse, mode: string, id: unknown) => {
    const events = mode === "sse";
    res.writeHead(200, { "content-type": events ? "text/event-stream" : "application/json" });
    const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`;
    let closed = false;
    res.on("close", () => (closed = true));
    const write = async (text: string) => {
      written[mode] = (written[mode] ?? 0) + text.length;
      if (!res.write(text)) await new Promise((resolve) => res.once("drain", resolve).once("close", resolve));
    };
    await write(events ? `event: message\ndata: ${head}` : head);
    for (let sent = 0; sent < FLOOD_BYTES && !closed; sent += chunk.length) await write(chunk);
    if (!closed) res.end(`"}]}}${events ? "\n\n" : ""}`);
  };
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const body = parts.length ? (JSON.parse(Buffer.concat(parts).toString()) as unknown) : undefined;
      const call = body as { method?: string; id?: unknown; params?: { name?: string } } | undefined;
      const mode = req.url?.includes("sse") ? "sse" : "json";
      if (call?.method === "tools/call" && call.params?.name === "flood") {
        void flood(res, mode, call.id);
        return;
      }
      const mcp = new McpServer({ name: "flood", version: "1.0.0" });
      mcp.registerTool(
        "shout",
        { description: "Upper-case a text", inputSchema: { text: z.string() } },
        ({ text }) => ({
          content: [{ type: "text", text: text.toUpperCase() }],
        }),
      );
      mcp.registerTool("flood", { description: "Answer with 100 MB", inputSchema: {} }, () => ({
        content: [],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => void transport.close().then(() => mcp.close()));
      void mcp.connect(transport).then(() => transport.handleRequest(req, res, body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    written,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The SDK's own server over streamable HTTP on loopback (stateless), refusing requests without the token. */
async function startRemoteServer(token: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401).end();
      return;
    }
    const mcp = new McpServer({ name: "remote", version: "1.0.0" });
    mcp.registerTool(
      "shout",
      { description: "Upper-case a text", inputSchema: { text: z.string() } },
      ({ text }) => ({
        content: [{ type: "text", text: text.toUpperCase() }],
      }),
    );
    mcp.registerTool("auth", { description: "The Authorization header it got", inputSchema: {} }, () => ({
      content: [{ type: "text", text: String(req.headers.authorization) }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void transport.close().then(() => mcp.close()));
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
