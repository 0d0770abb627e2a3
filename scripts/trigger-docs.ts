// Generates the "When a run starts" table in docs/migrating-from-claude-code-action.md from the trigger rules
// themselves (src/action/triggers.ts), between <!-- trigger-docs:start --> and <!-- trigger-docs:end -->, so
// the guide says what the code does.
//   tsx scripts/trigger-docs.ts            rewrite the page (npm run action-docs does every generated table)
//   tsx scripts/trigger-docs.ts --check    exit 1 (and say so) when the page is out of date
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { formatMarkdown, replaceSection, writeOrCheck } from "./doc-section.js";
import {
  OTHER_EVENTS,
  TRIGGER_CONDITION_TEXT,
  TRIGGER_RULES,
  type TriggerRule,
} from "../src/action/triggers.js";

export const START = "<!-- trigger-docs:start -->";
export const END = "<!-- trigger-docs:end -->";
const self = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(self), "..");
export const DOC_FILE = path.join(root, "docs", "migrating-from-claude-code-action.md");

const names = (list: readonly string[]) => list.map((n) => `\`${n}\``).join(", ");

/** A row's actions: those it lists, else every action (or every other one, when a row above lists some). */
function actionsCell(rule: TriggerRule, index: number, rules: readonly TriggerRule[]): string {
  if (rule.actions) return names(rule.actions);
  const listedAbove = rules
    .slice(0, index)
    .some((r) => r.actions && r.events.some((e) => rule.events.includes(e)));
  return listedAbove ? "any other" : "any";
}

/** The generated table (markers included). */
export function renderTriggerDocs(rules: readonly TriggerRule[] = TRIGGER_RULES): string {
  const lines = rules.map((rule, i) => {
    const events = rule.events.map((e) => (e === OTHER_EVENTS ? "any other event" : `\`${e}\``));
    const cell = (text: string, note?: string) => (note ? `${text}, ${note}` : text);
    const withoutTask = cell(TRIGGER_CONDITION_TEXT[rule.withoutTask], rule.notes?.withoutTask);
    const withTask = cell("always", rule.notes?.withTask);
    return `| ${events.join(", ")} | ${actionsCell(rule, i, rules)} | ${withoutTask} | ${withTask} |`;
  });
  return [
    START,
    "<!-- Generated from src/action/triggers.ts by `npm run action-docs`; edit that, not this table. -->",
    "",
    "| Event | Action | Without a prompt | With a prompt |",
    "|---|---|---|---|",
    ...lines,
    END,
  ].join("\n");
}

/** The page with this generator's section replaced (doc-section.ts). */
export const updateSection = (page: string, section: string): string =>
  replaceSection(page, section, START, END);

/** The section as Prettier formats it in the page (so `prettier --check` and this check agree). */
export async function formattedSection(rules?: readonly TriggerRule[]): Promise<string> {
  return formatMarkdown(DOC_FILE, renderTriggerDocs(rules));
}

if (process.argv[1] && path.resolve(process.argv[1]) === self) {
  writeOrCheck(
    DOC_FILE,
    updateSection(fs.readFileSync(DOC_FILE, "utf8"), await formattedSection()),
    "src/action/triggers.ts",
  );
}
