// The values options take that the option table and the code they configure both need: here, below both, so
// that the table stays a leaf and `agent-ci --help` loads none of the run's machinery to print them.

/** The model agent-ci uses when none is given: the current Claude Sonnet (runner/model/pricing.ts prices it). */
export const DEFAULT_MODEL = "claude-sonnet-5-5";
export const OUTPUT_FORMATS = ["text", "json", "stream-json"] as const;
/** `--progress`: lines on stderr as text, or one JSON object each (runner/progress.ts's ProgressLine). */
export const PROGRESS_FORMATS = ["text", "json"] as const;
/** run: work on the task; review: review base...head read-only and return findings (src/review/). */
export const TASKS = ["run", "review"] as const;
/** The Action's tasks: a run's, and queue (claim the backlog's next items for a matrix; no model runs). */
export const ACTION_TASKS = [...TASKS, "queue"] as const;
/** Where a run's model is served (runner/model/providers.ts makes the clients). */
export const PROVIDERS = ["anthropic", "bedrock", "vertex"] as const;
/** Days a setup snapshot is used after it was made (`setup_cache_max_age`; src/setup-cache/expiry.ts). */
export const DEFAULT_SETUP_CACHE_MAX_AGE_DAYS = 7;
