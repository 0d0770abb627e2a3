// Egress (docs/network.md): the sandbox's way out, through the egress sidecar (src/sandbox/egress/) that the
// sandbox's start makes from what this capability asks of it (the network setting, the allowlist, the injected
// secrets, the CA), and its ledger in the record, with what the other capabilities add to it (their
// `connections` and `attribute`).
import { readCaCert, runEgressOptions } from "../../config.js";
import type { Capability } from "../capability.js";
import { egressSection } from "./record.js";

export const egress: Capability = {
  name: "egress",
  options: [
    "network",
    "allowed_domains",
    "setup_allowed_domains",
    "allow_private_hosts",
    "inject_secrets",
    "ca_cert",
  ],
  forRun: (config) => ({
    // The sandbox's network, the sidecar's allowlist and injections, and the CA the sandbox trusts.
    sandbox: () => ({
      network: config.network,
      egress: runEgressOptions(config),
      caCertPem: config.caCert === undefined ? undefined : readCaCert(config.caCert),
    }),
    section: egressSection,
  }),
};
