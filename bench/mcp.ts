// MCP: a call to @modelcontextprotocol/server-everything's echo through agent-ci (the server in the
// sandbox, the SDK's client over the service's exec stream) next to the same server spoken to natively on
// the host with the same SDK over a pipe; and each side's start (spawn, initialize, tool list). The server
// is this repository's installed package, bundled into one file and copied in with the workspace.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpManager } from "../src/mcp/manager.js";
import { DockerSandbox, newRunId } from "../src/sandbox/docker-sandbox.js";
import { paired, summarize, timeMs, type Row } from "./stats.js";

const REPS = 40;
const SERVER = "node_modules/@modelcontextprotocol/server-everything/dist";

/** The server bundled by test/support/mcp-bundle.mjs in a plain Node (esbuild stays out of the bench's bundle). */
function bundleEverything(repoRoot: string, into: string): string {
  const script = `import(${JSON.stringify(path.join(repoRoot, "test/support/mcp-bundle.mjs"))}).then(async (m) => process.stdout.write(await m.bundleServer(${JSON.stringify(path.join(repoRoot, SERVER, "index.js"))})))`;
  const text = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: repoRoot,
    maxBuffer: 256 << 20,
    encoding: "utf8",
  });
  fs.mkdirSync(path.join(into, "dist"), { recursive: true });
  fs.writeFileSync(path.join(into, "dist/index.mjs"), text);
  fs.cpSync(path.join(repoRoot, SERVER, "docs"), path.join(into, "docs"), { recursive: true });
  return path.join(into, "dist/index.mjs");
}

export async function benchMcp(repoRoot: string, log: (line: string) => void): Promise<Row[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-bench-mcp-"));
  try {
    const hostEntry = bundleEverything(repoRoot, path.join(dir, "mcp-everything"));
    const config = {
      name: "everything",
      source: "bench",
      command: "node",
      args: ["/workspace/mcp-everything/dist/index.mjs", "stdio"],
      env: {},
    };
    log("MCP: starting a sandbox with server-everything");
    const sandbox = await DockerSandbox.start({
      runId: newRunId(),
      workspaceDir: dir,
      sharedWorkspace: true,
    });
    const manager = new McpManager({ servers: [config], host: sandbox });
    const native = new Client({ name: "bench", version: "1" });
    try {
      const startAgentCi = await timeMs(() => manager.start());
      if (manager.servers[0]?.status !== "connected")
        throw new Error(`the MCP server did not start: ${manager.servers[0]?.error}`);
      const startNative = await timeMs(() =>
        native.connect(
          new StdioClientTransport({
            command: process.execPath,
            args: [hostEntry, "stdio"],
            stderr: "ignore",
          }),
        ),
      );
      await native.listTools();
      const signal = new AbortController().signal;
      let n = 0;
      const { a, b } = await paired(
        REPS,
        5,
        () => manager.callTool("everything", "echo", { message: "ping" }, { id: `bench_${n++}`, signal }),
        () => native.callTool({ name: "echo", arguments: { message: "ping" } }),
      );
      return [
        {
          section: "MCP",
          measurement:
            "server-everything `echo`: agent-ci (server in the sandbox) vs the same SDK on the host",
          unit: "ms",
          agentCi: summarize(a),
          native: summarize(b),
          note: "agent-ci: the SDK's client over the service's exec stream; native: over a pipe to a host process",
        },
        {
          section: "MCP",
          measurement: "server start: spawn, `initialize`, tool list",
          unit: "ms",
          agentCi: startAgentCi,
          native: startNative,
          note: "one sample; agent-ci: an exec as the server's own user in the running container",
        },
      ];
    } finally {
      await native.close().catch(() => undefined);
      await manager.close();
      await sandbox.dispose();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
