// The queue's state in words: counts of claimed (running), done (published), failed, cancelled and lapsed
// items, and the spend today and this month, as lines for `agent-ci queue status` and a table for the job
// summary.
import type { QueueState } from "./queue-state.js";

export interface StatusCounts {
  claimed: number;
  done: number;
  failed: number;
  cancelled: number;
  expired: number;
  spentToday: number;
  spentMonth: number;
}

export function statusCounts(state: QueueState, capName: string): StatusCounts {
  const all = [...state.items.values()];
  const count = (status: string) => all.filter((s) => s.status === status).length;
  const spend = state.spend.get(capName) ?? { day: 0, month: 0 };
  return {
    claimed: count("claimed"),
    done: count("published"),
    failed: count("failed"),
    cancelled: count("cancelled"),
    expired: count("expired"),
    spentToday: spend.day,
    spentMonth: spend.month,
  };
}

export function statusLines(state: QueueState, capName: string, refused: readonly string[]): string[] {
  const c = statusCounts(state, capName);
  const running = [...state.items.values()].filter((s) => s.status === "claimed");
  return [
    `claimed (running): ${c.claimed}`,
    ...running.map((s) => `  ${s.item} by run ${s.runId} until ${new Date(s.leaseEnds ?? 0).toISOString()}`),
    `done (published): ${c.done}`,
    `failed: ${c.failed}`,
    `cancelled: ${c.cancelled}`,
    `lease lapsed: ${c.expired}`,
    `spent today (${capName}): $${c.spentToday.toFixed(2)}; this month: $${c.spentMonth.toFixed(2)}`,
    ...refused.map((r) => `ignored ledger commit ${r}`),
  ];
}

export function statusMarkdown(state: QueueState, capName: string): string {
  const c = statusCounts(state, capName);
  return [
    "### agent-ci queue",
    "",
    "| claimed (running) | done | failed | cancelled | lease lapsed | spent today | spent this month |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    `| ${c.claimed} | ${c.done} | ${c.failed} | ${c.cancelled} | ${c.expired} | $${c.spentToday.toFixed(2)} | $${c.spentMonth.toFixed(2)} |`,
  ].join("\n");
}
