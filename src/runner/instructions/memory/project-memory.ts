// What memory a conversation is given and when, in Claude Code's order and shapes: at the start, one
// `<system-reminder>` with the user's memory files (--memory-file) and the workspace root's CLAUDE.md,
// .claude/CLAUDE.md, unconditional .claude/rules/*.md and CLAUDE.local.md (each followed by its imports);
// later, beside the result of the first tool call that reads or edits a file below them, the CLAUDE.md files
// of its folders (outer first) and the rules whose `paths:` match it — each file once per conversation.
import path from "node:path";
import { WORKSPACE_ROOT } from "../../../sandbox/sandbox.js";
import {
  DOT_CLAUDE_MEMORY,
  LOCAL_MEMORY,
  MEMORY_LABELS,
  MemorySeen,
  PROJECT_MEMORY,
  ruleMatches,
  rulesIn,
  type MemoryFile,
  type MemoryTree,
} from "./memory-files.js";

/** Where a run's memory comes from: the project's tree (absent with --no-project-memory) and the user's files. */
export interface MemorySources {
  project?: MemoryTree;
  /** --memory-file: each a tree of one file, shown by its own path. */
  user: Array<{ tree: MemoryTree; rel: string }>;
}

/** The tools whose target file brings in nested memory (a read or an edit of it). */
export const NESTED_MEMORY_TOOLS: ReadonlySet<string> = new Set(["Read", "Edit", "Write", "NotebookEdit"]);

const START_HEADER =
  "Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.";

/** The memory files of the start, in order (user files, then the project's), marked seen in `seen`. */
export function startMemory(sources: MemorySources, seen: MemorySeen): MemoryFile[] {
  const files: MemoryFile[] = [];
  for (const { tree, rel } of sources.user) files.push(...seen.take(tree, rel, "user"));
  const project = sources.project;
  if (!project) return files;
  files.push(...seen.take(project, PROJECT_MEMORY, "project"));
  files.push(...seen.take(project, DOT_CLAUDE_MEMORY, "project"));
  for (const rule of rulesIn(project, ""))
    if (!rule.globs) files.push(...seen.take(project, rule.rel, "project", { stripFrontmatter: true }));
  files.push(...seen.take(project, LOCAL_MEMORY, "local"));
  return files;
}

/** The start's `<system-reminder>` (undefined without files). */
export function startMemoryReminder(files: readonly MemoryFile[]): string | undefined {
  if (!files.length) return undefined;
  const parts = files.map((f) => `Contents of ${f.path} (${MEMORY_LABELS[f.kind]}):\n\n${f.text.trimEnd()}`);
  return `<system-reminder>\n${START_HEADER}\n\n${parts.join("\n\n")}\n</system-reminder>`;
}

/** One nested file's `<system-reminder>`, as beside a tool result. */
export function nestedMemoryReminder(file: MemoryFile): string {
  return `<system-reminder>\nContents of ${file.path}:\n\n${file.text}\n</system-reminder>`;
}

/** A memory file given to a conversation, and when: for the report. */
export interface DeliveredMemory {
  file: MemoryFile;
  /** `start`, or the tool call (its id) whose result it went beside. */
  at: "start" | { toolUseId: string };
  /** A subagent's conversation: its agent type. */
  agent?: string;
}

/**
 * One conversation's nested memory: asked after each Read/Edit/Write/NotebookEdit result with the file's
 * container path, it returns the memory files that path newly reaches (possibly none).
 */
export class NestedMemoryTracker {
  private readonly rulesByDir = new Map<string, Array<{ rel: string; globs?: string[] }>>();

  constructor(
    private readonly project: MemoryTree | undefined,
    private readonly seen: MemorySeen,
  ) {}

  private rules(dir: string) {
    let rules = this.rulesByDir.get(dir);
    if (!rules && this.project) {
      rules = rulesIn(this.project, dir);
      this.rulesByDir.set(dir, rules);
    }
    return rules ?? [];
  }

  /** The memory files `containerPath` newly reaches, outer first. */
  reached(containerPath: string): MemoryFile[] {
    const tree = this.project;
    if (!tree || !containerPath.startsWith(`${WORKSPACE_ROOT}/`)) return [];
    const rel = path.posix.normalize(containerPath.slice(WORKSPACE_ROOT.length + 1));
    if (rel.startsWith("../")) return [];
    const found: MemoryFile[] = [];
    const conditional = (dir: string) => {
      for (const rule of this.rules(dir))
        if (rule.globs && ruleMatches(rule.globs, dir, rel))
          found.push(...this.seen.take(tree, rule.rel, "project", { stripFrontmatter: true }));
    };
    conditional("");
    const parts = rel.split("/").slice(0, -1);
    for (let i = 1; i <= parts.length; i += 1) {
      const dir = parts.slice(0, i).join("/");
      found.push(...this.seen.take(tree, `${dir}/${PROJECT_MEMORY}`, "project"));
      found.push(...this.seen.take(tree, `${dir}/${DOT_CLAUDE_MEMORY}`, "project"));
      for (const rule of this.rules(dir))
        if (!rule.globs) found.push(...this.seen.take(tree, rule.rel, "project", { stripFrontmatter: true }));
      conditional(dir);
      found.push(...this.seen.take(tree, `${dir}/${LOCAL_MEMORY}`, "local"));
    }
    return found;
  }
}
