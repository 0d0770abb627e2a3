// The sections of report.json, one per capability, in the order their warnings are listed.
import { callsSection } from "./calls.js";
import { firstTurnSection } from "./first-turn.js";
import { instructionsSection } from "./instructions.js";
import { mcpSection } from "./mcp.js";
import { memorySection } from "./memory.js";
import { patchSection } from "./patch.js";
import { phasesSection } from "./phases.js";
import { policySection } from "./policy.js";
import { resumeSection } from "./resume.js";
import { runSection } from "./run.js";
import { sandboxSection } from "./sandbox.js";
import { setupCacheSection } from "./setup-cache.js";
import type { RecordSection } from "./section.js";
import { subagentsSection } from "./subagents.js";
import { webSection } from "./web.js";

export const RECORD_SECTIONS: readonly RecordSection[] = [
  policySection,
  sandboxSection,
  setupCacheSection,
  mcpSection,
  patchSection,
  runSection,
  subagentsSection,
  resumeSection,
  instructionsSection,
  callsSection,
  phasesSection,
  firstTurnSection,
  webSection,
  memorySection,
];
