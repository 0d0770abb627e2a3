// A long run against the real SDK and a fake Messages API that, like the real one, refuses any request whose
// effective prompt is over the window (here 50,000 tokens, counted by the fake itself after the context edits
// the request declared): 300 turns whose tool results add up to many times that finish with each way of
// keeping the conversation small — the API's compaction, the API's clearing of old tool results, agent-ci's
// own clearing when a gateway refuses the beta — and end as context_window when nothing may be cleared.
import fs from "node:fs";
import path from "node:path";
import Docker from "dockerode";
import { afterEach, describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { runAgent } from "../../src/runner/run.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import {
  effectivePromptTokens,
  fake,
  startFakeAnthropic,
  type FakeAnthropic,
} from "../support/fake-anthropic.js";
import { makeWorkspace } from "../support/workspace.js";
import { quietIo, tempOut } from "../support/run-io.js";

const docker = new Docker();
const FAKE_KEY = ["sk", "ant", "api03", "LONGRUNlongrunLONGRUN0123456789abcdefABCDEF-xyzAA"].join("-");
const WINDOW = 50_000;
const TURNS = 300;
/** Each Bash result: 8,000 characters, so 300 of them are about twelve windows' worth. */
const RESULT_CHARS = 8_000;

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function longRun(
  extra: Partial<RunConfigInput>,
  fakeOptions: { rejectContextManagement?: boolean } = {},
) {
  const api = await startFakeAnthropic({
    apiKey: FAKE_KEY,
    contextWindowTokens: WINDOW,
    ...fakeOptions,
    handler: (_request, index) => {
      if (index === 0)
        return fake.toolUse("Write", { file_path: "/workspace/notes.txt", content: "started\n" });
      if (index < TURNS)
        return fake.toolUse("Bash", { command: `head -c ${RESULT_CHARS} /dev/zero | tr '\\0' x` });
      return fake.text("All 300 turns done.");
    },
  });
  servers.push(api);
  const config = parseRunConfig({
    workspace: makeWorkspace({ "README.md": "long run\n" }),
    out: tempOut(),
    apiKey: FAKE_KEY,
    baseURL: api.url,
    prompt: "Run the commands.",
    mode: "bypassPermissions",
    maxTurns: TURNS + 10,
    contextWindow: WINDOW,
    ...extra,
  } as RunConfigInput);
  const outcome = await runAgent(config, quietIo());
  const report = parseReport(fs.readFileSync(path.join(outcome.outDir, "report.json"), "utf8"));
  const events = fs
    .readFileSync(path.join(outcome.outDir, "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map(
      (line) =>
        JSON.parse(line) as {
          type: string;
          subtype?: string;
          compact_metadata?: { pre_tokens: number; post_tokens: number; strategy: string };
          refused_edit?: string;
        },
    );
  expect(
    await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${outcome.runId}`] } }),
  ).toEqual([]);
  return { api, outcome, report, events };
}

/** Each way of keeping the run inside the window: the model picks the API's edit; a gateway without betas gets agent-ci's. */
const STRATEGIES = [
  {
    name: "the API's compaction (compact_20260112)",
    model: "claude-sonnet-5-5",
    strategy: "api_compaction",
    reject: false,
    beta: "compact-2026-01-12",
  },
  {
    name: "the API's clearing of old tool results (clear_tool_uses_20250919)",
    model: "claude-haiku-4-5",
    strategy: "api_clear_tool_uses",
    reject: false,
    beta: "context-management-2025-06-27",
  },
  {
    name: "agent-ci's own clearing, when a gateway refuses the beta",
    model: "claude-sonnet-5-5",
    strategy: "clear_tool_results",
    reject: true,
    beta: undefined,
  },
] as const;

describe("a run longer than the context window", () => {
  for (const s of STRATEGIES) {
    it(
      `completes 300 turns with ${s.name}, each compaction an event and a mark in the report`,
      { timeout: 600_000 },
      async () => {
        const { api, outcome, report, events } = await longRun(
          { model: s.model },
          { rejectContextManagement: s.reject },
        );
        expect(outcome.exitReason).toBe("completed");
        expect(outcome.exitCode).toBe(0);
        expect(report.turns.length).toBeGreaterThanOrEqual(TURNS + 1);
        expect(report.toolCalls).toHaveLength(TURNS);
        // Every request the fake answered fitted, by the fake's own count after the request's edits.
        const requests = api.messagesRequests();
        const answered = requests.filter((r) => !s.reject || !r.headers["anthropic-beta"]);
        expect(answered.length).toBeGreaterThanOrEqual(TURNS + 1);
        for (const request of answered)
          expect(effectivePromptTokens(request.body)).toBeLessThanOrEqual(WINDOW);
        expect(TURNS * RESULT_CHARS).toBeGreaterThan(4 * WINDOW * 10);

        const compactions = report.compactions ?? [];
        expect(compactions.length).toBeGreaterThan(0);
        const boundaries = events.filter((e) => e.type === "system" && e.subtype === "compact_boundary");
        expect(boundaries).toHaveLength(compactions.length);
        for (const [i, c] of compactions.entries()) {
          expect(c.strategy).toBe(s.strategy);
          expect(c.tokensAfter).toBeLessThan(c.tokensBefore);
          expect(boundaries[i]?.compact_metadata).toMatchObject({
            pre_tokens: c.tokensBefore,
            post_tokens: c.tokensAfter,
            strategy: s.strategy,
          });
        }
        const fallback = events.filter((e) => e.subtype === "context_management_fallback");
        if (s.beta) {
          // Every request carried the edit and its beta; none was refused.
          for (const request of requests) expect(request.headers["anthropic-beta"]).toContain(s.beta);
          expect(fallback).toEqual([]);
        } else {
          // One refused request, then agent-ci's own clearing without the beta, said in an event and the report.
          expect(requests[0]?.headers["anthropic-beta"]).toBeDefined();
          expect(requests.slice(1).every((r) => r.headers["anthropic-beta"] === undefined)).toBe(true);
          expect(fallback).toHaveLength(1);
          expect(report.warnings.some((w) => w.kind === "context_management_fallback")).toBe(true);
          expect(requests.at(-1)!.rawBody.length).toBeLessThan(4 * WINDOW);
        }
        if (s.strategy === "api_compaction") {
          // The summary went back verbatim (the fake refuses anything else), and what it stands for was not sent again.
          expect(requests.at(-1)!.rawBody).toContain('"type":"compaction"');
          expect(requests.at(-1)!.rawBody.length).toBeLessThan(4 * WINDOW);
        }
        // The report keeps what the model no longer sees.
        expect(report.toolCalls.at(1)?.resultPreview).toMatch(/^x{100}/);
        expect(fs.readFileSync(path.join(outcome.outDir, "report.md"), "utf8")).toMatch(/Context window/);
      },
    );
  }

  it(
    "ends as context_window with --no-compaction, with the patch and the report written",
    { timeout: 600_000 },
    async () => {
      const { outcome, report, events } = await longRun({ compaction: false });
      expect(outcome.exitReason).toBe("context_window");
      expect(outcome.exitCode).toBe(5);
      expect(report.exitReason).toBe("context_window");
      expect(report.compactions).toBeUndefined();
      expect(events.some((e) => e.subtype === "compact_boundary")).toBe(false);
      expect(report.turns.length).toBeLessThan(TURNS);
      expect(fs.readFileSync(outcome.patchPath, "utf8")).toContain("+started");
    },
  );

  it(
    "goes on after stop_reason compaction, sending the block back verbatim instead of the messages it stands for",
    { timeout: 120_000 },
    async () => {
      const summary = "Summary: notes.txt was written.";
      const api = await startFakeAnthropic({
        apiKey: FAKE_KEY,
        turns: [
          fake.toolUse("Write", { file_path: "/workspace/notes.txt", content: "started\n" }),
          {
            content: [{ type: "compaction", content: summary, signature: "scripted-compaction-1" }],
            stopReason: "compaction",
            iterations: [
              {
                type: "compaction",
                input_tokens: 40_000,
                output_tokens: 50,
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: 0,
                cache_creation: null,
              },
            ],
          },
          fake.toolUse("Bash", { command: "cat notes.txt" }),
          fake.text("Done."),
        ],
      });
      servers.push(api);
      const config = parseRunConfig({
        workspace: makeWorkspace({ "README.md": "short run\n" }),
        out: tempOut(),
        apiKey: FAKE_KEY,
        baseURL: api.url,
        prompt: "Write the notes.",
        mode: "bypassPermissions",
      } as RunConfigInput);
      const outcome = await runAgent(config, quietIo());
      expect(outcome.exitReason).toBe("completed");
      const requests = api.messagesRequests();
      expect(requests).toHaveLength(4);
      // After the compaction: the prompt, then the block as received; the Write and its result are not sent again.
      const after = requests[2]!.body.messages;
      expect(after).toHaveLength(2);
      expect(after[0]).toMatchObject({ role: "user", content: "Write the notes." });
      expect(after[1]).toMatchObject({
        role: "assistant",
        content: [{ type: "compaction", content: summary, signature: "scripted-compaction-1" }],
      });
      // The answer that continued after the pause joins the compaction's assistant message.
      expect(requests[3]!.body.messages).toHaveLength(3);
      expect(requests[3]!.body.messages[1]).toMatchObject({
        role: "assistant",
        content: [
          { type: "compaction", content: summary },
          { type: "tool_use", name: "Bash" },
        ],
      });
      const report = parseReport(fs.readFileSync(path.join(outcome.outDir, "report.json"), "utf8"));
      expect(report.compactions).toEqual([
        expect.objectContaining({ strategy: "api_compaction", tokensBefore: 40_000 }),
      ]);
      expect(report.toolCalls.map((c) => c.tool)).toEqual(["Write", "Bash"]);
      expect(report.toolCalls[1]?.resultPreview).toBe("started");
      expect(
        await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${outcome.runId}`] } }),
      ).toEqual([]);
    },
  );
});
