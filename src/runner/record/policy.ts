// The policy that decided the calls, every call it denied with the narrowest rule that would allow it, and the
// settings keys it left unused.
import { describeIgnored } from "../../policy/workspace-trust.js";
import { summarizeCall, type Warning } from "../../report/index.js";
import { allCalls } from "./parts.js";
import type { RecordSection } from "./section.js";

export const policySection: RecordSection = (p) => {
  const { policy } = p;
  const mode = policy?.policy.mode ?? p.config.mode ?? "default";
  const denials = allCalls(p.loop, p.capabilities)
    .filter((c) => c.decision?.behavior === "deny")
    .map((c) => ({
      callId: c.id,
      tool: c.tool,
      summary: summarizeCall(c.tool, c.input),
      reason: c.decision?.reason ?? "",
      rule: c.decision?.rule,
      ...(c.agent ? { agent: c.agent } : {}),
      narrowestAllowRule: policy?.narrowestAllowRule(c) ?? null,
    }));
  const warnings: Warning[] = (policy?.policy.ignored ?? [])
    .filter((i) => i.kind === "key")
    .map((i) => ({ kind: "settings_keys", severity: i.severity ?? "info", message: describeIgnored(i) }));
  if (mode === "bypassPermissions")
    warnings.unshift({
      kind: "bypass_permissions",
      severity: "critical",
      message: "**bypassPermissions**: rule checks were skipped; only the sandbox and protected paths held.",
    });
  return { fields: { policy: policy?.summary ?? { mode, rules: [], ignored: [] }, denials }, warnings };
};
