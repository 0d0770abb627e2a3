// The first turn asked ahead (src/runner/run/first-turn.ts): the loop takes its answer when its own first
// request is the one asked, asks again (the early one aborted) when it is not, and a run whose first request
// needs the sandbox does not ask ahead.
import { describe, expect, it, vi } from "vitest";
import {
  firstTurnRequest,
  newLoopState,
  runAgentLoop,
  type Conversation,
} from "../../../src/runner/loop/agent-loop.js";
import { EventSink } from "../../../src/runner/loop/events.js";
import { allowAll, ToolPipeline } from "../../../src/runner/loop/pipeline.js";
import type { AssistantTurn, Driver, TurnRequest } from "../../../src/runner/model/driver.js";
import { parseRunConfig } from "../../../src/runner/config.js";
import { FirstTurnAhead, overlapBlocker } from "../../../src/runner/run/first-turn.js";
import { capabilitiesFor, firstTurnWaits } from "../../../src/runner/capabilities/index.js";
import { RunBudget } from "../../../src/runner/loop/run-budget.js";
import { RunState } from "../../../src/tools/state.js";
import { FakeSandbox } from "../../support/fake-sandbox.js";

const USAGE = { inputTokens: 10, outputTokens: 5, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };

/** A model that answers every request with text, and keeps each request it got. */
class TextModel implements Driver {
  readonly name = "anthropic";
  readonly requests: TurnRequest[] = [];
  /** Resolves once the first answer was given. */
  readonly answered: Promise<void>;
  private give!: () => void;
  constructor() {
    this.answered = new Promise((resolve) => (this.give = resolve));
  }
  async nextTurn(request: TurnRequest): Promise<AssistantTurn> {
    this.requests.push(request);
    this.give();
    return {
      content: [{ type: "text", text: "done" }],
      stopReason: "end_turn",
      usage: USAGE,
      model: "m",
      attempts: 1,
    };
  }
  costOf(): number {
    return 0.01;
  }
}

function loop(driver: Driver, conversation: Conversation, ahead: FirstTurnAhead) {
  const sandbox = new FakeSandbox();
  const budget = new RunBudget(
    { deadline: Date.now() + 3_600_000, maxDenials: 25 },
    new AbortController().signal,
  );
  const pipeline = new ToolPipeline({
    allTools: [],
    enabledTools: [],
    sandbox,
    state: new RunState(),
    gate: allowAll,
  });
  const events = new EventSink(undefined, (text) => text);
  const services = { driver, pipeline, sandbox, events, budget, runId: "r", runStart: 0, askedAhead: ahead };
  return runAgentLoop(services, newLoopState(conversation, budget));
}

const conversation = (prompt: string): Conversation => ({
  system: "system",
  prompt,
  preamble: ["<system-reminder>memory</system-reminder>"],
  tools: [{ name: "Read", description: "reads", input_schema: { type: "object" } }],
  maxTurns: 5,
  maxTokens: 1000,
});

/** A first turn asked ahead with `prompt` on a text-only model, and the lines it logs. */
function askedAhead(prompt: string) {
  const model = new TextModel();
  const logs: string[] = [];
  const ahead = new FirstTurnAhead(
    model,
    firstTurnRequest(conversation(prompt)),
    new AbortController().signal,
    (l) => logs.push(l),
  );
  return { model, logs, ahead };
}

describe("the first turn asked ahead", () => {
  it("is the loop's first turn when the loop's request is the one asked", async () => {
    const { model, logs, ahead } = askedAhead("go");
    const result = await loop(model, conversation("go"), ahead);
    expect(result.exit).toBe("completed");
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.signal.aborted).toBe(false);
    expect(ahead.record).toEqual({ overlapped: true });
    ahead.drop("the run ended");
    expect(model.requests[0]?.signal.aborted).toBe(false);
    expect(logs).toEqual([]);
  });

  it("is aborted, and the turn asked again, when the loop's request differs", async () => {
    const { model, logs, ahead } = askedAhead("go");
    await loop(model, conversation("something else"), ahead);
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]?.signal.aborted).toBe(true);
    expect(model.requests[1]?.signal.aborted).toBe(false);
    expect(ahead.record.overlapped).toBe(false);
    expect(ahead.record.reason).toMatch(/differs/);
    expect(logs.join("\n")).toMatch(/not used/);
  });

  it("records the model's time until its answer came, not the time the loop took to take it", async () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    try {
      const { model, ahead } = askedAhead("go");
      await model.answered;
      // The sandbox takes 5 s more to open after the answer came.
      vi.advanceTimersByTime(5000);
      const result = await loop(model, conversation("go"), ahead);
      expect(result.turns[0]?.durationMs).toBe(0);
      expect(result.apiMs).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("is aborted with the run's signal", () => {
    const model = new TextModel();
    const run = new AbortController();
    new FirstTurnAhead(model, firstTurnRequest(conversation("go")), run.signal, () => {});
    run.abort(new Error("cancelled"));
    expect(model.requests[0]?.signal.aborted).toBe(true);
  });
});

describe("which runs ask ahead", () => {
  const base = { workspace: ".", prompt: "x", authToken: ["t", "test"].join("-") };
  it("a model run without MCP servers does", () => {
    expect(overlapBlocker(parseRunConfig(base), [])).toBeUndefined();
  });
  it("a run with MCP servers does not: their tools are in the first request and they start in the sandbox", () => {
    const servers = JSON.stringify({ mcpServers: { s: { command: "srv" } } });
    const waits = firstTurnWaits(capabilitiesFor(parseRunConfig({ ...base, mcpConfig: [servers] })));
    expect(overlapBlocker(parseRunConfig(base), waits)).toMatch(/MCP servers' tools .* start in the sandbox/);
    expect(firstTurnWaits(capabilitiesFor(parseRunConfig(base)))).toEqual([]);
  });
  it("a scripted run does not", () => {
    expect(overlapBlocker(parseRunConfig({ workspace: ".", script: "s.json" }), [])).toMatch(/scripted/);
  });
});
