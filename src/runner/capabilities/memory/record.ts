// What the model was told: the system prompt's hash and length, the environment facts, the memory files
// and the git snapshot.
import type { RecordSection } from "../../record/section.js";

export const memorySection: RecordSection = ({ modelContext }) => ({
  fields: { context: modelContext?.record() },
});
