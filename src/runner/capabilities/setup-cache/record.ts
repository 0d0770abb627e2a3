// What the setup cache did: hit, miss or refused (and why), the key's inputs (hashes and names, never a
// value), the entry written or why none was, and the time saved. A start that failed after its key was made
// records it too.
import type { RunReportInput, Warning } from "../../../report/index.js";
import type { SetupCacheRecord } from "../../../sandbox/setup/phase.js";
import type { RecordSection } from "../../record/section.js";

/** The record as report.json has it: setup's variables by name only. */
export function setupCacheReport(record: SetupCacheRecord): NonNullable<RunReportInput["setupCache"]> {
  const { write, ...rest } = record;
  return {
    ...rest,
    ...(write ? { write } : {}),
    inputs: {
      ...record.inputs,
      setup: [...record.inputs.setup],
      files: record.inputs.files.map((f) => ({ ...f })),
      env: record.inputs.env.map((e) => e.name),
    },
  };
}

export const setupCacheSection: RecordSection = (p) => {
  const record = p.start.setupCache;
  if (!record) return { fields: {} };
  const warnings: Warning[] = record.refused.map((r) => ({
    kind: "setup_cache_refused",
    severity: "warning",
    message: `A setup cache entry was refused (${r.tag}): ${r.reason}`,
  }));
  return { fields: { setupCache: setupCacheReport(record) }, warnings };
};
