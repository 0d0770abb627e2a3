// The data report.html carries in its JSON block: written by renderHtml (html.ts, Node) and read by the page's
// script (html-client/, browser). Types only, so both sides can import it.
import type { RunReport } from "./schema.js";

/** [type, old line, new line, text]: type is "+", "-", " " or "\\". */
export type ViewLine = [string, number | null, number | null, string];

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
