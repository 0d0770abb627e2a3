// `agent-ci queue` (claim, status, release, check): the work queue from a workflow step or a terminal. The token
// comes from the environment (AGENT_CI_QUEUE_TOKEN, GH_TOKEN or GITHUB_TOKEN), never a flag; the repository
// from --repo or GITHUB_REPOSITORY; the run that writes from GITHUB_RUN_ID, on a trusted event only.
import fs from "node:fs";
import { Command, InvalidArgumentError, Option } from "commander";
import type { ProcessLogs } from "../github/workflow-log.js";
import type { LedgerEntry } from "./ledger.js";

/** What the commands run, loaded when one runs (the CLI's --help and --version load none of it). */
const load = async () => {
  const [api, queue, ledger, caps, status, trust, tasks] = await Promise.all([
    import("../github/api.js"),
    import("./scheduler.js"),
    import("./ledger.js"),
    import("./caps.js"),
    import("./status.js"),
    import("./ledger-trust.js"),
    import("./tasks.js"),
  ]);
  return { ...api, ...queue, ...ledger, ...caps, ...status, ...trust, ...tasks };
};

export const QUEUE_TOKEN_VARIABLES = ["AGENT_CI_QUEUE_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"] as const;

const positiveInt = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError("a positive whole number");
  return n;
};
const usd = (value: string) => {
  const n = Number(value);
  if (!(n >= 0)) throw new InvalidArgumentError("an amount in US dollars");
  return n;
};

interface CommonFlags {
  repo?: string;
  remote?: string;
  apiUrl?: string;
  maxDailyUsd?: number;
  maxMonthlyUsd?: number;
  capName?: string;
  maxBudgetUsd?: number;
}

/** The ledger's spending caps: the queue's commands and batch take them alike. */
function capFlags(command: Command): Command {
  return command
    .option("--max-daily-usd <usd>", "start nothing once the day's spend (UTC) would pass this", usd)
    .option("--max-monthly-usd <usd>", "start nothing once the month's spend (UTC) would pass this", usd)
    .option(
      "--cap-name <name>",
      "count spend under this name, to share a cap across repositories (default: the repository)",
    );
}

function common(command: Command): Command {
  return capFlags(
    command
      .option("--repo <owner/name>", "the repository (default: GITHUB_REPOSITORY)")
      .option("--remote <url>", "its git URL (default: GITHUB_SERVER_URL/<repo>.git)")
      .addOption(new Option("--api-url <url>").hideHelp()),
  ).option(
    "--max-budget-usd <usd>",
    "what one run may spend (its own --max-budget-usd), held for every run in flight",
    usd,
  );
}

async function scheduler(flags: CommonFlags, say: (line: string) => void, write: boolean) {
  const { GitHubApi, octokitRequest, assertTrustedWriter, openScheduler, capsOf } = await load();
  const token = QUEUE_TOKEN_VARIABLES.map((name) => process.env[name]?.trim()).find(Boolean);
  if (!token)
    throw new Error(
      `no token: set ${QUEUE_TOKEN_VARIABLES.join(", ")} (contents: write, issues: write, actions: read)`,
    );
  const full = flags.repo ?? process.env.GITHUB_REPOSITORY ?? "";
  const [owner, repo, ...rest] = full.split("/");
  if (!owner || !repo || rest.length) throw new Error("give --repo owner/name (or set GITHUB_REPOSITORY)");
  const api = new GitHubApi({
    request: octokitRequest(token, flags.apiUrl ?? process.env.GITHUB_API_URL),
    log: say,
    redact: (text) => text.split(token).join("***"),
  });
  const options = await openScheduler({
    api,
    token,
    owner,
    repo,
    serverUrl: process.env.GITHUB_SERVER_URL?.trim() || "https://github.com",
    remoteUrl: flags.remote,
    runId: write ? assertTrustedWriter(process.env) : "",
    log: say,
    warn: (line) => say(`agent-ci queue: warning: ${line}`),
  });
  const limits = { ...flags, perRunUsd: flags.maxBudgetUsd };
  return { options, caps: capsOf(limits, full), capName: flags.capName ?? full };
}

/** Appends `name=value` lines to the step's outputs file, when there is one. */
function setOutput(name: string, value: string): void {
  const file = process.env.GITHUB_OUTPUT;
  if (file) fs.appendFileSync(file, `${name}<<AGENT_CI_EOF\n${value}\nAGENT_CI_EOF\n`);
}

function summary(markdown: string): void {
  const file = process.env.GITHUB_STEP_SUMMARY;
  if (file) fs.appendFileSync(file, `${markdown}\n`);
}

export function addQueueCommand(program: Command, log: ProcessLogs): void {
  const say = (line: string) => log.err.text(line);
  const queue = program
    .command("queue")
    .description(
      "a work queue over the repository's issues (or a file of tasks), with its ledger on refs/agent-ci/queue",
    );
  addClaim(queue, log, say);
  addStatus(queue, log, say);
  addRelease(queue, say);
  addCheck(queue, say);
}

/** `agent-ci queue claim`: claims items and prints the next job's matrix. */
function addClaim(queue: Command, log: ProcessLogs, say: (line: string) => void): void {
  common(
    queue
      .command("claim", { isDefault: true })
      .description("claim up to --max free items and print the matrix for the next job (output `matrix`)")
      .option("--label <name>", "issues with this label")
      .option("--milestone <number>", "issues of this milestone")
      .option("--assignee <login>", "issues assigned to this login")
      .option("--tasks <file>", "a file of tasks instead: one JSON object a line, each with an `id`")
      .option("--max <n>", "claim at most this many", positiveInt, 5)
      .option("--lease <seconds>", "how long a claim holds without a release", positiveInt, 3600)
      .option("--no-comment", "do not comment on an issue the caps keep from starting"),
  ).action(
    async (
      flags: CommonFlags & {
        label?: string;
        milestone?: string;
        assignee?: string;
        tasks?: string;
        max: number;
        lease: number;
        comment: boolean;
      },
    ) => {
      const { claimWork, claimMatrix, readQueueTasks } = await load();
      const { options, caps } = await scheduler(flags, say, true);
      const tasks = flags.tasks ? readQueueTasks(flags.tasks) : undefined;
      const result = await claimWork(options, {
        query: { label: flags.label, milestone: flags.milestone, assignee: flags.assignee, tasks },
        max: flags.max,
        leaseSeconds: flags.lease,
        caps,
        commentOnRefusal: flags.comment,
      });
      for (const line of result.refused) say(`agent-ci queue: ignored ledger commit ${line}`);
      if (result.capped.length && result.cap?.why)
        say(`agent-ci queue: ${result.capped.length} item(s) wait: ${result.cap.why}`);
      const matrix = claimMatrix(result.claimed);
      setOutput("matrix", matrix);
      setOutput("count", String(result.claimed.length));
      log.out.json(`${matrix}\n`);
    },
  );
}

/** `agent-ci queue status`: the queue's state, also in the job summary. */
function addStatus(queue: Command, log: ProcessLogs, say: (line: string) => void): void {
  common(
    queue.command("status").description("the queue's state: claimed, running, done, failed, spent today"),
  ).action(async (flags: CommonFlags) => {
    const { LedgerRepo, readQueue, statusLines, statusMarkdown } = await load();
    const { options, capName } = await scheduler(flags, say, false);
    const ledger = await LedgerRepo.open(options.remote);
    try {
      const read = await readQueue(ledger, options);
      log.out.text(`${statusLines(read.state, capName, read.refused).join("\n")}\n`);
      summary(statusMarkdown(read.state, capName));
    } finally {
      ledger.close();
    }
  });
}

/** `agent-ci queue release`: ends a claim and adds the run's cost. */
function addRelease(queue: Command, say: (line: string) => void): void {
  common(
    queue
      .command("release")
      .description(
        "end this run's claim on an item (published, failed, cancelled), take its claim label off, and add the run's cost",
      )
      .option("--item <item>", "issue:<n> or task:<id>")
      .addOption(
        new Option("--outcome <outcome>").choices(["published", "failed", "cancelled"]).default("failed"),
      )
      .option("--report <report.json>", "the run's report: its cost is added to the day's and month's spend"),
  ).action(
    async (
      flags: CommonFlags & { item?: string; outcome: "published" | "failed" | "cancelled"; report?: string },
    ) => {
      const { appendEntries, costEntry, ReportCost, reportSpend, unlabelReleased } = await load();
      const { options, capName } = await scheduler(flags, say, true);
      const at = new Date().toISOString();
      const entries: LedgerEntry[] = [];
      if (flags.item)
        entries.push({
          v: 1,
          kind: "release",
          run_id: options.runId,
          at,
          item: flags.item,
          outcome: flags.outcome,
        });
      if (flags.report && fs.existsSync(flags.report)) {
        const cost = ReportCost.parse(JSON.parse(fs.readFileSync(flags.report, "utf8")));
        entries.push(costEntry(options.runId, at, reportSpend(cost), capName, flags.item));
      }
      if (!entries.length) throw new Error("nothing to append: give --item, --report or both");
      await appendEntries(options, entries);
      if (flags.item) await unlabelReleased(options, flags.item);
    },
  );
}

/** `agent-ci queue check`: whether the caps leave room for a single triggered run. */
function addCheck(queue: Command, say: (line: string) => void): void {
  common(
    queue
      .command("check")
      .description(
        "before a single triggered run: exit 5, with a comment on the thread, when the caps leave no room",
      )
      .option("--issue <n>", "the issue or pull request to comment on", positiveInt),
  ).action(async (flags: CommonFlags & { issue?: number }) => {
    const { singleRunRefusal } = await load();
    const { options, caps } = await scheduler(flags, say, false);
    if (!caps) return;
    const why = await singleRunRefusal(options, caps, flags.issue);
    if (why === undefined) return;
    say(`agent-ci queue: not starting: ${why}`);
    process.exitCode = 5;
  });
}

/** Batch's own options. */
interface BatchFlags {
  parallel: number;
  batchOut?: string;
  maxUsd?: number;
  maxBudgetUsd?: number;
  ledger?: string;
  maxDailyUsd?: number;
  maxMonthlyUsd?: number;
  capName?: string;
}

/**
 * With `--ledger`, the ledger's caps asked before each task starts (scheduler.ts's ledgerCapCheck). Batch reads
 * the ledger only: its runs are no workflow runs, so their cost is not appended to it.
 */
async function ledgerCaps(flags: BatchFlags, say: (line: string) => void) {
  if (!flags.ledger) {
    if (flags.maxDailyUsd !== undefined || flags.maxMonthlyUsd !== undefined)
      throw new Error(
        "--max-daily-usd and --max-monthly-usd count the ledger's spend: name it with --ledger",
      );
    return undefined;
  }
  const { ledgerCapCheck } = await load();
  const { options, caps } = await scheduler(
    { ...flags, repo: flags.ledger, remote: undefined, apiUrl: undefined },
    say,
    false,
  );
  if (!caps) throw new Error("--ledger reads the caps: give --max-daily-usd, --max-monthly-usd or both");
  return ledgerCapCheck(options, caps);
}

/**
 * `agent-ci batch <tasks.jsonl> [run options...]`: the tasks K at a time, each run by `runTask` (the CLI's own
 * run command, handed in), and the table at the end. Batch's own options come before the run's.
 */
export function addBatchCommand(
  program: Command,
  log: ProcessLogs,
  runTask: (argv: readonly string[]) => Promise<import("./batch.js").BatchRunResult>,
): void {
  const say = (line: string) => log.err.text(line);
  capFlags(
    program
      .command("batch")
      .description(
        "run a file of tasks (one JSON object a line: agent-ci run's options by flag name), K sandboxes at a time; run options after the file apply to every task",
      )
      .argument("<tasks.jsonl>")
      .option("--parallel <k>", "sandboxes at a time", positiveInt, 1)
      .option("--batch-out <dir>", "where each task's output folder goes (default agent-ci-out/batch-<time>)")
      .option(
        "--max-usd <usd>",
        "start no task once the batch's spend, with what runs in flight may spend, would pass this",
        usd,
      )
      .option(
        "--max-budget-usd <usd>",
        "what one run may spend (passed to every run), held while it runs",
        usd,
      )
      .option(
        "--ledger <owner/name>",
        "before each task, apply the caps of this repository's ledger (refs/agent-ci/queue; token as for queue)",
      ),
  )
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (file: string, flags: BatchFlags, command: Command) => {
      const [{ batchTasks, runBatch, batchTable }, { readTasks }] = await Promise.all([
        import("./batch.js"),
        import("./tasks.js"),
      ]);
      const common = command.args.slice(1);
      const outParent =
        flags.batchOut ?? `agent-ci-out/batch-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      const budget = flags.maxBudgetUsd !== undefined ? ["--max-budget-usd", String(flags.maxBudgetUsd)] : [];
      const tasks = batchTasks(readTasks(file), ["--quiet", ...budget, ...common], file, outParent);
      const records = await runBatch(tasks, {
        parallel: flags.parallel,
        run: (task) => runTask(task.argv),
        maxUsd: flags.maxUsd,
        perRunUsd: flags.maxBudgetUsd,
        mayStart: await ledgerCaps(flags, say),
        onDone: (r) =>
          say(
            `agent-ci batch: ${r.task.name}: ${r.status === "capped" ? `not started (${r.error ?? "cap"})` : `${r.exitReason ?? "error"} (exit ${r.exitCode})`}`,
          ),
      });
      log.out.text(`${batchTable(records)}\n`);
      process.exitCode = records.every((r) => r.status === "ran" && r.exitCode === 0) ? 0 : 1;
    });
}
