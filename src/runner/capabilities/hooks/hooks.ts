// PreToolUse/PostToolUse hooks (docs/hooks.md), from the settings files the policy merges: they run in the
// sandbox as users of their own in the agent's group.
import { startHooks } from "../../hooks/hooks.js";
import type { Capability } from "../capability.js";

export const hooks: Capability = {
  name: "hooks",
  options: ["settings", "trust_workspace_settings"],
  forRun: () => ({
    sharedWorkspace: (policy) => policy.policy.hooks.length > 0,
    start: async ({ ctx, config, policy, sandbox }) =>
      policy.policy.hooks.length
        ? {
            hooks: await startHooks(sandbox, {
              hooks: policy.policy.hooks,
              workspace: config.hookScriptsDir ?? config.workspace,
              sessionId: ctx.runId,
              permissionMode: policy.policy.mode,
              log: ctx.log,
            }),
          }
        : {},
  }),
};
