// Review mode's result: the findings schema the agent answers through StructuredOutput (defined once, in zod,
// and handed to the model and to ajv as JSON Schema), and where each finding may go. GitHub accepts a review
// comment only on a line the pull request's diff shows on the head side (an added or a context line of a
// hunk), with a range inside one hunk; a finding anywhere else goes into the review's summary instead.
import { z } from "zod";
import { parseGitDiff, type DiffFile } from "../report/diff-parse.js";
import { capText } from "../report/format.js";
import { markdownCode } from "../report/markdown.js";
import { neutralizeGitHubText, type GitHubTextOptions } from "../report/github-text.js";

/** GitHub refuses a review or comment body over 65,536 characters: agent-ci stays well below. */
const COMMENT_BODY_MAX_CHARS = 8_000;
const REVIEW_BODY_MAX_CHARS = 60_000;

export const SEVERITIES = ["critical", "major", "minor", "nit"] as const;

export const Finding = z
  .object({
    path: z.string().min(1).describe("File path relative to the repository root, as the diff names it."),
    line: z
      .number()
      .int()
      .positive()
      .describe("Line number in the new (head) version of the file; the last line of a range."),
    start_line: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("First line of a range in the head version (omit for one line)."),
    severity: z
      .enum(SEVERITIES)
      .describe("critical: breaks or endangers; major: a real bug; minor: worth fixing; nit: style."),
    body: z.string().min(1).describe("What is wrong and what to do, in Markdown."),
  })
  .strict();
export type Finding = z.infer<typeof Finding>;

export const ReviewResult = z
  .object({
    summary: z
      .string()
      .describe("The review in a few sentences: what the change does and whether it is ready."),
    findings: z
      .array(Finding)
      .describe(
        "One entry per problem, on the lines of the diff it is about. Empty when there is nothing to say.",
      ),
  })
  .strict();
export type ReviewResult = z.infer<typeof ReviewResult>;

/** The JSON Schema the model's StructuredOutput tool gets in review mode. */
export function reviewJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ReviewResult, { target: "draft-2020-12" }) as Record<string, unknown>;
}

/** A finding the review shows in its summary, with why it could not be an inline comment. */
export interface OutsideFinding {
  finding: Finding;
  why: string;
}

export interface PlacedFindings {
  inline: Finding[];
  outside: OutsideFinding[];
}

/** A path as the model may give it (`./a`, `/workspace/a`, `a`) → the diff's form. */
function repoPath(raw: string): string {
  return raw.replace(/^\/workspace\//, "").replace(/^(\.\/)+/, "");
}

/** Head-side line ranges of each file's hunks (a hunk that only deletes has none). */
function headRanges(files: DiffFile[]): Map<string, Array<[number, number]>> {
  const byPath = new Map<string, Array<[number, number]>>();
  for (const file of files) {
    if (file.status === "deleted" || file.binary) continue;
    const ranges = file.hunks
      .filter((h) => h.newLines > 0)
      .map((h): [number, number] => [h.newStart, h.newStart + h.newLines - 1]);
    byPath.set(file.path, ranges);
  }
  return byPath;
}

/** The hunk (head-side range) holding `line`: binary search, as git writes a file's hunks in order. */
function hunkOf(ranges: Array<[number, number]>, line: number): [number, number] | undefined {
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const range = ranges[mid] as [number, number];
    if (line < range[0]) high = mid - 1;
    else if (line > range[1]) low = mid + 1;
    else return range;
  }
  return undefined;
}

/** Splits findings into those that can be inline comments on this diff and those for the summary. */
export function placeFindings(findings: readonly Finding[], diffText: string): PlacedFindings {
  const ranges = headRanges(parseGitDiff(diffText).files);
  const placed: PlacedFindings = { inline: [], outside: [] };
  for (const raw of findings) {
    const finding = { ...raw, path: repoPath(raw.path) };
    const hunks = ranges.get(finding.path);
    if (!hunks) {
      placed.outside.push({ finding, why: "the file is not changed by the pull request" });
      continue;
    }
    const first = finding.start_line ?? finding.line;
    const hunk = hunkOf(hunks, finding.line);
    if (!hunk) {
      placed.outside.push({ finding, why: `line ${finding.line} is not in the diff` });
    } else if (first > finding.line || first < hunk[0]) {
      placed.outside.push({
        finding,
        why: `lines ${first}-${finding.line} are not within one hunk of the diff`,
      });
    } else {
      placed.inline.push(
        first === finding.line
          ? { path: finding.path, line: finding.line, severity: finding.severity, body: finding.body }
          : finding,
      );
    }
  }
  return placed;
}

const SEVERITY_LABELS: Record<Finding["severity"], string> = {
  critical: "🔴 critical",
  major: "🟠 major",
  minor: "🟡 minor",
  nit: "⚪ nit",
};

/** The text of one inline comment. */
export function commentBody(finding: Finding, text: GitHubTextOptions = {}): string {
  // The finding is the model's text: no image, no HTML, no link out of the repository's host, no ping.
  return capText(
    `**${SEVERITY_LABELS[finding.severity]}**: ${neutralizeGitHubText(finding.body, text)}`,
    COMMENT_BODY_MAX_CHARS,
  );
}

/** The review's summary: the marker, the agent's summary, and the findings that could not be inline. */
export function reviewBody(options: {
  marker: string;
  summary: string;
  placed: PlacedFindings;
  runUrl?: string;
  /** The repository's GitHub host: the model's links to it stay links. */
  text?: GitHubTextOptions;
}): string {
  const { placed } = options;
  const summary = capText(
    neutralizeGitHubText(options.summary.trim(), options.text) || "(no summary)",
    COMMENT_BODY_MAX_CHARS,
  );
  const lines = [options.marker, "### agent-ci review", "", summary, ""];
  const counts = `${placed.inline.length} inline comment(s)${placed.outside.length ? `, ${placed.outside.length} finding(s) outside the diff` : ""}.`;
  lines.push(counts);
  const footer = options.runUrl ? `\n\n[Workflow run](${options.runUrl})` : "";
  if (placed.outside.length) {
    lines.push("", "#### Outside the diff", "");
    // Each entry is cut to a share of the room left, so the body stays under GitHub's limit.
    let room = REVIEW_BODY_MAX_CHARS - lines.join("\n").length - footer.length - 200;
    for (const [i, { finding, why }] of placed.outside.entries()) {
      const where =
        finding.start_line && finding.start_line !== finding.line
          ? `${finding.path}:${finding.start_line}-${finding.line}`
          : `${finding.path}:${finding.line}`;
      const entry = capText(
        `- ${markdownCode(where, 300)} ${commentBody(finding, options.text)} _(${why})_`,
        Math.max(200, Math.floor(room / (placed.outside.length - i))),
      );
      if (entry.length > room) {
        lines.push(`- … ${placed.outside.length - i} more in output.json`);
        break;
      }
      lines.push(entry);
      room -= entry.length + 1;
    }
  }
  return lines.join("\n") + footer;
}
