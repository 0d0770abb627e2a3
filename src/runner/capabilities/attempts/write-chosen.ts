// The choice between attempts written as the run's record: each attempt's facts read from its report, the
// choice (attempt-choice.ts) applied, and the chosen attempt's files, patch and report (with every attempt's row
// and the choice) written to the output folder. `run --attempts` (run-attempts.ts) writes its attempts' runs this
// way; `agent-ci choose` and the choose Action the folders of runs made elsewhere (chooseFromFolders). It reads
// and writes files only: nothing here starts a run, a sandbox or a model, so the choose Action's bundle carries
// the report and not the runner.
import fs from "node:fs";
import path from "node:path";
import {
  createRedactor,
  deriveOutcome,
  parseReport,
  PATCH_FILE_NAME,
  REPORT_FILE_NAMES,
  writeReportFiles,
  type Attempt,
  type ExitReason,
  type RunReport,
} from "../../../report/index.js";
import { ConfigError } from "../../../errors.js";
import { EXIT_CODES } from "../../options.js";
import type { RunIO } from "../../run/run-context.js";
import type { RunOutcome } from "../../run/outcome.js";
import { chooseAttempt, type AttemptFacts } from "./attempt-choice.js";

/** What is written again for the chosen attempt rather than copied from its folder. */
const REPORT_FILES = new Set<string>([...Object.values(REPORT_FILE_NAMES), PATCH_FILE_NAME]);

/** An attempt that ran (here or elsewhere), as the choice and the record read it. */
export interface Finished {
  k: number;
  /** Its folder as the attempts table names it. */
  dir: string;
  outcome: RunOutcome;
  facts: AttemptFacts;
  budgetUsd?: number;
  maxTurns?: number;
}

/** Attempt k's facts, as the choice reads them, from its report. */
export function factsOf(k: number, report: RunReport | undefined): AttemptFacts {
  const verify = report?.verify;
  return {
    attempt: k,
    started: true,
    verify: !verify ? "not_run" : verify.applied && verify.exitCode === 0 ? "passed" : "failed",
    verifyInputsChanged: verify?.changedInputs ?? [],
    deniedCalls: report?.denials.length ?? 0,
    changedLines: (report?.patch.added ?? 0) + (report?.patch.removed ?? 0),
    turns: (report?.turns.length ?? 0) + (report?.subagents ?? []).reduce((n, s) => n + s.turns, 0),
  };
}

/**
 * `agent-ci choose`: the same choice over output folders made elsewhere (the matrix jobs' downloaded
 * artifacts), written to `outDir` as `--attempts` writes its own. Attempt k is the folder whose name ends in
 * `attempt-k`, else the k-th given.
 */
export async function chooseFromFolders(
  folders: readonly string[],
  outDir: string,
  io: RunIO,
): Promise<RunOutcome> {
  const finished = folders.map((folder, i): Finished => {
    const k = Number(/attempt-(\d+)\/*$/.exec(folder)?.[1] ?? i + 1);
    let report: RunReport;
    try {
      report = parseReport(fs.readFileSync(path.join(folder, REPORT_FILE_NAMES.json), "utf8"));
    } catch (e) {
      throw new ConfigError(`${folder}: not a run's output folder: ${(e as Error).message}`);
    }
    const facts = factsOf(k, report);
    const exitCode =
      report.exitReason === "completed" && facts.verify === "failed"
        ? EXIT_CODES.verify_failed
        : EXIT_CODES[report.exitReason];
    const outcome: RunOutcome = {
      runId: report.runId,
      exitReason: report.exitReason,
      exitCode,
      outDir: folder,
      patchPath: path.join(folder, PATCH_FILE_NAME),
      report,
    };
    return { k, dir: path.basename(path.resolve(folder)), outcome, facts };
  });
  const numbers = finished.map((f) => f.k);
  if (new Set(numbers).size !== numbers.length)
    throw new ConfigError(
      `two folders are the same attempt (${numbers.join(", ")}): name them attempt-1, attempt-2, …`,
    );
  fs.mkdirSync(outDir, { recursive: true });
  return writeChosen({
    verified: finished.some((f) => f.outcome.report?.verify),
    secrets: [],
    outDir: path.resolve(outDir),
    n: Math.max(...numbers),
    finished,
    budgetSpent: false,
    timedOut: false,
    cancelled: false,
    io,
  });
}

/** Each attempt's row in the record and the facts the choice reads; those that never started included. */
function attemptRows(
  n: number,
  finished: readonly Finished[],
  notStarted: ExitReason,
): { rows: Attempt[]; facts: AttemptFacts[] } {
  const rows: Attempt[] = [];
  const facts: AttemptFacts[] = [];
  for (let k = 1; k <= n; k++) {
    const done = finished.find((f) => f.k === k);
    const report = done?.outcome.report;
    const fact: AttemptFacts = done?.facts ?? {
      attempt: k,
      started: false,
      verify: "not_run",
      verifyInputsChanged: [],
      deniedCalls: 0,
      changedLines: 0,
      turns: 0,
    };
    facts.push(fact);
    const exitReason = done?.outcome.exitReason ?? notStarted;
    rows.push({
      attempt: k,
      ...(done ? { dir: done.dir, runId: done.outcome.runId } : {}),
      started: fact.started,
      exitReason,
      outcome: report?.outcome ?? (done ? "error" : "stopped"),
      verify: fact.verify,
      ...(fact.verifyInputsChanged.length ? { verifyInputsChanged: [...fact.verifyInputsChanged] } : {}),
      deniedCalls: fact.deniedCalls,
      changedLines: fact.changedLines,
      turns: fact.turns,
      costUsd: report?.costUsd ?? 0,
      ...(done?.budgetUsd !== undefined ? { budgetUsd: done.budgetUsd } : {}),
      ...(done?.maxTurns !== undefined ? { maxTurns: done.maxTurns } : {}),
    });
  }
  return { rows, facts };
}

/**
 * The chosen attempt's files copied up (its events, conversation, output.json, the Action's trigger.json) and
 * its patch written as the run's; the patch's text.
 */
function copyChosen(chosen: Finished, outDir: string, patchPath: string): string {
  for (const entry of fs.readdirSync(chosen.outcome.outDir, { withFileTypes: true }))
    if (entry.isFile() && !REPORT_FILES.has(entry.name))
      fs.copyFileSync(path.join(chosen.outcome.outDir, entry.name), path.join(outDir, entry.name));
  const patchText = fs.existsSync(chosen.outcome.patchPath)
    ? fs.readFileSync(chosen.outcome.patchPath, "utf8")
    : "";
  fs.writeFileSync(patchPath, patchText);
  return patchText;
}

export async function writeChosen(options: {
  verified: boolean;
  /** Known secret values, redacted from what is written (the attempts' own records already are). */
  secrets: readonly string[];
  outDir: string;
  n: number;
  finished: readonly Finished[];
  budgetSpent: boolean;
  /** The run's wall-clock limit was reached (and not the budget first). */
  timedOut: boolean;
  cancelled: boolean;
  io: RunIO;
}): Promise<RunOutcome> {
  const { verified, outDir, n, finished, budgetSpent, timedOut, cancelled, io } = options;
  const limit: ExitReason | undefined = budgetSpent ? "budget" : timedOut ? "timeout" : undefined;
  const { rows, facts } = attemptRows(n, finished, limit ?? "cancelled");
  const choice = chooseAttempt(facts, verified);
  const chosen = finished.find((f) => f.k === choice.attempt);
  const patchPath = path.join(outDir, PATCH_FILE_NAME);
  if (!chosen) {
    // Nothing started (cancelled before the first, or no budget at all): an empty patch and no report.
    fs.writeFileSync(patchPath, "");
    const exitReason: ExitReason = limit ?? "cancelled";
    return {
      runId: "",
      exitReason,
      exitCode: EXIT_CODES[exitReason],
      outDir,
      patchPath,
      error: "no attempt started",
    };
  }
  io.stderr(`agent-ci: chose attempt ${choice.attempt} of ${n}: ${choice.reason}`);
  // The chosen attempt's files, then the report written again with the attempts and the choice.
  const patchText = copyChosen(chosen, outDir, patchPath);

  const base = chosen.outcome.report;
  const spentMessage = `${budgetSpent ? "the attempts' budget was spent" : "the run's wall-clock limit (--timeout) was reached"}; the result is the best attempt so far (attempt ${choice.attempt})`;
  const exitReason: ExitReason = limit ?? (cancelled ? "cancelled" : chosen.outcome.exitReason);
  let reportPath: string | undefined;
  let report: RunReport | undefined;
  if (base) {
    const top = {
      ...base,
      exitReason,
      outcome: deriveOutcome({ exitReason, patch: base.patch, verify: base.verify }),
      ...(limit
        ? { error: { kind: budgetSpent ? "AttemptsBudget" : "AttemptsTimeout", message: spentMessage } }
        : {}),
      attempts: rows,
      chosen: choice,
    };
    const redactor = createRedactor({ secrets: options.secrets });
    const written = await writeReportFiles(outDir, top, { patchText, redactor });
    reportPath = written.paths.json;
    report = written.report;
  }
  const verifyFailed = chosen.facts.verify === "failed";
  const exitCode =
    exitReason === "completed"
      ? verifyFailed
        ? EXIT_CODES.verify_failed
        : chosen.outcome.exitCode
      : EXIT_CODES[exitReason];
  return {
    ...chosen.outcome,
    exitReason,
    exitCode,
    outDir,
    patchPath,
    reportPath,
    report,
    error: limit ? spentMessage : chosen.outcome.error,
  };
}
