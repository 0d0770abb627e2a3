// The option table's shape (options/table.ts): what an entry says of an option on each face.

/** The headings of `agent-ci run --help`, in the order they are shown. */
export const HELP_GROUPS = [
  "Task",
  "Permissions",
  "Sandbox",
  "Network",
  "Extensions",
  "Model",
  "Attempts",
  "Output",
] as const;
export type HelpGroup = (typeof HELP_GROUPS)[number];

/** How the CLI reads a flag's argument (options/commander.ts); `collect` makes the flag repeatable. */
export type CliParse = "positiveInt" | "positiveNumber" | "size" | "collect";

export interface CliSide {
  /** Commander's flags: `-w, --workspace <dir>`, `--max-turns <n>`, `--strict-mcp`, `--no-compaction`. */
  readonly flags: string;
  readonly description: string;
  readonly group: HelpGroup;
  readonly parse?: CliParse;
  readonly choices?: readonly string[];
  readonly default?: string;
  /** A flag of `agent-ci policy check|test` too (the permission flags). */
  readonly policy?: true;
}

export interface ActionSide {
  /** The default as action.yml holds it (and as a runner sets INPUT_<NAME> when the workflow gives none). */
  readonly default: string;
  readonly description: string;
  /** A list (one per line or comma-separated): the values `claude_args` gives add to the input's. */
  readonly list?: true;
  /** The CLI's counterpart besides this option's own flag: other flags, or what the CLI has instead. */
  readonly cli?: readonly `--${string}`[] | string;
}

export interface OptionDef {
  /** An input of the Action (action.yml), named as the entry. */
  readonly action?: ActionSide;
  /** A flag of `agent-ci run` (and of `policy` with `policy: true`). */
  readonly cli?: CliSide;
  /**
   * Claude Code's flags that mean this option: `claude_args` accepts them (a list option's values add up;
   * another value given to the input is an error naming both), and the CLI takes those it does not
   * spell the same as hidden aliases.
   */
  readonly claudeCode?: readonly `--${string}`[];
  /** The key of a Claude Code settings file (`permissions.allow`) that sets it too, merged by the policy. */
  readonly settings?: string;
}

/** What the CLI has instead of an input that only the Action has. */
export const ACTION_ONLY = "the Action only (the CLI makes no GitHub writes and reads no event)";
