// Every recorded Claude Code MCP case (test/fixtures/reference/claude-code-agent-tools/mcp-*.json) played through the CLI with the same servers from npm, in the MCP test
// image: successful results must match exactly (the saved-file paths mapped), errors by is_error and
// meaning, as check-reference.mjs compares the file tools. The advertised-tools case is played against
// the fake Messages API, which records the tool names and input schemas the model would get.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli-process.js";
import { fake, startFakeAnthropic } from "../support/fake-anthropic.js";
import { mcpImage, REFERENCE_SERVERS } from "../support/mcp-run.js";
import { referenceDir } from "../support/reference.js";

/** Each test starts one or two sandboxed runs with servers: minutes on a loaded 2-core machine. */
const RUNS_TIMEOUT = 300_000;

const CASES_DIR = referenceDir("claude-code-agent-tools");
const FAKE_KEY = ["sk-ant-api03", "mcpreference", "x".repeat(40)].join("-");

interface Case {
  name: string;
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

async function play(c: Case, extra: string[], env?: NodeJS.ProcessEnv) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `agent-ci-${c.name}-`));
  const workspace = path.join(dir, "ws");
  fs.mkdirSync(workspace);
  const script = path.join(dir, "script.json");
  const turns = c.turns.map((turn, t) =>
    turn.map((call, i) => ({ ...call, id: `toolu_rec_${t}_${i}`, input: expand(call.input) })),
  );
  fs.writeFileSync(script, JSON.stringify({ turns }));
  const run = await runCli(
    [
      "run",
      "--workspace",
      workspace,
      "--image",
      await mcpImage(),
      "--mcp-config",
      JSON.stringify({ mcpServers: REFERENCE_SERVERS }),
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

/** agent-ci's paths as the recording writes Claude Code's: the workspace, and where a result was saved. */
function asRecorded(content: unknown, id: string): string {
  return JSON.stringify(content)
    .split("/tmp/agent-ci-outputs/")
    .join("$HOME/.claude/projects/$WS_SLUG/$SESSION/tool-results/")
    .split(`-${id}.`)
    .join("-$ID1.")
    .split("/workspace")
    .join("$WS");
}

describe("the recorded Claude Code MCP cases, played through the CLI", { timeout: RUNS_TIMEOUT }, () => {
  for (const c of cases.filter((x) => !x.requests)) {
    it(c.name, async () => {
      const { run, results } = await play(c, []);
      expect(results.length, run.stderr).toBe(c.results.length);
      c.results.forEach((want, i) => {
        const got = results[i]!;
        expect(Boolean(got.is_error), `${want.tool}: ${JSON.stringify(got.content).slice(0, 300)}`).toBe(
          Boolean(want.is_error),
        );
        if (!want.is_error)
          expect(asRecorded(got.content, want.tool_use_id)).toBe(JSON.stringify(want.content));
        // The errors carry the same facts (the wording around them may be agent-ci's).
        else
          expect(JSON.stringify(got.content)).toContain(
            String(want.content).replace(/^<tool_use_error>|<\/tool_use_error>$/g, ""),
          );
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
