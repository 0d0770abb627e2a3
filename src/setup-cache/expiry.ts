// How long a setup snapshot is used: an entry older than the max age (`setup_cache_max_age`, in days) is not
// restored, and `agent-ci cache rm --expired` removes it. Age is measured from when the engine made the entry's
// image to the reader's clock; the clock is a parameter, so the rule is tested without waiting.

export const DAY_MS = 24 * 60 * 60 * 1000;

/** An entry's age in days, one decimal, for a reason or a listing (an entry from the future counts as new). */
export function ageInDays(createdMs: number, nowMs: number): string {
  return (Math.max(0, nowMs - createdMs) / DAY_MS).toFixed(1);
}

/**
 * Why an entry made at `createdMs` is too old to use at `nowMs` with a max age of `maxAgeDays` (undefined: it
 * may be used). An entry whose time cannot be read is expired: an entry is used only when it is known fresh.
 */
export function expiredReason(createdMs: number, nowMs: number, maxAgeDays: number): string | undefined {
  if (!Number.isFinite(createdMs)) return "its creation time cannot be read";
  if (nowMs - createdMs <= maxAgeDays * DAY_MS) return undefined;
  return `it was made ${ageInDays(createdMs, nowMs)} days ago, past the setup cache's max age of ${maxAgeDays} days`;
}
