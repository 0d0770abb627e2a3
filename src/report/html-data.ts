// The data report.html carries in its JSON block: written by renderHtml (html.ts, Node) and read by the page's
// script (html-client/, browser). Types only, so both sides can import it.
import type { RunReport } from "./schema.js";

/** A diff line's sign: added, removed, context, or a "\\ No newline at end of file" note. */
export type LineSign = "+" | "-" | " " | "\\";

/** [sign, old line, new line, text]. */
export type ViewLine = [LineSign, number | null, number | null, string];

export interface ViewHunk {
  header: string;
  lines: ViewLine[];
}

export interface ViewFile {
  path: string;
  oldPath?: string;
  status: string;
  binary: boolean;
  added: number;
  removed: number;
  lines: number;
  omittedLines: number;
  hunks: ViewHunk[];
}

export interface PatchView {
  available: boolean;
  truncated: boolean;
  files: ViewFile[];
}

export interface ReportPageData {
  /** The report, control characters removed and redacted. */
  report: RunReport;
  /** One line per tool call (describeCall), in toolCalls order. */
  callSummaries: string[];
  patch: PatchView;
}
