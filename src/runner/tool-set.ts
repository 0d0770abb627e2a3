// The run's tool set, in one place: the static tools (ALL_TOOLS) plus the tools made per run by factories
// that close over what they need (the Skill tool over the run's skills, the web tools over the run's web
// services), then filtered by what the run allows (plan mode drops the file-writing tools; a run without
// a network has no web tools; WebSearch is offered only when a rule allows it).
import type { PermissionMode } from "../policy/schema.js";
import type { Instruction } from "../skills/catalogue.js";
import { createSkillTool } from "../skills/skill-tool.js";
import { ALL_TOOLS, FILE_WRITING_TOOLS } from "../tools/index.js";
import type { AnyTool } from "../tools/types.js";

export interface ToolSetOptions {
  mode: PermissionMode;
  /** The run's skills: the Skill tool is there when there is at least one. */
  skills: readonly Instruction[];
  /** Tools made by other factories for this run (the web tools), with why each is off when it is. */
  bound?: ReadonlyArray<{ tool: AnyTool; offBecause?: string }>;
}

export interface ToolSet {
  /** Every tool the run knows (a call to one that is off gets why, not "no such tool"). */
  all: AnyTool[];
  /** The tools the model is offered and the pipeline runs. */
  enabled: AnyTool[];
  /** Why a known tool is off in this run. */
  disabledReason(tool: string): string | undefined;
}

export function runToolSet(options: ToolSetOptions): ToolSet {
  const off = new Map<string, string>();
  if (options.mode === "plan") for (const name of FILE_WRITING_TOOLS) off.set(name, "plan mode is read-only");
  const bound: AnyTool[] = [];
  if (options.skills.length) bound.push(createSkillTool(options.skills));
  for (const { tool, offBecause } of options.bound ?? []) {
    bound.push(tool);
    if (offBecause) off.set(tool.name, offBecause);
  }
  const all = [...ALL_TOOLS, ...bound];
  return {
    all,
    enabled: all.filter((t) => !off.has(t.name)),
    disabledReason: (tool) => off.get(tool),
  };
}
