// The web tools' services for one run: the egress decision for its network setting, the CAs of --ca-cert,
// the ledger of their fetches, redaction, and their model calls (side calls) listed in the record and charged
// to the run's budget once there is one.
import { readCaCert, type RunConfig, runEgressOptions } from "../../config.js";
import type { Driver } from "../../model/driver.js";
import { costUsd, WEB_SEARCH_USD } from "../../model/pricing.js";
import type { RunBudget } from "../../loop/run-budget.js";
import type { RunContext } from "../../run/run-context.js";
import type { EgressConnection, SideCall } from "../../../report/index.js";
import {
  networkDecision,
  offlineReason,
  refusalFor,
  trustedCas,
  type WebServices,
} from "../../../tools/web-services.js";

/** Where the web tools' fetches and model calls are kept for the record. */
export interface WebLedger {
  readonly fetches: EgressConnection[];
  readonly sideCalls: SideCall[];
}

/**
 * The web tools' services: made before the sandbox without a budget (the first turn asked ahead only describes
 * the tools), then once the agent starts work with the run's budget.
 */
export function webServices(
  ctx: RunContext,
  config: RunConfig,
  driver: Driver,
  ledger: WebLedger,
): WebServices {
  const setting = { network: config.network, egress: runEgressOptions(config) };
  return {
    offline: offlineReason(config.network),
    decide: networkDecision(setting),
    refusal: refusalFor(setting),
    ca: trustedCas(config.caCert === undefined ? undefined : readCaCert(config.caCert)),
    ledger: (entry) => ledger.fetches.push(entry),
    redact: ctx.redactor.redact,
    smallFastModel: config.smallFastModel,
    searchModel: config.model,
    cache: new Map(),
    now: Date.now,
    sideCall: sideCalls(config, driver, ledger, undefined),
  };
}

/** The web services with their side calls charged to the run's budget (made when the agent starts work). */
export function chargedTo(
  web: WebServices,
  config: RunConfig,
  driver: Driver,
  ledger: WebLedger,
  budget: RunBudget,
): WebServices {
  return { ...web, sideCall: sideCalls(config, driver, ledger, budget) };
}

/** Side calls to the model for the web tools: listed in the record, and charged to `budget` when there is one. */
function sideCalls(
  config: RunConfig,
  driver: Driver,
  ledger: WebLedger,
  budget: RunBudget | undefined,
): WebServices["sideCall"] {
  return async (callId, request) => {
    const answer = await driver.sideCall?.(request);
    if (!answer) return undefined;
    const tokens = costUsd(answer.model === "script" ? request.model : answer.model, answer.usage).usd;
    const cost = (config.script ? 0 : tokens) + answer.webSearchRequests * WEB_SEARCH_USD;
    budget?.charge({ agent: request.purpose, parentToolUseId: callId }, cost, answer.usage);
    ledger.sideCalls.push({
      callId,
      purpose: request.purpose,
      model: answer.model,
      usage: answer.usage,
      ...(answer.webSearchRequests ? { webSearches: answer.webSearchRequests } : {}),
      costUsd: cost,
    });
    return answer;
  };
}
