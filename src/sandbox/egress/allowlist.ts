// The allowlist of `--network allowlist` as the user writes it: the ecosystem presets (data) and the
// parsing of `--allow-domain` entries into the rules the egress proxy matches (policy/network.ts). Host side only:
// it carries the public-suffix list (tldts), which the sidecar does not need.
import { randomBytes } from "node:crypto";
import net from "node:net";
import { getPublicSuffix } from "tldts";
import { type DomainRule, matchDomain, normalizeHost, parseDomainRule } from "../../policy/network.js";
import { headerSafe, type Injection, injectTarget, parseInjectRule } from "./inject.js";
import { EGRESS_PRESETS, EGRESS_PRESET_NAMES, type EgressPreset } from "./allowlist-presets.js";

export class EgressPolicyError extends Error {
  override readonly name = "EgressPolicyError";
}

export { EGRESS_PRESETS, EGRESS_PRESET_NAMES, type EgressPreset };

/** Parses one `--allow-domain` value: a preset name, `host`, `*.host`, each with an optional `:port`. */
export function parseAllowDomain(entry: string): DomainRule[] {
  const value = entry.trim();
  if (Object.hasOwn(EGRESS_PRESETS, value))
    return EGRESS_PRESETS[value as EgressPreset].map((host) => ({ host, wildcard: false }));
  const rule = parseDomainRule(value);
  if (typeof rule === "string") {
    throw new EgressPolicyError(
      `--allow-domain ${JSON.stringify(entry)}: ${rule}; or name a preset (${EGRESS_PRESET_NAMES.join(", ")})`,
    );
  }
  const { host, wildcard } = rule;
  // `*.com` or `*.co.uk` would open a whole public suffix: refused.
  if (wildcard && getPublicSuffix(host, { allowPrivateDomains: false }) === host) {
    throw new EgressPolicyError(
      `--allow-domain ${entry}: a wildcard over a public suffix allows most of the internet; name the domain`,
    );
  }
  return [rule];
}

export function parseAllowDomains(entries: readonly string[]): DomainRule[] {
  return entries.flatMap(parseAllowDomain);
}

/** What the egress proxy of a run lets through, from `--allow-domain` and `--allow-private-host`. */
export interface EgressOptions {
  /** The entries as given (presets by name), for the report. */
  given: string[];
  rules: DomainRule[];
  /** Hosts that may resolve to non-public addresses (`--allow-private-host NAME`); never the metadata address. */
  privateHosts: string[];
  /** Names the sidecar resolves to a given address (`--allow-private-host NAME=ADDRESS`). */
  hosts: Record<string, string>;
  /** `--inject-secret`: what the proxy injects, and the placeholders the sandbox holds instead. */
  injections: RunInjection[];
}

/** An injection of a run: its value is read when the sidecar starts, and a function is never serialised. */
export interface RunInjection extends Injection {
  value: () => string;
}

/**
 * Reads the `--inject-secret` entries against the allowlist they must be on, each with a fresh placeholder
 * and its value from `secretOf` (the host's environment); without `secretOf`, only the syntax and the
 * allowlist are checked.
 */
export function injections(
  entries: readonly string[],
  rules: readonly DomainRule[],
  secretOf?: (name: string) => string | undefined,
): RunInjection[] {
  const seen = new Set<string>();
  return entries.map((entry) => {
    const rule = parseInjectRule(entry);
    const problem = (text: string) => new EgressPolicyError(`--inject-secret ${entry}: ${text}`);
    if (typeof rule === "string") throw problem(rule);
    if (seen.has(rule.name)) throw problem(`${rule.name} is injected twice; give each variable once`);
    seen.add(rule.name);
    if (!matchDomain(rules, rule.host, rule.port ?? 443))
      throw problem(
        `${rule.host} is not on the allowlist; allow it too (--allow-domain, or --setup-allow-domain with --network setup)`,
      );
    if (secretOf) {
      const value = secretOf(rule.name);
      if (!value)
        throw problem(
          `the environment variable ${rule.name} is not set (the secret comes from there, never from a command line)`,
        );
      if (!headerSafe(value))
        throw problem(`${rule.name} holds control characters: a header cannot carry it`);
    }
    const placeholder = `agent-ci-placeholder-${rule.name}-${randomBytes(12).toString("hex")}`;
    return { ...rule, placeholder, value: () => secretOf?.(rule.name) ?? "" };
  });
}

/** `NAME=header:host`, as the report lists an injection (never its value). */
export const injectionText = (injection: Injection): string => `${injection.name}=${injectTarget(injection)}`;

/** Validates and expands the user's entries; an EgressPolicyError names the bad one. */
export function egressOptions(
  allowDomains: readonly string[],
  allowPrivateHosts: readonly string[],
  injectSecrets: readonly string[] = [],
  secretOf?: (name: string) => string | undefined,
): EgressOptions {
  const privateHosts: string[] = [];
  const hosts: Record<string, string> = {};
  for (const entry of allowPrivateHosts) {
    const [name = "", address] = entry.split("=", 2);
    const host = normalizeHost(name);
    if (!host)
      throw new EgressPolicyError(
        `--allow-private-host ${JSON.stringify(entry)}: give a host name, optionally =ADDRESS`,
      );
    if (address !== undefined && !net.isIP(address))
      throw new EgressPolicyError(
        `--allow-private-host ${entry}: ${JSON.stringify(address)} is not an IP address`,
      );
    privateHosts.push(host);
    if (address !== undefined) hosts[host] = address;
  }
  const rules = parseAllowDomains(allowDomains);
  return {
    given: [...allowDomains],
    rules,
    privateHosts,
    hosts,
    injections: injections(injectSecrets, rules, secretOf),
  };
}
