// Generates the CLI's flag reference in docs/configuration.md from the commander program itself (src/cli.ts,
// whose options are the option table's, src/options/) and each Action input's counterpart
// (src/action/cli-flags.ts), between the markers
// <!-- cli-docs:start --> and <!-- cli-docs:end -->, so the reference cannot miss a flag or an input.
//   tsx scripts/cli-docs.ts            rewrite docs/configuration.md (npm run action-docs does both tables)
//   tsx scripts/cli-docs.ts --check    exit 1 (and say so) when docs/configuration.md is out of date
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Command, Option } from "commander";
import { formatMarkdown, replaceSection, writeOrCheck } from "./doc-section.js";
import { buildProgram, CLAUDE_CODE_ALIASES, RUN_HELP_GROUPS } from "../src/cli.js";
import { INPUT_FLAGS } from "../src/action/cli-flags.js";
import type { InputName } from "../src/action/inputs.js";

export const START = "<!-- cli-docs:start -->";
export const END = "<!-- cli-docs:end -->";
const self = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(self), "..");

const cell = (text: string) =>
  text.replace(/\s+/g, " ").trim().replace(/[|*]/g, "\\$&").replace(/</g, "&lt;");
const code = (text: string) =>
  `<code>${text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/\|/g, "&#124;")}</code>`;

/** The inputs whose counterpart is this flag. */
function inputsOf(long: string): InputName[] {
  return (Object.entries(INPUT_FLAGS) as Array<[InputName, readonly string[] | string]>)
    .filter(([, flags]) => Array.isArray(flags) && flags.includes(long))
    .map(([name]) => name);
}

function defaultOf(option: Option): string {
  if (option.defaultValueDescription) return code(option.defaultValueDescription);
  const value: unknown = option.defaultValue;
  if (value === undefined || (Array.isArray(value) && !value.length) || option.negate) return "";
  return code(Array.isArray(value) ? value.join(", ") : String(value));
}

/** A row per shown option; a hidden one (a Claude Code spelling) is named in the row of the flag it sets. */
function rows(command: Command, withInputs: boolean): string[] {
  const aliases = new Map<string, string[]>();
  for (const option of command.options.filter((o) => o.hidden)) {
    const target = CLAUDE_CODE_ALIASES[option.attributeName() as keyof typeof CLAUDE_CODE_ALIASES];
    const long = command.options.find((o) => o.attributeName() === target && !o.hidden)?.long;
    if (long && option.long) aliases.set(long, [...(aliases.get(long) ?? []), option.long]);
  }
  return command.options
    .filter((o) => !o.hidden && o.long)
    .map((option) => {
      const long = option.long!;
      const names = [option.short, long].filter(Boolean).map((n) => `\`${n}\``);
      const also = aliases.get(long)?.map((a) => `\`${a}\``);
      const argument = /[<[].*$/.exec(option.flags)?.[0] ?? "";
      const choices = option.argChoices ? ` (one of: ${option.argChoices.join(", ")})` : "";
      const cells = [
        `${names.join(", ")}${also?.length ? ` (also ${also.join(", ")})` : ""}`,
        argument ? code(argument) : "",
        cell(`${option.description}${choices}`),
        defaultOf(option),
      ];
      if (withInputs)
        cells.push(
          inputsOf(long)
            .map((name) => `\`${name}\``)
            .join(", "),
        );
      return `| ${cells.join(" | ")} |`;
    });
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/** Every command with options of its own, depth first. */
function commandsWithOptions(command: Command): Command[] {
  return command.commands.flatMap((c) => [
    ...(c.options.some((o) => !o.hidden) ? [c] : []),
    ...commandsWithOptions(c),
  ]);
}

/** The generated section (markers included) for a program. */
export function renderCliDocs(program: Command = buildProgram()): string {
  const run = program.commands.find((c) => c.name() === "run");
  if (!run) throw new Error("the program has no run command");
  // The help's groups in the help's order; an option in none (a test forbids it) would go under "Other".
  const byGroup = new Map<string, string[]>([...Object.keys(RUN_HELP_GROUPS), "Other"].map((g) => [g, []]));
  const runRows = rows(run, true);
  const shown = run.options.filter((o) => !o.hidden && o.long);
  shown.forEach((option, i) => {
    const group =
      Object.keys(RUN_HELP_GROUPS).find((name) => RUN_HELP_GROUPS[name]?.includes(option.long ?? "")) ??
      "Other";
    byGroup.set(group, [...(byGroup.get(group) ?? []), runRows[i]!]);
  });
  const header = "| Flag | Argument | Description | Default | Action input |\n|---|---|---|---|---|";
  const noFlag = (Object.entries(INPUT_FLAGS) as Array<[InputName, readonly string[] | string]>).filter(
    (entry): entry is [InputName, string] => typeof entry[1] === "string",
  );
  return [
    START,
    "<!-- Generated from the option table (src/options/) by `npm run action-docs`; edit the table, not this page. -->",
    "",
    "### `agent-ci run`",
    "",
    ...[...byGroup]
      .filter(([, lines]) => lines.length)
      .flatMap(([group, lines]) => [`#### ${group}`, "", header, ...lines, ""]),
    "#### Action inputs without a flag",
    "",
    "| Action input | On the command line |",
    "|---|---|",
    ...noFlag.map(([name, instead]) => `| \`${name}\` | ${instead} |`),
    "",
    ...commandsWithOptions(program)
      .filter((c) => c !== run)
      .flatMap((c) => [
        `### \`agent-ci ${commandPath(c)}\``,
        "",
        "| Flag | Argument | Description | Default |",
        "|---|---|---|---|",
        ...rows(c, false),
        "",
      ]),
    END,
  ].join("\n");
}

/** The page with this generator's section replaced (doc-section.ts). */
export const updateSection = (page: string, section: string): string =>
  replaceSection(page, section, START, END);

/** The section as Prettier formats it in `file` (so `prettier --check` and this check agree on one text). */
export async function formattedSection(file: string, program?: Command): Promise<string> {
  return formatMarkdown(file, renderCliDocs(program));
}

export const DOC_FILE = path.join(root, "docs", "configuration.md");

if (process.argv[1] && path.resolve(process.argv[1]) === self) {
  writeOrCheck(
    DOC_FILE,
    updateSection(fs.readFileSync(DOC_FILE, "utf8"), await formattedSection(DOC_FILE)),
    "src/cli.ts",
  );
}
