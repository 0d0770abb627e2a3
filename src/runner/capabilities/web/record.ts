// The model calls the web tools made (WebFetch's reading model, WebSearch); their fetches are in the
// egress ledger (sandbox.ts), their cost in the run's totals (run.ts).
import type { RecordSection } from "../../record/section.js";

export const webSection: RecordSection = (p) => ({
  fields: { sideCalls: p.sideCalls.length ? p.sideCalls : undefined },
});
