// The queue's state, folded from the ledger's trusted entries: which items are claimed (and until when), which
// ended and how, and what was spent today and this month against each cap. Pure: the entries and a clock in,
// the state out.
import type { LedgerEntry } from "./ledger.js";

export type ItemStatus = "claimed" | "published" | "failed" | "cancelled" | "skipped" | "expired";

export interface ItemState {
  item: string;
  status: ItemStatus;
  /** The run holding (or that last held) the item. */
  runId: string;
  /** When the claim lapses (ms since the epoch): for a claimed item, and for a failed one (retaken after it). */
  leaseEnds?: number;
  /** How many of its runs ended failed. */
  failures?: number;
  /** A failed item whose claim's lease has lapsed, with fewer than MAX_FAILED_RUNS failures: it is taken again. */
  retake?: boolean;
}

/**
 * Failed runs after which an item is left alone (a person looks at it): a failure is retried once its claim's
 * lease lapses, not on every tick of the schedule, and not for ever (each try spends its budget again).
 */
export const MAX_FAILED_RUNS = 3;

export interface QueueState {
  items: Map<string, ItemState>;
  /** Spend per cap name: today (UTC) and this month (UTC). */
  spend: Map<string, { day: number; month: number }>;
}

const dayOf = (iso: string) => iso.slice(0, 10);
const monthOf = (iso: string) => iso.slice(0, 7);

/** Folds entries in ledger order; `now` decides which claims have lapsed. */
export function foldLedger(entries: readonly LedgerEntry[], now: number): QueueState {
  const items = new Map<string, ItemState>();
  const spend = new Map<string, { day: number; month: number }>();
  const today = new Date(now).toISOString();
  for (const entry of entries) {
    if (entry.kind === "claim") {
      const current = items.get(entry.item);
      // A live claim of another run stands: a second claim of the item is not taken (CAS makes this rare).
      if (current?.status === "claimed" && current.runId !== entry.run_id && (current.leaseEnds ?? 0) > now)
        continue;
      items.set(entry.item, {
        item: entry.item,
        status: "claimed",
        runId: entry.run_id,
        leaseEnds: Date.parse(entry.at) + entry.lease_s * 1000,
        ...(current?.failures ? { failures: current.failures } : {}),
      });
    } else if (entry.kind === "release") {
      const current = items.get(entry.item);
      // Only the run that holds the claim ends it.
      if (current?.status !== "claimed" || current.runId !== entry.run_id) continue;
      const failures = (current.failures ?? 0) + (entry.outcome === "failed" ? 1 : 0);
      items.set(entry.item, {
        item: entry.item,
        status: entry.outcome,
        runId: entry.run_id,
        // A failure keeps its claim's lease: the item is taken again once it lapses.
        ...(entry.outcome === "failed" ? { leaseEnds: current.leaseEnds } : {}),
        ...(failures ? { failures } : {}),
      });
    } else {
      const total = spend.get(entry.cap) ?? { day: 0, month: 0 };
      if (monthOf(entry.at) === monthOf(today)) total.month += entry.usd;
      if (dayOf(entry.at) === dayOf(today)) total.day += entry.usd;
      spend.set(entry.cap, total);
    }
  }
  for (const state of items.values()) {
    if (state.status === "claimed" && (state.leaseEnds ?? 0) <= now) state.status = "expired";
    if (state.status === "failed")
      state.retake = (state.leaseEnds ?? 0) <= now && (state.failures ?? 0) < MAX_FAILED_RUNS;
  }
  return { items, spend };
}

/**
 * Whether an item may be claimed now: never claimed, its lease lapsed, its run cancelled, or its run failed
 * and the claim's lease has lapsed since (up to MAX_FAILED_RUNS failures). A published item is done.
 */
export function claimable(state: QueueState, item: string): boolean {
  const current = state.items.get(item);
  return (
    current === undefined ||
    current.status === "expired" ||
    current.status === "cancelled" ||
    (current.status === "failed" && current.retake === true)
  );
}

/** Live claims: items claimed whose lease has not lapsed. */
export function liveClaims(state: QueueState): ItemState[] {
  return [...state.items.values()].filter((s) => s.status === "claimed");
}
