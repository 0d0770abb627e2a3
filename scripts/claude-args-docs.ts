// Generates the migration guide's table of Claude Code flags in `claude_args` (docs/migrating-from-claude-code-action.md)
// from the option table (src/options/), between <!-- claude-args:start --> and <!-- claude-args:end -->: each
// flag with the input it sets and the CLI's flag, and the flags refused with their reason.
//   tsx scripts/claude-args-docs.ts            rewrite the page (npm run action-docs does every generated part)
//   tsx scripts/claude-args-docs.ts --check    exit 1 (and say so) when the page is out of date
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { formatMarkdown, replaceSection, writeOrCheck } from "./doc-section.js";
import { INPUT_FLAGS } from "../src/action/cli-flags.js";
import {
  CLAUDE_ARGS_FLAGS,
  CLAUDE_ARGS_REFUSED,
  OPTIONS,
  type ClaudeArgsInput,
  type OptionDef,
} from "../src/options/table.js";

export const START = "<!-- claude-args:start -->";
export const END = "<!-- claude-args:end -->";
const self = fileURLToPath(import.meta.url);
export const MIGRATION_FILE = path.join(
  path.resolve(path.dirname(self), ".."),
  "docs",
  "migrating-from-claude-code-action.md",
);

const code = (text: string) => `\`${text}\``;

/** The generated section (markers included). */
export function renderClaudeArgsDocs(): string {
  const byInput = new Map<ClaudeArgsInput, string[]>();
  for (const [flag, input] of CLAUDE_ARGS_FLAGS) byInput.set(input, [...(byInput.get(input) ?? []), flag]);
  const cli = (input: ClaudeArgsInput) => {
    const flags = INPUT_FLAGS[input];
    return typeof flags === "string" ? flags : flags.map(code).join(", ");
  };
  return [
    START,
    "<!-- Generated from the option table (src/options/) by `npm run action-docs`; edit the table, not this one. -->",
    "",
    "| Claude Code flag (in `claude_args`) | agent-ci input | CLI flag | Settings file key |",
    "|---|---|---|---|",
    ...[...byInput].map(([input, flags]) => {
      const key = (OPTIONS[input] as OptionDef).settings;
      return `| ${flags.map(code).join(", ")} | ${code(input)} | ${cli(input)} | ${key ? code(key) : ""} |`;
    }),
    ...Object.entries(CLAUDE_ARGS_REFUSED).map(
      ([flag, reason]) => `| ${code(flag)} | refused: ${reason} | | |`,
    ),
    "",
    END,
  ].join("\n");
}

/** The page with this generator's section replaced (doc-section.ts). */
export const updateSection = (page: string, section: string): string =>
  replaceSection(page, section, START, END);

/** The section as Prettier formats it on the page. */
export async function formattedSection(): Promise<string> {
  return formatMarkdown(MIGRATION_FILE, renderClaudeArgsDocs());
}

if (process.argv[1] && path.resolve(process.argv[1]) === self) {
  writeOrCheck(
    MIGRATION_FILE,
    updateSection(fs.readFileSync(MIGRATION_FILE, "utf8"), await formattedSection()),
    "the option table (src/options/)",
  );
}
