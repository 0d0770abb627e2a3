// The egress policy the proxy enforces, as pure functions: the match of a host and port against the
// allowlist, and the addresses a name may never lead to. Bundled into the egress sidecar (keep it small:
// the parsing of `--allow-domain`, with its public-suffix list, lives in allowlist.ts on the host).
import net from "node:net";

/** One allowlist entry: an exact host or `*.suffix` (any name below it), on any port or one. */
export interface DomainRule {
  host: string;
  wildcard: boolean;
  port?: number;
}

export class EgressPolicyError extends Error {
  override readonly name = "EgressPolicyError";
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** `Example.COM.` → `example.com`; undefined for what is not a DNS name. */
export function normalizeHost(name: string): string | undefined {
  const host = name.trim().toLowerCase().replace(/\.$/, "");
  if (!host || host.length > 253) return undefined;
  return host.split(".").every((label) => LABEL.test(label)) ? host : undefined;
}

/** The rule that lets `host:port` through, or undefined. `*.example.com` matches names below it, not itself. */
export function matchDomain(
  rules: readonly DomainRule[],
  host: string,
  port: number,
): DomainRule | undefined {
  const name = normalizeHost(host);
  if (!name) return undefined;
  return rules.find(
    (rule) =>
      (rule.port === undefined || rule.port === port) &&
      (rule.wildcard ? name.endsWith(`.${rule.host}`) : name === rule.host),
  );
}

/** A rule the way it is written: `host`, `*.domain`, with `:port`. */
export function ruleText(rule: DomainRule): string {
  return `${rule.wildcard ? "*." : ""}${rule.host}${rule.port === undefined ? "" : `:${rule.port}`}`;
}

/** Renders rules back the way they are written, for messages ("allowed: …"). */
export function describeRules(rules: readonly DomainRule[]): string {
  return rules.map(ruleText).join(", ");
}

function blockList(subnets: ReadonlyArray<readonly [string, number, "ipv4" | "ipv6"]>): net.BlockList {
  const list = new net.BlockList();
  for (const [address, prefix, family] of subnets) list.addSubnet(address, prefix, family);
  return list;
}

/** Cloud metadata services: refused always, whatever the user opted in. */
const METADATA = blockList([
  ["169.254.169.254", 32, "ipv4"],
  ["100.100.100.200", 32, "ipv4"],
  ["fd00:ec2::254", 128, "ipv6"],
]);

/** Addresses that are not the public internet: refused unless the host is opted in (`--allow-private-host`). */
const NON_PUBLIC = blockList([
  ["0.0.0.0", 8, "ipv4"],
  ["10.0.0.0", 8, "ipv4"],
  ["100.64.0.0", 10, "ipv4"],
  ["127.0.0.0", 8, "ipv4"],
  ["169.254.0.0", 16, "ipv4"],
  ["172.16.0.0", 12, "ipv4"],
  ["192.0.0.0", 24, "ipv4"],
  ["192.168.0.0", 16, "ipv4"],
  ["198.18.0.0", 15, "ipv4"],
  ["224.0.0.0", 3, "ipv4"],
  ["::", 128, "ipv6"],
  ["::1", 128, "ipv6"],
  ["fc00::", 7, "ipv6"],
  ["fe80::", 10, "ipv6"],
  ["ff00::", 8, "ipv6"],
]);

/** An IPv4 address inside IPv6 (`::ffff:10.0.0.1`) is judged as the IPv4 address. */
function unwrap(address: string): { address: string; family: "ipv4" | "ipv6" } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return { address: mapped[1], family: "ipv4" };
  return { address, family: net.isIPv6(address) ? "ipv6" : "ipv4" };
}

/** Why the proxy must not connect to `address` for this host, or undefined when it may. */
export function addressRefusal(address: string, privateAllowed: boolean): string | undefined {
  const { address: a, family } = unwrap(address);
  if (METADATA.check(a, family))
    return `resolves to the cloud metadata address ${a}, which is never reachable`;
  if (!privateAllowed && NON_PUBLIC.check(a, family)) {
    return `resolves to the non-public address ${a} (loopback, link-local or private); opt the host in with --allow-private-host`;
  }
  return undefined;
}

/**
 * The refusal text: what was refused and what is allowed (the rules, or a description of a setting that has
 * none), so a model does not retry blindly.
 */
export function refusalMessage(
  host: string,
  port: number,
  reason: string,
  rules: readonly DomainRule[] | { described: string },
): string {
  const allowed = "described" in rules ? rules.described : describeRules(rules) || "nothing";
  return `agent-ci's network policy refused ${host}:${port}: ${reason}; allowed: ${allowed}`;
}
