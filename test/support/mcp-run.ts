// Runs agent-ci with MCP servers for the integration tests: a scripted run in the MCP test image (the
// reference servers from npm and the probe, test/fixtures/mcp/), the record read back and checked, and
// nothing left behind on the engine.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { expect } from "vitest";
import { parseReport, type RunReport } from "../../src/report/index.js";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { runAgent, type RunOutcome } from "../../src/runner/run.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { ensureMcpImage } from "./fixture-images.js";
import { makeWorkspace, type FileSpec } from "./workspace.js";
import { quietIo } from "./run-io.js";

const docker = new Docker();

/** The reference servers as the recorded Claude Code cases configured them, by their npm bins. */
export const REFERENCE_SERVERS = {
  everything: { command: "mcp-server-everything", args: ["stdio"] },
  fs: { command: "mcp-server-filesystem", args: ["/workspace"] },
  memory: { command: "mcp-server-memory", env: { MEMORY_FILE_PATH: "/workspace/memory.jsonl" } },
} as const;

export const PROBE_SERVER = { command: "mcp-server-probe" } as const;

export interface ScriptCall {
  id?: string;
  name: string;
  input: Record<string, unknown>;
}

export interface McpRun {
  outcome: RunOutcome;
  report: RunReport;
  /** The tool_result blocks the model got, by tool_use id (from the stream-json events). */
  results: Map<string, { content: unknown; is_error?: boolean }>;
  /** Every line written to stdout (stream-json) and stderr, for "no secret anywhere" checks. */
  printed: string;
  /** The tools the init event offered, and its mcp_servers. */
  init: { tools: string[]; mcp_servers: Array<{ name: string; status: string }> };
  files: Record<string, string>;
}

export async function mcpImage(): Promise<string> {
  return ensureMcpImage(docker);
}

export async function runWithMcp(options: {
  servers: Record<string, unknown>;
  turns: ScriptCall[][];
  files?: Record<string, FileSpec>;
  config?: Partial<RunConfigInput>;
}): Promise<McpRun> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-mcp-"));
  const script = path.join(dir, "script.json");
  fs.writeFileSync(script, JSON.stringify({ turns: options.turns }));
  const workspace = makeWorkspace(options.files ?? { "README.md": "mcp\n" }, { git: true });
  const config = parseRunConfig({
    workspace,
    out: path.join(dir, "out"),
    script,
    image: await mcpImage(),
    outputFormat: "stream-json",
    mcpConfig: [JSON.stringify({ mcpServers: options.servers })],
    ...options.config,
  });
  const lines: string[] = [];
  const outcome = await runAgent(
    config,
    quietIo({ stdout: (l) => lines.push(l), stderr: (l) => lines.push(l) }),
  );
  const reportFile = path.join(outcome.outDir, "report.json");
  if (!fs.existsSync(reportFile))
    throw new Error(`no report: ${JSON.stringify(outcome)}\n${lines.join("\n")}`);
  const report = parseReport(fs.readFileSync(reportFile, "utf8"));
  expect(
    await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${outcome.runId}`] } }),
  ).toEqual([]);
  const results = new Map<string, { content: unknown; is_error?: boolean }>();
  let init: McpRun["init"] = { tools: [], mcp_servers: [] };
  for (const line of lines) {
    if (!line.startsWith("{")) continue;
    const event = JSON.parse(line) as {
      type: string;
      subtype?: string;
      message?: {
        content?: Array<{ type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }>;
      };
    } & McpRun["init"];
    if (event.type === "system" && event.subtype === "init") init = event;
    if (event.type !== "user") continue;
    for (const block of event.message?.content ?? [])
      if (block.type === "tool_result" && block.tool_use_id)
        results.set(block.tool_use_id, { content: block.content, is_error: block.is_error });
  }
  const files: Record<string, string> = {};
  for (const name of fs.readdirSync(outcome.outDir))
    if (fs.statSync(path.join(outcome.outDir, name)).isFile())
      files[name] = fs.readFileSync(path.join(outcome.outDir, name), "utf8");
  return { outcome, report, results, printed: lines.join("\n"), init, files };
}

/** A result's text: a string, or its text blocks joined. */
export function resultText(result: { content: unknown } | undefined): string {
  const content = result?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Array<{ type: string; text?: string }>)
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("\n");
}
