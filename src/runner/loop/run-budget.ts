// What every agent loop of one run shares and charges: the money spent on model calls, the tool calls the
// policy denied, the wall clock and the cancel signal. The main loop and each subagent's loop (and any other
// model call) charge the same budget, so `--max-budget-usd` and `max_denials` hold across all of them, and
// each charge names who made it, so the record can say who spent what.
import type { ExitReason } from "../../report/index.js";
import type { TurnUsage } from "../model/driver.js";

/** Who spends: the main loop (`agent: "main"`, no parent), or a subagent under the Task call that started it. */
export interface Spender {
  agent: string;
  parentToolUseId: string | null;
}

/** One model call's cost, and who made it. */
export interface BudgetCharge extends Spender {
  costUsd: number;
  usage: TurnUsage;
}

export interface RunLimits {
  maxBudgetUsd?: number;
  /** Epoch ms when the run's wall clock runs out. */
  deadline: number;
  maxDenials: number;
}

/** A run-wide limit that was reached, and why in a sentence. */
export interface LimitReached {
  exit: Extract<ExitReason, "budget" | "timeout" | "max_denials">;
  detail: string;
}

export const MAIN_AGENT: Spender = { agent: "main", parentToolUseId: null };

/** Share of the money after which the model is told to wrap up. */
const WRAP_UP_BUDGET_FRACTION = 0.9;
/** Share of the wall clock (from when the budget was made) left under which the model is told to wrap up. */
const WRAP_UP_TIME_FRACTION = 0.1;

export class RunBudget {
  /** Every charge, in the order they were made. */
  readonly charges: BudgetCharge[] = [];
  private spentUsd = 0;
  private deniedCalls = 0;
  /** Epoch ms after which the model is told to wrap up. */
  private readonly wrapUpAt: number;

  /** Make it when the agent starts work: the wrap-up share of the wall clock counts from then. */
  constructor(
    readonly limits: RunLimits,
    /** The run's cancel: the caller's, or the wall clock's. */
    readonly signal: AbortSignal,
  ) {
    this.wrapUpAt = limits.deadline - (limits.deadline - Date.now()) * WRAP_UP_TIME_FRACTION;
  }

  /** US dollars spent so far, by every loop of the run. */
  get costUsd(): number {
    return this.spentUsd;
  }

  /** Tool calls the permission policy denied so far, in every loop of the run. */
  get denials(): number {
    return this.deniedCalls;
  }

  charge(by: Spender, costUsd: number, usage: TurnUsage): void {
    this.charges.push({ ...by, costUsd, usage });
    this.spentUsd += costUsd;
  }

  deny(): void {
    this.deniedCalls += 1;
  }

  /**
   * The run-wide limit reached (the money, the wall clock, then the denials), so no model call may start;
   * undefined while all hold. Another loop of the run may have reached it.
   */
  reached(): LimitReached | undefined {
    const { maxBudgetUsd, deadline } = this.limits;
    if (maxBudgetUsd !== undefined && this.spentUsd >= maxBudgetUsd) {
      return { exit: "budget", detail: `spent $${this.spentUsd.toFixed(4)} of the $${maxBudgetUsd} budget` };
    }
    if (Date.now() >= deadline) return { exit: "timeout", detail: "the run's wall-clock limit was reached" };
    return this.deniedTooOften();
  }

  /** The money or the wall clock is nearly used up: time to tell the model to finish. */
  nearlySpent(): boolean {
    const { maxBudgetUsd } = this.limits;
    return (
      (maxBudgetUsd !== undefined && this.spentUsd >= maxBudgetUsd * WRAP_UP_BUDGET_FRACTION) ||
      Date.now() > this.wrapUpAt
    );
  }

  /** The denial limit, once reached. */
  deniedTooOften(): LimitReached | undefined {
    const { maxDenials } = this.limits;
    if (this.deniedCalls < maxDenials) return undefined;
    return {
      exit: "max_denials",
      detail: `${this.deniedCalls} tool calls were denied by the permission policy; stopping (limit ${maxDenials})`,
    };
  }
}
