// What the model is told beside the task: memory files (CLAUDE.md, rules), the environment and the git
// snapshot, made before any container and recorded as the record's `context`.
import { takeGitSnapshot } from "../../instructions/memory/git-snapshot.js";
import { type ModelContext, prepareModelContext } from "../../instructions/memory/model-context.js";
import type { Capability } from "../capability.js";

export const memory: Capability = {
  name: "memory",
  options: ["memory", "project_memory", "append_system_prompt"],
  forRun: () => {
    let told: ModelContext | undefined;
    return {
      tell: async ({ config, mode, structured }) => {
        // The repository's state, read by host git, for what the model is told.
        const snapshot = await takeGitSnapshot(config.workspace, { subjects: !config.untrustedHistory });
        told = prepareModelContext(config, mode, structured, snapshot);
        return told;
      },
      // What the model was told: the system prompt's hash and length, the environment facts, the memory files
      // and the git snapshot.
      section: () => ({ fields: { context: told?.record() } }),
    };
  },
};
