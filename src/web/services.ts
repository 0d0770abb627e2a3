// What the web tools of one run share: the network decision (the same egress decision the proxy makes, with
// the run's allowlist and private-host opt-ins), the trusted CAs, the egress ledger they append to, the side
// calls to a model (charged to the run's budget by the caller's `sideCall`), redaction, and the 15-minute
// page cache.
import dns from "node:dns";
import tls from "node:tls";
import type { EgressConnection } from "../report/schema.js";
import type { FetchLimits } from "./fetch-page.js";
import type { SideCallRequest, SideCallResult } from "../runner/driver.js";
import type { EgressOptions } from "../sandbox/egress/allowlist.js";
import { describeRules, normalizeHost, type DomainRule } from "../sandbox/egress/policy.js";
import { decideEgress, type Resolve, type Verdict } from "../sandbox/egress/proxy.js";

/** How long a fetched page is kept for the same URL in one run. */
export const PAGE_CACHE_MS = 15 * 60_000;

export interface CachedPage {
  at: number;
  /** The page's text (Markdown for HTML). */
  text: string;
  url: string;
  status: number;
  contentType: string;
  bytes: number;
}

export interface WebServices {
  /** Why the run has no web at all (`--network none`/`setup`), or undefined. */
  offline?: string;
  decide(host: string, port: number): Promise<Verdict>;
  /** The allowlist as written, for refusal messages ("allowed: …"). */
  allowedText: string;
  ca?: string[];
  /** Appends one entry to the run's egress ledger (already redacted by the service). */
  ledger(entry: EgressConnection): void;
  /** Runs a side call and charges it to the run; undefined when the driver has no answer (a script). */
  sideCall(callId: string, request: SideCallRequest): Promise<SideCallResult | undefined>;
  redact(text: string): string;
  /** WebFetch's reading model. */
  smallFastModel: string;
  /** WebSearch's model (the run's model). */
  searchModel: string;
  cache: Map<string, CachedPage>;
  now(): number;
  /** Size, time and redirect caps of a fetch (default FETCH_LIMITS). */
  limits?: FetchLimits;
}

export interface WebNetwork {
  network: "none" | "setup" | "on" | "allowlist";
  egress?: EgressOptions;
}

/**
 * The decision for the run's network setting: `allowlist` uses its rules; `on` lets any name through;
 * either way IP literals, non-public addresses (unless opted in) and the metadata address are refused.
 * `--allow-private-host NAME=ADDRESS` maps a name here as the sidecar's hosts file does.
 */
export function networkDecision(setting: WebNetwork, resolve?: Resolve): WebServices["decide"] {
  const egress = setting.egress;
  const rules: readonly DomainRule[] | "any" =
    setting.network === "allowlist" ? (egress?.rules ?? []) : "any";
  const privateHosts = new Set((egress?.privateHosts ?? []).map((h) => normalizeHost(h) ?? h));
  const mapped = egress?.hosts ?? {};
  const lookup: Resolve =
    resolve ??
    (async (host) => {
      const address = mapped[host];
      if (address) return [{ address, family: address.includes(":") ? 6 : 4 }];
      return dns.promises.lookup(host, { all: true, verbatim: true });
    });
  return (host, port) => decideEgress(host, port, { rules, privateHosts, resolve: lookup });
}

export function allowedText(setting: WebNetwork): string {
  if (setting.network === "on") return "any public host (--network on)";
  return describeRules(setting.egress?.rules ?? []) || "nothing";
}

/** The CAs a fetch trusts: Node's bundle plus the run's --ca-cert. */
export function trustedCas(extraPem: string | undefined): string[] | undefined {
  return extraPem ? [...tls.rootCertificates, extraPem] : undefined;
}

export function offlineReason(network: WebNetwork["network"]): string | undefined {
  if (network === "none") return "--network none: the run has no network, so the web tools are off";
  if (network === "setup")
    return "--network setup: the network ends with the setup commands, so the web tools are off";
  return undefined;
}
