// A long run against the real SDK and a fake Messages API that, like the real one, refuses any request whose
// prompt is over the window (here 50,000 tokens, counted by the fake itself): 300 turns whose tool results add
// up to many times that finish when agent-ci clears old results, and end as context_window when it may not.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterEach, describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { runAgent } from "../../src/runner/run.js";
import { LABEL_RUN } from "../../src/sandbox/engine.js";
import {
  effectivePromptTokens,
  fake,
  startFakeAnthropic,
  type FakeAnthropic,
} from "../support/fake-anthropic.js";
import { makeWorkspace } from "../support/workspace.js";

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

async function longRun(extra: Partial<RunConfigInput>) {
  const api = await startFakeAnthropic({
    apiKey: FAKE_KEY,
    contextWindowTokens: WINDOW,
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
    out: fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-out-")),
    apiKey: FAKE_KEY,
    baseURL: api.url,
    prompt: "Run the commands.",
    mode: "bypassPermissions",
    maxTurns: TURNS + 10,
    contextWindow: WINDOW,
    ...extra,
  } as RunConfigInput);
  const outcome = await runAgent(config, { stdout: () => {}, stderr: () => {}, progress: false });
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
          compact_metadata?: { pre_tokens: number; post_tokens: number };
        },
    );
  expect(
    await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${outcome.runId}`] } }),
  ).toEqual([]);
  return { api, outcome, report, events };
}

describe("a run longer than the context window", () => {
  it(
    "completes 300 turns by clearing old tool results, each clearing an event and a mark in the report",
    { timeout: 600_000 },
    async () => {
      const { api, outcome, report, events } = await longRun({});
      expect(outcome.exitReason).toBe("completed");
      expect(outcome.exitCode).toBe(0);
      expect(report.turns).toHaveLength(TURNS + 1);
      expect(report.toolCalls).toHaveLength(TURNS);
      // Every request fitted: none was refused, and the fake's own count agrees.
      const requests = api.messagesRequests();
      expect(requests).toHaveLength(TURNS + 1);
      for (const request of requests) expect(effectivePromptTokens(request.body)).toBeLessThanOrEqual(WINDOW);
      const total = requests.at(-1)!.rawBody.length;
      expect(TURNS * RESULT_CHARS).toBeGreaterThan(4 * WINDOW * 10);
      expect(total).toBeLessThan(4 * WINDOW);

      const compactions = report.compactions ?? [];
      expect(compactions.length).toBeGreaterThan(0);
      const boundaries = events.filter((e) => e.type === "system" && e.subtype === "compact_boundary");
      expect(boundaries).toHaveLength(compactions.length);
      for (const [i, c] of compactions.entries()) {
        expect(c.strategy).toBe("clear_tool_results");
        expect(c.tokensAfter).toBeLessThan(c.tokensBefore);
        expect(boundaries[i]?.compact_metadata).toMatchObject({
          pre_tokens: c.tokensBefore,
          post_tokens: c.tokensAfter,
        });
      }
      // The report keeps what the model no longer sees.
      expect(report.toolCalls.at(1)?.resultPreview).toMatch(/^x{100}/);
      expect(fs.readFileSync(path.join(outcome.outDir, "report.md"), "utf8")).toMatch(/Context window/);
    },
  );

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
});
