// The job summary: report.md (re-rendered with the artifact link, within GitHub's 1 MiB per step), a line
// about the artifact, and what was stripped from the untrusted GitHub text. Also trigger.json, the record of
// that text as received (raw) and as shown to the model. Pure, apart from nothing: main.ts writes both.
import {
  GITHUB_JOB_SUMMARY_MAX_BYTES,
  escapeMarkdownInline,
  renderMarkdown,
  type Redactor,
  type RunReport,
} from "../report/index.js";
import type { ArtifactResult } from "./artifact.js";
import type { UntrustedText } from "./prompt.js";
import { describeRemoved, removedCount } from "./sanitize.js";

/** Room for the lines around report.md. */
const SUMMARY_FRAME_BYTES = 16_000;

export interface TriggerRecord {
  event: string;
  action?: string;
  actor: string;
  target?: { number: number; isPullRequest: boolean };
  decision: string;
  untrusted: UntrustedText[];
}

function artifactLine(artifact: ArtifactResult, artifactUrl: string | undefined, name: string): string {
  switch (artifact.kind) {
    case "uploaded":
      return `**Artifact:** [${escapeMarkdownInline(name)}](${encodeURI(artifactUrl ?? "")}) (id ${artifact.id}): patch.diff, report.json, report.md, report.html`;
    case "failed":
      return `> [!WARNING]\n> The artifact could not be uploaded (${escapeMarkdownInline(artifact.message)}). The files stayed on the runner.`;
    case "disabled":
      return "";
  }
}

function triggerSection(trigger: TriggerRecord | undefined): string {
  if (!trigger) return "";
  const stripped = trigger.untrusted.filter((u) => removedCount(u.removed) > 0);
  const lines = [
    `<details><summary>Trigger: <code>${escapeMarkdownInline(trigger.event)}${trigger.action ? `.${escapeMarkdownInline(trigger.action)}` : ""}</code> by ${escapeMarkdownInline(trigger.actor || "unknown")}</summary>`,
    "",
    `- ${escapeMarkdownInline(trigger.decision)}`,
    `- ${trigger.untrusted.length} piece(s) of GitHub text were given to the model as untrusted data${trigger.untrusted.some((u) => u.truncated) ? " (some shortened)" : ""}.`,
    ...stripped.map((u) => `- removed from ${escapeMarkdownInline(u.source)}: ${describeRemoved(u.removed)}`),
    "- The raw text is kept in trigger.json in the artifact.",
    "",
    "</details>",
  ];
  return lines.join("\n");
}

export interface SummaryOptions {
  report?: RunReport;
  artifact: ArtifactResult;
  artifactName: string;
  artifactUrl?: string;
  trigger?: TriggerRecord;
  /** Shown instead of the report when the run never started. */
  skipped?: string;
  redactor: Redactor;
}

export function buildSummary(options: SummaryOptions): string {
  if (options.skipped) {
    return options.redactor.redact(
      `### ⏭️ agent-ci: skipped\n\n${escapeMarkdownInline(options.skipped)}\n\n${triggerSection(options.trigger)}\n`,
    );
  }
  const report = options.report
    ? renderMarkdown(options.report, {
        maxChars: GITHUB_JOB_SUMMARY_MAX_BYTES,
        maxBytes: GITHUB_JOB_SUMMARY_MAX_BYTES - SUMMARY_FRAME_BYTES,
        artifactUrl: options.artifactUrl,
      })
    : "### ❌ agent-ci: no report\n\nThe run ended before a report could be written; see the step log.";
  const parts = [
    report.trimEnd(),
    artifactLine(options.artifact, options.artifactUrl, options.artifactName),
    triggerSection(options.trigger),
  ];
  return options.redactor.redact(`${parts.filter(Boolean).join("\n\n")}\n`);
}

/** trigger.json: the record of the event and its untrusted text, redacted. */
export function triggerJson(trigger: TriggerRecord, redactor: Redactor): string {
  return `${JSON.stringify(redactor.redactDeep(trigger), null, 2)}\n`;
}
