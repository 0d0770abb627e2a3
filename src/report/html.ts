// report.html: one self-contained page (inline CSS and JS, no network, works from file://) built from the report
// data: summary header, timeline of turns and tool calls, call details, the patch as a diff, usage, run details.
// The data travels as JSON in a <script type="application/json"> block; a Content-Security-Policy with hashes
// of the inline style and script forbids every other resource.
import { createHash } from "node:crypto";
import { parseGitDiff, type DiffFile, type DiffLineType } from "./diff-parse.js";
import { OUTCOME_LABELS, describeCall, stripControl } from "./format.js";
import { REPORT_CLIENT_JS } from "./html-client-js.js";
import type { LineSign, PatchView, ReportPageData, ViewFile, ViewLine } from "./html-data.js";
import { REPORT_CSS } from "./html-style.js";
import { createRedactor, type Redactor } from "./redact.js";
import type { RunReport } from "./schema.js";

/** Diff lines embedded in the page, over all files; the rest is left to patch.diff. */
export const HTML_MAX_PATCH_LINES = 20_000;

export interface HtmlOptions {
  /** The run's patch (patch.diff). Shown as a diff per file, redacted for display; absent: file list only. */
  patchText?: string;
  /** Redaction for the displayed patch and a last pass over the data. Default: token formats only. */
  redactor?: Redactor;
  /** Cap on embedded diff lines. Default HTML_MAX_PATCH_LINES. */
  maxPatchLines?: number;
}

const LINE_TYPES: Record<DiffLineType, LineSign> = {
  add: "+",
  del: "-",
  ctx: " ",
  note: "\\",
};

function viewFile(file: DiffFile, redactor: Redactor, budget: number): ViewFile {
  let left = budget;
  let omitted = 0;
  const hunks: ViewFile["hunks"] = [];
  for (const hunk of file.hunks) {
    if (left <= 0) {
      omitted += hunk.lines.length;
      continue;
    }
    const kept = hunk.lines.slice(0, left);
    omitted += hunk.lines.length - kept.length;
    left -= kept.length;
    const texts = redactor.redactLines(kept.map((line) => stripControl(line.text)));
    hunks.push({
      header: redactor.redact(hunk.header),
      lines: kept.map((line, i): ViewLine => [
        LINE_TYPES[line.type],
        line.oldLine ?? null,
        line.newLine ?? null,
        texts[i] ?? "",
      ]),
    });
  }
  return {
    path: redactor.redact(file.path),
    ...(file.oldPath !== undefined ? { oldPath: redactor.redact(file.oldPath) } : {}),
    status: file.status,
    binary: file.binary,
    added: file.added,
    removed: file.removed,
    lines: file.hunks.reduce((sum, hunk) => sum + hunk.lines.length, 0),
    omittedLines: omitted,
    hunks,
  };
}

function patchView(patchText: string | undefined, redactor: Redactor, maxLines: number): PatchView {
  if (patchText === undefined) return { available: false, truncated: false, files: [] };
  const files: ViewFile[] = [];
  let left = maxLines;
  for (const file of parseGitDiff(patchText).files) {
    const view = viewFile(file, redactor, left);
    left -= view.lines - view.omittedLines;
    files.push(view);
  }
  return { available: true, truncated: files.some((file) => file.omittedLines > 0), files };
}

/** JSON that is safe inside a <script> element: no `<`, `>`, `&` or line separators survive literally. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function sha256Base64(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("base64");
}

export function renderHtml(report: RunReport, options: HtmlOptions = {}): string {
  const redactor = options.redactor ?? createRedactor();
  // Control characters (ANSI colours) are removed before the last redaction pass, so a secret split by a colour
  // code is joined, then found.
  const displayable = JSON.parse(
    JSON.stringify(report, (_key, value: unknown) =>
      typeof value === "string" ? stripControl(value) : value,
    ),
  ) as RunReport;
  const safeReport = redactor.redactDeep(displayable);
  const data: ReportPageData = {
    report: safeReport,
    callSummaries: safeReport.toolCalls.map((call) => describeCall(call)),
    patch: patchView(options.patchText, redactor, options.maxPatchLines ?? HTML_MAX_PATCH_LINES),
  };
  const css = REPORT_CSS;
  const js = REPORT_CLIENT_JS;
  const csp = [
    "default-src 'none'",
    `style-src 'sha256-${sha256Base64(css)}'`,
    `script-src 'sha256-${sha256Base64(js)}'`,
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  const title = `agent-ci · ${OUTCOME_LABELS[safeReport.outcome]} · ${safeReport.runId}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="generator" content="agent-ci ${escapeHtml(safeReport.agentCiVersion)}">
<title>${escapeHtml(title)}</title>
<style>${css}</style>
</head>
<body>
<div class="wrap" id="app"><noscript>This report is drawn by JavaScript, which is turned off. The same data is in report.json and report.md.</noscript></div>
<script type="application/json" id="report-data">${jsonForScript(data)}</script>
<script>${js}</script>
</body>
</html>
`;
}
