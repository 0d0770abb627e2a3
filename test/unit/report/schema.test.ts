// The report.json contract: round trips, clear errors for bad input, and the outcome rule.
import { describe, expect, it } from "vitest";
import {
  REPORT_SCHEMA_VERSION,
  ReportSchemaError,
  RunReport,
  deriveOutcome,
  parseReport,
} from "../../../src/report/schema.js";
import { FIXTURES } from "./support/golden.js";

describe("parseReport", () => {
  it.each(FIXTURES)("round-trips the $name record through JSON unchanged", ({ build }) => {
    const report = build();
    const text = JSON.stringify(report);
    const parsed = parseReport(text);
    expect(parsed).toEqual(report);
    const normalized = JSON.stringify(parsed);
    expect(JSON.stringify(parseReport(normalized)), "key order is the schema's, and stable").toBe(normalized);
    expect(parseReport(JSON.parse(text))).toEqual(report);
  });

  it("drops unknown keys (an additive change from a newer writer still reads)", () => {
    const report = { ...FIXTURES[0]!.build(), futureField: { x: 1 } };
    expect(parseReport(report)).not.toHaveProperty("futureField");
  });

  it("names every field that does not match", () => {
    const report = FIXTURES[0]!.build() as unknown as Record<string, unknown>;
    const broken = { ...report, exitReason: "exploded", durationMs: -1, toolCalls: [{ id: 7 }] };
    const error = (() => {
      try {
        parseReport(broken);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ReportSchemaError);
    const message = (error as ReportSchemaError).message;
    expect(message).toContain("does not match schema version 1");
    expect(message).toContain("exitReason");
    expect(message).toContain("durationMs");
    expect(message).toContain("toolCalls.0.id");
    expect((error as ReportSchemaError).issues.length).toBeGreaterThan(3);
  });

  it("says plainly when the input is not JSON, not a report, or from a newer agent-ci", () => {
    expect(() => parseReport("{nope")).toThrow(/not valid JSON/);
    expect(() => parseReport("[]")).toThrow(/not an agent-ci report/);
    expect(() => parseReport({ runId: "x" })).toThrow(/schemaVersion is missing/);
    expect(() => parseReport({ schemaVersion: REPORT_SCHEMA_VERSION + 1 })).toThrow(/newer agent-ci/);
  });

  it("caps result previews at 2,000 characters", () => {
    const report = FIXTURES[0]!.build();
    const call = { ...report.toolCalls[0]!, resultPreview: "x".repeat(2_001) };
    expect(RunReport.safeParse({ ...report, toolCalls: [call] }).success).toBe(false);
  });

  it("refuses a host path as the workspace only by convention: the field is a basename", () => {
    const report = FIXTURES[0]!.build();
    expect(report.workspace.path).not.toContain("/");
  });
});

describe("deriveOutcome", () => {
  const patch = (empty: boolean) => ({ empty });
  it.each([
    ["completed", false, undefined, "changes"],
    ["completed", true, undefined, "no_changes"],
    ["completed", false, { applied: true, exitCode: 0 }, "changes"],
    ["completed", false, { applied: true, exitCode: 2 }, "verify_failed"],
    ["completed", false, { applied: false, exitCode: null }, "verify_failed"],
    ["max_turns", false, undefined, "stopped"],
    ["budget", true, undefined, "stopped"],
    ["timeout", false, undefined, "stopped"],
    ["cancelled", false, undefined, "stopped"],
    ["api_error", false, undefined, "error"],
    ["engine_error", true, undefined, "error"],
    ["config_error", true, { applied: false, exitCode: null }, "error"],
  ] as const)("%s, empty patch %s, verify %j → %s", (exitReason, empty, verify, expected) => {
    expect(deriveOutcome({ exitReason, patch: patch(empty), verify })).toBe(expected);
  });
});
