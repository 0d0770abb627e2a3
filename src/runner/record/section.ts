// One part of report.json, the run's own or a capability's: the fields it owns and the warnings it raises.
// buildReport (index.ts) only assembles them.
export type { RecordSection, SectionRecord } from "./parts.js";
