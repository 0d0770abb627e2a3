// RELIABILITY M (model and API faults): runAgent with the real @anthropic-ai/sdk against the local fake
// Messages API, on the real engine, one run per fault. Each run must end with the documented exit reason and
// a complete record; a partial or truncated tool call must never run (a marker file it would create must
// not be in the patch); and what the API was sent must hold no planted secret (the container never saw one).
// The driver's own retry arithmetic (backoff bounds, retry-after parsing) is unit-tested in
// test/unit/runner/anthropic-driver.test.ts.
import { afterEach, describe, expect } from "vitest";
import type { RunConfigInput } from "../../src/runner/config.js";
import {
  fake,
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeHandler,
  type FakeTurn,
  type MessagesBody,
} from "../support/fake-anthropic.js";
import { useHarness, type Mode } from "./harness.js";
import { rowTester, type Row } from "./rows.js";

const DRIVER_TESTS = "test/unit/runner/anthropic-driver.test.ts";

const ROWS = [
  {
    id: "M1",
    what: "429 rate_limit_error with retry-after: retried, bounded, then failed: rate limited",
    kind: "fault",
    alsoSee: [{ file: DRIVER_TESTS, test: "waits at least retry-after seconds before retrying a 429" }],
  },
  { id: "M2", what: "429 enforced_spend_limit_reached: not retried", kind: "fault" },
  { id: "M3", what: "529, 500, 503: backoff, capped attempts, within the wall-clock budget", kind: "fault" },
  {
    id: "M4",
    what: "a stream cut mid-message, no message_stop, SSE garbage: the turn is retried whole, partial tools never run",
    kind: "fault",
  },
  {
    id: "M5",
    what: "400 prompt too long, 403, 401: not retried, fail fast, 401 before the container",
    kind: "fault",
  },
  {
    id: "M6",
    what: "stop_reason max_tokens inside a tool_use: not run, retried with more tokens, noted",
    kind: "fault",
  },
  {
    id: "M7",
    what: "tool_use input that fails the schema (wrong types, extra keys, not an object)",
    kind: "fault",
  },
  { id: "M8", what: "unknown tool name; a tool disabled in this mode (Write in plan)", kind: "fault" },
  {
    id: "M9",
    what: "several tool_use blocks in one turn, and duplicate ids: one tool_result per id",
    kind: "fault",
  },
  { id: "M10", what: "refusal, empty end_turn, pause_turn, model_context_window_exceeded", kind: "fault" },
  { id: "M11", what: "the model loops on a failing call: stopped by the turn cap", kind: "fault" },
  { id: "M12", what: "the model says done but the patch is empty: outcome no_changes", kind: "fault" },
] as const satisfies readonly Row[];

const h = useHarness();
const { test, checkTable } = rowTester(ROWS);

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

interface ModelRun {
  turns?: FakeTurn[];
  handler?: FakeHandler;
  mode?: Mode;
  workspace?: string;
  config?: Partial<RunConfigInput>;
}

/** A fake API with the planted key, then runAgent against it; what the API was sent is scanned for secrets. */
async function modelRun(spec: ModelRun) {
  const api = await startFakeAnthropic({
    apiKey: h.secrets.anthropicKey,
    turns: spec.turns,
    handler: spec.handler,
  });
  servers.push(api);
  h.scanAlso("what the fake Messages API was sent", () => api.requests.map((r) => r.rawBody).join("\n"));
  const workspace = spec.workspace ?? h.workspace({ "a.txt": "a\n" });
  const run = await h.agent({
    workspace,
    prompt: "Do the task.",
    mode: spec.mode ?? "bypassPermissions",
    config: { baseURL: api.url, ...spec.config },
  });
  return { run, api, sent: api.messagesRequests() };
}

const lastUserContent = (body: MessagesBody) => {
  const last = body.messages.at(-1);
  return Array.isArray(last?.content)
    ? (last.content as Array<{ type: string; tool_use_id?: string; is_error?: boolean; content?: unknown }>)
    : [];
};

describe("M: model and API faults through runAgent and the fake Messages API", () => {
  test(
    "M1",
    "429s are retried after retry-after, boundedly, and the run then ends as rate limited with its record",
    async () => {
      const recovered = await modelRun({
        turns: [
          fake.rateLimited({ retryAfterMs: 200 }),
          fake.toolUse("Bash", { command: "echo after-429" }),
          fake.text("done"),
        ],
      });
      expect(recovered.run.report?.exitReason).toBe("completed");
      expect(recovered.run.report?.turns[0]?.attempts).toBe(2);
      expect(recovered.run.text(0)).toBe("after-429");

      const exhausted = await modelRun({ handler: () => fake.rateLimited({ retryAfterMs: 100 }) });
      expect(exhausted.run.report?.exitReason).toBe("api_error");
      expect(exhausted.run.exitCode).toBe(4);
      expect(exhausted.sent.length).toBe(4);
      expect(exhausted.run.report?.error?.kind).toBe("ModelApiError/rate_limit");
      expect(exhausted.run.report?.error?.message).toMatch(/rate.?limit/i);
    },
  );

  test("M2", "a spend-limit 429 is not retried and says why", async () => {
    const { run, sent } = await modelRun({
      turns: [
        fake.toolUse("Write", { file_path: "/workspace/kept.txt", content: "kept\n" }),
        fake.spendLimited(),
      ],
    });
    expect(run.report?.exitReason).toBe("api_error");
    expect(run.report?.error?.kind).toBe("ModelApiError/spend_limit");
    expect(run.report?.error?.message).toMatch(/usage limits|spend/i);
    expect(sent.length).toBe(2);
    // The work done before the fault is kept: the record and the patch.
    expect(run.report?.patch.files.map((f) => f.path)).toEqual(["kept.txt"]);
    expect(run.calls.map((c) => c.tool)).toEqual(["Write"]);
  });

  test(
    "M3",
    "529, 500 and 503 are retried with backoff; retries stop within the run's wall clock",
    async () => {
      const recovered = await modelRun({
        turns: [
          fake.overloaded(),
          fake.serverError(503),
          fake.toolUse("Bash", { command: "echo ok" }),
          fake.text("done"),
        ],
      });
      expect(recovered.run.report?.exitReason).toBe("completed");
      expect(recovered.run.report?.turns[0]?.attempts).toBe(3);

      // Overloaded for good, with a 5 s wall clock: the run ends with a record, as an API error or at the limit.
      const exhausted = await modelRun({ handler: () => fake.serverError(500), config: { timeoutMs: 5000 } });
      // On a loaded machine the 5 s can run out while the container starts, before any request: then it ends
      // as timeout having asked nothing, which is still right.
      const exitReason = exhausted.run.report?.exitReason;
      expect(["api_error", "timeout"]).toContain(exitReason);
      if (exitReason === "api_error") expect(exhausted.sent.length).toBeGreaterThanOrEqual(1);
      expect(exhausted.sent.length).toBeLessThanOrEqual(4);
    },
  );

  test("M4", "a broken stream is retried whole and its partial tool call never runs", async () => {
    const { run, sent } = await modelRun({
      turns: [
        fake.cutMidToolUse("Bash", { command: "touch /workspace/PARTIAL-destroy" }, "destroy"),
        fake.cutMidToolUse("Bash", { command: "touch /workspace/PARTIAL-end" }, "end"),
        fake.garbage("bad_json"),
        fake.toolUse("Bash", { command: "touch /workspace/whole && echo whole" }),
        fake.garbage("not_sse"),
        fake.text("done"),
      ],
    });
    expect(run.report?.exitReason).toBe("completed");
    expect(run.report?.turns[0]?.attempts).toBe(4);
    expect(run.calls.map((c) => (c.input as { command: string }).command)).toEqual([
      "touch /workspace/whole && echo whole",
    ]);
    expect(run.report?.patch.files.map((f) => f.path)).toEqual(["whole"]);
    expect(sent.length).toBe(6);
  });

  test(
    "M5",
    "400, 403 and 401 fail fast without retries; a bad key stops the run before any container",
    async () => {
      const tooLong = await modelRun({
        turns: [
          fake.toolUse("Write", { file_path: "/workspace/kept.txt", content: "kept\n" }),
          fake.promptTooLong(),
        ],
      });
      // An overflow is not retried as is: with nothing old enough to clear, it ends at once with its own reason.
      expect(tooLong.run.report?.exitReason).toBe("context_window");
      expect(tooLong.run.report?.error?.message).toMatch(/prompt is too long/);
      expect(tooLong.sent.length).toBe(2);
      expect(tooLong.run.report?.patch.files.map((f) => f.path)).toEqual(["kept.txt"]);

      const forbidden = await modelRun({ turns: [fake.forbidden()] });
      expect(forbidden.run.report?.exitReason).toBe("api_error");
      expect(forbidden.sent.length).toBe(1);

      const api = await startFakeAnthropic({ apiKey: `${h.secrets.anthropicKey}-other` });
      servers.push(api);
      const badKey = await h.agent({
        workspace: h.workspace({ "a.txt": "a\n" }),
        prompt: "x",
        config: { baseURL: api.url },
      });
      expect(badKey.report?.exitReason).toBe("api_error");
      expect(badKey.report?.image).toBeUndefined();
      expect(api.messagesRequests().length).toBe(0);
    },
  );

  test(
    "M6",
    "a tool call cut by max_tokens is not run; the turn is asked again with more room, and the report says so",
    async () => {
      const { run, sent } = await modelRun({
        turns: [
          fake.truncatedToolUse("Bash", { command: "touch /workspace/TRUNCATED" }, 14, "Let me run it."),
          fake.toolUse("Bash", { command: "echo whole" }),
          fake.text("done"),
        ],
        config: { maxTokens: 1000 },
      });
      expect(run.report?.exitReason).toBe("completed");
      expect(run.calls.map((c) => (c.input as { command: string }).command)).toEqual(["echo whole"]);
      expect(run.report?.patch.empty).toBe(true);
      expect(run.report?.warnings.map((w) => w.message).join("\n")).toMatch(
        /max_tokens cut a tool call \(Bash\); it was not run/,
      );
      expect(sent[0]?.body.max_tokens).toBe(1000);
      expect(sent[1]?.body.max_tokens).toBe(2000);
    },
  );

  test("M7", "tool input that fails the schema is answered with is_error and runs nothing", async () => {
    const { run, sent } = await modelRun({
      turns: [
        fake.toolUses([
          { name: "Bash", input: { command: 42 } },
          { name: "Bash", input: { command: "touch /workspace/EXTRA", rm_rf: true } },
          { name: "Read", input: { file_path: ["/workspace/a.txt"] } },
          {
            name: "Edit",
            input: { file_path: "/workspace/a.txt", old_string: "a", new_string: "b", replace_all: "yes" },
          },
          { name: "Read", input: { file_path: "/workspace/a.txt", limit: -1, offset: 1e12 } },
        ]),
        { content: [{ type: "tool_use", name: "Bash", input: {}, rawJson: '["touch /workspace/ARRAY"]' }] },
        fake.text("done"),
      ],
    });
    expect(run.report?.exitReason).toBe("completed");
    for (const call of run.calls) {
      expect(call.isError, JSON.stringify(call.input)).toBe(true);
      expect(call.errorKind, JSON.stringify(call.input)).toBe("invalid_input");
    }
    expect(run.calls.length).toBe(6);
    expect(run.report?.patch.empty).toBe(true);
    expect(JSON.stringify(lastUserContent(sent[1]!.body))).toMatch(/InputValidationError/);
  });

  test(
    "M8",
    "an unknown tool and a tool disabled by the mode get an error naming the available tools",
    async () => {
      const { run } = await modelRun({
        mode: "plan",
        turns: [
          fake.toolUses([
            { name: "Exec", input: { command: "id" } },
            { name: "Write", input: { file_path: "/workspace/w.txt", content: "x" } },
            { name: "Edit", input: { file_path: "/workspace/a.txt", old_string: "a", new_string: "b" } },
          ]),
          fake.text("done"),
        ],
      });
      expect(run.call(0).errorKind).toBe("unknown_tool");
      expect(run.text(0)).toMatch(/No such tool available: Exec/);
      expect(run.call(1).errorKind).toBe("disabled_tool");
      expect(run.text(1)).toMatch(
        /Write is not available in this run \(plan mode is read-only\)\. Available tools: Bash/,
      );
      expect(run.call(2).errorKind).toBe("disabled_tool");
    },
  );

  test(
    "M9",
    "parallel tool_use blocks and a repeated id get exactly one tool_result each, in order",
    async () => {
      const { run, sent } = await modelRun({
        turns: [
          fake.toolUses([
            { name: "Read", input: { file_path: "/workspace/a.txt" }, id: "toolu_dup" },
            { name: "Read", input: { file_path: "/workspace/missing.txt" }, id: "toolu_b" },
            { name: "Grep", input: { pattern: "a" }, id: "toolu_dup" },
            { name: "Bash", input: { command: "echo c" }, id: "toolu_c" },
          ]),
          fake.text("done"),
        ],
      });
      expect(run.report?.exitReason).toBe("completed");
      const results = lastUserContent(sent[1]!.body).filter((b) => b.type === "tool_result");
      expect(results.map((r) => r.tool_use_id)).toEqual(["toolu_dup", "toolu_b", "toolu_c"]);
      expect(results[1]?.is_error).toBe(true);
      expect(run.report?.warnings.map((w) => w.message).join("\n")).toMatch(
        /duplicate tool_use id toolu_dup ignored/,
      );
    },
  );

  test(
    "M10",
    "refusal, an empty end_turn, pause_turn and a full context window each end or continue cleanly",
    async () => {
      const refusal = await modelRun({
        turns: [fake.toolUse("Bash", { command: "echo one" }), fake.refusal()],
      });
      expect(refusal.run.report?.exitReason).toBe("completed");
      expect(refusal.run.report?.warnings.map((w) => w.message)).toContain(
        "the model refused to continue (stop_reason: refusal)",
      );

      const empty = await modelRun({ turns: [{ content: [], stopReason: "end_turn" }] });
      expect(empty.run.report?.exitReason).toBe("completed");
      expect(empty.run.report?.outcome).toBe("no_changes");

      const paused = await modelRun({
        turns: [
          fake.text("thinking…", { stopReason: "pause_turn" }),
          fake.toolUse("Bash", { command: "echo resumed" }),
          fake.text("done"),
        ],
      });
      expect(paused.run.report?.exitReason).toBe("completed");
      expect(paused.run.text(0)).toBe("resumed");

      const full = await modelRun({
        turns: [
          fake.toolUse("Bash", { command: "echo one" }),
          fake.text("", { stopReason: "model_context_window_exceeded" as never }),
        ],
      });
      expect(full.run.report?.exitReason).toBe("context_window");
      expect(full.run.report?.error?.message).toMatch(/context window/);
    },
  );

  test("M11", "a model looping on a failing call is stopped by the turn cap, with its record", async () => {
    const { run, sent } = await modelRun({
      handler: () => fake.toolUse("Bash", { command: "false" }),
      config: { maxTurns: 6 },
    });
    expect(run.report?.exitReason).toBe("max_turns");
    expect(run.exitCode).toBe(5);
    expect(run.report?.outcome).toBe("stopped");
    expect(run.calls.length).toBe(6);
    expect(sent.length).toBe(6);
    // Before the last turn the model was told to wrap up.
    expect(JSON.stringify(sent.at(-1)?.body.messages.at(-1))).toMatch(/about to reach its limit/);
  });

  test("M12", "'done' with an empty patch is outcome no_changes", async () => {
    const { run } = await modelRun({
      turns: [
        fake.toolUse("Read", { file_path: "/workspace/a.txt" }),
        fake.text("All done! I fixed everything."),
      ],
    });
    expect(run.report?.exitReason).toBe("completed");
    expect(run.report?.outcome).toBe("no_changes");
    expect(run.report?.patch.empty).toBe(true);
    expect(run.patch).toBe("");
  });

  checkTable();
});
