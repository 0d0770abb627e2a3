// Claude Code 2.1.328's recorded subagent and background-task cases (test/fixtures/reference/claude-code-agent-tools),
// played through the CLI against the fake Messages API: the parent's turns and each subagent's as the case
// scripts them (a subagent is told apart by the marker in its Task prompt). The results must have the
// recorded shape and carry the same facts (the wording of frames and errors is agent-ci's own, see the
// reference's README), and the requests made for each subagent must carry the tool set the case records.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../support/cli-process.js";
import {
  conversationOf,
  fake,
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeConversation,
  type FakeTurn,
  type MessagesBody,
} from "../support/fake-anthropic.js";
import { makeWorkspace } from "../support/workspace.js";
import { referenceDir } from "../support/reference.js";
import { tempOut } from "../support/run-io.js";

const REFERENCE = referenceDir("claude-code-agent-tools");
const FAKE_KEY = ["sk", "ant", "api03", "referenceFAKEkey0123456789abcdefABCDEF"].join("-");
/** Names the recording has that the seeds' catalogue does not send a subagent. */
const NOT_OURS = new Set(["DeferredToolPlaceholder", "Agent"]);

interface Call {
  name: string;
  input: Record<string, unknown>;
}
interface Case {
  name: string;
  tools: string;
  files?: Record<string, string>;
  turns: Call[][];
  agents?: Array<{ name: string; match: string; turns: Call[][]; final: string }>;
  results: Array<{ tool: string; is_error: boolean | null; content: unknown }>;
  subagent_results?: Array<{ conv: string; tool: string; is_error: boolean | null; content: unknown }>;
  requests?: Array<{ conv: string; model: string; tool_names: string[] }>;
}

const ws = (value: unknown) => JSON.parse(JSON.stringify(value).split("$WS").join("/workspace")) as unknown;
const cases = fs
  .readdirSync(REFERENCE)
  .filter((f) => /^(agent|taskstop)-.*\.json$/.test(f))
  .sort()
  .map((f) => JSON.parse(fs.readFileSync(path.join(REFERENCE, f), "utf8")) as Case);

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** The text of the tool_result for `id` in a request's messages. */
function resultText(body: MessagesBody, id: string): string | undefined {
  for (const message of body.messages) {
    if (typeof message.content === "string") continue;
    for (const block of message.content) {
      if (block.type !== "tool_result" || block.tool_use_id !== id) continue;
      const content = block.content;
      return typeof content === "string"
        ? content
        : (content ?? []).map((b) => (b.type === "text" ? b.text : "")).join("");
    }
  }
  return undefined;
}

/** A recorded turn as the fake API plays it: ids like the recording's, `$ref` inputs resolved from earlier results. */
function turnOf(calls: Call[], turn: number, prefix: string, body?: MessagesBody): FakeTurn {
  const resolve = (value: unknown): unknown => {
    if (typeof value !== "object" || value === null) return value;
    const ref = (value as { $ref?: { turn: number; index: number; re: string } }).$ref;
    if (ref && body) {
      const text = resultText(body, `${prefix}_${ref.turn}_${ref.index}`) ?? "";
      return new RegExp(ref.re).exec(text)?.[1] ?? "";
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
  };
  return fake.toolUses(
    calls.map((call, i) => ({
      name: call.name,
      input: resolve(ws(call.input)) as Record<string, unknown>,
      id: `${prefix}_${turn}_${i}`,
    })),
  );
}

interface ToolResultEvent {
  parent: string | null;
  id: string;
  isError: boolean;
  content: unknown;
}

function toolResults(stdout: string): ToolResultEvent[] {
  const out: ToolResultEvent[] = [];
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    const event = JSON.parse(line) as {
      type: string;
      parent_tool_use_id?: string | null;
      message?: {
        content?: Array<{ type: string; tool_use_id: string; is_error?: boolean; content: unknown }>;
      };
    };
    if (event.type !== "user") continue;
    for (const block of event.message?.content ?? [])
      if (block.type === "tool_result")
        out.push({
          parent: event.parent_tool_use_id ?? null,
          id: block.tool_use_id,
          isError: Boolean(block.is_error),
          content: block.content,
        });
  }
  return out;
}

/** The recorded Task result's facts: tools used, the report's lines, whether a footer follows, its tool_uses. */
function taskFacts(text: string) {
  const used = /^ {2}<tools-used-before-summary>(.*)<\/tools-used-before-summary>\n {2}\n/.exec(text)?.[1];
  const frameAt = text.search(/^\[Subagent hand-back\] .*The report follows:$/m);
  const afterFrame = text.slice(text.indexOf("\n", frameAt) + 1);
  const footer =
    /\nagentId: (\S+)\n<usage>subagent_tokens: \d+\ntool_uses: (\d+)\nduration_ms: (?:\d+|\$MS)<\/usage>$/.exec(
      "\n" + afterFrame,
    );
  const report = (footer ? ("\n" + afterFrame).slice(1, footer.index) : afterFrame)
    .split("\n")
    .filter((l) => l.startsWith("  "));
  return { used, framed: frameAt >= 0, report, footer: Boolean(footer), toolUses: footer?.[2] };
}

describe("the recorded subagent and background-task cases, through the CLI", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const workspace = makeWorkspace(c.files ?? {}, { git: Object.keys(c.files ?? {}).length > 0 });
    const conversations: FakeConversation[] = (c.agents ?? []).map((agent) => ({
      match: agent.match,
      turns: [
        ...agent.turns.map((turn, t) => turnOf(turn, t, `toolu_rec_${agent.name}`)),
        fake.text(String(ws(agent.final))),
      ],
    }));
    let parentTurn = 0;
    const api = await startFakeAnthropic({
      apiKey: FAKE_KEY,
      conversations,
      handler: (request) => {
        const turn = c.turns[parentTurn];
        parentTurn += 1;
        return turn ? turnOf(turn, parentTurn - 1, "toolu_rec", request.body) : fake.text("Done.");
      },
    });
    servers.push(api);
    const out = tempOut();
    const args = [
      "run",
      "--workspace",
      workspace,
      "--prompt",
      "Play the case.",
      "--mode",
      "bypassPermissions",
    ];
    args.push("--out", out, "--output-format", "stream-json");
    if (c.files && Object.keys(c.files).some((f) => f.startsWith(".claude/agents/")))
      args.push("--trust-workspace-settings");
    const run = await runCli(args, { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: api.url });
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    const results = toolResults(run.stdout);

    // The main loop's results, in order: the same error-ness, the same shape and facts.
    const main = results.filter((r) => r.parent === null);
    expect(main).toHaveLength(c.results.length);
    c.results.forEach((want, i) => {
      const got = main[i]!;
      expect(got.isError, `${want.tool} #${i}`).toBe(Boolean(want.is_error));
      if (want.tool === "Agent" && !want.is_error) {
        const wanted = ws(want.content) as Array<{ text: string }>;
        const gotBlocks = got.content as Array<{ type: string; text: string }>;
        expect(gotBlocks).toHaveLength(1);
        expect(gotBlocks[0]!.type).toBe("text");
        const g = taskFacts(gotBlocks[0]!.text);
        const w = taskFacts(wanted[0]!.text);
        expect(g).toMatchObject({
          used: w.used,
          framed: true,
          report: w.report,
          footer: w.footer,
          toolUses: w.toolUses,
        });
      } else if (want.tool === "Agent") {
        // The unknown type's error names the types there are.
        expect(String(got.content)).toMatch(
          /^Agent type 'no-such-agent' not found\. Available agents: .*general-purpose/,
        );
        expect(String(got.content)).toContain("Explore");
      } else if (want.tool === "TaskStop" && !want.is_error) {
        const g = JSON.parse(String(got.content)) as Record<string, string>;
        const w = JSON.parse(String(want.content)) as Record<string, string>;
        const id = g.task_id!;
        expect(g).toEqual(JSON.parse(JSON.stringify(w).split("$ID1").join(id)));
      } else if (want.tool === "TaskStop") {
        expect(String(got.content)).toContain("No task found with ID: nosuchtask");
      }
    });

    // Each subagent's own results: what its calls got, exactly as recorded where they succeeded.
    const taskIds = main.map((r) => r.id);
    for (const agent of c.agents ?? []) {
      const wanted = (c.subagent_results ?? []).filter((r) => r.conv === `agent:${agent.name}`);
      const got = results.filter((r) => r.parent !== null && r.id.startsWith(`toolu_rec_${agent.name}_`));
      expect(got).toHaveLength(wanted.length);
      expect(got.every((r) => taskIds.includes(r.parent!))).toBe(true);
      wanted.forEach((w, i) => {
        expect(got[i]!.isError).toBe(Boolean(w.is_error));
        if (!w.is_error) expect(got[i]!.content).toEqual(ws(w.content));
      });
    }

    // The requests made for each subagent: the recorded model and tool set (Task itself aside: the seeds give
    // no subagent Task; a general-purpose agent's set is the parent's, which here is every tool).
    for (const recorded of c.requests ?? []) {
      const agent = c.agents!.find((a) => `agent:${a.name}` === recorded.conv)!;
      const requests = api
        .messagesRequests()
        .filter((r) => conversationOf(r.body, conversations)?.match === agent.match);
      expect(requests.length).toBeGreaterThan(0);
      const names = (requests[0]!.body.tools ?? []).map((t) => (t as { name: string }).name);
      const expected = recorded.tool_names.filter((n) => !NOT_OURS.has(n));
      if (recorded.tool_names.includes("Agent")) expect(names).toEqual(expect.arrayContaining(expected));
      else expect([...names].sort()).toEqual([...expected].sort());
      expect(names).not.toContain("Task");
      if (recorded.model !== "claude-opus-5-5") expect(requests[0]!.body.model).toBe(recorded.model);
    }
  });
});
