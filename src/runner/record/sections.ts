// The sections of report.json, in the order their warnings are listed: the run's own (its policy, sandbox,
// patch, calls, phases…), with the capabilities' sections (each capability's part of the run gives its own)
// after the sandbox's.
import { callsSection } from "./calls-section.js";
import { firstTurnSection } from "./first-turn-section.js";
import { instructionsSection } from "./instructions-section.js";
import { patchSection } from "./patch-section.js";
import { phasesSection } from "./phases.js";
import { policySection } from "./policy.js";
import { resumeSection } from "./resume-section.js";
import { runSection } from "./run-section.js";
import { sandboxSection } from "./sandbox-section.js";
import type { RecordSection } from "./section.js";

/** The record's sections: the run's own, and the capabilities' in their place. */
export function recordSections(capabilities: readonly RecordSection[]): readonly RecordSection[] {
  return [
    policySection,
    sandboxSection,
    ...capabilities,
    patchSection,
    runSection,
    resumeSection,
    instructionsSection,
    callsSection,
    phasesSection,
    firstTurnSection,
  ];
}
