// The task and what the agent may do and is told: the prompt, the model, the permission policy, the
// extensions (skills, commands, MCP servers, subagents) and memory.
import { PERMISSION_MODES } from "../policy/modes.js";
import { DEFAULT_MODEL } from "./values.js";
import { type OptionDef } from "./types.js";

export const AGENT_OPTIONS = {
  prompt: {
    action: {
      default: "",
      description:
        "The task, in your words (trusted: it comes from the workflow). On issue and pull-request events the issue or PR text follows it as untrusted data. With a task (prompt, prompt_file or task: review) every event the workflow names runs, as claude-code-action's agent mode; without one, only a mention of trigger_phrase, label_trigger or assignee_trigger starts a run, with a default task for the event.",
    },
    cli: { flags: "-p, --prompt <text>", description: "the task", group: "Task" },
  },
  prompt_file: {
    action: {
      default: "",
      description:
        "Read the task from this file instead. A repository path is read from the base branch on pull-request events (never from the PR head); an absolute path is a file on the runner.",
    },
    cli: { flags: "--prompt-file <file>", description: "read the task from a file", group: "Task" },
  },
  model: {
    action: {
      default: DEFAULT_MODEL,
      description:
        "Claude model id or alias (sonnet, opus, haiku). On Bedrock and Vertex AI the name is mapped to the provider's id (a Bedrock inference profile from the region); a provider's own id is used as given.",
    },
    cli: {
      flags: "--model <id>",
      description: "Claude model id or alias: sonnet, opus, haiku (default: a current Sonnet)",
      group: "Model",
    },
    claudeCode: ["--model"],
  },
  permission_mode: {
    action: {
      default: "default",
      description:
        "default, plan, acceptEdits or bypassPermissions (Claude Code's modes). Non-interactive: where Claude Code would ask, agent-ci denies. Use acceptEdits to let the agent edit files.",
    },
    cli: {
      flags: "--mode <mode>",
      description:
        "permission mode (default: a trusted settings file's defaultMode, else \"default\"); Claude Code's --permission-mode, --allowedTools and --disallowedTools work too",
      group: "Permissions",
      choices: PERMISSION_MODES,
      policy: true,
    },
    settings: "permissions.defaultMode",
    claudeCode: ["--permission-mode"],
  },
  allowed_tools: {
    action: {
      default: "",
      list: true,
      description:
        "Allow rules in Claude Code syntax, one per line or comma-separated, e.g. Bash(npm test:*).",
    },
    cli: {
      flags: "--allow <rule>",
      description: "allow rule in Claude Code syntax, e.g. 'Bash(npm test:*)' (repeatable)",
      group: "Permissions",
      parse: "collect",
      policy: true,
    },
    settings: "permissions.allow",
    claudeCode: ["--allowedTools", "--allowed-tools"],
  },
  disallowed_tools: {
    action: {
      default: "",
      list: true,
      description: "Deny rules in Claude Code syntax, e.g. Bash(git push:*). Deny always wins.",
    },
    cli: {
      flags: "--deny <rule>",
      description: "deny rule, e.g. 'Read(./.env)' (repeatable; deny always wins)",
      group: "Permissions",
      parse: "collect",
      policy: true,
    },
    settings: "permissions.deny",
    claudeCode: ["--disallowedTools", "--disallowed-tools"],
  },
  settings: {
    action: {
      default: "",
      description:
        "Trusted Claude Code settings (permissions, hooks): inline JSON, or a path. On pull-request events a repository path is read from the base branch through the API, never from the PR head. Settings files inside the workspace may only add denies.",
    },
    cli: {
      flags: "--settings <file>",
      description: "a Claude Code settings file whose permissions and hooks you trust",
      group: "Permissions",
      policy: true,
    },
    claudeCode: ["--settings"],
  },
  skills: {
    action: {
      default: "",
      description:
        "A folder of skills (<name>/SKILL.md) the agent may load with the Skill tool. On pull-request events a repository path is read from the base branch through the API, never from the PR head. The PR's own .claude/skills is never used.",
    },
    cli: {
      flags: "--skills-dir <dir>",
      description:
        "a folder of skills (<name>/SKILL.md) the agent may load with the Skill tool (repeatable; the workspace's .claude/skills only with --trust-workspace-settings)",
      group: "Extensions",
      parse: "collect",
    },
  },
  commands: {
    action: {
      default: "",
      description:
        "A folder of slash commands (<name>.md): a prompt starting /name args expands from it. On pull-request events a repository path is read from the base branch through the API, never from the PR head. The PR's own .claude/commands is never used.",
    },
    cli: {
      flags: "--commands-dir <dir>",
      description:
        "a folder of slash commands (<name>.md): a prompt starting /name args expands from it (repeatable; the workspace's .claude/commands only with --trust-workspace-settings)",
      group: "Extensions",
      parse: "collect",
    },
  },
  mcp_config: {
    action: {
      default: "",
      description:
        "MCP servers in Claude Code's format ({\"mcpServers\": {...}}): inline JSON, or a path. On pull-request events a repository path is read from the base branch through the API, never from the PR head; the workspace's own .mcp.json is never started. stdio servers run inside the sandbox; http and sse servers are called from the Action's process, so their headers (tokens) stay out of the container.",
    },
    cli: {
      flags: "--mcp-config <file-or-json>",
      description:
        'MCP servers in Claude Code\'s format ({"mcpServers": {...}}), a file or inline JSON (repeatable); stdio servers run in the sandbox',
      group: "Extensions",
      parse: "collect",
    },
    claudeCode: ["--mcp-config"],
  },
  claude_args: {
    action: {
      default: "",
      description:
        "Claude Code CLI flags, as claude-code-action's claude_args, for the flags agent-ci shares with Claude Code: --allowedTools, --disallowedTools (or --allowed-tools, --disallowed-tools; rules separated by commas or spaces, e.g. Bash(npm test),Read), --permission-mode, --max-turns, --model, --max-budget-usd, --append-system-prompt, --mcp-config and --settings. Each sets the input that means the same: a flag wins over an input left at its default, and a flag with an input set to another value is an error naming both (rules add up). --add-dir, --system-prompt and --fallback-model are refused with the reason, and any other flag by name. Quoting as in a shell.",
      cli: "Claude Code's flags given as flags (`--allowedTools`, `--permission-mode`, …)",
    },
  },
  append_system_prompt: {
    action: {
      default: "",
      description:
        "Text appended to the system prompt (trusted: it comes from the workflow), as the CLI's --system-prompt-append.",
    },
    cli: {
      flags: "--system-prompt-append <text>",
      description:
        "text appended to agent-ci's system prompt (Claude Code's --append-system-prompt works too)",
      group: "Task",
    },
    claudeCode: ["--append-system-prompt"],
  },
  agents: {
    action: {
      default: "",
      description:
        'Subagents the Task tool may start, besides the built-in general-purpose, Explore and Plan: inline JSON in Claude Code\'s --agents shape ({"name": {"description", "prompt", "tools", "model"}}), a path to such a JSON file, or a path to a folder of agent files (<name>.md with YAML frontmatter). On pull-request events a repository path is read from the base branch through the API, never from the PR head; the PR\'s own .claude/agents is never used.',
      cli: ["--agents-dir"],
    },
    cli: {
      flags: "--agents <json>",
      description:
        'subagent definitions as Claude Code\'s --agents JSON ({"name": {description, prompt, tools, model}}), or a file holding it',
      group: "Extensions",
    },
  },
  project_memory: {
    action: {
      default: "",
      description:
        "Where the project's memory (CLAUDE.md, .claude/CLAUDE.md, .claude/rules/, and the CLAUDE.md files of subfolders) is read from: base (the pull request's base revision, through the API: a PR head's memory is data, never instructions), workspace (the checkout), or none. Empty: base on pull-request events, workspace elsewhere.",
    },
    cli: {
      flags: "--no-project-memory",
      description:
        "do not tell the model the workspace's CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md and .claude/rules (nor the nested ones)",
      group: "Task",
    },
  },
  memory: {
    action: {
      default: "",
      list: true,
      description:
        "Memory files of your own, told to the model as ~/.claude/CLAUDE.md is for a Claude Code user (one per line or comma-separated): repository paths (read from the base branch on pull-request events) or absolute paths on the runner.",
    },
    cli: {
      flags: "--memory-file <file>",
      description: "a memory file of your own, told to the model as ~/.claude/CLAUDE.md is (repeatable)",
      group: "Task",
      parse: "collect",
    },
  },
} as const satisfies Record<string, OptionDef>;

/**
 * Claude Code's flags `claude_args` refuses with a reason of their own (any other flag not in the table is
 * refused by name): each would change what the run may reach or how it is served without the policy saying so.
 */
export const CLAUDE_ARGS_REFUSED: Readonly<Record<`--${string}`, string>> = {
  "--add-dir":
    "the sandbox holds the workspace only, copied in; no other host folder is mounted (copy what the agent needs into the workspace, or use include_ignored)",
  "--system-prompt":
    "it would replace the whole system prompt, which tells the model the sandbox, the policy and the tools' rules; give your text with --append-system-prompt",
  "--fallback-model":
    "agent-ci's loop has no second model: an overloaded model is retried with backoff and then ends the run as api_error, and the report prices one model",
};
