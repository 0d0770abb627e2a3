// task: queue: the Action as the fleet's scheduler. It claims up to queue_max items of the work the queue_*
// inputs name in the ledger on refs/agent-ci/queue (src/fleet/: the same claim `agent-ci queue claim` makes,
// compare-and-swap, leases, the spending caps and their comments), sets the next job's matrix and count as
// step outputs, and writes the queue's state to the job summary. It starts no model run and no container.
import path from "node:path";
import type { GitHubApi } from "../github/api.js";
import type { GitHubContext } from "../github/context.js";
import { escapeMarkdownInline } from "../report/index.js";
import { LedgerRepo } from "../fleet/ledger.js";
import { claimMatrix, claimWork, openScheduler, readQueue, type ClaimResult } from "../fleet/scheduler.js";
import { statusMarkdown } from "../fleet/status.js";
import { readQueueTasks } from "../fleet/tasks.js";
import { assertTrustedWriter } from "../fleet/ledger-trust.js";
import type { ActionInputs } from "./inputs.js";
import { actionCaps } from "./run-cap.js";
import type { ActionIO } from "./io.js";

export interface QueueModeOptions {
  io: ActionIO;
  inputs: ActionInputs;
  ctx: GitHubContext;
  api: GitHubApi | undefined;
  env: Record<string, string | undefined>;
}

/** Claims the next items and says so: outputs, log lines, the job summary. */
export async function runQueueMode(options: QueueModeOptions): Promise<void> {
  const { io, inputs, ctx, api } = options;
  const token = inputs.github_token;
  if (!api || !token)
    throw new Error("task: queue needs github_token (contents: write, issues: write, actions: read)");
  const log = (line: string) => io.info(line);
  const scheduler = await openScheduler({
    api,
    token,
    owner: ctx.owner,
    repo: ctx.repo,
    serverUrl: ctx.serverUrl,
    runId: assertTrustedWriter(options.env),
    log,
    warn: (line) => io.warning(line, { title: "agent-ci queue" }),
  });
  const repository = `${ctx.owner}/${ctx.repo}`;
  const caps = actionCaps(inputs, ctx);
  const tasks = inputs.queue_tasks
    ? readQueueTasks(path.resolve(inputs.workspace, inputs.queue_tasks))
    : undefined;
  const result = await claimWork(scheduler, {
    query: {
      label: inputs.queue_label,
      milestone: inputs.queue_milestone,
      assignee: inputs.queue_assignee,
      tasks,
    },
    max: inputs.queue_max,
    leaseSeconds: inputs.queue_lease_seconds,
    caps,
    commentOnRefusal: inputs.comment,
  });
  io.setOutput("matrix", claimMatrix(result.claimed));
  io.setOutput("count", String(result.claimed.length));
  for (const line of claimLines(result)) log(`agent-ci queue: ${line}`);
  const ledger = await LedgerRepo.open(scheduler.remote);
  try {
    const { state } = await readQueue(ledger, scheduler);
    await io.writeSummary(
      `${statusMarkdown(state, caps?.capName ?? repository)}\n\n${claimSummary(result)}\n`,
    );
  } finally {
    ledger.close();
  }
}

/** What the claim did, a line each: the items claimed, those the caps keep waiting, commits ignored. */
function claimLines(result: ClaimResult): string[] {
  return [
    `claimed ${result.claimed.length}${result.claimed.length ? `: ${result.claimed.map((w) => w.item).join(", ")}` : ""}`,
    ...(result.capped.length && result.cap?.why
      ? [`${result.capped.length} item(s) wait: ${result.cap.why}`]
      : []),
    ...result.refused.map((r) => `ignored ledger commit ${r}`),
  ];
}

/** The claim under the state's table: each item claimed, and why the rest wait. */
function claimSummary(result: ClaimResult): string {
  const claimed = result.claimed.map((w) => `- \`${w.item}\` ${escapeMarkdownInline(w.title.slice(0, 200))}`);
  const waiting =
    result.capped.length && result.cap?.why
      ? [`\n${result.capped.length} item(s) wait: ${escapeMarkdownInline(result.cap.why)}.`]
      : [];
  return [
    result.claimed.length ? `Claimed ${result.claimed.length}:` : "Claimed nothing.",
    ...claimed,
    ...waiting,
  ].join("\n");
}
