// One capability's part of report.json: the fields it owns and the warnings it raises. A new capability
// adds a section file and one line in sections.ts; buildReport (index.ts) only assembles them.
import type { RunReportInput, Warning } from "../../report/index.js";
import type { ReportParts } from "./parts.js";

export interface SectionRecord {
  fields: Partial<Omit<RunReportInput, "warnings">>;
  warnings?: Warning[];
}

export type RecordSection = (parts: ReportParts) => SectionRecord;
