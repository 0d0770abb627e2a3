// Subagents (docs/subagents.md): the agent types a Task call may start; background ones still running when the
// run ends are stopped before the patch is taken, and the record says which.
import type { Capability } from "../capability.js";
import { subagentsSection } from "./record.js";

export const subagents: Capability = {
  name: "subagents",
  options: ["agents", "agents_dir", "trust_workspace_settings"],
  close: async (phase, log) => {
    const stoppedAgents = await phase.subagents?.stopBackground();
    for (const agent of stoppedAgents ?? []) log(`stopped the background subagent ${agent}: the run ended`);
    return { stoppedAgents };
  },
  section: subagentsSection,
};
