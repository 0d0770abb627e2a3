// report.json's record of a run made of several attempts (`--attempts N`): one row per attempt and the
// choice. The top-level report is the chosen attempt's; these fields say what it was chosen from and why.
// Made by a function of the exit reason and outcome schemas, which live in schema.ts (no import cycle).
import { z } from "zod";
import { NonNegativeInt } from "./schema-base.js";

export const ATTEMPT_VERIFY_RESULTS = ["passed", "failed", "not_run"] as const;

export function attemptsSchemas<R extends z.ZodType, O extends z.ZodType>(exitReason: R, outcome: O) {
  const Attempt = z
    .object({
      attempt: z.number().int().positive().describe("1-based, in the order the attempts were started."),
      dir: z
        .string()
        .optional()
        .describe(
          "The attempt's own output folder: attempt-k beside this report (run --attempts), or the folder's name as given to agent-ci choose; absent when it never started.",
        ),
      runId: z.string().optional().describe("The attempt's run id; absent when it never started."),
      started: z
        .boolean()
        .describe("False when it never started: the budget was spent or a passing attempt ended the others."),
      exitReason,
      outcome,
      verify: z
        .enum(ATTEMPT_VERIFY_RESULTS)
        .describe("Whether its patch passed --verify in a fresh sandbox (not_run without --verify)."),
      verifyInputsChanged: z
        .array(z.string())
        .optional()
        .describe(
          "What verify runs that its patch changed (the attempt's verify.changedInputs): a pass with it is never preferred to a pass without.",
        ),
      deniedCalls: NonNegativeInt,
      changedLines: NonNegativeInt.describe("Added plus removed lines of its patch."),
      turns: NonNegativeInt.describe("Model turns, subagents' included."),
      costUsd: z.number().nonnegative(),
      budgetUsd: z
        .number()
        .nonnegative()
        .optional()
        .describe("Its share of --max-budget-usd: what was left of the budget when it started."),
      maxTurns: NonNegativeInt.optional().describe("Its share of --max-turns, counted the same way."),
    })
    .meta({ id: "Attempt" });
  const ChosenAttempt = z
    .object({
      attempt: z.number().int().positive(),
      reason: z.string().describe("Why this attempt, in a sentence."),
      verified: z
        .boolean()
        .describe(
          "True when the choice rested on --verify; false: the smallest non-empty patch, unverified.",
        ),
    })
    .meta({ id: "ChosenAttempt" });
  return { Attempt, ChosenAttempt };
}
