// Every tool call, as a tree in a list (each Task call followed by its subagent's), with its decision,
// timing, a redacted preview of its result and what it changed.
import { capText, RESULT_PREVIEW_MAX_CHARS, TOOL_OUTPUTS_DIR } from "../../report/index.js";
import { OUTPUTS_DIR } from "../../sandbox/sandbox.js";
import { CallDecisionSchema } from "../../policy/schema.js";
import { contentText } from "../loop/pipeline.js";
import { allCalls } from "./parts.js";
import type { RecordSection } from "./section.js";

const OUTPUTS_PREFIX = `${OUTPUTS_DIR}/`;

export const callsSection: RecordSection = (p) => ({
  fields: {
    toolCalls: allCalls(p.loop, p.capabilities).map((c, index) => ({
      id: c.id,
      turn: c.turn,
      index,
      tool: c.tool,
      title: c.title,
      input: c.input,
      // Parsing drops the engine's extra fields (the mode, kept once in the report's policy).
      decision: c.decision ? CallDecisionSchema.parse(c.decision) : undefined,
      startOffsetMs: c.startOffsetMs,
      durationMs: c.durationMs,
      exitCode: typeof c.exitCode === "number" ? c.exitCode : undefined,
      resultChars: c.resultChars,
      truncated: c.truncated,
      fullOutputPath: c.fullOutputPath?.startsWith(OUTPUTS_PREFIX)
        ? `${TOOL_OUTPUTS_DIR}/${c.fullOutputPath.slice(OUTPUTS_PREFIX.length)}`
        : c.fullOutputPath,
      isError: c.isError,
      errorKind: c.errorKind,
      // Redacted whole, then cut: a secret across the cut would no longer match the patterns.
      resultPreview: capText(p.redactor.redact(contentText(c.content)), RESULT_PREVIEW_MAX_CHARS),
      web: c.web ? p.redactor.redactDeep(c.web) : undefined,
      mcp: c.mcp,
      hooks: c.hooks ? p.redactor.redactDeep(c.hooks) : undefined,
      patch: c.patch
        ? {
            file: c.patch.newFileName ?? c.patch.oldFileName ?? "",
            hunks: c.patch.hunks.map(({ oldStart, oldLines, newStart, newLines, lines }) => ({
              oldStart,
              oldLines,
              newStart,
              newLines,
              lines,
            })),
          }
        : undefined,
      ...(c.parentToolUseId ? { parentToolUseId: c.parentToolUseId, agent: c.agent } : {}),
    })),
  },
});
