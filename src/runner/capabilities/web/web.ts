// The web tools (WebFetch, WebSearch): their egress decided by the run's network setting, their fetches in
// the egress ledger, their model calls listed in the record and charged to the run's budget.
import type { Driver } from "../../model/driver.js";
import { modelProvider } from "../../model/providers.js";
import type { RunConfig } from "../../config.js";
import { webToolsOff } from "../../loop/tool-set.js";
import { offlineReason, type WebServices } from "../../../tools/web-services.js";
import { createWebFetchTool } from "../../../tools/web-fetch.js";
import { createWebSearchTool } from "../../../tools/web-search.js";
import type { Capability } from "../capability.js";
import { webSection } from "./record.js";
import { chargedTo, webServices, type WebLedger } from "./services.js";

export const web: Capability = {
  name: "web",
  // Its fetches from the host follow egress's settings (network, allowed_domains…), which egress lists.
  options: ["small_fast_model"],
  forRun: () => {
    const ledger: WebLedger = { fetches: [], sideCalls: [] };
    let made: { services: WebServices; config: RunConfig; driver: Driver } | undefined;
    return {
      modelReady: ({ ctx, config, driver }) => {
        made = { services: webServices(ctx, config, driver, ledger), config, driver };
      },
      bind: ({ budget }) => {
        if (made)
          made = { ...made, services: chargedTo(made.services, made.config, made.driver, ledger, budget) };
      },
      tools: () => (made ? [createWebFetchTool(made.services), createWebSearchTool(made.services)] : []),
      toolsOff: ({ config, policy }) =>
        webToolsOff({
          offline: offlineReason(config.network),
          providerGap: config.script ? undefined : modelProvider(config.provider).gaps.WebSearch,
          mode: policy.policy.mode,
          rules: policy.policy.rules,
        }),
      spent: () => ledger.sideCalls.map(({ usage, costUsd }) => ({ usage, costUsd })),
      connections: () => ledger.fetches,
      section: webSection(ledger.sideCalls),
    };
  },
};
