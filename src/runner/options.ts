// The values a run's options take and the exit codes a run ends with, apart from the code that runs: the CLI's
// help and its usage errors need these, and `agent-ci --help` must not load the run's machinery to print them.
import type { ExitReason } from "../report/index.js";

export { OUTPUT_FORMATS, TASKS, PROVIDERS } from "../options/values.js";

/** Where a run's outputs go without --out: ./agent-ci-out/<run id>. */
export const DEFAULT_OUT_PARENT = "agent-ci-out";

/** Process exit codes, one per kind of ending (documented in the README). */
export const EXIT_CODES: Record<ExitReason | "verify_failed" | "output_error", number> = {
  completed: 0,
  /** The run's own ending was fine, but the patch or the record could not be written (a full disk). */
  output_error: 1,
  config_error: 2,
  engine_error: 3,
  api_error: 4,
  max_turns: 5,
  budget: 5,
  timeout: 5,
  context_window: 5,
  max_denials: 5,
  verify_failed: 6,
  schema_invalid: 7,
  cancelled: 130,
};
