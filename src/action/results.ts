// The Action's results, written after the agent stopped: outputs first (so they are set whatever fails
// later), then annotations, the artifact, the job summary and the comment. Each GitHub write is its own
// step that fails soft with a warning that says what to do; none of them can lose the patch, which is
// already on disk.
import fs from "node:fs";
import path from "node:path";
import { scanForSecrets, type Redactor, type SecretFinding } from "../report/index.js";
import type { RunOutcome } from "../runner/run.js";
import { annotationsFor } from "./annotations.js";
import {
  artifactFiles,
  runArtifactName,
  TRIGGER_FILE_NAME,
  uploadRunArtifact,
  type ArtifactResult,
  type ArtifactUploader,
} from "./artifact.js";
import { buildCommentBody, buildNoticeBody, commentMarker, upsertComment } from "./comment.js";
import type { ProgressComment } from "./progress-comment.js";
import { artifactUrl, runUrl, type GitHubContext } from "../github/context.js";
import { eventTarget, type ActionEvent } from "./event.js";
import type { GitHubApi } from "../github/api.js";
import type { ActionInputs } from "./inputs.js";
import type { ActionIO } from "./io.js";
import { runOutputs, skippedOutputs, type Outputs } from "./outputs.js";
import { postReview, reviewMarker } from "./review.js";
import { buildSummary, triggerJson, type TriggerRecord } from "./summary.js";

export interface ResultOptions {
  io: ActionIO;
  inputs: ActionInputs;
  ctx: GitHubContext;
  api?: GitHubApi;
  redactor: Redactor;
  /** Known secret values (token, API key): a patch holding one is never uploaded or posted. */
  secrets: readonly string[];
  artifact: () => ArtifactUploader;
  /** The "working" comment posted at the start: stopped before the final comment replaces it. */
  progress?: ProgressComment;
}

function setOutputs(io: ActionIO, outputs: Outputs): void {
  for (const [name, value] of Object.entries(outputs) as Array<[keyof Outputs, string | undefined]>)
    io.setOutput(name, value ?? "");
}

async function writeSummary(io: ActionIO, markdown: string): Promise<void> {
  try {
    await io.writeSummary(markdown);
  } catch (error) {
    io.warning(`the job summary could not be written: ${(error as Error).message}`);
  }
}

export async function writeSkippedResults(
  options: ResultOptions,
  reason: string,
  trigger: TriggerRecord,
): Promise<void> {
  const { io } = options;
  io.notice(`agent-ci skipped: ${reason}`, { title: "agent-ci skipped" });
  setOutputs(io, skippedOutputs());
  await writeSummary(
    io,
    buildSummary({
      artifact: { kind: "disabled" },
      artifactName: options.inputs.artifact_name,
      skipped: reason,
      trigger,
      redactor: options.redactor,
    }),
  );
}

async function uploadArtifact(
  options: ResultOptions,
  outcome: RunOutcome,
  knownSecrets: SecretFinding[],
): Promise<ArtifactResult> {
  const { io, inputs } = options;
  if (!inputs.upload_artifact) return { kind: "disabled" };
  if (knownSecrets.length)
    io.warning(
      `the patch contains a known secret value; it is withheld from the artifact (${knownSecrets.length} finding(s))`,
      { title: "agent-ci: patch withheld" },
    );
  const name = runArtifactName(inputs.artifact_name, outcome.runId, inputs.attempt);
  const result = await uploadRunArtifact(options.artifact(), {
    name,
    files: artifactFiles(outcome.outDir, knownSecrets),
    rootDirectory: outcome.outDir,
    retentionDays: inputs.retention_days,
  });
  if (result.kind === "failed") {
    io.warning(
      `the artifact could not be uploaded: ${result.message}. The patch and the report stay on the runner in ${outcome.outDir} (see the patch_path and report_path outputs).`,
      { title: "agent-ci: artifact not uploaded" },
    );
  } else if (result.kind === "uploaded") {
    io.info(`artifact ${name} uploaded (id ${result.id})`);
  }
  return result;
}

async function postComment(
  options: ResultOptions,
  event: ActionEvent,
  outcome: RunOutcome,
  findings: SecretFinding[],
  url: string | undefined,
  notes: readonly string[],
): Promise<string | undefined> {
  const { io, inputs, ctx, api } = options;
  const target = eventTarget(event);
  if (!inputs.comment || !target) return undefined;
  if (!api) {
    io.warning("comment: no github_token, so no comment was posted; the report is in the job summary");
    return undefined;
  }
  await options.progress?.close();
  const report = outcome.report;
  const marker = commentMarker(ctx.workflow, ctx.job);
  if (!report && !options.progress?.posted) return undefined;
  const patchText = fs.existsSync(outcome.patchPath) ? fs.readFileSync(outcome.patchPath, "utf8") : "";
  const render = (maxChars: number) =>
    report
      ? buildCommentBody({
          marker,
          report,
          patchText,
          findings,
          artifactUrl: url,
          runUrl: runUrl(ctx),
          redactor: options.redactor,
          maxChars,
          notes,
          finalMessage: outcome.finalMessage,
        })
      : // The "working" comment must not stay: say how the run ended without a report.
        buildNoticeBody(
          marker,
          `agent-ci: the run ended (${outcome.exitReason}) without a report`,
          outcome.error ?? "",
          runUrl(ctx),
          options.redactor,
        );
  const result = await upsertComment(api, ctx, target, marker, render);
  if (result.kind === "failed") {
    io.warning(`${result.message} The report is in the job summary${url ? " and the artifact" : ""}.`, {
      title: "agent-ci: comment not posted",
    });
    return undefined;
  }
  io.info(`comment ${result.kind} on #${target.number}${result.url ? `: ${result.url}` : ""}`);
  return result.url ?? "";
}

/** task: review: the findings as one pull request review; sets `review_id`. Warns (never throws) when it cannot. */
async function postFindings(options: ResultOptions, event: ActionEvent, outcome: RunOutcome): Promise<void> {
  const { io, ctx, api } = options;
  const target = eventTarget(event);
  if (!outcome.review || !target) return;
  if (!api) {
    io.warning("review: no github_token, so the review was not posted; the findings are in output.json");
    return;
  }
  const result = await postReview(api, ctx, target.number, outcome.review, {
    marker: reviewMarker(ctx.workflow, ctx.job),
    runUrl: runUrl(ctx),
  });
  if (result.kind === "failed") {
    io.warning(`${result.message} The findings are in output.json and the artifact.`, {
      title: "agent-ci: review not posted",
    });
    return;
  }
  for (const warning of result.warnings) io.warning(warning, { title: "agent-ci: review" });
  io.setOutput("review_id", String(result.id));
  io.info(
    `review posted on #${target.number} with ${result.inline} inline comment(s)${result.superseded ? `, replacing ${result.superseded} earlier review(s)` : ""}${result.url ? `: ${result.url}` : ""}`,
  );
}

/** Everything after the run. Never throws for a GitHub write that failed: it warns and goes on. */
export async function writeRunResults(
  options: ResultOptions,
  event: ActionEvent,
  outcome: RunOutcome,
  trigger: TriggerRecord,
  /** What the comment says before the report (a resume that started fresh). */
  notes: readonly string[] = [],
): Promise<void> {
  const { io, inputs, ctx, redactor } = options;
  options.progress?.update({ kind: "publishing" });
  setOutputs(io, runOutputs(outcome));

  fs.writeFileSync(path.join(outcome.outDir, TRIGGER_FILE_NAME), triggerJson(trigger, redactor));
  const patchText = fs.existsSync(outcome.patchPath) ? fs.readFileSync(outcome.patchPath, "utf8") : "";
  // Scanned here too (not only by the runner), with the Action's own secrets: this gate guards GitHub writes.
  const findings =
    outcome.report?.patch.secretFindings ?? scanForSecrets(patchText, { secrets: options.secrets });
  const knownSecrets = scanForSecrets(patchText, { secrets: options.secrets }).filter(
    (f) => f.kind === "known_secret",
  );

  if (outcome.report)
    for (const a of annotationsFor(outcome.report))
      io[a.level](a.message, { title: a.title, file: a.file, startLine: a.line });

  const artifact = await uploadArtifact(options, outcome, knownSecrets);
  const url = artifact.kind === "uploaded" ? artifactUrl(ctx, artifact.id) : undefined;
  if (artifact.kind === "uploaded") {
    io.setOutput("artifact_id", String(artifact.id));
    io.setOutput("artifact_url", url ?? "");
  }

  await writeSummary(
    io,
    buildSummary({
      report: outcome.report,
      artifact,
      artifactName: runArtifactName(inputs.artifact_name, outcome.runId, inputs.attempt),
      artifactUrl: url,
      trigger,
      redactor,
    }),
  );
  const commentUrl = await postComment(
    options,
    event,
    outcome,
    [
      ...findings,
      ...knownSecrets.filter((k) => !findings.some((f) => f.file === k.file && f.line === k.line)),
    ],
    url,
    notes,
  );
  if (commentUrl !== undefined) io.setOutput("comment_url", commentUrl);
  await postFindings(options, event, outcome);
}
