// One part of report.json, the run's own or a capability's: the fields it owns and the warnings it raises.
// buildReport (index.ts) only assembles them.
import type { RunReportInput, Warning } from "../../report/index.js";
import type { ReportParts } from "./parts.js";

export interface SectionRecord {
  fields: Partial<Omit<RunReportInput, "warnings">>;
  warnings?: Warning[];
}

export type RecordSection = (parts: ReportParts) => SectionRecord;
