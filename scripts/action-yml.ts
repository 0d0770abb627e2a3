// Writes action.yml's inputs from the option table (src/options/table.ts): each input's description and
// default, in the table's order. The rest of action.yml (name, outputs, runs) is kept as written. The runner
// reads the checked-in file; a test fails when it differs from what the table generates.
//   tsx scripts/action-yml.ts            rewrite action.yml (npm run action-docs does this first)
//   tsx scripts/action-yml.ts --check    exit 1 (and say so) when action.yml is out of date
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { actionSide, INPUT_NAMES } from "../src/options/table.js";

const self = fileURLToPath(import.meta.url);
export const ACTION_FILE = path.join(path.resolve(path.dirname(self), ".."), "action.yml");
const WIDTH = 110;
const INDENT = "      ";

/** Text as a folded block's lines: broken at single spaces so that folding gives the text back. */
function folded(text: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && INDENT.length + line.length + 1 + word.length > WIDTH && word && !line.endsWith(" ")) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines.map((l) => `${INDENT}${l}`);
}

/** The `inputs:` block, from `inputs:` to the line before `outputs:`. */
export function renderInputs(): string {
  const lines = ["inputs:"];
  for (const name of INPUT_NAMES) {
    const side = actionSide(name);
    if (/\n|^\s|\s$/.test(side.description))
      throw new Error(`option table: ${name}'s description must be one line without outer spaces`);
    lines.push(
      `  ${name}:`,
      "    description: >-",
      ...folded(side.description),
      "    required: false",
      `    default: ${JSON.stringify(side.default)}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** action.yml's text with its inputs block replaced by the table's. */
export function updateActionYml(text: string): string {
  const start = text.search(/^inputs:\n/m);
  const end = text.search(/^outputs:\n/m);
  if (start === -1 || end === -1 || end < start)
    throw new Error("action.yml: no inputs: block before outputs:");
  return `${text.slice(0, start)}${renderInputs()}\n${text.slice(end)}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === self) {
  const text = fs.readFileSync(ACTION_FILE, "utf8");
  const next = updateActionYml(text);
  if (process.argv.includes("--check")) {
    if (next !== text) {
      process.stderr.write("action.yml is out of date with src/options/: run npm run action-docs\n");
      process.exit(1);
    }
  } else if (next !== text) {
    fs.writeFileSync(ACTION_FILE, next);
    process.stdout.write("updated action.yml\n");
  }
}
