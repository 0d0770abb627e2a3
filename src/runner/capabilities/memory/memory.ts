// What the model is told beside the task: memory files (CLAUDE.md, rules), the environment and the git
// snapshot, recorded as the record's `context`.
import type { Capability } from "../capability.js";
import { memorySection } from "./record.js";

export const memory: Capability = {
  name: "memory",
  options: ["memory", "project_memory", "append_system_prompt"],
  section: memorySection,
};
