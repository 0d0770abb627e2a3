// Every recorded Claude Code MCP case (test/fixtures/reference/claude-code-agent-tools/mcp-*.json) played
// through the CLI with the same servers from npm, in the MCP test image, with the case's files and the
// MAX_MCP_OUTPUT_TOKENS its description states: each result must match exactly, errors too (text, blocks,
// is_error), with a saved file's path written as the recording writes Claude Code's (`asRecorded`). The
// advertised-tools case is played against the fake Messages API, which records the tool names and input
// schemas the model would get.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fixtureBytes } from "../../scripts/reference-fixtures.mjs";
import { WORKSPACE_ROOT } from "../../src/sandbox/sandbox.js";
import { runCli } from "../support/cli-process.js";
import { fake, startFakeAnthropic } from "../support/fake-anthropic.js";
import { mcpImage, REFERENCE_SERVERS } from "../support/mcp-run.js";
import { asRecorded, referenceDir } from "../support/reference.js";

/** Each test starts one or two sandboxed runs with servers: minutes on a loaded 2-core machine. */
const RUNS_TIMEOUT = 300_000;

const CASES_DIR = referenceDir("claude-code-agent-tools");
const FAKE_KEY = ["sk-ant-api03", "mcpreference", "x".repeat(40)].join("-");

interface Case {
  name: string;
  description: string;
  /** The workspace's files, in the recording's fixture shapes. */
  files?: Record<string, unknown>;
  turns: Array<Array<{ name: string; input: Record<string, unknown> }>>;
  cli_args: string[];
  results: Array<{ tool: string; tool_use_id: string; is_error: boolean | null; content: unknown }>;
  requests?: Array<{ tool_names: string[]; tools: Array<{ name: string; input_schema: unknown }> }>;
}

const cases: Case[] = fs
  .readdirSync(CASES_DIR)
  .filter((f) => f.startsWith("mcp-") && f.endsWith(".json"))
  .sort()
  .map((f) => JSON.parse(fs.readFileSync(path.join(CASES_DIR, f), "utf8")) as Case);

/** The recording's `{"$text": {"repeat": {text, count}}}` inputs, expanded. */
function expand(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(expand);
  if (typeof value !== "object" || value === null) return value;
  const spec = (value as { $text?: { repeat: { text: string; count: number } } }).$text;
  if (spec) return spec.repeat.text.repeat(spec.repeat.count);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v)]));
}

/** `--allowedTools a,b` → `--allow a --allow b`. */
function allowArgs(cliArgs: string[]): string[] {
  const i = cliArgs.indexOf("--allowedTools");
  return i === -1 ? [] : cliArgs[i + 1]!.split(",").flatMap((rule) => ["--allow", rule]);
}

/** An hour of one digit, as server-everything's local time in the recording's blob ("9:41:08 AM"). */
const RECORDED_HOUR = 5;

/**
 * The servers as the recording ran them. server-everything writes its local time into a resource
 * (`toLocaleTimeString()`), whose size in bytes a result states; the recording's had a one-digit hour, so the
 * server runs in a time zone where it is RECORDED_HOUR o'clock now (Etc/GMT±N, N from -14 to +12).
 */
function recordedServers() {
  let behind = (new Date().getUTCHours() - RECORDED_HOUR + 24) % 24;
  if (behind > 12) behind -= 24;
  const tz = `Etc/GMT${behind < 0 ? "-" : "+"}${Math.abs(behind)}`;
  return { ...REFERENCE_SERVERS, everything: { ...REFERENCE_SERVERS.everything, env: { TZ: tz } } };
}

async function play(c: Case, extra: string[], env?: NodeJS.ProcessEnv) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `agent-ci-${c.name}-`));
  const workspace = path.join(dir, "ws");
  fs.mkdirSync(workspace);
  for (const [name, spec] of Object.entries(c.files ?? {}))
    fs.writeFileSync(path.join(workspace, name), fixtureBytes(spec));
  const script = path.join(dir, "script.json");
  const turns = c.turns.map((turn, t) =>
    turn.map((call, i) => ({ ...call, id: `toolu_rec_${t}_${i}`, input: expand(call.input) })),
  );
  // `$WS` in an input is the workspace: /workspace in agent-ci's sandbox.
  fs.writeFileSync(script, JSON.stringify({ turns }).replaceAll("$WS", WORKSPACE_ROOT));
  const run = await runCli(
    [
      "run",
      "--workspace",
      workspace,
      "--image",
      await mcpImage(),
      "--mcp-config",
      JSON.stringify({ mcpServers: recordedServers() }),
      ...allowArgs(c.cli_args),
      "--out",
      path.join(dir, "out"),
      "--output-format",
      "stream-json",
      ...extra,
      ...(extra.length ? [] : ["--script", script]),
    ],
    { ANTHROPIC_API_KEY: "", ...env },
  );
  const results: Array<{ tool_use_id: string; content: unknown; is_error?: boolean }> = [];
  for (const line of run.stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    const event = JSON.parse(line) as { type: string; message?: { content?: unknown } };
    if (event.type === "user" && Array.isArray(event.message?.content))
      for (const block of event.message.content as Array<{ type: string }>)
        if (block.type === "tool_result") results.push(block as unknown as (typeof results)[number]);
  }
  return { run, results };
}

/** The environment a case was recorded with, where its description states it (`MAX_MCP_OUTPUT_TOKENS=5`). */
function caseEnv(c: Case): NodeJS.ProcessEnv {
  const limit = /\bMAX_MCP_OUTPUT_TOKENS=(\d+)/.exec(c.description)?.[1];
  return limit ? { MAX_MCP_OUTPUT_TOKENS: limit } : {};
}

describe("the recorded Claude Code MCP cases, played through the CLI", { timeout: RUNS_TIMEOUT }, () => {
  for (const c of cases.filter((x) => !x.requests)) {
    it(c.name, async () => {
      const { run, results } = await play(c, [], caseEnv(c));
      expect(results.length, run.stderr).toBe(c.results.length);
      c.results.forEach((want, i) => {
        const got = results[i]!;
        // The recording's `is_error: null` is a result without the key.
        expect(got.is_error ?? null, `${want.tool}: ${JSON.stringify(got.content).slice(0, 300)}`).toBe(
          want.is_error,
        );
        expect(asRecorded(got.content, got.tool_use_id)).toBe(JSON.stringify(want.content));
      });
    });
  }

  for (const c of cases.filter((x) => x.requests)) {
    it(`${c.name}: the tool names and input schemas the model gets`, async () => {
      const api = await startFakeAnthropic({
        apiKey: FAKE_KEY,
        turns: [fake.toolUse(c.turns[0]![0]!.name, c.turns[0]![0]!.input), fake.text("done")],
      });
      try {
        const { run, results } = await play(c, ["--prompt", "use the echo tool"], {
          ANTHROPIC_API_KEY: FAKE_KEY,
          ANTHROPIC_BASE_URL: api.url,
        });
        expect(run.code, run.stderr).toBe(0);
        expect(results[0]?.content).toEqual(c.results[0]!.content);
        const sent = api.messagesRequests()[0]!.body.tools as Array<{ name: string; input_schema: unknown }>;
        const shown = sent.filter((t) => /^mcp__|Mcp/.test(t.name));
        const want = c.requests![0]!;
        expect(shown.map((t) => t.name).sort()).toEqual([...want.tool_names].sort());
        for (const tool of want.tools.filter((t) => t.name.startsWith("mcp__")))
          expect(shown.find((t) => t.name === tool.name)?.input_schema, tool.name).toEqual(tool.input_schema);
      } finally {
        await api.close();
      }
    });
  }
});
