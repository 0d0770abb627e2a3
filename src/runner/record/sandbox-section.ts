// The sandbox: the workspace as copied in, the image, the hardening the engine applied, and whether it had the
// network for the whole run (the egress ledger is the egress capability's section: capabilities/egress/).
import path from "node:path";
import type { Warning } from "../../report/index.js";
import { gitSync } from "../../host-git.js";
import { sandboxRecord } from "../run/sandbox-record.js";
import type { RecordSection } from "./section.js";

function hostBaseCommit(workspace: string): string | undefined {
  try {
    return gitSync(["rev-parse", "HEAD"], { cwd: workspace }).trim();
  } catch {
    return undefined;
  }
}

/** The commit the copy was taken from, read with its listing; asked of the host's git only without a copy. */
function baseCommitOf(p: Parameters<RecordSection>[0]): string | undefined {
  const copied = (p.sandbox ?? p.start.parts)?.copy;
  return copied ? copied.baseCommit : hostBaseCommit(p.config.workspace);
}

export const sandboxSection: RecordSection = (p) => {
  const { config, sandbox } = p;
  // A start that failed after the sandbox was built (its setup, say) records what it had all the same.
  const recorded = sandboxRecord(sandbox ?? p.start.parts, p.policy?.enforcedAt ?? []);
  const warnings: Warning[] = [];
  if (config.network === "on")
    warnings.push({
      kind: "network_on",
      severity: "warning",
      message: "The sandbox had network access for the whole run.",
    });
  if (sandbox?.hardening.missing.length)
    warnings.push({
      kind: "weak_hardening",
      severity: "critical",
      message: `The engine did not apply: ${sandbox.hardening.missing.join("; ")}`,
    });
  return {
    fields: {
      workspace: {
        path: path.basename(p.resume?.workspace ?? config.workspace),
        repo: config.repo,
        baseCommit: p.resume ? p.resume.record.baseCommit : baseCommitOf(p),
        ...recorded.copy,
      },
      image: recorded.image,
      hardening: recorded.hardening,
    },
    warnings,
  };
};
