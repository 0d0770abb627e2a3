/**
 * The price table: exact ids, dated and provider-spelled ids, family fallbacks flagged as estimates,
 * and the per-turn cost arithmetic.
 */
import { describe, expect, it } from "vitest";
import type { TurnUsage } from "../../../src/runner/model/driver.js";
import {
  API_CONTEXT_EDIT_BETAS,
  DEFAULT_MODEL,
  apiContextEditFor,
  costUsd,
  normalizeModelId,
  priceFor,
} from "../../../src/runner/model/pricing.js";
import { isContextEditRejection } from "../../../src/runner/loop/context-window.js";

const usage = (partial: Partial<TurnUsage>): TurnUsage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 0,
  ...partial,
});

describe("DEFAULT_MODEL", () => {
  it("is a Claude Sonnet id with an exact (not estimated) price", () => {
    expect(DEFAULT_MODEL).toMatch(/^claude-sonnet-/);
    expect(priceFor(DEFAULT_MODEL).estimated).toBe(false);
  });
});

describe("normalizeModelId", () => {
  it.each([
    ["claude-sonnet-4-5-20250929", "claude-sonnet-4-5"],
    ["claude-sonnet-4-20250514", "claude-sonnet-4"],
    ["claude-3-7-sonnet-latest", "claude-3-7-sonnet"],
    ["us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"],
    ["anthropic.claude-3-5-haiku-20241022-v1:0", "claude-3-5-haiku"],
    ["claude-sonnet-4-5@20250929", "claude-sonnet-4-5"],
    ["claude-opus-4-6[1m]", "claude-opus-4-6"],
    ["Claude-Opus-4-1", "claude-opus-4-1"],
  ])("%s → %s", (input, expected) => {
    expect(normalizeModelId(input)).toBe(expected);
  });
});

describe("priceFor", () => {
  it.each([
    ["claude-opus-4-5-20251101", 5, 25],
    ["claude-opus-4-1-20250805", 15, 75],
    ["claude-opus-4-20250514", 15, 75],
    ["claude-opus-5-5", 4, 20],
    ["claude-sonnet-4-5-20250929", 3, 15],
    ["claude-sonnet-4-6", 3, 15],
    ["claude-sonnet-5", 2, 10],
    ["claude-haiku-4-5-20251001", 1, 5],
    ["claude-3-5-haiku-20241022", 0.8, 4],
    ["claude-3-haiku-20240307", 0.25, 1.25],
    ["claude-fable-5-1", 10, 50],
  ])("%s is priced exactly at $%d in / $%d out", (model, input, output) => {
    const lookup = priceFor(model);
    expect(lookup.estimated).toBe(false);
    expect(lookup.price.input).toBe(input);
    expect(lookup.price.output).toBe(output);
  });

  it("prices an unknown model of a known family by the family, flagged as estimated", () => {
    const lookup = priceFor("claude-opus-9-9");
    expect(lookup).toMatchObject({ estimated: true, pricedAs: "family:opus" });
    expect(lookup.price.input).toBe(5);
  });

  it("prices an id without a family at the Sonnet rate, flagged as estimated", () => {
    expect(priceFor("some-proxy-model")).toMatchObject({ estimated: true, pricedAs: "fallback:sonnet" });
    expect(priceFor("some-proxy-model").price.input).toBe(3);
  });
});

describe("costUsd", () => {
  it("adds input, output, cache writes and cache reads at their own rates", () => {
    const cost = costUsd(
      "claude-sonnet-4-5",
      usage({
        inputTokens: 1_000_000,
        outputTokens: 1_000_000,
        cacheCreationInputTokens: 1_000_000,
        cacheReadInputTokens: 1_000_000,
      }),
    );
    expect(cost.usd).toBeCloseTo(3 + 15 + 3.75 + 0.3, 10);
    expect(cost.estimated).toBe(false);
  });

  it("costs a typical turn in fractions of a cent", () => {
    const cost = costUsd(
      "claude-haiku-4-5",
      usage({ inputTokens: 2_000, outputTokens: 500, cacheReadInputTokens: 10_000 }),
    );
    expect(cost.usd).toBeCloseTo((2_000 * 1 + 500 * 5 + 10_000 * 0.1) / 1_000_000, 12);
  });

  it("is zero for an empty turn", () => {
    expect(costUsd(DEFAULT_MODEL, usage({})).usd).toBe(0);
  });

  it("uses Haiku 5.5's higher tier when the prompt is over 100k tokens", () => {
    const short = costUsd("claude-haiku-5-5", usage({ inputTokens: 50_000, outputTokens: 1_000 }));
    const long = costUsd(
      "claude-haiku-5-5",
      usage({ inputTokens: 50_000, cacheReadInputTokens: 60_000, outputTokens: 1_000 }),
    );
    expect(short.usd).toBeCloseTo((50_000 * 0.1 + 1_000 * 0.5) / 1_000_000, 12);
    expect(long.usd).toBeCloseTo((50_000 * 0.5 + 60_000 * 0.05 + 1_000 * 2.5) / 1_000_000, 12);
  });

  it("carries the estimate flag for unknown models", () => {
    expect(costUsd("claude-sonnet-7", usage({ inputTokens: 10 })).estimated).toBe(true);
  });
});

describe("apiContextEditFor", () => {
  it.each([
    ["claude-sonnet-5-5", "compact"],
    ["claude-opus-4-6", "compact"],
    ["us.anthropic.claude-sonnet-4-6-v1:0", "compact"],
    ["claude-sonnet-4-5-20250929", "clear_tool_uses"],
    ["claude-haiku-4-5", "clear_tool_uses"],
    ["claude-3-7-sonnet-latest", undefined],
    ["my-gateway-model", undefined],
  ])("%s → %s", (model, edit) => {
    expect(apiContextEditFor(model)).toBe(edit);
  });

  it("names a beta for each edit", () => {
    expect(API_CONTEXT_EDIT_BETAS).toEqual({
      compact: "compact-2026-01-12",
      clear_tool_uses: "context-management-2025-06-27",
    });
  });
});

describe("isContextEditRejection", () => {
  it.each([
    ["400 invalid_request_error: context_management: Extra inputs are not permitted", true],
    [
      "400 invalid_request_error: Unexpected value(s) `compact-2026-01-12` for the `anthropic-beta` header",
      true,
    ],
    ["400 invalid_request_error: unknown field betas", true],
    ["400 invalid_request_error: prompt is too long: 210345 tokens > 200000 maximum", false],
    ["400 invalid_request_error: messages.1: tool_use ids were found without tool_result blocks", false],
  ])("%s → %s", (message, rejected) => {
    expect(isContextEditRejection(message)).toBe(rejected);
  });
});
