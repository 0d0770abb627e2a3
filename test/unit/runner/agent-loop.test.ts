// The agent loop with a scripted model and an in-memory sandbox: several loops at once share one run budget
// (money and denials hold across all of them, each charge names its spender), each conversation's events
// carry its own parent_tool_use_id, and a retried request asks the same turn again without counting one.
import { z } from "zod";
import { describe, expect, it } from "vitest";
import {
  newLoopState,
  runAgentLoop,
  type Conversation,
  type LoopServices,
} from "../../../src/runner/loop/agent-loop.js";
import { ContextManager } from "../../../src/runner/loop/context-window.js";
import {
  ModelApiError,
  type AssistantTurn,
  type Driver,
  type TurnRequest,
} from "../../../src/runner/model/driver.js";
import { EventSink } from "../../../src/runner/loop/events.js";
import { allowAll, ToolPipeline, type PermissionGate } from "../../../src/runner/loop/pipeline.js";
import { MAIN_AGENT, RunBudget, type RunLimits } from "../../../src/runner/loop/run-budget.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { RunState } from "../../../src/tools/state.js";
import { FakeSandbox } from "../../support/fake-sandbox.js";

const Echo = defineTool<{ text: string }>({
  name: "Echo",
  description: "echoes text",
  inputSchema: z.strictObject({ text: z.string() }),
  maxResultSizeChars: 1000,
  isReadOnly: () => true,
  async call(input) {
    return { output: input.text };
  },
});

const USAGE = { inputTokens: 10, outputTokens: 5, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };

/**
 * The model: each turn calls Echo once (ids unique per driver), or answers with `answers` in order (an
 * Error is thrown). Every turn costs `costUsd`.
 */
class EchoModel implements Driver {
  readonly name = "script";
  readonly requests: TurnRequest[] = [];
  private calls = 0;
  constructor(
    private readonly id: string,
    private readonly costUsd: number,
    private readonly answers: Array<AssistantTurn | Error> = [],
  ) {}

  async nextTurn(request: TurnRequest): Promise<AssistantTurn> {
    this.requests.push({ ...request, messages: [...request.messages] });
    const scripted = this.answers.shift();
    if (scripted instanceof Error) throw scripted;
    if (scripted) return scripted;
    this.calls += 1;
    const use = { type: "tool_use" as const, id: `toolu_${this.id}_${this.calls}`, name: "Echo" };
    return {
      content: [{ ...use, input: { text: `call ${this.calls}` } }],
      stopReason: "tool_use",
      usage: USAGE,
      model: "echo-model",
      attempts: 1,
    };
  }

  costOf(): number {
    return this.costUsd;
  }
}

const finished = (text: string): AssistantTurn => ({
  content: [{ type: "text", text }],
  stopReason: "end_turn",
  usage: USAGE,
  model: "echo-model",
  attempts: 1,
});

const denyAll: PermissionGate = {
  decide: () => ({ behavior: "deny", reason: "denied by test", decidedBy: "rule" }),
};

function setup(limits: Partial<RunLimits> = {}, gate: PermissionGate = allowAll) {
  const lines: string[] = [];
  const events = new EventSink(
    undefined,
    (text) => text,
    (line) => lines.push(line),
  );
  const sandbox = new FakeSandbox();
  const pipeline = new ToolPipeline({
    allTools: [Echo],
    enabledTools: [Echo],
    sandbox,
    state: new RunState(),
    gate,
  });
  const budget = new RunBudget(
    { deadline: Date.now() + 3_600_000, maxDenials: 25, ...limits },
    new AbortController().signal,
  );
  const services = (driver: Driver): LoopServices => ({
    driver,
    pipeline,
    sandbox,
    events,
    budget,
    runId: "run1",
    runStart: performance.now(),
  });
  const conversation = (more: Partial<Conversation> = {}): Conversation => ({
    system: "system",
    prompt: "go",
    tools: [],
    maxTurns: 50,
    maxTokens: 1000,
    ...more,
  });
  const streamed = () =>
    lines.map(
      (line) =>
        JSON.parse(line) as { type: string; parent_tool_use_id?: string | null; message?: { id?: string } },
    );
  return { budget, services, conversation, streamed };
}

const SUBAGENT = { agent: "explorer", parentToolUseId: "toolu_task_1" };

describe("loops sharing one run budget", () => {
  it("stop every loop once their money together reaches --max-budget-usd, each charge naming who spent it", async () => {
    const t = setup({ maxBudgetUsd: 1 });
    const main = newLoopState(t.conversation(), t.budget);
    const sub = newLoopState(t.conversation({ spender: SUBAGENT }), t.budget);
    const [a, b] = await Promise.all([
      runAgentLoop(t.services(new EchoModel("main", 0.25)), main),
      runAgentLoop(t.services(new EchoModel("sub", 0.25)), sub),
    ]);

    expect([a.exit, b.exit]).toEqual(["budget", "budget"]);
    // Alone, either loop would have run four turns; together they stop at the run's dollar.
    expect(a.turns.length).toBeLessThan(4);
    expect(b.turns.length).toBeLessThan(4);
    expect(t.budget.costUsd).toBeGreaterThanOrEqual(1);
    expect(a.costUsd + b.costUsd).toBe(t.budget.costUsd);
    const by = (agent: string) => t.budget.charges.filter((c) => c.agent === agent);
    expect(by("main")).toHaveLength(a.turns.length);
    expect(by("explorer")).toHaveLength(b.turns.length);
    expect(by("explorer").every((c) => c.parentToolUseId === "toolu_task_1")).toBe(true);
    expect(by("main")[0]).toEqual({ agent: "main", parentToolUseId: null, costUsd: 0.25, usage: USAGE });
  });

  it("count every loop's denials against max_denials", async () => {
    const t = setup({ maxDenials: 3 }, denyAll);
    const main = newLoopState(t.conversation(), t.budget);
    const sub = newLoopState(t.conversation({ spender: SUBAGENT }), t.budget);
    const [a, b] = await Promise.all([
      runAgentLoop(t.services(new EchoModel("main", 0)), main),
      runAgentLoop(t.services(new EchoModel("sub", 0)), sub),
    ]);

    expect([a.exit, b.exit]).toEqual(["max_denials", "max_denials"]);
    const denied = [a, b].map((r) => r.calls.filter((c) => c.decision?.behavior === "deny").length);
    expect(denied[0]! + denied[1]!).toBe(t.budget.denials);
    expect(t.budget.denials).toBeGreaterThanOrEqual(3);
    // One loop stopped before it was itself denied three times.
    expect(Math.min(...denied)).toBeLessThan(3);
  });

  it("lets no loop ask the model once another has reached a run-wide limit", async () => {
    const t = setup({ maxBudgetUsd: 1 });
    t.budget.charge(MAIN_AGENT, 1, USAGE);
    const model = new EchoModel("sub", 0.25);
    const result = await runAgentLoop(
      t.services(model),
      newLoopState(t.conversation({ spender: SUBAGENT }), t.budget),
    );
    expect(result.exit).toBe("budget");
    expect(result.detail).toBe("spent $1.0000 of the $1 budget");
    expect(model.requests).toHaveLength(0);
  });
});

describe("a conversation's events", () => {
  it("carry its parent_tool_use_id: null for the main loop, the Task call's id for a subagent", async () => {
    const t = setup();
    await runAgentLoop(
      t.services(new EchoModel("main", 0, [finished("done")])),
      newLoopState(t.conversation(), t.budget),
    );
    await runAgentLoop(
      t.services(new EchoModel("sub", 0, [finished("done")])),
      newLoopState(t.conversation({ spender: SUBAGENT }), t.budget),
    );
    const assistant = t.streamed().filter((e) => e.type === "assistant");
    expect(assistant.map((e) => e.parent_tool_use_id)).toEqual([null, "toolu_task_1"]);
    // Both conversations answered their turn 0: the message ids still differ.
    expect(new Set(assistant.map((e) => e.message?.id)).size).toBe(2);
  });

  it("answer each tool call with the same parent_tool_use_id", async () => {
    const t = setup();
    await runAgentLoop(
      t.services(new EchoModel("sub", 0)),
      newLoopState(t.conversation({ spender: SUBAGENT, maxTurns: 2 }), t.budget),
    );
    const results = t.streamed().filter((e) => e.type === "user");
    expect(results).toHaveLength(2);
    expect(results.every((e) => e.parent_tool_use_id === "toolu_task_1")).toBe(true);
  });
});

describe("a request the model did not answer", () => {
  it("is asked again as the same turn, uncounted, when a gateway refuses the context-edit beta", async () => {
    const t = setup();
    const context = new ContextManager({
      window: 200_000,
      compactAt: 150_000,
      enabled: true,
      events: new EventSink(undefined, (text) => text),
      runId: "run1",
      runStart: performance.now(),
      apiEdit: "clear_tool_uses",
    });
    const refusal = new ModelApiError(
      "400 context_management: Extra inputs are not permitted",
      400,
      "invalid_request",
    );
    const model = new EchoModel("main", 0.5, [refusal]);
    const result = await runAgentLoop(
      t.services(model),
      newLoopState(t.conversation({ maxTurns: 2, context }), t.budget),
    );

    expect(result.exit).toBe("max_turns");
    expect(result.turns.map((turn) => turn.index)).toEqual([0, 1]);
    expect(result.costUsd).toBe(1);
    expect(result.contextFallback).toMatch(/refused the clear_tool_uses_20250919 context edit/);
    // Turn 0 was asked twice: with the edits, then without them.
    expect(model.requests.map((r) => r.contextEdits !== undefined)).toEqual([true, false, false]);
    expect(model.requests[1]!.messages).toEqual(model.requests[0]!.messages);
  });
});
