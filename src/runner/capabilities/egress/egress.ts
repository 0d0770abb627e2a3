// Egress (docs/network.md): the sandbox's way out, through the egress sidecar (src/sandbox/egress/) that the
// sandbox's start makes from the run's network setting, and its ledger in the record, with what the other
// capabilities add to it (their `connections` and `attribute`).
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
  forRun: () => ({ section: egressSection }),
};
