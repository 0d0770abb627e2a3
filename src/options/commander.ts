// The CLI's options, made from the option table (table.ts): each entry's flag with its help, parser, choices
// and default, under its help group; and Claude Code's spellings of them (`--allowedTools`), hidden from the
// help and folded into agent-ci's by the command (src/cli.ts). Nothing here knows an option by name.
import { InvalidArgumentError, Option, type Command } from "commander";
import { parseSize } from "../text.js";
import { longOf, OPTIONS, type OptionName } from "./table.js";
import { HELP_GROUPS, type CliParse, type CliSide, type OptionDef } from "./types.js";

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** How each kind of argument is read; a bad one is a usage error naming the flag (commander adds it). */
export const CLI_PARSERS: Record<CliParse, (value: string, previous: string[]) => unknown> = {
  positiveInt: (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError("a positive whole number");
    return n;
  },
  positiveNumber: (value) => {
    const n = Number(value);
    if (!(n > 0)) throw new InvalidArgumentError("a positive number");
    return n;
  },
  size: (value) => {
    try {
      return parseSize(value);
    } catch (e) {
      throw new InvalidArgumentError((e as Error).message);
    }
  },
  collect,
};

/** Commander's attribute for a long flag: `--max-turns` → maxTurns, `--no-compaction` → compaction. */
export function attributeOf(long: string): string {
  return long.replace(/^--(no-)?/, "").replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The options with a CLI side, by help group in the help's order, then in the table's. */
const CLI_ENTRIES: [OptionName, OptionDef & { cli: CliSide }][] = HELP_GROUPS.flatMap((group) =>
  (Object.entries(OPTIONS) as [OptionName, OptionDef][]).filter(
    (entry): entry is [OptionName, OptionDef & { cli: CliSide }] => entry[1].cli?.group === group,
  ),
);

/** `agent-ci run --help`'s groups: each heading with its flags, derived from the table. */
export const RUN_HELP_GROUPS = Object.fromEntries(
  HELP_GROUPS.map((group) => [
    group,
    CLI_ENTRIES.filter(([, o]) => o.cli.group === group).map(([, o]) => longOf(o.cli)),
  ]),
) as Record<string, readonly string[]>;

/** The option of a CLI side; under another spelling (an alias), without the default, hidden. */
function optionOf(cli: CliSide, alias?: string): Option {
  if (alias) {
    const argument = /[<[].*$/.exec(cli.flags)?.[0] ?? "";
    const option = new Option(`${alias} ${argument}`.trim()).hideHelp();
    if (cli.parse) option.argParser(CLI_PARSERS[cli.parse] as (value: string, previous: unknown) => unknown);
    if (cli.choices) option.choices(cli.choices);
    return option;
  }
  const option = new Option(cli.flags, cli.description);
  if (cli.parse) option.argParser(CLI_PARSERS[cli.parse] as (value: string, previous: unknown) => unknown);
  if (cli.parse === "collect") option.default([]);
  if (cli.choices) option.choices(cli.choices);
  if (cli.default !== undefined) option.default(cli.default);
  return option;
}

/**
 * Claude Code's spellings the CLI takes besides its own flags, by attribute: `allowedTools` → `allow`. Those
 * Claude Code spells as agent-ci does (`--max-turns`) need none; of two spellings with one attribute
 * (`--allowedTools`, `--allowed-tools`) the first is taken.
 */
function aliasesOf(cli: CliSide, claudeCode: readonly string[] = []): Map<string, string> {
  const own = attributeOf(longOf(cli));
  const aliases = new Map<string, string>();
  for (const flag of claudeCode) {
    const attribute = attributeOf(flag);
    if (attribute !== own && ![...aliases.values()].includes(attribute)) aliases.set(flag, attribute);
  }
  return aliases;
}

/** Every hidden Claude Code spelling's attribute → the attribute of agent-ci's flag it sets. */
export const CLAUDE_CODE_ALIASES: Readonly<Record<string, string>> = Object.fromEntries(
  CLI_ENTRIES.flatMap(([, o]) =>
    [...aliasesOf(o.cli, o.claudeCode).values()].map((alias) => [alias, attributeOf(longOf(o.cli))]),
  ),
);

/**
 * Adds the table's options to a command: every CLI option for `run`, the permission flags for `policy`; each
 * Claude Code spelling as a hidden option beside the flag it means. Returns the command.
 */
export function addTableOptions(command: Command, which: "run" | "policy"): Command {
  for (const [, o] of CLI_ENTRIES) {
    if (which === "policy" && !o.cli.policy) continue;
    command.addOption(optionOf(o.cli));
    for (const flag of aliasesOf(o.cli, o.claudeCode).keys()) command.addOption(optionOf(o.cli, flag));
  }
  return command;
}

/** One table option's flag, for a command other than `run` and `policy` that takes it too (`cache`). */
export function tableOption(name: OptionName): Option {
  const cli = (OPTIONS[name] as OptionDef).cli;
  if (!cli) throw new Error(`option table: ${name} has no CLI flag`);
  return optionOf(cli);
}
