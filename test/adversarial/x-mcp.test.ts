// RELIABILITY X (MCP servers). The servers here are real processes in the run's container speaking JSON-RPC
// over stdio: test/fixtures/mcp/fault-server.mjs, bundled with the SDK into the workspace and started with
// the toolbelt's Node, breaks the protocol in the ways the rows name (no answer to `initialize`, a line that
// is not JSON, a 100 MB line, an answer to a request nobody sent, a call that never ends, a daemon, names and
// schemas the API refuses). Each test shares one run across the faults of its row; the harness checks what
// every adversarial run must hold (record written, nothing left on the engine, no secret anywhere).
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { beforeAll, describe, expect, vi } from "vitest";
import { MAX_LINE_BYTES } from "../../src/mcp/stdio-transport.js";
import { TOOLBELT_BIN } from "../../src/sandbox/image/toolbelt.js";
import { hostAddressForContainers } from "../support/egress-servers.js";
import { bundleServer } from "../support/mcp-bundle.mjs";
import { docker, useHarness, type ScriptCall } from "./harness.js";
import { rowTester, type Row } from "./rows.js";

const ROWS = [
  {
    id: "X1",
    what: "a server that never answers initialize, one that exits at once, one whose command is missing",
    alsoSee: [
      {
        file: "test/integration/mcp.test.ts",
        test: "goes on without a server that does not start, with its stderr in the report; --strict-mcp makes it a config error",
      },
    ],
  },
  {
    id: "X2",
    what: "a server that writes non-JSON, a 100 MB line, or a response with an unknown id to stdout",
    alsoSee: [
      {
        file: "test/unit/mcp/mcp.test.ts",
        test: "splits lines across chunks, linearly, and refuses a line over its limit with bounded memory",
      },
      {
        file: "test/unit/mcp/mcp.test.ts",
        test: "skips a line that is not JSON-RPC and reads on, noting the first few, cut short, in stderr and warnings",
      },
    ],
  },
  {
    id: "X3",
    what: "a tool result of 50 MB, or 10,000 content blocks",
    covered: [
      {
        file: "test/unit/mcp/mcp.test.ts",
        test: "saves a result over the limit and says where, in linear time (a 50 MB result)",
      },
      {
        file: "test/unit/mcp/mcp.test.ts",
        test: "cuts a result with an image instead of saving it, and 10,000 blocks stay linear",
      },
      {
        file: "test/integration/mcp.test.ts",
        test: "runs their tools: text, a write that lands in the patch, an image, errors, the memory graph, the output limit",
      },
    ],
  },
  {
    id: "X4",
    what: "a tool call that never returns; a server that crashes mid-call",
    kind: "fault",
    alsoSee: [
      {
        file: "test/integration/mcp.test.ts",
        test: "restarts a server that dies in the middle of a call, once, and gives that call an error",
      },
    ],
  },
  {
    id: "X5",
    what: "a server's secret in env; the agent reads /proc/*/environ, ps eww, kill -9 -1",
    covered: [
      {
        file: "test/integration/mcp.test.ts",
        test: "keeps a server's secret from the agent: its environment, ps and kill all fail, and the secret is *** everywhere",
      },
    ],
  },
  {
    id: "X6",
    what: "a server that forks a daemon, opens a socket out, writes outside /workspace",
    alsoSee: [
      { file: "test/integration/mcp.test.ts", test: "gives a server no network with --network none" },
      {
        file: "test/integration/mcp.test.ts",
        test: "with --network allowlist, a server's connection goes through the proxy and the ledger names the MCP call",
      },
    ],
  },
  {
    id: "X7",
    what: "a pull request that adds or edits .mcp.json",
    covered: [
      {
        file: "test/integration/mcp.test.ts",
        test: "starts the workspace's .mcp.json only when the workspace is trusted",
      },
      {
        file: "test/unit/mcp/mcp.test.ts",
        test: "uses the workspace's .mcp.json only when trusted, and says it was ignored otherwise",
      },
    ],
  },
  {
    id: "X8",
    what: "tool names or schemas that collide with a built-in or are not valid for the API",
    alsoSee: [
      {
        file: "test/unit/mcp/mcp.test.ts",
        test: "refuses a tool whose input schema is not valid JSON Schema, by the draft it declares",
      },
    ],
  },
] as const satisfies readonly Row[];

const h = useHarness();
const { test, checkTable } = rowTester(ROWS);

/** Where the bundled fault server sits in the workspace (part of its baseline, so never in the patch). */
const SERVER_FILE = ".mcp-faults/server.mjs";
let bundled: string;
beforeAll(async () => {
  bundled = await bundleServer(path.resolve("test/fixtures/mcp/fault-server.mjs"));
});

const faultServer = (...args: string[]) => ({
  command: `${TOOLBELT_BIN}/node`,
  args: [`/workspace/${SERVER_FILE}`, ...args],
});

const call = (id: string, name: string, input: Record<string, unknown> = {}): ScriptCall[] => [
  { id, name, input },
];

async function runWithServers(
  servers: Record<string, unknown>,
  turns: ScriptCall[][],
  config: Record<string, unknown> = {},
) {
  const workspace = h.workspace({ [SERVER_FILE]: bundled, "README.md": "mcp\n" }, { git: true });
  return h.agent({
    workspace,
    mode: "bypassPermissions",
    turns,
    config: { mcpConfig: [JSON.stringify({ mcpServers: servers })], ...config },
  });
}

describe("X: MCP servers", () => {
  test(
    "X1",
    "a server silent at initialize, one that exits at once and a missing command: warnings with stderr, no process left, the run goes on",
    async () => {
      // Long enough for a well-behaved server to start on a loaded machine.
      vi.stubEnv("MCP_TIMEOUT", "15000");
      const run = await runWithServers(
        {
          silent: faultServer("silent"),
          quits: {
            command: `${TOOLBELT_BIN}/node`,
            args: ["-e", "process.stderr.write('quits: no config file, giving up\\n'); process.exit(3)"],
          },
          missing: { command: "no-such-mcp-server" },
          good: faultServer("faults"),
        },
        [
          call("ok", "mcp__good__ok"),
          call("ps", "Bash", { command: "ps -eo uid,args" }),
          call("gone", "mcp__silent__anything"),
        ],
      );
      expect(run.outcome.exitReason, run.stderr).toBe("completed");
      expect(run.results.get("ok")?.text).toMatch(/^ok from pid \d+$/);
      const servers = Object.fromEntries((run.report?.mcp?.servers ?? []).map((s) => [s.name, s]));
      expect(servers.good?.status).toBe("connected");
      for (const name of ["silent", "quits", "missing"]) expect(servers[name]?.status, name).toBe("failed");
      expect(servers.silent?.error).toMatch(/did not answer within 15000 ms \(MCP_TIMEOUT\)/);
      expect(servers.silent?.stderrTail).toMatch(/reading stdin and answering nothing/);
      expect(servers.quits?.stderrTail).toMatch(/no config file, giving up/);
      expect(servers.missing?.stderrTail).toMatch(/no-such-mcp-server/);
      const warnings = run.report?.warnings.filter((w) => w.kind === "mcp_server") ?? [];
      expect(warnings.find((w) => /MCP server silent did not start/.test(w.message))?.message).toMatch(
        /the run went on without it\.[^]*answering nothing/,
      );
      // The silent server was ended when it timed out; the good one still runs beside the agent.
      const ps = run.results.get("ps")?.text ?? "";
      expect(ps).toContain(`${SERVER_FILE} faults`);
      expect(ps).not.toContain(`${SERVER_FILE} silent`);
      expect(run.results.get("gone")).toMatchObject({ isError: true });
    },
  );

  test(
    "X2",
    "non-JSON is skipped with a warning and the call answered; a 100 MB line and a stray response id each fail that server's call clearly; the others go on",
    async () => {
      // Long enough for 64 MB to cross the engine's stream on a loaded machine.
      vi.stubEnv("MCP_TOOL_TIMEOUT", "30000");
      const run = await runWithServers(
        {
          garbage: faultServer("faults"),
          huge: faultServer("faults"),
          stray: faultServer("faults"),
          good: faultServer("faults"),
        },
        [
          [
            { id: "garbage", name: "mcp__garbage__garbage", input: {} },
            { id: "huge", name: "mcp__huge__huge", input: {} },
            { id: "stray", name: "mcp__stray__stray", input: {} },
          ],
          call("good", "mcp__good__ok"),
          call("again", "mcp__huge__ok"),
        ],
      );
      expect(run.outcome.exitReason, run.stderr).toBe("completed");
      // A line that is not JSON-RPC is skipped, as the SDK's stdio transport skips it: a warning, and the
      // call's answer after it arrives.
      expect(run.results.get("garbage")?.text).toMatch(
        /^answered after a line that is not JSON-RPC, from pid /,
      );
      expect(run.stderr).toContain(
        'MCP server garbage: the server wrote a line that is not JSON-RPC to stdout, skipped: "this is not JSON-RPC at all"',
      );
      expect(run.results.get("huge")).toMatchObject({
        isError: true,
        text: expect.stringContaining(
          `MCP server huge: the server wrote a line of more than ${MAX_LINE_BYTES} bytes to stdout (one message); agent-ci stopped reading it`,
        ),
      });
      // An answer to a request nobody sent is dropped (and logged); the call it did not answer ends at the
      // tool timeout.
      expect(run.results.get("stray")).toMatchObject({
        isError: true,
        text: expect.stringMatching(
          /MCP server stray: the call did not finish within 30000 ms \(MCP_TOOL_TIMEOUT\)/,
        ),
      });
      expect(run.stderr).toMatch(/MCP server stray: .*unknown message ID.*424242/);
      expect(run.results.get("good")?.text).toMatch(/^ok from pid /);
      // The server that broke the protocol was restarted once and answers again.
      expect(run.results.get("again")?.text).toMatch(/^ok from pid /);
      expect(run.report?.mcp?.servers.find((s) => s.name === "huge")?.restarts).toBe(1);
    },
    180_000,
  );

  test(
    "X4",
    "a call that never returns ends at MCP_TOOL_TIMEOUT with an error result; without one, the run's wall clock ends it",
    async () => {
      vi.stubEnv("MCP_TOOL_TIMEOUT", "4000");
      const bounded = await runWithServers({ slow: faultServer("faults") }, [
        call("hang", "mcp__slow__hang"),
        call("after", "mcp__slow__ok"),
      ]);
      expect(bounded.outcome.exitReason, bounded.stderr).toBe("completed");
      expect(bounded.results.get("hang")).toMatchObject({
        isError: true,
        text: expect.stringMatching(
          /MCP server slow: the call did not finish within 4000 ms \(MCP_TOOL_TIMEOUT\)/,
        ),
      });
      expect(bounded.results.get("after")?.text).toMatch(/^ok from pid /);

      vi.stubEnv("MCP_TOOL_TIMEOUT", undefined);
      const clock = await runWithServers({ slow: faultServer("faults") }, [call("hang", "mcp__slow__hang")], {
        timeoutMs: 30_000,
      });
      expect(clock.outcome.exitReason, clock.stderr).toBe("timeout");
      // The call was cut by the deadline and recorded as such.
      expect(clock.report?.toolCalls.find((c) => c.id === "hang")).toMatchObject({
        tool: "mcp__slow__hang",
        mcp: { server: "slow", tool: "hang" },
        isError: true,
        errorKind: "interrupted",
      });
    },
    180_000,
  );

  test(
    "X6",
    "a server's daemon dies with the container, its socket out is refused, a write outside /workspace stays out of the patch",
    async () => {
      const marker = `agent-ci-x6-daemon-${process.pid}-${Date.now()}`;
      const host = await hostAddressForContainers(docker);
      const connections: string[] = [];
      const listener = net.createServer((socket) => {
        connections.push(String(socket.remoteAddress));
        socket.destroy();
      });
      await new Promise<void>((resolve) => listener.listen(0, host, resolve));
      const port = (listener.address() as net.AddressInfo).port;
      try {
        const run = await runWithServers(
          { d: faultServer("daemon", marker) },
          [
            call("ps", "Bash", { command: "ps -eo args" }),
            call("out", "mcp__d__connect", { host, port }),
            call("inside", "mcp__d__write", { path: "/workspace/from-server.txt", content: "in\n" }),
            call("tmp", "mcp__d__write", { path: "/tmp/outside.txt", content: "out\n" }),
            call("etc", "mcp__d__write", { path: "/etc/agent-ci-x6", content: "no\n" }),
            call("git", "mcp__d__write", { path: "/workspace/.git/hooks/post-commit", content: "no\n" }),
          ],
          { network: "allowlist", allowDomain: ["example.test"] },
        );
        expect(run.outcome.exitReason, run.stderr).toBe("completed");
        expect(run.results.get("ps")?.text).toContain(marker);
        expect(run.results.get("out")?.text).toMatch(/^failed: /);
        expect(connections).toEqual([]);
        expect(run.results.get("tmp")?.text).toBe("wrote /tmp/outside.txt");
        expect(run.results.get("etc")).toMatchObject({
          isError: true,
          text: expect.stringMatching(/EACCES|EROFS/),
        });
        expect(run.patch).toContain("+in");
        expect(run.patch).not.toContain("outside.txt");
        expect(run.patch).not.toContain("agent-ci-x6");
        expect(run.patch).not.toContain("post-commit");
        // The container is gone (the harness checks), and with it every process of the run: none of this
        // host's processes is the daemon.
        const alive = fs
          .readdirSync("/proc")
          .filter((p) => /^\d+$/.test(p))
          .filter((p) => {
            try {
              return fs.readFileSync(`/proc/${p}/cmdline`, "latin1").includes(marker);
            } catch {
              return false;
            }
          });
        expect(alive).toEqual([]);
      } finally {
        await new Promise((resolve) => listener.close(resolve));
      }
    },
  );

  test(
    "X8",
    "tool names and schemas the API would refuse are not offered, the server named; a built-in's name never shadows it",
    async () => {
      const run = await runWithServers({ names: faultServer("names"), rootless: faultServer("rootless") }, [
        call("builtin", "Bash", { command: "echo the built-in Bash" }),
        call("prefixed", "mcp__names__Bash", { command: "x" }),
        call("refused", "mcp__names__bad-schema", {}),
      ]);
      expect(run.outcome.exitReason, run.stderr).toBe("completed");
      expect(run.results.get("builtin")?.text).toBe("the built-in Bash");
      expect(run.results.get("prefixed")?.text).toBe("the server's Bash");
      expect(run.results.get("refused")).toMatchObject({
        isError: true,
        text: expect.stringContaining("No such tool available: mcp__names__bad-schema"),
      });
      const init = run.events.find((e) => e.type === "system" && e.subtype === "init") as
        { tools?: string[] } | undefined;
      const offered = init?.tools ?? [];
      expect(offered.filter((t) => t === "Bash")).toHaveLength(1);
      expect(offered.filter((t) => t.startsWith("mcp__"))).toEqual([
        "mcp__names__fine",
        "mcp__names__Bash",
        "mcp__names__dup_tool",
      ]);
      const refused = (run.report?.warnings ?? [])
        .filter((w) => w.kind === "mcp_tool_refused")
        .map((w) => w.message);
      expect(refused).toEqual([
        expect.stringMatching(
          /^MCP server names: its tool x{70} was not offered: its name mcp__names__x{70} is not a valid tool name for the API/,
        ),
        expect.stringMatching(
          /^MCP server names: its tool bad-schema was not offered: its input schema is not a valid JSON Schema: .*properties\/a\/type/,
        ),
        expect.stringMatching(
          /^MCP server names: its tool dup_tool was not offered: its name mcp__names__dup_tool is taken by another tool/,
        ),
      ]);
      // A list the SDK's client refuses whole: the server does not start, named with the reason.
      const rootless = run.report?.mcp?.servers.find((s) => s.name === "rootless");
      expect(rootless?.status).toBe("failed");
      expect(rootless?.error).toMatch(/inputSchema/);
    },
  );

  checkTable();
});
