// What the model is told beside the task: memory files (CLAUDE.md, rules), the environment and the git
// snapshot, made before any container and recorded as the record's `context`.
import { type GitSnapshot, takeGitSnapshot } from "../../instructions/memory/git-snapshot.js";
import { type ModelContext, prepareModelContext } from "../../instructions/memory/model-context.js";
import type { Capability } from "../capability.js";

export const memory: Capability = {
  name: "memory",
  options: ["memory", "project_memory", "append_system_prompt"],
  forRun: () => {
    let snapshot: Promise<GitSnapshot | undefined> | undefined;
    let told: ModelContext | undefined;
    return {
      // The repository's state is read by host git beside the policy's setup (for what the model is told).
      workspaceKnown: (config) => {
        snapshot = takeGitSnapshot(config.workspace, { subjects: !config.untrustedHistory });
      },
      tell: async ({ config, mode, structured }) => {
        told = prepareModelContext(config, mode, structured, await snapshot);
        return told;
      },
      // What the model was told: the system prompt's hash and length, the environment facts, the memory files
      // and the git snapshot.
      section: () => ({ fields: { context: told?.record() } }),
    };
  },
};
