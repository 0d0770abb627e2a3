// Whether the run's first model turn was asked while the sandbox opened, and why not when it was not.
import type { RecordSection } from "./section.js";

export const firstTurnSection: RecordSection = (p) => ({
  fields: { firstTurn: p.firstTurn ? { ...p.firstTurn } : undefined },
});
