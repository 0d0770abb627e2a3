// Attempts (`--attempts N`, the `attempts` input; docs/attempts.md): the run made of N ordinary runs of the task
// and a choice between them (run-attempts.ts). Its part of a run is the `around` hook: with more than one
// attempt, it runs the run in place of the stages; its record is the attempts table of the chosen report.json
// (write-chosen.ts). Each attempt's own run is given `attempts: 1`, so the part made for it runs none around.
import type { Capability } from "../capability.js";
import { runAttempts } from "./run-attempts.js";

export const attempts: Capability = {
  name: "attempts",
  options: ["attempts", "parallel", "attempt_prompts", "stop_at_first_pass"],
  forRun: (config) => ({
    around: (given) => (config.attempts > 1 ? runAttempts(config, given) : undefined),
  }),
};
