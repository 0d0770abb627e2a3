// The results the model receives where Claude Code 2.1.328 was seen to answer otherwise (MCP images beside
// structured content, embedded blobs, an image over the output limit, a missing resource, a binary resource
// read; WebFetch's empty page, 429 and image URL; TaskStop called with KillShell's parameter; a stdio server
// that prints a banner first), each played through the CLI against the fake Messages API with real MCP
// servers from npm in the MCP test image and the local HTTPS test server, and read from the requests the
// model got.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { png } from "../../scripts/reference-fixtures.mjs";
import { IMAGE_LEFT_OUT, truncatedNote } from "../../src/mcp/result.js";
import { parseReport, type RunReport } from "../../src/report/index.js";
import { runCli as runAgentCi } from "../support/cli-process.js";
import {
  fake,
  startFakeAnthropic,
  type FakeConversation,
  type FakeTurn,
  type RecordedMessagesRequest,
} from "../support/fake-anthropic.js";
import { mcpImage, REFERENCE_SERVERS } from "../support/mcp-run.js";
import { startWebServer, type WebServer } from "../support/web-server.js";
import { makeWorkspace, type FileSpec } from "../support/workspace.js";

/** Each run starts a sandbox with servers: minutes on a loaded 2-core machine. */
const RUN_TIMEOUT = 300_000;
const FAKE_KEY = ["sk-ant-api03", "fidelity", "x".repeat(40)].join("-");
const OUTPUTS = "/tmp/agent-ci-outputs";

interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content: unknown;
  is_error?: boolean;
}

interface CliRun {
  code: number | null;
  stderr: string;
  /** The tool_result blocks the main model received, by tool_use id. */
  results: Map<string, ToolResultBlock>;
  /** The requests the fake API got (the main loop's and the reading model's). */
  requests: RecordedMessagesRequest[];
  /** The tools the main model was offered. */
  offered: string[];
  report: RunReport | undefined;
}

/** `agent-ci run` on a prompt, the model being the fake API playing `turns` (and `conversations`). */
async function runCli(options: {
  turns: FakeTurn[];
  conversations?: FakeConversation[];
  files?: Record<string, FileSpec>;
  args?: string[];
  env?: NodeJS.ProcessEnv;
}): Promise<CliRun> {
  const api = await startFakeAnthropic({
    apiKey: FAKE_KEY,
    turns: [...options.turns, fake.text("done")],
    conversations: options.conversations ?? [],
  });
  try {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-fidelity-"));
    const workspace = makeWorkspace(options.files ?? { "README.md": "fidelity\n" }, { git: true });
    const args = ["run", "--workspace", workspace, "--prompt", "go", "--mode", "bypassPermissions"];
    // Text output: the run's log lines (warnings among them) go to stderr.
    args.push("--out", path.join(dir, "out"), "--output-format", "text", ...(options.args ?? []));
    const { code, stderr } = await runAgentCi(args, {
      ANTHROPIC_API_KEY: FAKE_KEY,
      ANTHROPIC_BASE_URL: api.url,
      ...options.env,
    });
    const requests = api.messagesRequests();
    const main = requests.filter((r) => !isReader(r));
    const results = new Map<string, ToolResultBlock>();
    for (const message of main.at(-1)?.body.messages ?? [])
      if (message.role === "user" && Array.isArray(message.content))
        for (const block of message.content)
          if (block.type === "tool_result") {
            // The prompt-cache marker on the request's last block is not part of the result.
            const { cache_control: _marker, ...result } = block;
            results.set(block.tool_use_id, result as ToolResultBlock);
          }
    const offered = (main[0]?.body.tools ?? []).map((t) => (t as { name: string }).name);
    const reportFile = path.join(dir, "out", "report.json");
    const report = fs.existsSync(reportFile) ? parseReport(fs.readFileSync(reportFile, "utf8")) : undefined;
    return { code, stderr, results, requests, offered, report };
  } finally {
    await api.close();
  }
}

/** A request of WebFetch's reading model (the main loop's are the others). */
const isReader = (request: RecordedMessagesRequest): boolean =>
  JSON.stringify(request.body.messages[0]?.content ?? "").includes("Web page content:");

const call = (id: string, name: string, input: Record<string, unknown>) => fake.toolUse(name, input, { id });

describe("MCP results as Claude Code gives them, through the CLI", { timeout: RUN_TIMEOUT }, () => {
  const picture = png(2, 2, [0, 0, 255]);
  let run: CliRun;
  beforeAll(async () => {
    run = await runCli({
      files: { "README.md": "fidelity\n", "pixel.png": picture },
      args: [
        "--image",
        await mcpImage(),
        "--mcp-config",
        JSON.stringify({
          mcpServers: {
            ...REFERENCE_SERVERS,
            runner: { command: "mcp-server-code-runner" },
            playwright: { command: "mcp-server-playwright" },
          },
        }),
      ],
      turns: [
        call("media", "mcp__fs__read_media_file", { path: "/workspace/pixel.png" }),
        call("blob", "mcp__everything__get-resource-reference", { resourceType: "Blob", resourceId: 1 }),
        call("missing", "ReadMcpResourceTool", {
          server: "everything",
          uri: "demo://resource/static/document/no-such.md",
        }),
        call("readblob", "ReadMcpResourceTool", {
          server: "everything",
          uri: "demo://resource/dynamic/blob/1",
        }),
        call("code", "mcp__runner__run-code", { code: "console.log(6*7)", languageId: "javascript" }),
      ],
    });
  }, RUN_TIMEOUT);

  it("the run completes", () => {
    expect(run.code, run.stderr).toBe(0);
  });

  it("gives read_media_file's PNG as an image block, a note of where it was saved, then its structured JSON", () => {
    const data = picture.toString("base64");
    expect(run.results.get("media")).toEqual({
      type: "tool_result",
      tool_use_id: "media",
      content: [
        { type: "image", source: { type: "base64", media_type: "image/png", data } },
        { type: "text", text: `[Image: source: ${OUTPUTS}/mcp-fs-blob-media.png]` },
        { type: "text", text: JSON.stringify({ content: [{ type: "image", data, mimeType: "image/png" }] }) },
      ],
    });
  });

  // The blob is "Resource 1: This is a base64 blob created at <the server's local time>": 55 or 56 bytes.
  const blobSize = (text: string) => Number(/\(text\/plain, (\d+) bytes\)/.exec(text)?.[1]);

  it("names an embedded blob's server and URI, its type and size, and where it was saved", () => {
    const got = run.results.get("blob");
    const size = blobSize((got?.content as Array<{ text: string }>)[1]?.text ?? "");
    expect([55, 56]).toContain(size);
    expect(got).toEqual({
      type: "tool_result",
      tool_use_id: "blob",
      content: [
        { type: "text", text: "Returning resource reference for Resource 1:" },
        {
          type: "text",
          text: `[Resource from everything at demo://resource/dynamic/blob/1] Binary content (text/plain, ${size} bytes) saved to ${OUTPUTS}/mcp-everything-blob-blob.txt`,
        },
        { type: "text", text: "You can access this resource using the URI: demo://resource/dynamic/blob/1" },
      ],
    });
  });

  it("answers a read of a missing resource with Claude Code's message, without is_error", () => {
    expect(run.results.get("missing")).toEqual({
      type: "tool_result",
      tool_use_id: "missing",
      content:
        "Resource not found: demo://resource/static/document/no-such.md \u2014 it may have been deleted or the URI is stale. Re-run ListMcpResourcesTool to refresh.",
    });
  });

  it("saves a binary resource ReadMcpResourceTool reads and hands over its path and a note in place of the base64", () => {
    const got = run.results.get("readblob");
    const uri = "demo://resource/dynamic/blob/1";
    const file = `${OUTPUTS}/mcp-everything-resource-readblob.txt`;
    const size = blobSize(String(got?.content));
    expect([55, 56]).toContain(size);
    expect(got).toEqual({
      type: "tool_result",
      tool_use_id: "readblob",
      content: JSON.stringify({
        contents: [
          {
            uri,
            mimeType: "text/plain",
            blobSavedTo: file,
            text: `[Resource from everything at ${uri}] Binary content (text/plain, ${size} bytes) saved to ${file}`,
          },
        ],
      }),
    });
  });

  it("runs a server that prints a banner to stdout before it speaks JSON-RPC, and calls its tool", () => {
    expect(run.results.get("code")).toEqual({
      type: "tool_result",
      tool_use_id: "code",
      content: [{ type: "text", text: "42\n" }],
    });
    const note =
      'the server wrote a line that is not JSON-RPC to stdout, skipped: "Code Runner MCP Server running on stdio"';
    expect(run.stderr).toContain(`MCP server runner: ${note}`);
    const runner = run.report?.mcp?.servers.find((s) => s.name === "runner");
    expect(runner).toMatchObject({ status: "connected", restarts: 0 });
    expect(runner?.stderrTail).toContain(`[agent-ci] ${note}`);
  });

  it("starts @playwright/mcp on the default image's Node.js and offers its tools", () => {
    expect(run.offered).toEqual(
      expect.arrayContaining([
        "mcp__playwright__browser_navigate",
        "mcp__playwright__browser_snapshot",
        "mcp__playwright__browser_click",
      ]),
    );
  });
});

describe("an MCP image over MAX_MCP_OUTPUT_TOKENS, through the CLI", { timeout: RUN_TIMEOUT }, () => {
  it("leaves the image out with a line saying so, in its place, then the truncation notice", async () => {
    const run = await runCli({
      args: [
        "--image",
        await mcpImage(),
        "--mcp-config",
        JSON.stringify({ mcpServers: { everything: REFERENCE_SERVERS.everything } }),
      ],
      env: { MAX_MCP_OUTPUT_TOKENS: "1000" },
      turns: [call("tiny", "mcp__everything__get-tiny-image", {})],
    });
    expect(run.code, run.stderr).toBe(0);
    const source = `[Image: source: ${OUTPUTS}/mcp-everything-blob-tiny.png]`;
    const texts = ["Here's the image you requested:", source, "The image above is the MCP logo."];
    // An image counts 1,600 tokens (6,400 characters) against the limit: with the text, more than 1,000.
    expect(run.results.get("tiny")).toEqual({
      type: "tool_result",
      tool_use_id: "tiny",
      content: [
        { type: "text", text: texts[0] },
        { type: "text", text: IMAGE_LEFT_OUT },
        { type: "text", text: source },
        { type: "text", text: texts[2] },
        { type: "text", text: truncatedNote(1000) },
      ],
    });
  });
});

describe(
  "WebFetch and TaskStop results as Claude Code gives them, through the CLI",
  { timeout: RUN_TIMEOUT },
  () => {
    let web: WebServer;
    let run: CliRun;
    beforeAll(async () => {
      web = await startWebServer({
        "/empty": { body: "" },
        "/rate-limited": { status: 429, headers: { "retry-after": "120" }, body: "slow down" },
        "/image.png": { content_type: "image/png", body: { png: { rgb: [0, 0, 255] } } },
      });
      const origin = web.origin("web.test");
      run = await runCli({
        args: [
          "--network",
          "allowlist",
          "--allow-domain",
          "web.test",
          "--allow-private-host",
          "web.test=127.0.0.1",
          "--ca-cert",
          web.caFile,
        ],
        turns: [
          call("empty", "WebFetch", { url: `${origin}/empty`, prompt: "What is on this page?" }),
          call("limited", "WebFetch", { url: `${origin}/rate-limited`, prompt: "What is on this page?" }),
          call("image", "WebFetch", { url: `${origin}/image.png`, prompt: "What colour is it?" }),
          call("bash", "Bash", { command: "sleep 30", run_in_background: true, description: "Sleep" }),
          call("stop", "TaskStop", { shell_id: "bash1" }),
          call("node", "Bash", { command: "node --version && /opt/agent-ci/bin/node --version" }),
        ],
        // One reader conversation per page read, in the order of the calls.
        conversations: [
          {
            match: "Web page content:",
            turns: [fake.text("READER: the page is empty."), fake.text("READER: a small blue square.")],
          },
        ],
      });
    }, RUN_TIMEOUT);
    afterAll(async () => {
      await web?.close();
    });

    it("the run completes", () => {
      expect(run.code, run.stderr).toBe(0);
    });

    const readerRequests = () => run.requests.filter(isReader);

    it("hands an empty HTTP 200 page to the reading model and returns its answer", () => {
      expect(run.results.get("empty")).toEqual({
        type: "tool_result",
        tool_use_id: "empty",
        content: "READER: the page is empty.",
      });
      expect(JSON.stringify(readerRequests()[0]?.body.messages)).toContain(
        "Web page content:\\n---\\n\\n---\\n\\nWhat is on this page?",
      );
    });

    it("carries a 429's Retry-After line between the status line and the explanation", () => {
      expect(run.results.get("limited")).toEqual({
        type: "tool_result",
        tool_use_id: "limited",
        content:
          "The server returned HTTP 429 Too Many Requests.\nRetry-After: 120\n\nThe response body was not retrieved. If this URL requires authentication, use an authenticated tool (e.g. `gh` for GitHub, or an MCP-provided fetch tool) instead of WebFetch.",
      });
    });

    it("shows an image URL's picture to the reading model, returns its answer and says where the image was saved", () => {
      expect(run.results.get("image")).toEqual({
        type: "tool_result",
        tool_use_id: "image",
        content: `READER: a small blue square.\n\n[Binary content (image/png, 72 bytes) also saved to ${OUTPUTS}/webfetch-image.png]`,
      });
      const content = readerRequests()[1]?.body.messages[0]?.content as Array<{
        type: string;
        source?: { media_type: string; data: string };
      }>;
      expect(content[0]?.type).toBe("image");
      expect(content[0]?.source?.media_type).toBe("image/png");
      expect(
        Buffer.from(content[0]?.source?.data ?? "", "base64")
          .subarray(1, 4)
          .toString(),
      ).toBe("PNG");
    });

    it("answers TaskStop called with KillShell's shell_id in TaskStop's recorded JSON", () => {
      expect(run.results.get("stop")).toEqual({
        type: "tool_result",
        tool_use_id: "stop",
        content: JSON.stringify({
          message: "Successfully stopped task: bash1 (sleep 30)",
          task_id: "bash1",
          task_type: "local_bash",
          command: "sleep 30",
        }),
      });
    });

    it("runs Node.js 24 LTS in the default image and in the toolbelt", () => {
      const text = JSON.stringify(run.results.get("node")?.content);
      expect(text).toMatch(/^"v24\.\d+\.\d+\\nv24\.\d+\.\d+"$/);
    });
  },
);
