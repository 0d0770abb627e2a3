/**
 * AnthropicDriver with the real @anthropic-ai/sdk against the fake Messages API on 127.0.0.1:
 * streaming assembly, prompt-cache markers, retries (429 / spend limit / 529 / 5xx / broken streams),
 * fail-fast errors without the key in them, max_tokens truncation, stop reasons, and the deadline.
 */
import { createServer } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  AnthropicDriver,
  redactSecret,
  type AnthropicDriverOptions,
} from "../../../src/runner/model/anthropic-driver.js";
import { parseRetryAfter } from "../../../src/runner/model/api-errors.js";
import { ModelApiError, type TurnRequest } from "../../../src/runner/model/driver.js";
import {
  fake,
  sentCredential,
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeTurn,
} from "../../support/fake-anthropic.js";
import { until } from "../../support/until.js";

const API_KEY = "sk-ant-api03-unit-test-key-0123456789abcdefghij";
const MODEL = "claude-sonnet-5-5";

const TOOLS: Anthropic.Tool[] = [
  {
    name: "Read",
    description: "Read a file",
    input_schema: { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] },
  },
  {
    name: "Edit",
    description: "Edit a file",
    input_schema: {
      type: "object",
      properties: {
        file_path: { type: "string" },
        old_string: { type: "string" },
        new_string: { type: "string" },
      },
      required: ["file_path", "old_string", "new_string"],
    },
  },
  {
    name: "Bash",
    description: "Run a command",
    input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
];

const servers: FakeAnthropic[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

interface Harness {
  server: FakeAnthropic;
  driver: AnthropicDriver;
  /** Waits the driver asked for (the injected sleep returns at once). */
  delays: number[];
  logs: string[];
}

async function setup(turns: FakeTurn[], options: Partial<AnthropicDriverOptions> = {}): Promise<Harness> {
  const server = await startFakeAnthropic({ turns, apiKey: API_KEY });
  servers.push(server);
  const delays: number[] = [];
  const logs: string[] = [];
  const driver = new AnthropicDriver({
    apiKey: API_KEY,
    baseURL: server.url,
    model: MODEL,
    maxTokens: 4_096,
    logger: (line) => logs.push(line),
    sleep: async (ms) => {
      delays.push(ms);
    },
    random: () => 0.5,
    ...options,
  });
  return { server, driver, delays, logs };
}

function turnRequest(overrides: Partial<TurnRequest> = {}): TurnRequest {
  return {
    system: "You are agent-ci. The repository is at /workspace.",
    messages: [{ role: "user", content: "Fix the failing test." }],
    tools: TOOLS,
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function expectModelError(promise: Promise<unknown>): Promise<ModelApiError> {
  const error: unknown = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ModelApiError);
  return error as ModelApiError;
}

function toolUses(content: Anthropic.Beta.BetaContentBlockParam[]): Anthropic.Beta.BetaToolUseBlockParam[] {
  return content.filter((block): block is Anthropic.Beta.BetaToolUseBlockParam => block.type === "tool_use");
}

const editInput = {
  file_path: "/workspace/src/sum.ts",
  old_string: 'return a - b; // "quoted" ünïcødé 🚀',
  new_string: "return a + b;",
};

describe("AnthropicDriver: normal turns", () => {
  it("assembles a tool_use whose input JSON arrives in many small deltas", async () => {
    const { server, driver } = await setup([
      {
        content: [
          { type: "text", text: "I'll fix the subtraction." },
          { type: "tool_use", id: "toolu_edit", name: "Edit", input: editInput },
        ],
        chunkSize: 3,
        usage: {
          input_tokens: 1_234,
          output_tokens: 56,
          cache_creation_input_tokens: 900,
          cache_read_input_tokens: 4_000,
        },
      },
    ]);

    const turn = await driver.nextTurn(turnRequest());

    expect(turn.content).toEqual([
      { type: "text", text: "I'll fix the subtraction." },
      { type: "tool_use", id: "toolu_edit", name: "Edit", input: editInput },
    ]);
    expect(turn.stopReason).toBe("tool_use");
    expect(turn.usage).toEqual({
      inputTokens: 1_234,
      outputTokens: 56,
      cacheCreationInputTokens: 900,
      cacheReadInputTokens: 4_000,
    });
    expect(turn.model).toBe(MODEL);
    expect(turn.attempts).toBe(1);
    expect(turn.requestId).toMatch(/^req_/);
    expect(turn.truncatedToolUse).toBeUndefined();
    expect(server.messagesRequests()).toHaveLength(1);
  });

  it("returns parallel tool_use blocks in order with their own ids", async () => {
    const { driver } = await setup([
      fake.toolUses(
        [
          { name: "Read", input: { file_path: "/workspace/a.ts" } },
          { name: "Read", input: { file_path: "/workspace/b.ts" } },
          { name: "Bash", input: { command: "npm test -- --run" } },
        ],
        "Reading both files and running the tests.",
      ),
    ]);

    const turn = await driver.nextTurn(turnRequest());
    const tools = toolUses(turn.content);

    expect(tools.map((tool) => [tool.name, tool.input])).toEqual([
      ["Read", { file_path: "/workspace/a.ts" }],
      ["Read", { file_path: "/workspace/b.ts" }],
      ["Bash", { command: "npm test -- --run" }],
    ]);
    expect(new Set(tools.map((tool) => tool.id)).size).toBe(3);
  });

  it("sends the system prompt, tools, messages and key, with prompt-cache breakpoints", async () => {
    const { server, driver } = await setup([fake.text("Done.")]);
    const request = turnRequest();
    const messagesBefore = structuredClone(request.messages);

    await driver.nextTurn(request);

    const [sent] = server.messagesRequests();
    expect(sent && sentCredential(sent)).toBe(API_KEY);
    expect(sent?.headers["anthropic-version"]).toBeTruthy();
    expect(sent?.body).toMatchObject({ model: MODEL, max_tokens: 4_096, stream: true });
    expect(sent?.body.system).toEqual([
      {
        type: "text",
        text: "You are agent-ci. The repository is at /workspace.",
        cache_control: { type: "ephemeral" },
      },
    ]);
    const tools = sent?.body.tools as Anthropic.Tool[];
    expect(tools.map((tool) => tool.name)).toEqual(["Read", "Edit", "Bash"]);
    expect(tools.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
    expect(tools.slice(0, -1).every((tool) => tool.cache_control === undefined)).toBe(true);
    expect(sent?.body.messages).toEqual([
      {
        role: "user",
        content: [{ type: "text", text: "Fix the failing test.", cache_control: { type: "ephemeral" } }],
      },
    ]);
    expect(request.messages).toEqual(messagesBefore);
    expect(TOOLS.every((tool) => tool.cache_control === undefined)).toBe(true);
  });

  it("returns content the API accepts back: a second turn answering each tool_use passes the API's checks", async () => {
    const { server, driver } = await setup([
      fake.toolUses([
        { name: "Read", input: { file_path: "/workspace/a.ts" } },
        { name: "Read", input: { file_path: "/workspace/b.ts" } },
      ]),
      fake.text("All good."),
    ]);
    const request = turnRequest();
    const first = await driver.nextTurn(request);
    const results: Anthropic.ToolResultBlockParam[] = toolUses(first.content).map((tool) => ({
      type: "tool_result",
      tool_use_id: tool.id,
      content: "file contents",
    }));

    const second = await driver.nextTurn({
      ...request,
      messages: [
        ...request.messages,
        { role: "assistant", content: first.content },
        { role: "user", content: results },
      ],
    });

    expect(second.stopReason).toBe("end_turn");
    const sent = server.messagesRequests()[1]?.body.messages ?? [];
    expect(sent).toHaveLength(3);
    const lastBlocks = sent[2]?.content as Anthropic.ToolResultBlockParam[];
    expect(lastBlocks.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
    expect(lastBlocks[0]?.cache_control).toBeUndefined();
  });

  it("keeps thinking blocks with their signature and asks for adaptive thinking on current models", async () => {
    const { server, driver } = await setup(
      [
        {
          content: [
            { type: "thinking", thinking: "The bug is in sum().", signature: "sig-123" },
            { type: "text", text: "Fixed." },
          ],
        },
      ],
      { thinkingBudget: 8_000 },
    );

    const turn = await driver.nextTurn(turnRequest());

    expect(turn.content[0]).toEqual({
      type: "thinking",
      thinking: "The bug is in sum().",
      signature: "sig-123",
    });
    expect(server.messagesRequests()[0]?.body.thinking).toEqual({ type: "adaptive" });
  });

  it("sends a manual thinking budget to models that take one", async () => {
    const { server, driver } = await setup([fake.text("ok")], {
      model: "claude-sonnet-4-5-20250929",
      maxTokens: 16_000,
      thinkingBudget: 8_000,
    });
    await driver.nextTurn(turnRequest());
    expect(server.messagesRequests()[0]?.body.thinking).toEqual({ type: "enabled", budget_tokens: 8_000 });
  });

  it("passes tool input with wrong types or extra keys through unchanged for the pipeline to validate", async () => {
    const input = { file_path: 42, extra: true, nested: { deep: [1, 2] } };
    const { driver } = await setup([fake.toolUse("Read", input)]);
    const turn = await driver.nextTurn(turnRequest());
    expect(toolUses(turn.content)[0]?.input).toEqual(input);
    expect(turn.invalidToolInputs).toBeUndefined();
  });

  it("keeps a tool_use whose input is JSON but not an object with input {} and says why, so it can be answered with an error", async () => {
    const { driver } = await setup([
      { content: [{ type: "tool_use", id: "toolu_bad", name: "Bash", input: {}, rawJson: '["ls", "-la"]' }] },
    ]);
    const turn = await driver.nextTurn(turnRequest());
    expect(toolUses(turn.content)).toEqual([{ type: "tool_use", id: "toolu_bad", name: "Bash", input: {} }]);
    expect(turn.invalidToolInputs?.toolu_bad).toMatch(/not an object/);
  });

  it("treats tool input that is not JSON at all as a broken stream and asks again", async () => {
    const { server, driver } = await setup([
      { content: [{ type: "tool_use", name: "Bash", input: {}, rawJson: '{"command": "ls" "-la"}' }] },
      fake.toolUse("Bash", { command: "ls -la" }),
    ]);
    const turn = await driver.nextTurn(turnRequest());
    expect(toolUses(turn.content).map((tool) => tool.input)).toEqual([{ command: "ls -la" }]);
    expect(turn.attempts).toBe(2);
    expect(server.messagesRequests()).toHaveLength(2);
  });

  it.each(["refusal", "pause_turn", "model_context_window_exceeded", "end_turn"] as const)(
    "passes stop_reason %s through",
    async (stopReason) => {
      const { driver } = await setup([{ content: [{ type: "text", text: "..." }], stopReason }]);
      const turn = await driver.nextTurn(turnRequest());
      expect(turn.stopReason).toBe(stopReason);
      expect(turn.attempts).toBe(1);
    },
  );

  it("passes a refusal's text through", async () => {
    const { driver } = await setup([fake.refusal("I can't help with that.")]);
    const turn = await driver.nextTurn(turnRequest());
    expect(turn).toMatchObject({
      stopReason: "refusal",
      content: [{ type: "text", text: "I can't help with that." }],
    });
  });
});

describe("AnthropicDriver: what a stream has brought so far (onStream)", () => {
  it("tells the output tokens the API reported and the characters of text, thinking and tool input, as they come", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const thinking = "t".repeat(40);
    const text = "x".repeat(100);
    const input = { command: "npm test -- --run" };
    const { driver } = await setup([
      {
        content: [
          { type: "thinking", thinking },
          { type: "text", text },
          { type: "tool_use", name: "Bash", input },
        ],
        chunkSize: 10,
        usage: { output_tokens: 321 },
        // Held after the thinking and half the text: 4 + 5 deltas of 10 characters.
        hold: { afterDeltas: 9, until: held },
      },
    ]);
    const told: Array<{ reportedTokens: number; characters: number }> = [];
    const turn = driver.nextTurn(turnRequest({ onStream: (sofar) => told.push(sofar) }));
    // Mid-stream: the characters so far, and message_start's count (the API's running count comes at the end).
    await until("the held stream's first deltas", () => told.at(-1)?.characters === 90, 10_000);
    expect(told.at(-1)).toEqual({ reportedTokens: 1, characters: 90 });
    release();
    await turn;
    expect(told[0]).toEqual({ reportedTokens: 0, characters: 0 });
    expect(told.at(-1)).toEqual({
      reportedTokens: 321,
      characters: thinking.length + text.length + JSON.stringify(input).length,
    });
    // Each a snapshot, counting up.
    for (const [i, sofar] of told.entries())
      if (i > 0) expect(sofar.characters).toBeGreaterThanOrEqual(told[i - 1]!.characters);
  });

  it("starts again from nothing when a broken stream is asked for again", async () => {
    const { driver } = await setup([
      fake.cutMidToolUse("Bash", { command: "x".repeat(80) }),
      fake.text("done"),
    ]);
    const told: Array<{ reportedTokens: number; characters: number }> = [];
    const turn = await driver.nextTurn(turnRequest({ onStream: (sofar) => told.push(sofar) }));
    expect(turn.attempts).toBe(2);
    const restarts = told.flatMap((sofar, i) =>
      sofar.characters === 0 && sofar.reportedTokens === 0 ? [i] : [],
    );
    expect(restarts).toHaveLength(2);
    expect(told[restarts[1]! - 1]!.characters).toBeGreaterThan(0);
    expect(told.at(-1)).toEqual({ reportedTokens: 20, characters: "done".length });
  });
});

describe("AnthropicDriver: max_tokens", () => {
  it("drops a tool_use whose input JSON was cut off and flags the turn", async () => {
    const { driver, logs } = await setup([
      fake.truncatedToolUse("Edit", editInput, 30, "Editing the file now."),
    ]);

    const turn = await driver.nextTurn(turnRequest());

    expect(turn.stopReason).toBe("max_tokens");
    expect(turn.truncatedToolUse).toBe(true);
    expect(turn.truncatedToolNames).toEqual(["Edit"]);
    expect(turn.content).toEqual([{ type: "text", text: "Editing the file now." }]);
    expect(logs.some((line) => line.includes("max_tokens"))).toBe(true);
  });

  it("lets the loop retry a truncated turn with more tokens", async () => {
    const { server, driver } = await setup([
      fake.truncatedToolUse("Edit", editInput, 10),
      fake.toolUse("Edit", editInput),
    ]);

    const first = await driver.nextTurn(turnRequest());
    expect(first.content).toEqual([]);
    const second = await driver.nextTurn(turnRequest({ maxTokens: 16_000 }));

    expect(toolUses(second.content)[0]?.input).toEqual(editInput);
    expect(server.messagesRequests().map((request) => request.body.max_tokens)).toEqual([4_096, 16_000]);
  });

  it("keeps a complete tool_use even when the turn stopped at max_tokens", async () => {
    const { driver } = await setup([
      { ...fake.toolUse("Read", { file_path: "/workspace/a.ts" }), stopReason: "max_tokens" },
    ]);
    const turn = await driver.nextTurn(turnRequest());
    expect(toolUses(turn.content)).toHaveLength(1);
    expect(turn.truncatedToolUse).toBeUndefined();
  });
});

describe("AnthropicDriver: rate limits", () => {
  it("waits at least retry-after seconds before retrying a 429", async () => {
    const { server, driver, delays } = await setup([
      fake.rateLimited({ retryAfterSeconds: 1 }),
      fake.text("ok"),
    ]);

    const turn = await driver.nextTurn(turnRequest());

    expect(turn.attempts).toBe(2);
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThanOrEqual(1_000);
    expect(delays[0]).toBeLessThan(1_200);
    expect(server.messagesRequests()).toHaveLength(2);
  });

  it("sleeps on the clock for retry-after-ms when no sleep is injected", async () => {
    const server = await startFakeAnthropic({
      turns: [fake.rateLimited({ retryAfterMs: 250 }), fake.text("ok")],
      apiKey: API_KEY,
    });
    servers.push(server);
    let retrying!: () => void;
    const waiting = new Promise<void>((resolve) => (retrying = resolve));
    const driver = new AnthropicDriver({
      apiKey: API_KEY,
      baseURL: server.url,
      model: MODEL,
      maxTokens: 1_024,
      logger: (line) => {
        if (line.includes("retrying in")) retrying();
      },
    });

    // Only the timers are fake: the requests still go to the server. The retry waits for the clock.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    try {
      const turn = driver.nextTurn(turnRequest());
      await waiting;
      const asked = Date.now();
      await vi.advanceTimersToNextTimerAsync();
      // retry-after-ms, plus the driver's jitter of up to 10 %.
      expect(Date.now() - asked).toBeGreaterThanOrEqual(250);
      expect(Date.now() - asked).toBeLessThanOrEqual(275);
      expect((await turn).attempts).toBe(2);
    } finally {
      vi.useRealTimers();
    }
    expect(server.messagesRequests()).toHaveLength(2);
  });

  it("prefers retry-after-ms over retry-after", () => {
    expect(parseRetryAfter(new Headers({ "retry-after": "5", "retry-after-ms": "1500" }))).toBe(1_500);
    expect(parseRetryAfter(new Headers({ "retry-after": "2" }))).toBe(2_000);
    expect(parseRetryAfter(new Headers({}))).toBeUndefined();
  });

  it("gives up after maxAttempts 429s with kind rate_limit", async () => {
    const { server, driver, delays } = await setup(
      [
        fake.rateLimited({ retryAfterSeconds: 1 }),
        fake.rateLimited({ retryAfterSeconds: 1 }),
        fake.rateLimited({ retryAfterSeconds: 1 }),
      ],
      { maxAttempts: 3 },
    );

    const error = await expectModelError(driver.nextTurn(turnRequest()));

    expect(error.kind).toBe("rate_limit");
    expect(error.status).toBe(429);
    expect(error.attempts).toBe(3);
    expect(error.message).toMatch(/gave up after 3 attempts/);
    expect(delays).toHaveLength(2);
    expect(server.messagesRequests()).toHaveLength(3);
  });

  it("does not retry a 429 that is a spend limit", async () => {
    const { server, driver, delays } = await setup([fake.spendLimited(), fake.text("never sent")]);

    const error = await expectModelError(driver.nextTurn(turnRequest()));

    expect(error.kind).toBe("spend_limit");
    expect(error.status).toBe(429);
    expect(error.message).toMatch(/usage limits/);
    expect(delays).toEqual([]);
    expect(server.messagesRequests()).toHaveLength(1);
  });

  it("recognises spend-limit wording even without an error code", async () => {
    const { server, driver } = await setup([
      fake.httpError(429, {
        type: "rate_limit_error",
        message: "Your organization has hit its monthly spend limit (enforced_spend_limit_reached).",
      }),
    ]);
    const error = await expectModelError(driver.nextTurn(turnRequest()));
    expect(error.kind).toBe("spend_limit");
    expect(server.messagesRequests()).toHaveLength(1);
  });

  it("ends the turn when retry-after is longer than it is willing to wait", async () => {
    const { server, driver, delays } = await setup([fake.rateLimited({ retryAfterSeconds: 3_600 })], {
      maxRetryAfterMs: 60_000,
    });
    const error = await expectModelError(driver.nextTurn(turnRequest()));
    expect(error.kind).toBe("rate_limit");
    expect(error.message).toMatch(/asked to wait 3600 s/);
    expect(delays).toEqual([]);
    expect(server.messagesRequests()).toHaveLength(1);
  });
});

describe("AnthropicDriver: overload and server errors", () => {
  it("retries 529, 500 and 503 with growing backoff, then succeeds", async () => {
    const { server, driver, delays, logs } = await setup(
      [fake.overloaded(), fake.serverError(500), fake.serverError(503), fake.text("finally")],
      { baseDelayMs: 100, maxDelayMs: 10_000 },
    );

    const turn = await driver.nextTurn(turnRequest());

    expect(turn.attempts).toBe(4);
    expect(turn.content).toEqual([{ type: "text", text: "finally" }]);
    // Equal jitter with random() = 0.5: 3/4 of 100, 200, 400 ms.
    expect(delays).toEqual([75, 150, 300]);
    expect(server.messagesRequests()).toHaveLength(4);
    expect(logs.filter((line) => line.includes("retrying"))).toHaveLength(3);
  });

  it("keeps backoff within [step/2, step] and under the cap", async () => {
    const randoms = [0, 0.999, 0.3];
    const { driver, delays } = await setup(
      [fake.overloaded(), fake.overloaded(), fake.overloaded(), fake.text("ok")],
      {
        baseDelayMs: 1_000,
        maxDelayMs: 3_000,
        random: () => randoms.shift() ?? 0,
      },
    );
    await driver.nextTurn(turnRequest());
    // Steps 1000, 2000, then 4000 capped at 3000; each wait is between half the step and the step.
    expect(delays[0]).toBe(500);
    expect(delays[1]).toBeGreaterThan(1_990);
    expect(delays[1]).toBeLessThanOrEqual(2_000);
    expect(delays[2]).toBe(1_950);
  });

  it("stops after maxAttempts overloads with kind overloaded", async () => {
    const { server, driver, delays } = await setup([
      fake.overloaded(),
      fake.overloaded(),
      fake.overloaded(),
      fake.overloaded(),
    ]);

    const error = await expectModelError(driver.nextTurn(turnRequest()));

    expect(error).toMatchObject({ kind: "overloaded", status: 529, attempts: 4 });
    expect(delays).toHaveLength(3);
    expect(server.messagesRequests()).toHaveLength(4);
  });

  it("ends with kind server after repeated 500s", async () => {
    const { driver } = await setup([fake.serverError(500), fake.serverError(500)], { maxAttempts: 2 });
    const error = await expectModelError(driver.nextTurn(turnRequest()));
    expect(error).toMatchObject({ kind: "server", status: 500, attempts: 2 });
  });

  it("obeys x-should-retry: false", async () => {
    const { server, driver } = await setup([
      fake.httpError(500, { type: "api_error", message: "do not retry this" }, { "x-should-retry": "false" }),
      fake.text("never sent"),
    ]);
    const error = await expectModelError(driver.nextTurn(turnRequest()));
    expect(error.kind).toBe("server");
    expect(server.messagesRequests()).toHaveLength(1);
  });

  it("retries after an overloaded_error event in the middle of the stream", async () => {
    const { server, driver } = await setup([
      {
        type: "stream_error",
        error: { type: "overloaded_error", message: "Overloaded" },
        message: fake.toolUse("Bash", { command: "rm -rf build" }),
      },
      fake.text("ok"),
    ]);
    const turn = await driver.nextTurn(turnRequest());
    expect(turn.content).toEqual([{ type: "text", text: "ok" }]);
    expect(turn.attempts).toBe(2);
    expect(server.messagesRequests()).toHaveLength(2);
  });

  it("retries when the API cannot be reached, then ends with kind connection", async () => {
    const port = await closedPort();
    const delays: number[] = [];
    const driver = new AnthropicDriver({
      apiKey: API_KEY,
      baseURL: `http://127.0.0.1:${port}`,
      model: MODEL,
      maxTokens: 1_024,
      maxAttempts: 2,
      sleep: async (ms) => {
        delays.push(ms);
      },
    });
    const error = await expectModelError(driver.nextTurn(turnRequest()));
    expect(error.kind).toBe("connection");
    expect(delays).toHaveLength(1);
    expect(error.message).not.toContain(API_KEY);
  });
});

describe("AnthropicDriver: broken streams", () => {
  it.each(["destroy", "end"] as const)(
    "retries the whole turn when the stream is cut mid-tool_use (%s), never returning the partial tool",
    async (mode) => {
      const { server, driver } = await setup([
        fake.cutMidToolUse("Bash", { command: "rm -rf / --no-preserve-root # partial" }, mode),
        fake.toolUse("Read", { file_path: "/workspace/package.json" }),
      ]);

      const turn = await driver.nextTurn(turnRequest());

      expect(turn.attempts).toBe(2);
      expect(toolUses(turn.content)).toEqual([
        {
          type: "tool_use",
          id: expect.any(String),
          name: "Read",
          input: { file_path: "/workspace/package.json" },
        },
      ]);
      expect(JSON.stringify(turn)).not.toContain("Bash");
      expect(server.messagesRequests()).toHaveLength(2);
    },
  );

  it.each(["bad_json", "not_sse", "binary"] as const)("retries after SSE garbage (%s)", async (variant) => {
    const { server, driver, logs } = await setup([fake.garbage(variant), fake.text("clean")]);

    const turn = await driver.nextTurn(turnRequest());

    expect(turn.content).toEqual([{ type: "text", text: "clean" }]);
    expect(turn.attempts).toBe(2);
    expect(server.messagesRequests()).toHaveLength(2);
    expect(logs.some((line) => line.includes("stream"))).toBe(true);
  });

  it("ends with kind stream when every attempt breaks", async () => {
    const { driver } = await setup(
      [fake.cutMidToolUse("Bash", { command: "make" }), fake.cutMidToolUse("Bash", { command: "make" })],
      { maxAttempts: 2 },
    );
    const error = await expectModelError(driver.nextTurn(turnRequest()));
    expect(error).toMatchObject({ kind: "stream", attempts: 2 });
  });

  it("retries a request that gets no response headers within requestTimeoutMs", async () => {
    const { server, driver } = await setup([{ type: "hang" }, fake.text("ok")], { requestTimeoutMs: 200 });
    const turn = await driver.nextTurn(turnRequest());
    expect(turn).toMatchObject({ attempts: 2, content: [{ type: "text", text: "ok" }] });
    expect(server.messagesRequests()).toHaveLength(2);
  });

  it("never logs the key while retrying, even when an error message carries it", async () => {
    const { driver, logs } = await setup([
      fake.httpError(529, { type: "overloaded_error", message: `Overloaded (key ${API_KEY})` }),
      fake.text("ok"),
    ]);
    await driver.nextTurn(turnRequest());
    expect(logs.some((line) => line.includes("Overloaded"))).toBe(true);
    expect(logs.join("\n")).not.toContain(API_KEY);
  });

  it("drops a stream that stalls and retries", async () => {
    const { driver } = await setup(
      [
        { type: "stall", message: fake.toolUse("Bash", { command: "sleep 1000" }), afterDeltas: 2 },
        fake.text("ok"),
      ],
      { streamIdleTimeoutMs: 300 },
    );
    const turn = await driver.nextTurn(turnRequest());
    expect(turn).toMatchObject({ attempts: 2, content: [{ type: "text", text: "ok" }] });
  });
});

describe("AnthropicDriver: errors that fail fast", () => {
  it("does not retry a 401 and never puts the key in the error, even when the API echoes it", async () => {
    const { server, driver, delays, logs } = await setup([
      fake.unauthorized(`invalid x-api-key: ${API_KEY}`),
      fake.text("never sent"),
    ]);

    const error = await expectModelError(driver.nextTurn(turnRequest()));

    expect(error.kind).toBe("auth");
    expect(error.status).toBe(401);
    expect(error.message).toMatch(/invalid x-api-key/);
    expect(error.message).not.toContain(API_KEY);
    expect(error.message).not.toContain(API_KEY.slice(0, 20));
    expect(String(error.stack)).not.toContain(API_KEY);
    expect(JSON.stringify(error)).not.toContain(API_KEY);
    expect(logs.join("\n")).not.toContain(API_KEY);
    expect(delays).toEqual([]);
    expect(server.messagesRequests()).toHaveLength(1);
    const [sent] = server.messagesRequests();
    expect(sent && sentCredential(sent)).toBe(API_KEY);
  });

  it("rejects a wrong key with kind auth (the fake checks the key)", async () => {
    const server = await startFakeAnthropic({ turns: [fake.text("never")], apiKey: API_KEY });
    servers.push(server);
    const wrongKey = "sk-ant-api03-wrong-key-abcdefghijklmnopqrstuvwxyz";
    const driver = new AnthropicDriver({
      apiKey: wrongKey,
      baseURL: server.url,
      model: MODEL,
      maxTokens: 1_024,
    });
    const error = await expectModelError(driver.nextTurn(turnRequest()));
    expect(error.kind).toBe("auth");
    expect(error.message).not.toContain(wrongKey);
    expect(server.messagesRequests()).toHaveLength(1);
  });

  it("does not retry a 403", async () => {
    const { server, driver } = await setup([fake.forbidden(), fake.text("never")]);
    const error = await expectModelError(driver.nextTurn(turnRequest()));
    expect(error).toMatchObject({ kind: "auth", status: 403 });
    expect(server.messagesRequests()).toHaveLength(1);
  });

  it("does not retry a 400 prompt-too-long and keeps the API's reason", async () => {
    const { server, driver, delays } = await setup([fake.promptTooLong(), fake.text("never")]);
    const error = await expectModelError(driver.nextTurn(turnRequest()));
    expect(error).toMatchObject({ kind: "invalid_request", status: 400, attempts: 1 });
    expect(error.message).toMatch(/prompt is too long/);
    expect(error.message).not.toContain(API_KEY);
    expect(delays).toEqual([]);
    expect(server.messagesRequests()).toHaveLength(1);
  });

  it("surfaces the API's own 400 when the conversation is malformed (missing tool_result)", async () => {
    const { server, driver } = await setup([fake.text("never")]);
    const error = await expectModelError(
      driver.nextTurn(
        turnRequest({
          messages: [
            { role: "user", content: "go" },
            {
              role: "assistant",
              content: [
                { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/workspace/a" } },
              ],
            },
            { role: "user", content: "no result here" },
          ],
        }),
      ),
    );
    expect(error.kind).toBe("invalid_request");
    expect(error.message).toMatch(/tool_use` ids were found without `tool_result`/);
    expect(server.remainingTurns()).toBe(1);
  });
});

describe("AnthropicDriver: deadline and cancel", () => {
  it("does not sleep past the wall-clock deadline", async () => {
    const clock = 1_000_000;
    const { server, driver, delays } = await setup(
      [fake.rateLimited({ retryAfterSeconds: 30 }), fake.text("never")],
      {
        now: () => clock,
        wallClockDeadline: clock + 10_000,
      },
    );

    const error = await expectModelError(driver.nextTurn(turnRequest()));

    expect(error.kind).toBe("rate_limit");
    expect(error.message).toMatch(/wall-clock limit/);
    expect(delays).toEqual([]);
    expect(server.messagesRequests()).toHaveLength(1);
  });

  it("retries while the waits fit before the deadline", async () => {
    const clock = { now: 5_000_000 };
    const { driver, delays } = await setup([fake.overloaded(), fake.overloaded(), fake.text("ok")], {
      now: () => clock.now,
      wallClockDeadline: clock.now + 2_000,
      baseDelayMs: 1_000,
      sleep: async (ms) => {
        delays.push(ms);
        clock.now += ms;
      },
    });
    const error = await expectModelError(driver.nextTurn(turnRequest()));
    // First wait 750 ms fits; the second (1500 ms) would end after the deadline.
    expect(delays).toEqual([750]);
    expect(error.kind).toBe("overloaded");
  });

  it("stops waiting and rethrows the abort reason when the run is cancelled", async () => {
    const server = await startFakeAnthropic({
      turns: [fake.rateLimited({ retryAfterSeconds: 30 }), fake.text("never")],
      apiKey: API_KEY,
    });
    servers.push(server);
    const controller = new AbortController();
    const reason = new Error("cancelled by SIGINT");
    // Cancelled once the driver is waiting out the 30 s the API asked for.
    const driver = new AnthropicDriver({
      apiKey: API_KEY,
      baseURL: server.url,
      model: MODEL,
      maxTokens: 1_024,
      logger: (line) => {
        if (line.includes("retrying in")) controller.abort(reason);
      },
    });

    // Had it waited out the 30 s, it would have asked again and got "never".
    await expect(driver.nextTurn(turnRequest({ signal: controller.signal }))).rejects.toBe(reason);
    expect(server.messagesRequests()).toHaveLength(1);
  });

  it("aborts a stream in flight", async () => {
    const controller = new AbortController();
    // Cancelled once the request is at the server, which then streams one delta and stalls.
    const server = await startFakeAnthropic({
      apiKey: API_KEY,
      handler: () => {
        queueMicrotask(() => controller.abort(new Error("timeout")));
        return { type: "stall", afterDeltas: 1 };
      },
    });
    servers.push(server);
    const driver = new AnthropicDriver({
      apiKey: API_KEY,
      baseURL: server.url,
      model: MODEL,
      maxTokens: 1_024,
    });
    await expect(driver.nextTurn(turnRequest({ signal: controller.signal }))).rejects.toThrow("timeout");
  });
});

/** The check made before the sandbox starts, as the run makes it: through a driver holding this key. */
function checkKey(apiKey: string, baseURL: string, options: { model?: string; timeoutMs?: number } = {}) {
  const driver = new AnthropicDriver({ apiKey, baseURL, model: MODEL, maxTokens: 4_096, logger: () => {} });
  return driver.checkCredentials(options);
}

describe("the credential check (checkCredentials)", () => {
  it("resolves ok for a good key and a known model", async () => {
    const server = await startFakeAnthropic({ apiKey: API_KEY });
    servers.push(server);
    await expect(checkKey(API_KEY, server.url, { model: MODEL })).resolves.toEqual({
      status: "ok",
    });
    await expect(checkKey(API_KEY, server.url)).resolves.toEqual({ status: "ok" });
    expect(server.requests.map((request) => request.path)).toEqual([`/v1/models/${MODEL}`, "/v1/models"]);
  });

  it("throws kind auth for a rejected key, without the key in the message", async () => {
    const server = await startFakeAnthropic({ apiKey: API_KEY });
    servers.push(server);
    const wrongKey = "sk-ant-api03-not-the-right-one-0123456789";
    const error = await expectModelError(checkKey(wrongKey, server.url));
    expect(error.kind).toBe("auth");
    expect(error.message).not.toContain(wrongKey);
    expect(server.requests).toHaveLength(1);
  });

  it("resolves unverified when the API cannot be reached", async () => {
    const port = await closedPort();
    const result = await checkKey(API_KEY, `http://127.0.0.1:${port}`, { timeoutMs: 2_000 });
    expect(result.status).toBe("unverified");
  });
});

describe("fake Messages API", () => {
  it("answers a non-streaming request with the message as JSON", async () => {
    const server = await startFakeAnthropic({
      turns: [fake.toolUse("Read", { file_path: "/workspace/a.ts" }, { id: "toolu_1" })],
    });
    servers.push(server);
    const client = new Anthropic({ apiKey: API_KEY, baseURL: server.url, maxRetries: 0 });
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(message.content).toEqual([
      {
        type: "tool_use",
        id: "toolu_1",
        name: "Read",
        input: { file_path: "/workspace/a.ts" },
        caller: { type: "direct" },
      },
    ]);
    expect(message.stop_reason).toBe("tool_use");
  });

  it("rejects more than 4 cache_control breakpoints as the API does, without using a turn", async () => {
    const server = await startFakeAnthropic({ turns: [fake.text("unused")] });
    servers.push(server);
    const client = new Anthropic({ apiKey: API_KEY, baseURL: server.url, maxRetries: 0 });
    const marked = (text: string): Anthropic.TextBlockParam => ({
      type: "text",
      text,
      cache_control: { type: "ephemeral" },
    });
    const request = client.messages.create({
      model: MODEL,
      max_tokens: 100,
      system: [marked("a"), marked("b")],
      messages: [{ role: "user", content: [marked("c"), marked("d"), marked("e")] }],
    });
    await expect(request).rejects.toThrow(/maximum of 4 blocks with cache_control/);
    expect(server.remainingTurns()).toBe(1);
  });

  it("answers a request past the script with a 400 that names the request", async () => {
    const server = await startFakeAnthropic({ turns: [] });
    servers.push(server);
    const client = new Anthropic({ apiKey: API_KEY, baseURL: server.url, maxRetries: 0 });
    const request = client.messages.create({
      model: MODEL,
      max_tokens: 10,
      messages: [{ role: "user", content: "x" }],
    });
    await expect(request).rejects.toThrow(/no scripted turn left for messages request #0/);
  });

  it("lets a handler script turns from the request", async () => {
    const server = await startFakeAnthropic({
      handler: (request, index) => fake.text(`turn ${index} saw ${request.body.messages.length} message(s)`),
    });
    servers.push(server);
    const driver = new AnthropicDriver({
      apiKey: API_KEY,
      baseURL: server.url,
      model: MODEL,
      maxTokens: 100,
    });
    const turn = await driver.nextTurn(turnRequest());
    expect(turn.content).toEqual([{ type: "text", text: "turn 0 saw 1 message(s)" }]);
  });
});

describe("the API's context edits", () => {
  /** A conversation of `n` Bash calls with 2,000-character results. */
  function longConversation(n: number): TurnRequest["messages"] {
    const messages: TurnRequest["messages"] = [{ role: "user", content: "Run the commands." }];
    for (let i = 0; i < n; i++) {
      messages.push({
        role: "assistant",
        content: [{ type: "tool_use", id: `toolu_${i}`, name: "Bash", input: { command: `echo ${i}` } }],
      });
      messages.push({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: "x".repeat(2_000) }],
      });
    }
    return messages;
  }

  it("sends clear_tool_uses through the beta endpoint with its beta, and reports what the API cleared", async () => {
    const { server, driver } = await setup([fake.text("Done.")]);
    const turn = await driver.nextTurn(
      turnRequest({
        messages: longConversation(5),
        contextEdits: {
          betas: ["context-management-2025-06-27"],
          edits: [
            {
              type: "clear_tool_uses_20250919",
              trigger: { type: "input_tokens", value: 1_000 },
              keep: { type: "tool_uses", value: 2 },
            },
          ],
        },
      }),
    );
    const [request] = server.messagesRequests();
    expect(request?.headers["anthropic-beta"]).toContain("context-management-2025-06-27");
    expect(request?.body).toMatchObject({
      context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
    });
    expect(turn.contextEdits).toHaveLength(1);
    const [edit] = turn.contextEdits ?? [];
    expect(edit).toMatchObject({ strategy: "api_clear_tool_uses", clearedToolResults: 3 });
    expect(edit!.tokensAfter).toBeLessThan(edit!.tokensBefore);
  });

  it("sends a plain request, without betas, when the turn carries no edits", async () => {
    const { server, driver } = await setup([fake.text("Done.")]);
    const turn = await driver.nextTurn(turnRequest());
    const [request] = server.messagesRequests();
    expect(request?.headers["anthropic-beta"]).toBeUndefined();
    expect(request?.body).not.toHaveProperty("context_management");
    expect(turn.contextEdits).toBeUndefined();
  });

  it("hands back a compaction block (stop_reason compaction when paused) that the next request sends verbatim", async () => {
    const { server, driver } = await setup([fake.text("Continuing from the summary.")]);
    const compact = (trigger: number, pause: boolean) => ({
      betas: ["compact-2026-01-12"],
      edits: [
        {
          type: "compact_20260112" as const,
          trigger: { type: "input_tokens" as const, value: trigger },
          pause_after_compaction: pause,
        },
      ],
    });
    const messages = longConversation(5);
    const paused = await driver.nextTurn(turnRequest({ messages, contextEdits: compact(1_000, true) }));
    expect(paused.stopReason).toBe("compaction");
    expect(paused.content).toHaveLength(1);
    const block = paused.content[0] as Anthropic.Beta.BetaCompactionBlockParam;
    expect(block.type).toBe("compaction");
    expect(block.content).toMatch(/^Summary of \d+ earlier messages/);
    expect(block.signature).toBeTruthy();
    expect(paused.contextEdits).toEqual([expect.objectContaining({ strategy: "api_compaction" })]);
    expect(paused.contextEdits![0]!.tokensBefore).toBeGreaterThan(2_000);

    // The block as received is accepted; the fake refuses one whose summary was changed.
    const next = [...messages, { role: "assistant" as const, content: paused.content }];
    const turn = await driver.nextTurn(
      turnRequest({ messages: next, contextEdits: compact(100_000, false) }),
    );
    expect(turn.content).toEqual([{ type: "text", text: "Continuing from the summary." }]);
    const tampered = [
      ...messages,
      { role: "assistant" as const, content: [{ ...block, content: "A different summary." }] },
    ];
    const error = await expectModelError(
      driver.nextTurn(turnRequest({ messages: tampered, contextEdits: compact(100_000, false) })),
    );
    expect(error.kind).toBe("invalid_request");
    expect(error.message).toMatch(/compaction block/);
    expect(server.messagesRequests()).toHaveLength(3);
  });
});

describe("redactSecret", () => {
  it("removes the configured key and anything shaped like an Anthropic key", () => {
    expect(redactSecret(`key ${API_KEY} and sk-ant-admin01-abcdefghijklmnop`, API_KEY)).toBe(
      "key *** and ***",
    );
  });
});

/** A port on 127.0.0.1 with nothing listening. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}
