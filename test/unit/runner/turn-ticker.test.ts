// A long model turn's ticker on fake timers (no waiting): it tells the turn, the seconds waited and the output
// tokens streamed so far once per interval from when the turn was asked, and stops when the turn ends, fails or
// the run is cancelled, leaving no timer behind; through the agent loop, with a model that answers only when
// the test lets it, as the loop's services tell it (a subagent's turn names its agent).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  newLoopState,
  runAgentLoop,
  type Conversation,
  type LoopServices,
} from "../../../src/runner/loop/agent-loop.js";
import { EventSink } from "../../../src/runner/loop/events.js";
import { allowAll, ToolPipeline } from "../../../src/runner/loop/pipeline.js";
import { RunBudget } from "../../../src/runner/loop/run-budget.js";
import { TurnTicker, type TurnProgress } from "../../../src/runner/loop/turn-ticker.js";
import type { AssistantTurn, Driver, StreamedSoFar, TurnRequest } from "../../../src/runner/model/driver.js";
import { jsonProgress, turnProgress, type RunProgress } from "../../../src/runner/progress.js";
import { RunState } from "../../../src/tools/state.js";
import { FakeSandbox } from "../../support/fake-sandbox.js";

const EVERY = 30_000;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

function ticker(options: { started?: number; signal?: AbortSignal } = {}) {
  const told: Array<{ seconds: number; outputTokens: number }> = [];
  let streamed: StreamedSoFar = { reportedTokens: 0, characters: 0 };
  const t = new TurnTicker({
    everyMs: EVERY,
    started: options.started ?? performance.now(),
    signal: options.signal ?? new AbortController().signal,
    streamed: () => streamed,
    tell: (tick) => told.push(tick),
  });
  return { t, told, stream: (sofar: StreamedSoFar) => (streamed = sofar) };
}

describe("TurnTicker", () => {
  it("tells the seconds waited and the output tokens so far once per interval, then stops with no timer left", async () => {
    const { t, told, stream } = ticker();
    await vi.advanceTimersByTimeAsync(EVERY - 1);
    expect(told).toEqual([]);
    // message_start's count, before any text.
    stream({ reportedTokens: 1, characters: 0 });
    await vi.advanceTimersByTimeAsync(1);
    expect(told).toEqual([{ seconds: 30, outputTokens: 1 }]);
    // 4,000 characters streamed: about 1,000 tokens, while the API's own count is still message_start's.
    stream({ reportedTokens: 1, characters: 4_000 });
    await vi.advanceTimersByTimeAsync(EVERY);
    // The API's count at the end of the message, when it is ahead of the estimate.
    stream({ reportedTokens: 1_500, characters: 4_000 });
    await vi.advanceTimersByTimeAsync(EVERY);
    expect(told).toEqual([
      { seconds: 30, outputTokens: 1 },
      { seconds: 60, outputTokens: 1_000 },
      { seconds: 90, outputTokens: 1_500 },
    ]);
    expect(vi.getTimerCount()).toBe(1);
    expect(t.stop()).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(5 * EVERY);
    expect(told).toHaveLength(3);
  });

  it("tells nothing for a turn shorter than the interval", async () => {
    const { t, told } = ticker();
    await vi.advanceTimersByTimeAsync(EVERY - 1);
    expect(t.stop()).toBe(false);
    expect(told).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("counts from when the turn was asked: a turn asked ahead 45 s ago is told at 60 s", async () => {
    const { t, told } = ticker({ started: performance.now() - 45_000 });
    await vi.advanceTimersByTimeAsync(14_999);
    expect(told).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(told).toEqual([{ seconds: 60, outputTokens: 0 }]);
    t.stop();
  });

  it("stops when the run is cancelled, and never starts on a cancelled one", async () => {
    const cancel = new AbortController();
    const { t, told } = ticker({ signal: cancel.signal });
    await vi.advanceTimersByTimeAsync(EVERY);
    cancel.abort(new Error("received SIGTERM"));
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(3 * EVERY);
    expect(told).toHaveLength(1);
    expect(t.stop()).toBe(true);

    const late = ticker({ signal: cancel.signal });
    expect(vi.getTimerCount()).toBe(0);
    expect(late.t.stop()).toBe(false);
  });

  it("keeps ticking when a listener throws", async () => {
    let calls = 0;
    const t = new TurnTicker({
      everyMs: EVERY,
      started: performance.now(),
      signal: new AbortController().signal,
      streamed: () => ({ reportedTokens: 0, characters: 0 }),
      tell: () => {
        calls += 1;
        throw new Error("a listener's bug");
      },
    });
    await vi.advanceTimersByTimeAsync(2 * EVERY);
    expect(calls).toBe(2);
    t.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});

/** A model that answers only when the test lets it: `stream` plays what its stream brought so far. */
class HeldModel implements Driver {
  readonly name = "script";
  request: TurnRequest | undefined;
  private settle: ((answer: AssistantTurn | Error) => void) | undefined;

  nextTurn(request: TurnRequest): Promise<AssistantTurn> {
    this.request = request;
    return new Promise((resolve, reject) => {
      this.settle = (answer) => (answer instanceof Error ? reject(answer) : resolve(answer));
      request.signal.addEventListener("abort", () => reject(request.signal.reason as Error), { once: true });
    });
  }

  stream(sofar: StreamedSoFar): void {
    this.request?.onStream?.(sofar);
  }

  answer(answer: AssistantTurn | Error): void {
    this.settle?.(answer);
  }

  costOf(): number {
    return 0;
  }
}

const finished: AssistantTurn = {
  content: [{ type: "text", text: "done" }],
  stopReason: "end_turn",
  usage: { inputTokens: 10, outputTokens: 2_000, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
  model: "held-model",
  attempts: 1,
};

function loop(spender?: Conversation["spender"]) {
  const cancel = new AbortController();
  const sandbox = new FakeSandbox();
  const told: TurnProgress[] = [];
  const model = new HeldModel();
  const services: LoopServices = {
    driver: model,
    pipeline: new ToolPipeline({
      allTools: [],
      enabledTools: [],
      sandbox,
      state: new RunState(),
      gate: allowAll,
    }),
    sandbox,
    events: new EventSink(undefined, (text) => text),
    budget: new RunBudget({ deadline: Date.now() + 3_600_000, maxDenials: 25 }, cancel.signal),
    runId: "run1",
    runStart: performance.now(),
    turnTicks: { everyMs: EVERY, tell: (progress) => told.push(progress) },
  };
  const state = newLoopState(
    {
      system: "system",
      prompt: "go",
      tools: [],
      maxTurns: 5,
      maxTokens: 1000,
      ...(spender ? { spender } : {}),
    },
    services.budget,
  );
  const ended = runAgentLoop(services, state).then(
    (result) => result,
    (error: unknown) => error as Error,
  );
  return { cancel, told, model, ended };
}

describe("a long turn through the agent loop", () => {
  it("is told every interval with its turn, seconds and tokens so far, then ended when it answers", async () => {
    const { told, model, ended } = loop();
    await vi.advanceTimersByTimeAsync(0);
    model.stream({ reportedTokens: 1, characters: 2_000 });
    await vi.advanceTimersByTimeAsync(2 * EVERY);
    model.answer(finished);
    const result = await ended;
    expect(result).toMatchObject({ exit: "completed", finalText: "done" });
    expect(told).toEqual([
      { kind: "turn_waiting", turn: 0, seconds: 30, outputTokens: 500 },
      { kind: "turn_waiting", turn: 0, seconds: 60, outputTokens: 500 },
      { kind: "turn_ended", turn: 0 },
    ]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("names a subagent's turn by its agent and Task call", async () => {
    const { told, model, ended } = loop({ agent: "Explore", parentToolUseId: "toolu_task_1" });
    await vi.advanceTimersByTimeAsync(EVERY);
    model.answer(finished);
    await ended;
    expect(told).toEqual([
      {
        kind: "turn_waiting",
        turn: 0,
        seconds: 30,
        outputTokens: 0,
        agent: "Explore",
        parentToolUseId: "toolu_task_1",
      },
      { kind: "turn_ended", turn: 0, agent: "Explore", parentToolUseId: "toolu_task_1" },
    ]);
  });

  it("tells nothing for a turn that answers within the interval", async () => {
    const { told, model, ended } = loop();
    await vi.advanceTimersByTimeAsync(EVERY - 1);
    model.answer(finished);
    await ended;
    expect(told).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("stops when the turn fails, leaving no timer", async () => {
    const { told, model, ended } = loop();
    await vi.advanceTimersByTimeAsync(EVERY);
    model.answer(new Error("the API went away"));
    expect(await ended).toMatchObject({ message: "the API went away" });
    expect(told.map((p) => p.kind)).toEqual(["turn_waiting", "turn_ended"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("stops when the run is cancelled, leaving no timer", async () => {
    const { cancel, told, ended } = loop();
    await vi.advanceTimersByTimeAsync(EVERY);
    cancel.abort(new Error("received SIGINT"));
    expect(await ended).toMatchObject({ message: "received SIGINT" });
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(3 * EVERY);
    expect(told.map((p) => p.kind)).toEqual(["turn_waiting", "turn_ended"]);
  });
});

describe("a long turn as the run tells it", () => {
  const waiting: TurnProgress = { kind: "turn_waiting", turn: 4, seconds: 60, outputTokens: 12_345 };
  const subagent: TurnProgress = { ...waiting, agent: "Explore", parentToolUseId: "toolu_task_1" };

  it("is a line of the log while it waits, and progress for whoever listens, its end too", () => {
    const lines: string[] = [];
    const told: RunProgress[] = [];
    const tell = turnProgress(
      (line) => lines.push(line),
      (progress) => told.push(progress),
    );
    tell?.(waiting);
    tell?.(subagent);
    tell?.({ kind: "turn_ended", turn: 4 });
    expect(lines).toEqual([
      "model: turn 4 still under way after 60 s, ~12,345 output tokens so far",
      "model: turn 4 of the Explore subagent still under way after 60 s, ~12,345 output tokens so far",
    ]);
    expect(told).toEqual([waiting, subagent, { kind: "turn_ended", turn: 4 }]);
    expect(turnProgress(undefined, undefined)).toBeUndefined();
  });

  it("is one JSON line of --progress json while it waits, none when it ends", () => {
    const written: string[] = [];
    const json = jsonProgress((text) => written.push(text), performance.now());
    json.onProgress(waiting);
    json.onProgress(subagent);
    json.onProgress({ kind: "turn_ended", turn: 4 });
    expect(written.map((line) => JSON.parse(line) as unknown)).toEqual([
      { type: "turn_waiting", turn: 4, seconds: 60, output_tokens: 12_345, at_ms: expect.any(Number) },
      {
        type: "turn_waiting",
        turn: 4,
        agent: "Explore",
        seconds: 60,
        output_tokens: 12_345,
        at_ms: expect.any(Number),
      },
    ]);
  });
});
