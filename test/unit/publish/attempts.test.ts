// A pull request from a run made of several attempts says what it was chosen from and where the others are.
import { describe, expect, it } from "vitest";
import { attemptsLine } from "../../../src/publish/attempts-line.js";
import { pullBody } from "../../../src/publish/pull-text.js";
import type { Attempt, RunReport } from "../../../src/report/index.js";
import { smallFixReport } from "../report/support/report-builders.js";

const row = (attempt: number, facts: Partial<Attempt>): Attempt => ({
  attempt,
  dir: `attempt-${attempt}`,
  runId: `run-${attempt}`,
  started: true,
  exitReason: "completed",
  outcome: "changes",
  verify: "passed",
  deniedCalls: 0,
  changedLines: 3,
  turns: 3,
  costUsd: 0.01,
  ...facts,
});

function chosenFrom(): RunReport {
  return {
    ...smallFixReport(),
    attempts: [
      row(1, { verify: "failed" }),
      row(2, { verify: "failed", deniedCalls: 1, changedLines: 0, outcome: "verify_failed" }),
      row(3, { changedLines: 5 }),
      row(4, {}),
    ],
    chosen: {
      attempt: 4,
      reason: "attempt 4 passed verify: smallest patch (3 changed lines, attempt 3 had 5)",
      verified: true,
    },
  };
}

describe("attemptsLine", () => {
  it("names the chosen attempt, why (without repeating that it passed), how the others ended and where their records are", () => {
    expect(attemptsLine(chosenFrom())).toBe(
      "**Chosen from 4 attempts**: attempt 4 passed verify (smallest patch (3 changed lines, attempt 3 had 5)); 1 other passed verify; 2 failed verify; 1 was denied a call. The others' records are in the run's output: <code>attempt-1/</code>, <code>attempt-2/</code>, <code>attempt-3/</code>.",
    );
  });

  it("is in the pull request's body, and absent for a run of one attempt", () => {
    expect(pullBody(chosenFrom(), undefined, {}, [])).toContain("**Chosen from 4 attempts**: attempt 4");
    expect(attemptsLine(smallFixReport())).toBe("");
    expect(pullBody(smallFixReport(), undefined, {}, [])).not.toContain("Chosen from");
  });

  it("says when the choice was not verified", () => {
    const report = chosenFrom();
    const unverified: RunReport = {
      ...report,
      attempts: report.attempts?.map((a) => ({ ...a, verify: "not_run" as const })),
      chosen: { attempt: 4, reason: "the smallest non-empty patch", verified: false },
    };
    expect(attemptsLine(unverified)).toMatch(/^\*\*Chosen from 4 attempts\*\*: attempt 4 was not verified/);
  });
});
