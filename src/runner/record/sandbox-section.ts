// The sandbox: the workspace as copied in, the image, the hardening the engine applied, and the egress
// ledger (the sidecar's connections, attributed by the capabilities that know their callers — MCP servers —,
// and the connections capabilities made from the host: WebFetch's fetches).
import path from "node:path";
import type { EgressConnection, RunReportInput, Warning } from "../../report/index.js";
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

/** The ledger with WebFetch's fetches, which run without a sidecar too (`--network on`). */
function withFetches(
  egress: RunReportInput["egress"],
  fetches: readonly EgressConnection[],
): RunReportInput["egress"] {
  if (!fetches.length) return egress;
  return egress
    ? { ...egress, connections: [...egress.connections, ...fetches] }
    : { allowed: [], allowedHosts: [], privateHosts: [], connections: [...fetches] };
}

export const sandboxSection: RecordSection = (p) => {
  const { config, sandbox, capabilities } = p;
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
      egress: withFetches(
        recorded.egress && {
          ...recorded.egress,
          connections: recorded.egress.connections.map((e) => ({
            ...e,
            caller: capabilities.reduce(
              (caller, c) => (c.attribute ? c.attribute(caller, e.startedAt) : caller),
              e.caller,
            ),
          })),
        },
        capabilities.flatMap((c) => c.connections?.() ?? []),
      ),
    },
    warnings,
  };
};
