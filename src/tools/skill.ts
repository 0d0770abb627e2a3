// Skill: loads one of the run's skills into the conversation, as Claude Code does: the result says
// `Launching skill: <name>` and the skill's instructions follow as a second text block of the same message
// (frontmatter removed, `$ARGUMENTS` filled in, its base directory named). A skill from outside the
// workspace has its folder copied into the container first, so its scripts and references are there.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { Sandbox } from "../sandbox/sandbox.js";
import { defineTool, toolError } from "./define-tool.js";
import type { Tool } from "./types.js";

/** Where a skill came from: a flag's or an input's folder (the user's), or the workspace (the project's). */
export type SkillOrigin = "flag" | "action" | "workspace";

/** A skill as the Skill tool uses it; the runner's catalogue (runner/instructions/) reads them. */
export interface SkillSource {
  name: string;
  description: string;
  /** The Markdown after the frontmatter. */
  body: string;
  origin: SkillOrigin;
  /** The skill's folder on the host. */
  hostPath: string;
  /** For the workspace's own skills: the folder inside the container. */
  containerDir?: string;
}

/** Where skills from outside the workspace are copied in the container. */
export const SKILLS_COPY_DIR = "/tmp/agent-ci-skills";
/** A skill folder copied into the container holds at most this much. */
const MAX_COPY_BYTES = 8 * 1024 * 1024;
const MAX_COPY_FILES = 500;

export const SkillInput = z.strictObject({
  skill: z.string().min(1).describe('The skill name, e.g. "pdf" (no arguments)'),
  args: z.string().optional().describe("Optional arguments for the skill"),
});
export type SkillInput = z.infer<typeof SkillInput>;

const LOCATION: Record<SkillOrigin, string> = {
  flag: "user",
  action: "user",
  workspace: "project",
};

/** The tool's description: how to use skills, and each skill's name and description. */
export function skillToolDescription(skills: readonly SkillSource[]): string {
  const listed = skills
    .map(
      (s) =>
        `<skill>\n<name>\n${s.name}\n</name>\n<description>\n${s.description}\n</description>\n<location>\n${LOCATION[s.origin]}\n</location>\n</skill>`,
    )
    .join("\n");
  return `Execute a skill within the main conversation

<skills_instructions>
When the task at hand matches one of the skills below, use this tool to load the skill's instructions before doing the work. Skills carry your team's own procedures and knowledge.

How to use skills:
- Invoke a skill with its name, e.g. skill: "pdf"; pass arguments in args when the skill takes them
- The skill's instructions then appear in the conversation; follow them
- Only use skills listed in <available_skills> below
- Do not invoke a skill that is already running
</skills_instructions>

<available_skills>
${listed}
</available_skills>`;
}

/** The host folder's files, relative, bounded; symbolic links are left out (they could point anywhere). */
function skillFiles(dir: string): Array<{ rel: string; abs: string; size: number }> {
  const files: Array<{ rel: string; abs: string; size: number }> = [];
  let bytes = 0;
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(childRel);
      else if (entry.isFile()) {
        const abs = path.join(dir, childRel);
        const size = fs.statSync(abs).size;
        if (files.length >= MAX_COPY_FILES || bytes + size > MAX_COPY_BYTES)
          throw new Error(
            `its folder is over ${MAX_COPY_FILES} files or ${MAX_COPY_BYTES / 1024 / 1024} MB, too large to copy into the sandbox`,
          );
        bytes += size;
        files.push({ rel: childRel, abs, size });
      }
    }
  };
  walk("");
  return files;
}

/** Makes the run's Skill tool over its skills (the factory of SEAMS.md: no service in ToolContext). */
export function createSkillTool(skills: readonly SkillSource[]): Tool<SkillInput> {
  const copied = new Map<string, Promise<string>>();
  const baseDirectory = (skill: SkillSource, sandbox: Sandbox): Promise<string> => {
    if (skill.containerDir) return Promise.resolve(skill.containerDir);
    let done = copied.get(skill.name);
    if (!done) {
      const target = `${SKILLS_COPY_DIR}/${skill.name}`;
      done = (async () => {
        for (const file of skillFiles(skill.hostPath))
          await sandbox.writeFile(`${target}/${file.rel}`, fs.readFileSync(file.abs), { confine: false });
        return target;
      })();
      copied.set(skill.name, done);
      done.catch(() => copied.delete(skill.name));
    }
    return done;
  };

  return defineTool<SkillInput>({
    name: "Skill",
    description: skillToolDescription(skills),
    inputSchema: SkillInput,
    maxResultSizeChars: 100_000,
    isReadOnly: () => true,
    isConcurrencySafe: () => false,

    async call(input, ctx) {
      const name = input.skill.trim().replace(/^\//, "");
      const skill = skills.find((s) => s.name === name);
      if (!skill) return toolError("not_found", `Unknown skill: ${name}`);
      let base: string;
      try {
        base = await baseDirectory(skill, ctx.sandbox);
      } catch (e) {
        return toolError("sandbox_error", `Skill ${name} could not be loaded: ${(e as Error).message}`);
      }
      const body = substituteArguments(skill.body, input.args ?? "");
      return {
        output: `Launching skill: ${name}`,
        followUp: [{ type: "text", text: `Base directory for this skill: ${base}\n\n${body}` }],
        title: name,
      };
    },
  });
}

/**
 * `$ARGUMENTS` → the whole argument text, `$1`…`$9` → its words; text with neither gets the arguments
 * appended, as Claude Code does, so they are never lost.
 */
export function substituteArguments(body: string, args: string): string {
  const words = args.trim() ? args.trim().split(/\s+/) : [];
  const hadPlaceholder = body.includes("$ARGUMENTS") || /\$[1-9](?![0-9])/.test(body);
  const filled = body
    .replaceAll("$ARGUMENTS", () => args)
    .replace(/\$([1-9])(?![0-9])/g, (_, n: string) => words[Number(n) - 1] ?? "");
  if (hadPlaceholder || !args.trim()) return filled;
  return `${filled.replace(/\n*$/, "")}\n\nARGUMENTS: ${args}\n`;
}
