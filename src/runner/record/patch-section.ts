// What changed: the patch's summary (with possible secrets found in it), verify's result, the outcome
// they give, and what was changed but left out.
import { deriveOutcome, summarizePatch } from "../../report/index.js";
import type { Warning } from "../../report/index.js";
import type { RecordSection } from "./section.js";

export const patchSection: RecordSection = (p) => {
  const patch = summarizePatch(p.patch.bytes, { secrets: p.secrets });
  const warnings: Warning[] = [];
  if (p.patch.note) warnings.push({ kind: "patch", severity: "warning", message: p.patch.note });
  for (const x of p.patch.excluded)
    warnings.push({
      kind: "patch_excluded",
      severity: "warning",
      message: `${x.path} was changed but left out of the patch: ${x.reason}`,
    });
  if (patch.secretFindings.length)
    warnings.push({
      kind: "secret_in_patch",
      severity: "critical",
      message: `The patch contains ${patch.secretFindings.length} possible secret(s); review before applying or posting it.`,
    });
  return {
    fields: {
      outcome: deriveOutcome({ exitReason: p.exitReason, patch, verify: p.verify }),
      patch,
      verify: p.verify,
    },
    warnings,
  };
};
