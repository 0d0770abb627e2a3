// PreToolUse/PostToolUse hooks (docs/hooks.md), from the settings files the policy merges: they run in the
// sandbox as users of their own in the agent's group.
import type { Capability } from "../capability.js";

export const hooks: Capability = {
  name: "hooks",
  options: ["settings", "trust_workspace_settings"],
  sandboxNeeds: (_ctx, policy) => ({ sharedWorkspace: policy.policy.hooks.length > 0 }),
};
