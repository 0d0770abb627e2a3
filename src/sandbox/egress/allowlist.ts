// The allowlist of `--network allowlist` as the user writes it: the ecosystem presets (data) and the
// parsing of `--allow-domain` entries into the rules the egress proxy matches (policy/network.ts). Host side only:
// it carries the public-suffix list (tldts), which the sidecar does not need.
import net from "node:net";
import { getPublicSuffix } from "tldts";
import { type DomainRule, normalizeHost, parseDomainRule } from "../../policy/network.js";

export class EgressPolicyError extends Error {
  override readonly name = "EgressPolicyError";
}

/**
 * Ecosystem presets: `--allow-domain npm` expands to these. Named as GitHub's agentic workflows and
 * Copilot's coding agent name theirs; each lists the hosts the ecosystem's own client talks to.
 */
export const EGRESS_PRESETS = {
  npm: ["registry.npmjs.org", "registry.yarnpkg.com"],
  pypi: ["pypi.org", "files.pythonhosted.org"],
  go: ["proxy.golang.org", "sum.golang.org", "storage.googleapis.com"],
  crates: ["crates.io", "index.crates.io", "static.crates.io"],
  maven: ["repo.maven.apache.org", "repo1.maven.org", "plugins.gradle.org", "services.gradle.org"],
  rubygems: ["rubygems.org", "index.rubygems.org"],
  debian: ["deb.debian.org", "security.debian.org"],
  github: ["github.com", "codeload.github.com", "objects.githubusercontent.com", "raw.githubusercontent.com"],
} as const satisfies Record<string, readonly string[]>;
export type EgressPreset = keyof typeof EGRESS_PRESETS;
export const EGRESS_PRESET_NAMES = Object.keys(EGRESS_PRESETS) as EgressPreset[];

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
}

/** Validates and expands the user's entries; an EgressPolicyError names the bad one. */
export function egressOptions(
  allowDomains: readonly string[],
  allowPrivateHosts: readonly string[],
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
  return { given: [...allowDomains], rules: parseAllowDomains(allowDomains), privateHosts, hosts };
}
