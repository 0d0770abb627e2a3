// What the model is told, built in one place: the system prompt (agent-ci's guidance and the environment
// facts), the first user message's memory and git snapshot, and each conversation's nested memory, from the
// sources the run trusts — the workspace's memory (the user's own checkout), or on pull-request events the
// base revision's (a folder the Action read through the API), plus the user's --memory-file files. The run's
// report section (`context`) is recorded from here too. Built before the sandbox starts: the first request
// waits for nothing here but the host's git.
import type { PermissionMode } from "../../../policy/schema.js";
import { createHash } from "node:crypto";
import path from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import type { ModelContextRecord } from "../../../report/index.js";
import type { RunConfig } from "../../config.js";
import type { NestedMemory } from "../../loop/pipeline.js";
import { systemPrompt } from "../system-prompt.js";
import { environmentFacts, environmentSection, type EnvironmentFacts } from "./environment.js";
import { gitSnapshotReminder, type GitSnapshot } from "./git-snapshot.js";
import { MemorySeen, type MemoryFile, type MemoryProblem, type MemoryTree } from "./memory-files.js";
import {
  NESTED_MEMORY_TOOLS,
  NestedMemoryTracker,
  nestedMemoryReminder,
  startMemory,
  startMemoryReminder,
  type DeliveredMemory,
  type MemorySources,
} from "./project-memory.js";

export type MemoryConfig = Pick<
  RunConfig,
  "workspace" | "projectMemory" | "projectMemoryDir" | "projectMemoryRevision" | "memoryFile"
>;

/** What one conversation is told besides its system prompt. */
export interface ConversationContext {
  /** Text blocks before the prompt in its first user message. */
  preamble: string[];
  /** Its nested memory, for its tool pipeline. */
  memory: NestedMemory;
}

/** The memory trees a run reads, from its configuration. */
export function memorySources(config: MemoryConfig): MemorySources {
  const project: MemoryTree | undefined = !config.projectMemory
    ? undefined
    : config.projectMemoryDir
      ? { root: path.resolve(config.projectMemoryDir), revision: config.projectMemoryRevision ?? "trusted" }
      : { root: path.resolve(config.workspace), revision: config.projectMemoryRevision ?? "workspace" };
  const user = config.memoryFile.map((given) => {
    const file = path.resolve(given);
    const root = path.dirname(file);
    return {
      tree: { root, revision: "memory-file", shownPath: (rel: string) => path.join(root, rel) },
      rel: path.basename(file),
    };
  });
  return { project, user };
}

export class ModelContext {
  readonly system: string;
  readonly environment: EnvironmentFacts;
  readonly environmentText: string;
  readonly snapshot?: GitSnapshot;
  readonly main: ConversationContext;
  /** Every memory file given to any conversation, in order. */
  readonly delivered: DeliveredMemory[] = [];
  readonly problems: MemoryProblem[] = [];

  constructor(
    private readonly sources: MemorySources,
    options: {
      /** The repository's state at the start (takeGitSnapshot); none outside a repository. */
      snapshot?: GitSnapshot;
      model?: string;
      mode: PermissionMode;
      network: string;
      allowedDomains?: readonly string[];
      append?: string;
      now?: Date;
    },
  ) {
    this.snapshot = options.snapshot;
    this.environment = environmentFacts({
      isGitRepository: this.snapshot !== undefined,
      model: options.model,
      now: options.now,
    });
    this.environmentText = environmentSection(this.environment);
    this.system = systemPrompt({
      mode: options.mode,
      network: options.network,
      allowedDomains: options.allowedDomains,
      environment: this.environmentText,
      append: options.append,
    });
    this.main = this.conversation(true);
  }

  /** A subagent's: the start memory and git snapshot unless its type leaves them out (Explore, Plan). */
  forAgent(agent: { name: string; omitProjectContext?: boolean }): ConversationContext {
    return this.conversation(!agent.omitProjectContext, agent.name);
  }

  private conversation(withStart: boolean, agent?: string): ConversationContext {
    const seen = new MemorySeen();
    const preamble: string[] = [];
    if (withStart) {
      const files = startMemory(this.sources, seen);
      for (const file of files) this.delivered.push({ file, at: "start", ...(agent ? { agent } : {}) });
      const memory = startMemoryReminder(files);
      if (memory) preamble.push(memory);
      if (this.snapshot) preamble.push(gitSnapshotReminder(this.snapshot));
    }
    const tracker = new NestedMemoryTracker(this.sources.project, seen);
    const memory: NestedMemory = {
      afterTool: (tool, containerPath, toolUseId) => {
        if (!NESTED_MEMORY_TOOLS.has(tool)) return [];
        const files = tracker.reached(containerPath);
        for (const file of files)
          this.delivered.push({ file, at: { toolUseId }, ...(agent ? { agent } : {}) });
        this.problems.push(...seen.problems.splice(0));
        return files.map((file): Anthropic.TextBlockParam => ({
          type: "text",
          text: nestedMemoryReminder(file),
        }));
      },
    };
    this.problems.push(...seen.problems.splice(0));
    return { preamble, memory };
  }

  /** report.json's `context`. */
  record(): ModelContextRecord {
    const fileRecord = ({ file, at, agent }: DeliveredMemory) => ({
      path: file.path,
      kind: file.kind,
      revision: file.revision,
      chars: file.chars,
      ...(file.cut ? { cut: true } : {}),
      ...(file.importedBy ? { importedBy: file.importedBy } : {}),
      ...(at === "start" ? { at: "start" as const } : { at: "nested" as const, toolUseId: at.toolUseId }),
      ...(agent ? { agent } : {}),
    });
    return {
      systemPrompt: {
        sha256: createHash("sha256").update(this.system).digest("hex"),
        chars: this.system.length,
      },
      environment: this.environment,
      memory: {
        project: this.sources.project?.revision ?? "none",
        files: this.delivered.map(fileRecord),
        ...(this.problems.length ? { problems: this.problems } : {}),
      },
      ...(this.snapshot
        ? {
            git: {
              branch: this.snapshot.branch,
              mainBranch: this.snapshot.mainBranch,
              status: this.snapshot.status,
              ...(this.snapshot.statusCut ? { statusCut: true } : {}),
              commits: this.snapshot.commits,
            },
          }
        : {}),
    };
  }
}

/** The run's context from its configuration, its mode, its structured-output instruction and its git snapshot. */
export function prepareModelContext(
  config: RunConfig,
  mode: PermissionMode,
  structured: { instruction(): string } | undefined,
  snapshot: GitSnapshot | undefined,
): ModelContext {
  return new ModelContext(memorySources(config), {
    snapshot,
    model: config.script ? undefined : config.model,
    mode,
    network: config.network,
    allowedDomains: config.allowDomain,
    append: [structured?.instruction(), config.systemPromptAppend].filter(Boolean).join("\n\n") || undefined,
  });
}

/** The first request as text, for `agent-ci run --print-context`: the system prompt, then the first user message. */
export function renderFirstRequest(context: ModelContext, prompt: string | undefined): string {
  const blocks = [...context.main.preamble, prompt ?? "(the task prompt)"];
  return [
    "=== system prompt ===",
    context.system,
    "",
    "=== first user message ===",
    blocks.join("\n\n"),
    "",
  ].join("\n");
}

export type { MemoryFile };
