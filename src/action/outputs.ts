// Step outputs from a run's outcome and report, and the `fail_on` decision: which endings fail the step.
// Pure: main.ts sets the outputs and fails the step with the message this returns.
import type { RunReport, ExitReason } from "../report/index.js";
import type { FailOnReason } from "./inputs.js";

/** Every output, in action.yml order (a test keeps them in sync). */
export const OUTPUT_NAMES = [
  "skipped",
  "exit_reason",
  "outcome",
  "patch_path",
  "report_path",
  "changed_files",
  "has_changes",
  "cost_usd",
  "input_tokens",
  "output_tokens",
  "turns",
  "tool_calls",
  "denials",
  "verify_exit_code",
  "artifact_id",
  "artifact_url",
  "comment_url",
  "structured_output",
  "review_id",
  "findings",
  "final_message",
  "run_id",
  "matrix",
  "count",
] as const;
export type OutputName = (typeof OUTPUT_NAMES)[number];
export type Outputs = Partial<Record<OutputName, string>>;

export interface RunResultForOutputs {
  runId?: string;
  exitReason: ExitReason;
  patchPath: string;
  reportPath?: string;
  report?: RunReport;
  /** The valid structured result, already redacted. */
  structuredOutput?: Record<string, unknown>;
  /** Review mode: the placed findings. */
  review?: { inline: readonly unknown[]; outside: readonly unknown[] };
  /** The agent's own final answer, redacted. */
  finalMessage?: string;
}

/** The run's outputs (artifact and comment outputs are added when those steps finish). */
export function runOutputs(run: RunResultForOutputs): Outputs {
  const report = run.report;
  return {
    skipped: "false",
    exit_reason: run.exitReason,
    outcome: report?.outcome ?? "error",
    patch_path: run.patchPath,
    report_path: run.reportPath ?? "",
    changed_files: String(report?.patch.files.length ?? 0),
    has_changes: String(report ? !report.patch.empty : false),
    cost_usd: (report?.costUsd ?? 0).toFixed(6),
    input_tokens: String(report?.usage.inputTokens ?? 0),
    output_tokens: String(report?.usage.outputTokens ?? 0),
    turns: String(report?.turns.length ?? 0),
    tool_calls: String(report?.toolCalls.length ?? 0),
    denials: String(report?.denials.length ?? 0),
    verify_exit_code:
      report?.verify?.exitCode === null || report?.verify?.exitCode === undefined
        ? ""
        : String(report.verify.exitCode),
    structured_output: run.structuredOutput ? JSON.stringify(run.structuredOutput) : "",
    final_message: run.finalMessage ?? "",
    run_id: run.runId ?? "",
    ...(run.review ? { findings: String(run.review.inline.length + run.review.outside.length) } : {}),
  };
}

/** Outputs of a skipped run: `skipped` is true and everything else is empty or zero. */
export function skippedOutputs(): Outputs {
  return { skipped: "true", exit_reason: "", outcome: "", has_changes: "false", changed_files: "0" };
}

/**
 * The message to fail the step with, or undefined when the run's ending is not in `fail_on`. A run whose
 * report could not be written always fails: there is nothing trustworthy to hand over.
 */
export function failureMessage(
  failOn: readonly FailOnReason[],
  run: RunResultForOutputs & { error?: string },
): string | undefined {
  const report = run.report;
  if (!report)
    return `agent-ci: the run ended (${run.exitReason}) without a report${run.error ? `: ${run.error}` : ""}`;
  const reasons: string[] = [];
  if (run.exitReason !== "completed" && (failOn as readonly string[]).includes(run.exitReason))
    reasons.push(`${run.exitReason}${run.error ? `: ${run.error}` : ""}`);
  if (report.outcome === "verify_failed" && failOn.includes("verify_failed")) {
    reasons.push(
      report.verify && !report.verify.applied
        ? "verify_failed: the patch did not apply"
        : `verify_failed: the verify command exited ${report.verify?.exitCode ?? "abnormally"}`,
    );
  }
  if (report.outcome === "no_changes" && failOn.includes("no_changes"))
    reasons.push("no_changes: the agent made no changes");
  if (report.patch.secretFindings.length && failOn.includes("secret_in_patch"))
    reasons.push(`secret_in_patch: ${report.patch.secretFindings.length} possible secret(s) in the patch`);
  return reasons.length ? `agent-ci: ${reasons.join("; ")} (fail_on: ${failOn.join(",")})` : undefined;
}
