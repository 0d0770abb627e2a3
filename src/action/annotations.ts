// Annotations from the report: a warning per possible secret in the patch and per denied call, a notice per
// failed call, each pointing at the file when there is one. GitHub shows at most 10 annotations of a level
// per step, so each level is capped and the rest counted in one more line. Pure.
import { capText, summarizeCall, type RunReport } from "../report/index.js";
import { workspaceRelative } from "../report/format.js";

export const MAX_ANNOTATIONS_PER_KIND = 9;

export interface Annotation {
  level: "warning" | "notice";
  title: string;
  message: string;
  file?: string;
  line?: number;
}

function fileOf(input: unknown): string | undefined {
  if (typeof input !== "object" || input === null) return undefined;
  const record = input as Record<string, unknown>;
  const value = record.file_path ?? record.path ?? record.notebook_path;
  if (typeof value !== "string" || !value) return undefined;
  const rel = workspaceRelative(value);
  return rel.startsWith("/") || rel.startsWith("..") || rel === "" ? undefined : rel;
}

function capped(list: Annotation[], level: Annotation["level"], what: string): Annotation[] {
  if (list.length <= MAX_ANNOTATIONS_PER_KIND) return list;
  const rest = list.length - MAX_ANNOTATIONS_PER_KIND;
  return [
    ...list.slice(0, MAX_ANNOTATIONS_PER_KIND),
    {
      level,
      title: `agent-ci: ${rest} more ${what}`,
      message: `${rest} more ${what}; see the job summary or report.html in the artifact.`,
    },
  ];
}

export function annotationsFor(report: RunReport): Annotation[] {
  const calls = new Map(report.toolCalls.map((call) => [call.id, call]));
  const denied = report.denials.map((denial): Annotation => {
    const call = calls.get(denial.callId);
    const rule = denial.narrowestAllowRule ? ` To allow it: ${denial.narrowestAllowRule}` : "";
    const what = call ? summarizeCall(call.tool, call.input) : denial.summary;
    return {
      level: "warning",
      title: `agent-ci denied ${denial.tool}`,
      message: `${denial.tool}: ${capText(what, 200)} — ${denial.reason}${rule}`,
      file: fileOf(call?.input),
    };
  });
  const failed = report.toolCalls
    .filter(
      (call) => call.isError && call.errorKind !== "permission_denied" && call.decision?.behavior !== "deny",
    )
    .map((call): Annotation => ({
      level: "notice",
      title: `agent-ci: ${call.tool} failed${call.errorKind ? ` (${call.errorKind})` : ""}`,
      message: `${call.tool}: ${capText(summarizeCall(call.tool, call.input), 200)} — ${call.resultPreview.split("\n")[0]?.slice(0, 300) ?? ""}`,
      file: fileOf(call.input),
    }));
  const secrets = report.patch.secretFindings.map((finding): Annotation => ({
    level: "warning",
    title: "agent-ci: possible secret in the patch",
    message: `The patch adds what looks like a ${finding.kind}. It was not posted to GitHub; review it before applying the patch.`,
    file: finding.file,
    line: finding.line,
  }));
  // Secrets first: of the ten warnings GitHub shows per step, they matter most.
  return [
    ...capped([...secrets, ...denied], "warning", "warnings (denied calls or possible secrets)"),
    ...capped(failed, "notice", "failed calls"),
  ];
}
