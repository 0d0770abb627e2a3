// report.json's record of what the model was told: the system prompt (its hash and length, not its text),
// the environment facts, every memory file given to a conversation (path, revision, size: never its text),
// and the git snapshot of the first request.
import { z } from "zod";
import { NonNegativeInt } from "./schema-base.js";

export const MemoryFileRecord = z
  .object({
    path: z
      .string()
      .describe("The path the model was shown (/workspace/CLAUDE.md, or a --memory-file's own)."),
    kind: z
      .enum(["project", "local", "user"])
      .describe("project: checked in (CLAUDE.md, rules); local: CLAUDE.local.md; user: --memory-file."),
    revision: z
      .string()
      .describe(
        "Where it was read: `workspace`, `base <sha>` (a pull request's base, through the API), `memory-file`.",
      ),
    chars: NonNegativeInt.describe("The file's characters (bytes when it was too large to read whole)."),
    cut: z.boolean().optional().describe("Cut at the memory file limit, with a note to the model."),
    importedBy: z.string().optional().describe("The memory file whose @path import brought it in."),
    at: z
      .enum(["start", "nested"])
      .describe("start: in the first user message; nested: beside the result of the call that reached it."),
    toolUseId: z.string().optional().describe("nested: the tool call beside whose result it was sent."),
    agent: z.string().optional().describe("A subagent's conversation: its agent type."),
  })
  .meta({ id: "MemoryFileRecord" });

export const ModelContextRecord = z
  .object({
    systemPrompt: z.object({ sha256: z.string(), chars: NonNegativeInt }),
    environment: z.object({
      workingDirectory: z.string(),
      isGitRepository: z.boolean(),
      platform: z.string(),
      shell: z.string(),
      date: z.string(),
      model: z.string().optional(),
    }),
    memory: z.object({
      project: z
        .string()
        .describe(
          "The project memory's revision (`workspace`, `base <sha>`), or `none` (--no-project-memory).",
        ),
      files: z.array(MemoryFileRecord),
      problems: z.array(z.object({ path: z.string(), reason: z.string() })).optional(),
    }),
    git: z
      .object({
        branch: z.string(),
        mainBranch: z.string(),
        status: z.string().describe("`git status --short` at the start (empty: clean)."),
        statusCut: z.boolean().optional(),
        commits: z.array(z.string()).describe("`git log --oneline -n 5`."),
      })
      .optional()
      .describe("The git snapshot of the first request; absent when the workspace is not a repository."),
  })
  .meta({ id: "ModelContext" });
export type ModelContextRecord = z.input<typeof ModelContextRecord>;
