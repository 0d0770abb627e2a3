// The run's record: report.json's content assembled from the run's own sections and those each capability
// contributes (sections.ts; each capability's part of the run gives its section, record/ names none of them).
// Pure assembly: it writes nothing; writeReportFiles validates the whole against the schema.
import { RunReport, type RunReportInput } from "../../report/index.js";
import type { ReportParts } from "./parts.js";
import { recordSections } from "./sections.js";

export type { RecordSection, SectionRecord } from "./section.js";
export {
  allCalls,
  type CapabilityPart,
  type ReportParts,
  type RunFailure,
  type RunInstructions,
  type TimedPhase,
} from "./parts.js";

/** The report's fields no section may leave out (those the schema does not let be undefined). */
const REQUIRED = Object.entries(RunReport.shape)
  .filter(([, field]) => !field.safeParse(undefined).success)
  .map(([key]) => key);

export function buildReport(parts: ReportParts): RunReportInput {
  const capabilities = parts.capabilities.flatMap((c) => (c.section ? [c.section] : []));
  const made = recordSections(capabilities).map((section) => section(parts));
  const report = Object.assign({}, ...made.map((m) => m.fields), {
    warnings: made.flatMap((m) => m.warnings ?? []),
  }) as RunReportInput;
  const missing = REQUIRED.filter((key) => report[key as keyof RunReportInput] === undefined);
  if (missing.length) throw new Error(`the record's sections left out ${missing.join(", ")}`);
  return report;
}
