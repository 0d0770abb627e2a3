// What the web tools of one run share: the network decision (the same egress decision the proxy makes, with
// the run's allowlist and private-host opt-ins), the trusted CAs, the egress ledger they append to, the side
// calls to a model (charged to the run's budget by the caller's `sideCall`), redaction, and the 15-minute
// page cache.
import { createRequire } from "node:module";
import type { EgressConnection } from "../report/schema.js";
import type Anthropic from "@anthropic-ai/sdk";
import type { FetchLimits } from "./web-fetch-page.js";
import type { EgressOptions } from "../sandbox/egress/allowlist.js";
import {
  mayReach,
  refusalMessage,
  type ReachPolicy,
  type ReachVerdict,
  type Resolve,
} from "../policy/network.js";

/**
 * A model call made for a tool rather than for the conversation: WebFetch's reading model, WebSearch's
 * search. No tools of agent-ci's own; the API's server tools (web_search) may ride along. The drivers
 * answer it (`Driver.sideCall`).
 */
export interface SideCallRequest {
  /** What it is for: a script answers it from its `side` entries of this name. */
  purpose: "fetch" | "search";
  model: string;
  system?: string;
  messages: Anthropic.Beta.BetaMessageParam[];
  /** Server tools the API runs itself (web_search_20250305). */
  tools?: Anthropic.Messages.ToolUnion[];
  maxTokens: number;
  signal: AbortSignal;
}

/** Tokens of one model call, as the drivers count them. */
export interface SideCallUsage {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
}

export interface SideCallResult {
  /** The answer's blocks as the API returned them (text, server_tool_use, web_search_tool_result). */
  content: Anthropic.ContentBlock[];
  usage: SideCallUsage;
  /** Searches the API's web_search tool ran (billed per search). */
  webSearchRequests: number;
  model: string;
}

/** The image types the reading model can look at (the Messages API's). */
export type ReaderImageType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** How long a fetched page is kept for the same URL in one run. */
export const PAGE_CACHE_MS = 15 * 60_000;

export interface CachedPage {
  at: number;
  /** The page's text (Markdown for HTML); empty for an image. */
  text: string;
  /** An image URL's picture, for the reading model to look at. */
  image?: { mediaType: ReaderImageType; data: string };
  /** Where the page's binary content was saved for the agent to Read (the outputs folder in the sandbox). */
  savedTo?: string;
  url: string;
  status: number;
  contentType: string;
  bytes: number;
}

export interface WebServices {
  /** Why the run has no web at all (`--network none`/`setup`), or undefined. */
  offline?: string;
  decide(host: string, port: number): Promise<ReachVerdict>;
  /** The refusal text, naming what the run allows. */
  refusal(host: string, port: number, reason: string): string;
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

/** What may be reached: the allowlist under `allowlist`, any name under `on`, with the private-host opt-ins. */
export function reachPolicy(setting: WebNetwork): ReachPolicy {
  return {
    rules: setting.network === "allowlist" ? (setting.egress?.rules ?? []) : "any",
    privateHosts: setting.egress?.privateHosts ?? [],
  };
}

/**
 * The decision for the run's network setting, with `mayReach` as the egress proxy decides: IP literals,
 * non-public addresses (unless opted in) and the metadata address refused. `--allow-private-host
 * NAME=ADDRESS` maps a name here as the sidecar's hosts file does.
 */
export function networkDecision(setting: WebNetwork, resolve?: Resolve): WebServices["decide"] {
  const mapped = setting.egress?.hosts ?? {};
  const lookup: Resolve =
    resolve ??
    (async (host: string) => {
      const address = mapped[host];
      if (address) return [{ address }];
      const { promises: dns } = await import("node:dns");
      return dns.lookup(host, { all: true, verbatim: true });
    });
  const policy = reachPolicy(setting);
  return (host, port) => mayReach(host, port, policy, lookup);
}

export function refusalFor(setting: WebNetwork): WebServices["refusal"] {
  const { rules } = reachPolicy(setting);
  return (host, port, reason) => refusalMessage(host, port, reason, rules);
}

/**
 * The CAs a fetch trusts: Node's bundle plus the run's --ca-cert. Node's tls is loaded only for a --ca-cert
 * (a fetch loads it anyway, with https): a run's start does not need it.
 */
export function trustedCas(extraPem: string | undefined): string[] | undefined {
  if (!extraPem) return undefined;
  const tls = createRequire(import.meta.url)("node:tls") as typeof import("node:tls");
  return [...tls.rootCertificates, extraPem];
}

export function offlineReason(network: WebNetwork["network"]): string | undefined {
  if (network === "none") return "--network none: the run has no network, so the web tools are off";
  if (network === "setup")
    return "--network setup: the network ends with the setup commands, so the web tools are off";
  return undefined;
}
