// A single triggered run under the spending caps across runs (max_daily_usd, max_monthly_usd; docs/fleet.md).
// Before the model run starts, the ledger on refs/agent-ci/queue is read as the queue reads it (trusted entries
// only), and the run starts only when a claim would start it: the spend so far, max_budget_usd held for each
// run in flight and for this one, within each cap (src/fleet/: the rule and the comment are the queue's). A run
// refused is skipped, says so once on its thread and does not fail the step, as the queue's refusal does not.
// A run that starts adds its cost to the ledger when it ends, as the queue's runs do (`queue release`).
import { capsOf, ReportCost, reportSpend, type Caps } from "../fleet/caps.js";
import {
  appendEntries,
  costEntry,
  openScheduler,
  singleRunRefusal,
  type SchedulerOptions,
} from "../fleet/scheduler.js";
import { assertTrustedWriter, UntrustedWriterError } from "../fleet/ledger-trust.js";
import type { GitHubApi } from "../github/api.js";
import type { GitHubContext } from "../github/context.js";
import type { RunOutcome } from "../runner/run.js";
import { eventTarget, type ActionEvent } from "./event.js";
import { ActionInputError, type ActionInputs } from "./inputs.js";

export interface RunCap {
  scheduler: SchedulerOptions;
  caps: Caps;
  /** Why this run may not add its cost to the ledger (a pull request's run), when it may not. */
  untrusted?: string;
}

export interface RunCapOptions {
  inputs: ActionInputs;
  ctx: GitHubContext;
  api: GitHubApi | undefined;
  env: Record<string, string | undefined>;
  log: (line: string) => void;
}

/** The caps the Action's inputs set, named after the repository unless cap_name names them; none unset. */
export function actionCaps(inputs: ActionInputs, ctx: GitHubContext): Caps | undefined {
  return capsOf(
    {
      maxDailyUsd: inputs.max_daily_usd,
      maxMonthlyUsd: inputs.max_monthly_usd,
      capName: inputs.cap_name,
      perRunUsd: inputs.max_budget_usd,
    },
    `${ctx.owner}/${ctx.repo}`,
  );
}

/** The caps this run is under, with the ledger to read them from; undefined when no cap is given. */
export async function openRunCap(options: RunCapOptions): Promise<RunCap | undefined> {
  const { inputs, ctx, api } = options;
  const caps = actionCaps(inputs, ctx);
  if (!caps) return undefined;
  const token = inputs.github_token;
  if (!api || !token)
    throw new ActionInputError(
      "max_daily_usd and max_monthly_usd read the spend in the repository's ledger: they need github_token (contents: write, issues: write, actions: read)",
    );
  let runId = "";
  let untrusted: string | undefined;
  try {
    runId = assertTrustedWriter(options.env);
  } catch (error) {
    if (!(error instanceof UntrustedWriterError)) throw error;
    untrusted = error.message;
  }
  const scheduler = await openScheduler({
    api,
    token,
    owner: ctx.owner,
    repo: ctx.repo,
    serverUrl: ctx.serverUrl,
    runId,
    log: options.log,
  });
  return { scheduler, caps, untrusted };
}

/** Why the caps keep this run from starting (said on its thread unless `comment` is off), or undefined. */
export function runCapRefusal(
  cap: RunCap,
  event: ActionEvent,
  comment: boolean,
): Promise<string | undefined> {
  return singleRunRefusal(cap.scheduler, cap.caps, comment ? eventTarget(event)?.number : undefined);
}

/**
 * Adds the run's cost (its report's, every attempt's included) to the ledger under the cap's name; a failure is
 * a warning: the run's result is already written.
 */
export async function addRunCost(
  cap: RunCap,
  outcome: RunOutcome,
  event: ActionEvent,
  warn: (line: string) => void,
): Promise<void> {
  if (!outcome.report) return;
  const usd = reportSpend(ReportCost.parse(outcome.report));
  if (cap.untrusted) {
    warn(`the run's cost ($${usd.toFixed(4)}) is not added to the ledger: ${cap.untrusted}`);
    return;
  }
  const target = eventTarget(event);
  const entry = costEntry(
    cap.scheduler.runId,
    new Date().toISOString(),
    usd,
    cap.caps.capName,
    target ? `issue:${target.number}` : undefined,
  );
  await appendEntries(cap.scheduler, [entry]).catch((error: Error) =>
    warn(`the run's cost ($${usd.toFixed(4)}) could not be added to the ledger: ${error.message}`),
  );
}
