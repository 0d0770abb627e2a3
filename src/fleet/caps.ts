// Spending caps across runs: the day's and the month's spend (UTC) against one cap name (the repository's
// `owner/repo` unless the workflow names a cap to share across repositories), read from the ledger's trusted
// cost entries. A run may start only while the spend so far, plus what the runs in flight may still spend
// (each at most its own max_budget_usd), plus its own max_budget_usd, stays within the cap. A run in flight
// stops at its own max_budget_usd as before; the cap decides only whether runs start.
import { z } from "zod";
import { liveClaims, type QueueState } from "./queue-state.js";

/** What a run's report.json says it cost (the rest of the record is not read). */
export const ReportCost = z.object({
  runId: z.string().optional(),
  costUsd: z.number().nonnegative(),
  /** A run of several attempts: each one's row (the report's own costUsd is the chosen attempt's). */
  attempts: z.array(z.object({ costUsd: z.number().nonnegative() })).optional(),
});

/** What the run spent, every attempt's included: the spend the ledger counts. */
export function reportSpend(report: z.infer<typeof ReportCost>): number {
  return report.attempts?.length
    ? report.attempts.reduce((sum, attempt) => sum + attempt.costUsd, 0)
    : report.costUsd;
}

export interface Caps {
  maxDailyUsd?: number;
  maxMonthlyUsd?: number;
  /** The name spend is counted under. */
  capName: string;
  /** What one run may spend (its max_budget_usd): reserved for every run in flight and every run started. */
  perRunUsd?: number;
}

/** The caps a scheduler was given: none without a daily or monthly limit; spend counted under the repository by default. */
export function capsOf(
  limits: { maxDailyUsd?: number; maxMonthlyUsd?: number; capName?: string; perRunUsd?: number },
  repository: string,
): Caps | undefined {
  if (limits.maxDailyUsd === undefined && limits.maxMonthlyUsd === undefined) return undefined;
  return {
    maxDailyUsd: limits.maxDailyUsd,
    maxMonthlyUsd: limits.maxMonthlyUsd,
    capName: limits.capName || repository,
    perRunUsd: limits.perRunUsd,
  };
}

export interface CapRoom {
  /** How many more runs may start now (Infinity without caps). */
  room: number;
  /** Why no run may start, in one sentence (when `room` is 0). */
  why?: string;
  spentToday: number;
  spentMonth: number;
}

const usd = (n: number) => `$${n.toFixed(2)}`;

/** How many runs may start under the caps, given the ledger's state. */
export function capRoom(state: QueueState, caps: Caps): CapRoom {
  const spent = state.spend.get(caps.capName) ?? { day: 0, month: 0 };
  const perRun = caps.perRunUsd ?? 0;
  const reserved = liveClaims(state).length * perRun;
  let room = Number.POSITIVE_INFINITY;
  let why: string | undefined;
  const limits: Array<[string, number | undefined, number]> = [
    ["max_daily_usd", caps.maxDailyUsd, spent.day],
    ["max_monthly_usd", caps.maxMonthlyUsd, spent.month],
  ];
  for (const [name, cap, so] of limits) {
    if (cap === undefined) continue;
    const left = cap - so - reserved;
    const fits = perRun > 0 ? Math.max(0, Math.floor(left / perRun + 1e-9)) : left > 0 ? room : 0;
    if (fits < room) room = fits;
    if (fits === 0 && why === undefined)
      why = `${caps.capName} has spent ${usd(so)} of its ${name} ${usd(cap)}${reserved ? ` with ${usd(reserved)} held by runs in flight` : ""}${perRun ? `, and a run may spend ${usd(perRun)}` : ""}`;
  }
  return { room, why, spentToday: spent.day, spentMonth: spent.month };
}

/** The comment a refused start leaves on its thread (marked, so a later refusal edits it). */
export const CAP_COMMENT_MARKER = "<!-- agent-ci-cap -->";

export function capComment(why: string): string {
  return `${CAP_COMMENT_MARKER}\nagent-ci did not start a run for this: ${why}. It starts again when the spend falls under the cap (a new day or month), or when the workflow raises it.`;
}

/**
 * Whether one more run may start under the caps when some spend and some runs are not in the ledger yet (a
 * batch's own: its finished runs' cost and its runs in flight, each holding perRunUsd): the reason it may not,
 * or undefined.
 */
export function capRefusal(
  state: QueueState,
  caps: Caps,
  own: { spentUsd: number; running: number },
): string | undefined {
  const spend = new Map(state.spend);
  const ledger = spend.get(caps.capName) ?? { day: 0, month: 0 };
  spend.set(caps.capName, { day: ledger.day + own.spentUsd, month: ledger.month + own.spentUsd });
  const room = capRoom({ ...state, spend }, caps);
  if (room.room > own.running) return undefined;
  return (
    room.why ??
    `${caps.capName}'s caps leave room for ${room.room} run(s) at once, and ${own.running} of this batch's are running`
  );
}
