// The egress ledger (report.json's `egress`): what the sidecar was told (the allowlist, the private hosts, the
// injected secrets by name), the connections it saw, each attributed by the capabilities that know their
// callers better (an MCP server in the sandbox), the connections capabilities made from the host (WebFetch's
// fetches, which run without a sidecar too: `--network on`), and the sidecar's hardening read back.
import type { EgressConnection, RunReportInput } from "../../../report/index.js";
import { ruleText } from "../../../policy/network.js";
import type { SandboxParts } from "../../../sandbox/assemble.js";
import { injectionText } from "../../../sandbox/egress/allowlist.js";
import type { CapabilityPart } from "../../record/parts.js";
import type { RecordSection } from "../../record/section.js";
import { recordedHardening } from "../../run/sandbox-record.js";

type Ledger = NonNullable<RunReportInput["egress"]>;

/** The sidecar's ledger as report.json has it (none: the sandbox had no sidecar). */
function sidecarLedger(egress: SandboxParts["egress"]): Ledger | undefined {
  if (!egress) return undefined;
  const { options, hardening } = egress;
  return {
    allowed: options.given,
    allowedHosts: options.rules.map(ruleText),
    privateHosts: options.privateHosts,
    ...(options.injections.length ? { injectSecrets: options.injections.map(injectionText) } : {}),
    connections: egress.entries,
    sidecarHardening: hardening && { ...recordedHardening(hardening), missing: hardening.missing },
  };
}

/** The ledger with the connections made from the host. */
function withFetches(ledger: Ledger | undefined, fetches: readonly EgressConnection[]): Ledger | undefined {
  if (!fetches.length) return ledger;
  return ledger
    ? { ...ledger, connections: [...ledger.connections, ...fetches] }
    : { allowed: [], allowedHosts: [], privateHosts: [], connections: [...fetches] };
}

/** Each connection's caller, as the capabilities that know it better say. */
const callerOf = (capabilities: readonly CapabilityPart[], e: EgressConnection) =>
  capabilities.reduce((caller, c) => (c.attribute ? c.attribute(caller, e.startedAt) : caller), e.caller);

export const egressSection: RecordSection = (p) => {
  // A start that failed after the sandbox was built (its setup, say) records what it had all the same.
  const ledger = sidecarLedger((p.sandbox ?? p.start.parts)?.egress);
  const connections = ledger?.connections.map((e) => ({ ...e, caller: callerOf(p.capabilities, e) }));
  const fetches = p.capabilities.flatMap((c) => c.connections?.() ?? []);
  return { fields: { egress: withFetches(ledger && connections && { ...ledger, connections }, fetches) } };
};
