// The option table: every option of agent-ci, once, in the order action.yml lists the inputs. An entry says
// what the option is called on each face (its Action input is the entry's name, its CLI flag is `cli.flags`),
// its default, where it applies (the Action, the CLI's `run` and `policy` commands, Claude Code's flags in
// `claude_args`) and what it means, in a line per face (types.ts). Derived from it: action.yml's inputs
// (scripts/action-yml.ts writes them; a test fails when they differ), the CLI's options and help groups
// (options/commander.ts), the Action's input names and defaults (action/inputs.ts), the `claude_args` flags
// (action/claude-args.ts), each input's CLI counterpart and the configuration reference (scripts/cli-docs.ts,
// scripts/action-docs.mjs). Adding an option is an entry here plus its use: the Action's parser (a zod entry
// keyed by the input's name, which the compiler asks for) and the RunConfig field it sets. A leaf: data only.
import { AGENT_OPTIONS } from "./agent.js";
export { CLAUDE_ARGS_REFUSED } from "./agent.js";
import { CLI_ONLY_OPTIONS } from "./cli-only.js";
import { QUEUE_OPTIONS } from "./queue-options.js";
import { RUN_OPTIONS } from "./run-options.js";
import { SANDBOX_OPTIONS } from "./sandbox-options.js";
import { SIGN_IN_OPTIONS } from "./sign-in.js";
import type { ActionSide, CliSide, OptionDef } from "./types.js";

export const OPTIONS = {
  ...AGENT_OPTIONS,
  ...SIGN_IN_OPTIONS,
  ...SANDBOX_OPTIONS,
  ...RUN_OPTIONS,
  ...QUEUE_OPTIONS,
  ...CLI_ONLY_OPTIONS,
} as const satisfies Record<string, OptionDef>;
export type OptionName = keyof typeof OPTIONS;

/** The Action's inputs: the options with an Action side. */
export type InputName = {
  [K in OptionName]: (typeof OPTIONS)[K] extends { action: ActionSide } ? K : never;
}[OptionName];

const entries = Object.entries(OPTIONS) as [OptionName, OptionDef][];

/** Every input, in action.yml's order. */
export const INPUT_NAMES = entries.filter(([, o]) => o.action).map(([name]) => name as InputName);

/** Every input's action.yml default (a runner sets INPUT_<NAME> to it when the workflow gives none). */
export const INPUT_DEFAULTS = Object.fromEntries(
  INPUT_NAMES.map((name) => [name, (OPTIONS[name] as OptionDef).action!.default]),
) as Record<InputName, string>;

/** The inputs `claude_args` sets: those whose option names Claude Code's flags. */
export type ClaudeArgsInput = {
  [K in InputName]: (typeof OPTIONS)[K] extends { claudeCode: readonly string[] } ? K : never;
}[InputName];

/** Each Claude Code flag `claude_args` takes, with the input it sets. */
export const CLAUDE_ARGS_FLAGS: ReadonlyMap<`--${string}`, ClaudeArgsInput> = new Map(
  INPUT_NAMES.flatMap((name) =>
    ((OPTIONS[name] as OptionDef).claudeCode ?? []).map((flag) => [flag, name as ClaudeArgsInput] as const),
  ),
);

/** The long flag of a CLI side: `--workspace` of `-w, --workspace <dir>`. */
export function longOf(cli: CliSide): `--${string}` {
  const long = /--[A-Za-z][\w-]*/.exec(cli.flags)?.[0];
  if (!long) throw new Error(`option table: ${cli.flags} has no long flag`);
  return long as `--${string}`;
}

/** The option's Action side (every input has one). */
export function actionSide(name: InputName): ActionSide {
  return (OPTIONS[name] as OptionDef).action!;
}

export { DEFAULT_MAX_TURNS, DEFAULT_TIMEOUT_MINUTES } from "./run-options.js";
export * from "./types.js";
