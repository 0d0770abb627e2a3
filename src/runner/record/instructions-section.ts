// Skills and slash commands: what the run had, where each came from, and what was ignored or not applied.
import { describeIgnored } from "../../policy/workspace-trust.js";
import type { Warning } from "../../report/index.js";
import type { Instruction } from "../instructions/instructions.js";
import type { RecordSection } from "./section.js";

export const instructionsSection: RecordSection = ({ instructions }) => {
  if (!instructions) return { fields: {} };
  const { catalogue, command } = instructions;
  const warnings: Warning[] = [];
  for (const [kind, list] of [
    ["skill", catalogue.skills],
    ["command", catalogue.commands],
  ] as const) {
    for (const item of list.filter((i) => i.allowedTools.length))
      warnings.push({
        kind: "instruction_allowed_tools",
        severity: "info",
        message: `The ${kind} ${item.name} asks for allowed-tools ${item.allowedTools.join(", ")}: not applied, a ${kind} never widens the run's policy.`,
      });
  }
  for (const i of catalogue.ignored)
    warnings.push({ kind: "instructions_ignored", severity: "info", message: describeIgnored(i) });
  if (
    !catalogue.skills.length &&
    !catalogue.commands.length &&
    !catalogue.ignored.length &&
    !catalogue.problems.length
  )
    return { fields: {}, warnings };
  const entry = (i: Instruction) => ({
    name: i.name,
    origin: i.origin,
    ...(i.allowedTools.length ? { allowedTools: i.allowedTools } : {}),
  });
  return {
    fields: {
      instructions: {
        skills: catalogue.skills.map(entry),
        commands: catalogue.commands.map(entry),
        ignored: catalogue.ignored.map((i) => i.source.replace(/^workspace:/, "")),
        problems: catalogue.problems,
        command,
      },
    },
    warnings,
  };
};
