// The web tools (WebFetch, WebSearch): their egress decided by the run's network setting, their model calls
// listed in the record and charged to the run's budget.
import type { Capability } from "../capability.js";
import { webSection } from "./record.js";

export const web: Capability = {
  name: "web",
  options: ["network", "allowed_domains", "allow_private_hosts", "ca_cert", "small_fast_model"],
  section: webSection,
};
