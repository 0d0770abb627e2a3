// Options only the CLI has: the model's finer settings, the output folder and its formats, review's
// revisions, attempts' scheduling.
import { OUTPUT_FORMATS, PROGRESS_FORMATS } from "./values.js";
import { type OptionDef } from "./types.js";

export const CLI_ONLY_OPTIONS = {
  small_fast_model: {
    cli: {
      flags: "--small-fast-model <id>",
      description: "the model that reads WebFetch's pages (default: a current Haiku)",
      group: "Model",
    },
  },
  max_tokens: {
    cli: {
      flags: "--max-tokens <n>",
      description: "max output tokens per turn",
      group: "Model",
      parse: "positiveInt",
    },
  },
  thinking_budget: {
    cli: {
      flags: "--thinking-budget <n>",
      description: "extended thinking budget in tokens",
      group: "Model",
      parse: "positiveInt",
    },
  },
  workspace_size: {
    cli: {
      flags: "--workspace-size <size>",
      description: "size of the sandbox's /workspace, e.g. 4g",
      group: "Sandbox",
      parse: "size",
    },
  },
  strict_mcp: {
    cli: {
      flags: "--strict-mcp",
      description: "an MCP server that fails to start is a config error (default: a warning)",
      group: "Extensions",
    },
  },
  trust_workspace_settings: {
    cli: {
      flags: "--trust-workspace-settings",
      description:
        "let the workspace's .claude/settings.json grant permissions (off: it may only deny), its .claude/agents/ define subagents and its .mcp.json start servers (off: both ignored)",
      group: "Permissions",
      policy: true,
    },
  },
  print_context: {
    cli: {
      flags: "--print-context",
      description:
        "print the first request's system prompt and first user message (memory, git snapshot, task) and exit: no model call, no container",
      group: "Output",
    },
  },
  agents_dir: {
    cli: {
      flags: "--agents-dir <dir>",
      description:
        "a folder of subagent definitions for Task (Markdown with YAML frontmatter: name, description, tools, model); repeatable",
      group: "Extensions",
      parse: "collect",
    },
  },
  context_window: {
    cli: {
      flags: "--context-window <tokens>",
      description: "the model's context window (default: the model's)",
      group: "Model",
      parse: "positiveInt",
    },
  },
  compact_at: {
    cli: {
      flags: "--compact-at <tokens>",
      description: "make the conversation smaller once its prompt reaches this (default: 75% of the window)",
      group: "Model",
      parse: "positiveInt",
    },
  },
  out: {
    cli: {
      flags: "--out <dir>",
      description: "output folder (default ./agent-ci-out/<run-id>)",
      group: "Output",
    },
  },
  parallel: {
    cli: {
      flags: "--parallel <k>",
      description:
        "with --attempts: at most K at a time (default: what this machine's CPUs and memory allow for the sandbox's limits)",
      group: "Attempts",
      parse: "positiveInt",
    },
  },
  attempt_prompts: {
    cli: {
      flags: "--attempt-prompts <file>",
      description:
        "with --attempts: a text file, one hint a line; line k is appended to attempt k's prompt as its own paragraph",
      group: "Attempts",
    },
  },
  stop_at_first_pass: {
    cli: {
      flags: "--stop-at-first-pass",
      description:
        "with --attempts: cancel the other attempts (their records kept) once one passes --verify (without --verify: completes with changes)",
      group: "Attempts",
    },
  },
  quiet: {
    cli: {
      flags: "-q, --quiet",
      description: "no progress lines on stderr (errors and the closing summary still print)",
      group: "Output",
    },
  },
  progress: {
    cli: {
      flags: "--progress <format>",
      description:
        "progress lines on stderr as text, or json: one object per line per phase and per tool call",
      group: "Output",
      choices: PROGRESS_FORMATS,
      default: "text",
    },
  },
  output_format: {
    cli: {
      flags: "--output-format <format>",
      description: "stdout: text, json, or stream-json (Claude Code's shape)",
      group: "Output",
      choices: OUTPUT_FORMATS,
      default: "text",
    },
  },
  base: {
    cli: {
      flags: "--base <rev>",
      description: "--task review: the commit or ref the change is reviewed against (e.g. origin/main)",
      group: "Task",
    },
  },
  head: {
    cli: {
      flags: "--head <rev>",
      description: "--task review: the reviewed commit (default HEAD)",
      group: "Task",
    },
  },
  allow_weak_hardening: {
    cli: {
      flags: "--allow-weak-hardening",
      description: "run even when the engine did not apply a sandbox setting (the report says so)",
      group: "Sandbox",
    },
  },
} as const satisfies Record<string, OptionDef>;
