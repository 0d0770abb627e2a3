// The run this one continues, and whether its policy differed (never adopted: this run's decides).
import type { RecordSection } from "./section.js";

export const resumeSection: RecordSection = ({ resume }) => {
  if (!resume) return { fields: {} };
  const { record, policyChanges } = resume;
  return {
    fields: {
      resumedFrom: {
        runId: record.report.runId,
        record: record.given,
        exitReason: record.report.exitReason,
        baseCommit: record.baseCommit,
        restoredMessages: record.conversation.messages.length,
        restoredReads: resume.restoredReads,
        earlierPolicy: policyChanges.length ? record.report.policy : undefined,
        publishedCommit: resume.publishedCommit,
      },
    },
    warnings: policyChanges.length
      ? [
          {
            kind: "resume_policy_changed",
            severity: "warning",
            message: `This run's policy differs from that of run ${record.report.runId}, which it continues: ${policyChanges.join("; ")}. The earlier policy is not adopted: this run's own configuration decides. Both are in the report (policy, resumedFrom.earlierPolicy).`,
          },
        ]
      : [],
  };
};
