// What the ledger counts of a run's report: its cost, or with attempts every attempt's (the report's own
// costUsd is the chosen attempt's only, and the others were spent too).
import { describe, expect, it } from "vitest";
import { ReportCost, reportSpend } from "../../../src/fleet/caps.js";

describe("reportSpend", () => {
  it("is the report's cost for a single run", () => {
    expect(reportSpend(ReportCost.parse({ runId: "r", costUsd: 0.25, turns: [] }))).toBe(0.25);
  });

  it("is every attempt's cost for a run of attempts, not the chosen one's", () => {
    const report = {
      costUsd: 0.5,
      attempts: [
        { attempt: 1, costUsd: 0.75 },
        { attempt: 2, costUsd: 0.5 },
        { attempt: 3, costUsd: 0 },
      ],
    };
    expect(reportSpend(ReportCost.parse(report))).toBeCloseTo(1.25, 9);
  });

  it("refuses a negative cost", () => {
    expect(() => ReportCost.parse({ costUsd: -1 })).toThrow();
    expect(() => ReportCost.parse({ costUsd: 1, attempts: [{ costUsd: -1 }] })).toThrow();
  });
});
