// The network policy, as pure functions: the run's network modes, domain rules (`--allow-domain` entries
// and `WebFetch(domain:…)` rules alike) and the one match of a host against them, and the one answer to
// "may this host be reached" — a name on the allowlist, never an IP literal, every address it resolves to
// public (unless the host was opted in) and never a cloud metadata address. The egress proxy decides every
// connection with it, and so does anything else that reaches the network for the agent.
//
// Bundled into the egress sidecar (scripts/embedded.mjs): import nothing but Node's own modules here. The
// parsing of `--allow-domain`, with its presets and public-suffix list, lives on the host
// (sandbox/egress/allowlist.ts).
import { BlockList, isIP, isIPv6 } from "node:net";

/** `--network`: no network, the network for setup commands only, the run's own network, or the allowlist. */
export const NETWORK_POLICIES = ["none", "setup", "on", "allowlist"] as const;
export type NetworkPolicy = (typeof NETWORK_POLICIES)[number];

/** One domain rule: an exact host or `*.suffix` (any name below it), on any port or one. */
export interface DomainRule {
  host: string;
  wildcard: boolean;
  port?: number;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** `Example.COM.` → `example.com`; undefined for what is not a DNS name. */
export function normalizeHost(name: string): string | undefined {
  const host = name.trim().toLowerCase().replace(/\.$/, "");
  if (!host || host.length > 253) return undefined;
  return host.split(".").every((label) => LABEL.test(label)) ? host : undefined;
}

const looksLikeAddress = (host: string): boolean =>
  isIP(host.replace(/^\[|\]$/g, "")) !== 0 || /^[0-9.]+$/.test(host);

/**
 * Reads `host`, `*.host`, each with an optional `:port`, into a rule; a string saying what is wrong
 * otherwise. Addresses are refused: rules name hosts, and the addresses they lead to are checked apart.
 */
export function parseDomainRule(text: string): DomainRule | string {
  const match = /^(\*\.)?([^:]+)(?::(\d{1,5}))?$/.exec(text.trim());
  const host = match?.[2] === undefined ? undefined : normalizeHost(match[2]);
  if (!match || !host)
    return "give a host name (example.com) or a wildcard (*.example.com), with an optional :port";
  if (looksLikeAddress(host)) return "addresses are not allowed, only names";
  const port = match[3] === undefined ? undefined : Number(match[3]);
  if (port !== undefined && (port < 1 || port > 65535)) return "port out of range";
  return { host, wildcard: match[1] !== undefined, port };
}

/** Does `rule` let `host:port` through? `*.example.com` matches names below it, not itself. */
export function domainRuleMatches(rule: DomainRule, host: string, port: number | undefined): boolean {
  const name = normalizeHost(host);
  if (!name) return false;
  return (
    (rule.port === undefined || rule.port === port) &&
    (rule.wildcard ? name.endsWith(`.${rule.host}`) : name === rule.host)
  );
}

/** The rule that lets `host:port` through, or undefined. */
export function matchDomain(
  rules: readonly DomainRule[],
  host: string,
  port: number | undefined,
): DomainRule | undefined {
  return rules.find((rule) => domainRuleMatches(rule, host, port));
}

/** A rule the way it is written: `host`, `*.domain`, with `:port`. */
export function ruleText(rule: DomainRule): string {
  return `${rule.wildcard ? "*." : ""}${rule.host}${rule.port === undefined ? "" : `:${rule.port}`}`;
}

/** Renders rules back the way they are written, for messages ("allowed: …"). */
export function describeRules(rules: readonly DomainRule[]): string {
  return rules.map(ruleText).join(", ");
}

/**
 * A BlockList of these subnets, made on its first check: building one loads Node's block-list internals,
 * which the CLI's start (which imports the network modes from here) and a run without network never use.
 */
function blockList(subnets: ReadonlyArray<readonly [string, number, "ipv4" | "ipv6"]>): () => BlockList {
  let list: BlockList | undefined;
  return () => {
    if (list) return list;
    list = new BlockList();
    for (const [address, prefix, family] of subnets) list.addSubnet(address, prefix, family);
    return list;
  };
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

/** An IPv6 address's 16 bytes (a trailing dotted IPv4 part and a zone id allowed); undefined if it is not one. */
function ipv6Bytes(text: string): number[] | undefined {
  const address = text.replace(/%.*$/, "");
  if (!isIPv6(address)) return undefined;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const hex = dotted
    ? `${address.slice(0, dotted.index)}${((Number(dotted[1]) << 8) | Number(dotted[2])).toString(16)}:${((Number(dotted[3]) << 8) | Number(dotted[4])).toString(16)}`
    : address;
  const [head = "", tail] = hex.split("::");
  const groups = (part: string) => (part ? part.split(":") : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return all.flatMap((group) => {
    const value = parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

const dottedQuad = (bytes: readonly number[]): string => bytes.join(".");
const startsWith = (bytes: readonly number[], prefix: readonly number[]) =>
  prefix.every((b, i) => bytes[i] === b);

/** 64:ff9b::/96, NAT64's well-known prefix (RFC 6052): the IPv4 address is the last 32 bits. */
const NAT64_WELL_KNOWN = [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];
/** 64:ff9b:1::/48, NAT64's local-use prefix (RFC 8215), inside which a network picks its own prefix length. */
const NAT64_LOCAL_USE = [0, 0x64, 0xff, 0x9b, 0, 1];
/**
 * Where RFC 6052 puts the IPv4 address for the prefix lengths a local-use NAT64 prefix may have (/48, /56,
 * /64, /96): byte 8 (bits 64–71) is always skipped.
 */
const RFC6052_POSITIONS = [
  [6, 7, 9, 10],
  [7, 9, 10, 11],
  [9, 10, 11, 12],
  [12, 13, 14, 15],
];

/**
 * The addresses `address` is judged as: an IPv4 address inside IPv6 is judged as that IPv4 address — mapped
 * (`::ffff:a.b.c.d`), translated (`::ffff:0:a.b.c.d`), compatible (`::a.b.c.d`, but `::` and `::1` are
 * themselves), and NAT64 (`64:ff9b::a.b.c.d`; in the local-use prefix `64:ff9b:1::/48` every position the
 * IPv4 address may take, so a gateway of any prefix length cannot carry a refused one). However written.
 */
function judgedAs(address: string): Array<{ address: string; family: "ipv4" | "ipv6" }> {
  const bytes = ipv6Bytes(address);
  if (!bytes) return [{ address, family: isIPv6(address) ? "ipv6" : "ipv4" }];
  const last = bytes.slice(12);
  const zeros = (n: number) => Array<number>(n).fill(0);
  const embedded =
    startsWith(bytes, [...zeros(10), 0xff, 0xff]) ||
    startsWith(bytes, [...zeros(8), 0xff, 0xff, 0, 0]) ||
    startsWith(bytes, NAT64_WELL_KNOWN) ||
    (startsWith(bytes, zeros(12)) && last.some((b, i) => (i < 3 ? b !== 0 : b > 1)))
      ? [last]
      : startsWith(bytes, NAT64_LOCAL_USE)
        ? RFC6052_POSITIONS.map((position) => position.map((i) => bytes[i] ?? 0))
        : [];
  if (!embedded.length) return [{ address, family: "ipv6" }];
  return embedded.map((quad) => ({ address: dottedQuad(quad), family: "ipv4" as const }));
}

/** Why `address` must not be connected to for this host, or undefined when it may. */
export function addressRefusal(address: string, privateAllowed: boolean): string | undefined {
  const judged = judgedAs(address);
  const shown = (a: string) => (a === address ? a : `${a} (as ${address})`);
  for (const { address: a, family } of judged)
    if (METADATA().check(a, family))
      return `resolves to the cloud metadata address ${shown(a)}, which is never reachable`;
  if (privateAllowed) return undefined;
  for (const { address: a, family } of judged)
    if (NON_PUBLIC().check(a, family))
      return `resolves to the non-public address ${shown(a)} (loopback, link-local or private); opt the host in with --allow-private-host`;
  return undefined;
}

/** What may be reached: the allowlist, and the hosts that may lead to non-public addresses. */
export interface ReachPolicy {
  /** The allowlist; "any" lets every name through (`--network on` for WebFetch): the address checks still apply. */
  readonly rules: readonly DomainRule[] | "any";
  /** Hosts that may resolve to non-public addresses (`--allow-private-host`); never to the metadata address. */
  readonly privateHosts: readonly string[];
}

/** Refused with why, or passed (with the name as matched, and where it applies the address to connect to). */
export type Refusal = { readonly ok: false; readonly reason: string };
export type HostVerdict = { readonly ok: true; readonly host: string } | Refusal;
export type ReachVerdict = { readonly ok: true; readonly host: string; readonly address: string } | Refusal;

/**
 * The first half of the decision, before any lookup: `rawHost` (as a URL or CONNECT gives it, IPv6 in
 * brackets) must be a name, and on the allowlist for `port`. Names that fail are never resolved, so a
 * refused name does not leave through DNS either.
 */
export function checkHost(rawHost: string, port: number, policy: ReachPolicy): HostVerdict {
  const bare = rawHost.replace(/^\[|\]$/g, "");
  if (isIP(bare))
    return { ok: false, reason: "an IP address, not a name (only names on the allowlist are reachable)" };
  const host = normalizeHost(bare);
  if (!host) return { ok: false, reason: "not a host name" };
  if (policy.rules !== "any" && !matchDomain(policy.rules, host, port))
    return { ok: false, reason: "not on the allowlist" };
  return { ok: true, host };
}

/**
 * The second half, pure: the addresses a passed name resolved to. Every address must pass: a name that
 * also points at a private range is not trusted for any of them. The first address is the one to use.
 */
export function addressesVerdict(
  host: string,
  addresses: readonly string[],
  policy: ReachPolicy,
): ReachVerdict {
  const first = addresses[0];
  if (first === undefined) return { ok: false, reason: "the name does not resolve" };
  const privateAllowed = policy.privateHosts.some((h) => (normalizeHost(h) ?? h) === host);
  for (const address of addresses) {
    const refusal = addressRefusal(address, privateAllowed);
    if (refusal) return { ok: false, reason: refusal };
  }
  return { ok: true, host, address: first };
}

/** Name resolution, as `dns.promises.lookup(host, { all: true })` answers. */
export type Resolve = (host: string) => Promise<ReadonlyArray<{ address: string }>>;

/**
 * May `rawHost:port` be reached? The one decision, for the egress proxy and every other way out: the
 * name is checked, then resolved with `resolve` (the caller's resolver, so this module does no I/O of
 * its own), then every address is checked. Connect to the verdict's `address`, never to one the client
 * or a second lookup gives, or the check was for nothing.
 */
export async function mayReach(
  rawHost: string,
  port: number,
  policy: ReachPolicy,
  resolve: Resolve,
): Promise<ReachVerdict> {
  const named = checkHost(rawHost, port, policy);
  if (!named.ok) return named;
  const { host } = named;
  let addresses: ReadonlyArray<{ address: string }>;
  try {
    addresses = await resolve(host);
  } catch (e) {
    return {
      ok: false,
      reason: `the name does not resolve (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    };
  }
  return addressesVerdict(
    host,
    addresses.map((a) => a.address),
    policy,
  );
}

/** The refusal text: what was refused and what is allowed (any name, for `--network on`), so a model does not retry blindly. */
export function refusalMessage(
  host: string,
  port: number,
  reason: string,
  rules: ReachPolicy["rules"],
): string {
  const allowed = rules === "any" ? "any public host (--network on)" : describeRules(rules) || "nothing";
  return `agent-ci's network policy refused ${host}:${port}: ${reason}; allowed: ${allowed}`;
}
