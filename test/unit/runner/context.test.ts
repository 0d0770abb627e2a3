// The context manager's choice between the API's edits and agent-ci's own clearing, and the events it writes.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ContextManager,
  type ContextRequest,
  estimateTokens,
} from "../../../src/runner/loop/context-window.js";
import { EventSink } from "../../../src/runner/loop/events.js";
import type { ApiContextEdit } from "../../../src/runner/model/pricing.js";

function manager(apiEdit: ApiContextEdit | undefined, enabled = true) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-context-")), "events.jsonl");
  const events = new EventSink(file, (text) => text);
  const context = new ContextManager({
    window: 50_000,
    compactAt: 10_000,
    enabled,
    events,
    runId: "run",
    runStart: performance.now(),
    apiEdit,
  });
  const written = () =>
    fs
      .readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { context, written };
}

/** A conversation of `n` tool calls with 6,000-character results (2,000 tokens each by agent-ci's estimate). */
function conversation(n: number): ContextRequest {
  const messages: ContextRequest["messages"] = [{ role: "user", content: "go" }];
  for (let i = 0; i < n; i++) {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `t${i}`, name: "Bash", input: { command: "x" } }],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `t${i}`, content: "x".repeat(6_000) }],
    });
  }
  return { system: "s", tools: [], messages };
}

describe("ContextManager", () => {
  it("asks the API for compaction at compactAt, with its beta, and clears nothing itself", () => {
    const { context } = manager("compact");
    expect(context.contextEdits()).toEqual({
      betas: ["compact-2026-01-12"],
      edits: [{ type: "compact_20260112", trigger: { type: "input_tokens", value: 10_000 } }],
    });
    expect(context.beforeTurn(0, conversation(20))).toBeUndefined();
  });

  it("asks for clear_tool_uses keeping the newest results, clearing only when it frees half of compactAt", () => {
    const { context } = manager("clear_tool_uses");
    expect(context.contextEdits()).toEqual({
      betas: ["context-management-2025-06-27"],
      edits: [
        {
          type: "clear_tool_uses_20250919",
          trigger: { type: "input_tokens", value: 10_000 },
          keep: { type: "tool_uses", value: 3 },
          clear_at_least: { type: "input_tokens", value: 5_000 },
        },
      ],
    });
  });

  it("falls back to its own clearing once the API refuses the edits, and says so once", () => {
    const { context, written } = manager("compact");
    context.fallBack("400 invalid_request_error: context_management: Extra inputs are not permitted");
    context.fallBack("again");
    expect(context.usesApiEdits).toBe(false);
    expect(context.contextEdits()).toBeUndefined();
    expect(context.fallbackReason).toMatch(/refused the compact_20260112 context edit/);
    const made = context.beforeTurn(3, conversation(20));
    expect(made).toMatchObject({ strategy: "clear_tool_results", turn: 3 });
    const events = written();
    expect(events.filter((e) => e.subtype === "context_management_fallback")).toEqual([
      expect.objectContaining({ refused_edit: "compact", reason: expect.stringContaining("Extra inputs") }),
    ]);
    expect(events.filter((e) => e.subtype === "compact_boundary")).toHaveLength(1);
  });

  it("records an edit the API applied as a compaction and a compact_boundary event", () => {
    const { context, written } = manager("clear_tool_uses");
    const made = context.recordApiEdit(7, {
      strategy: "api_clear_tool_uses",
      tokensBefore: 40_000,
      tokensAfter: 9_000,
      clearedToolResults: 12,
    });
    expect(made).toMatchObject({
      turn: 7,
      trigger: "auto",
      strategy: "api_clear_tool_uses",
      tokensBefore: 40_000,
      tokensAfter: 9_000,
      clearedToolResults: 12,
    });
    expect(context.compactions).toEqual([made]);
    expect(written()).toEqual([
      expect.objectContaining({
        subtype: "compact_boundary",
        compact_metadata: {
          trigger: "auto",
          pre_tokens: 40_000,
          post_tokens: 9_000,
          strategy: "api_clear_tool_uses",
          cleared_tool_results: 12,
        },
      }),
    ]);
  });

  it("estimates each turn as the whole conversation measured afresh, as messages grow and results are cleared", () => {
    const { context } = manager(undefined);
    const request = conversation(3);
    const afresh = () =>
      estimateTokens(request.system) + estimateTokens(request.tools) + estimateTokens(request.messages);
    expect(context.estimate(request)).toBe(afresh());
    // A turn that continues the last assistant message gives it a new content array (agent-loop.ts).
    const last = request.messages.at(-2)!;
    last.content = [
      ...(last.content as []),
      { type: "text", text: "more ".repeat(400) },
    ] as typeof last.content;
    request.messages.push({ role: "user", content: "and a plain text turn" });
    expect(context.estimate(request)).toBe(afresh());
    // Past compactAt, old results are cleared in place: the estimate after follows them.
    const long = conversation(8);
    const made = context.beforeTurn(1, long);
    expect(made?.clearedToolResults).toBeGreaterThan(0);
    expect(made?.tokensAfter).toBe(
      estimateTokens(long.system) + estimateTokens(long.tools) + estimateTokens(long.messages),
    );
    expect(context.estimate(long)).toBe(made?.tokensAfter);
  });

  it("asks for nothing with --no-compaction, whatever the model supports", () => {
    const { context } = manager("compact", false);
    expect(context.contextEdits()).toBeUndefined();
    expect(context.beforeTurn(0, conversation(20))).toBeUndefined();
  });
});
