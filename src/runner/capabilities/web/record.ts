// The model calls the web tools made (WebFetch's reading model, WebSearch); their fetches are in the
// egress ledger (capabilities/egress/record.ts), their cost in the run's totals (record/run-section.ts).
import type { SideCall } from "../../../report/index.js";
import type { RecordSection } from "../../record/section.js";

export const webSection =
  (sideCalls: readonly SideCall[]): RecordSection =>
  () => ({
    fields: { sideCalls: sideCalls.length ? [...sideCalls] : undefined },
  });
