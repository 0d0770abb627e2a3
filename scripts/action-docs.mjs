// Generates the Action's inputs/outputs tables in docs/configuration.md from action.yml (whose inputs are
// generated from the option table, src/options/, by scripts/action-yml.ts), between the markers
// <!-- action-docs:start --> and <!-- action-docs:end -->, so the two never drift apart.
//   node scripts/action-docs.mjs            rewrite docs/configuration.md
//   node scripts/action-docs.mjs --check    exit 1 (and say so) when docs/configuration.md is out of date
// --action <file> and --readme <file> point it at other files (tests).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as prettier from "prettier";
import { parse } from "yaml";

const START = "<!-- action-docs:start -->";
const END = "<!-- action-docs:end -->";
const self = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(self), "..");

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : path.resolve(process.argv[i + 1]);
}

const cell = (text) =>
  String(text ?? "")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[|*]/g, "\\$&");

const defaultCell = (value) => {
  const text = String(value ?? "");
  if (text === "") return "*(empty)*";
  return `<code>${text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/\|/g, "&#124;")}</code>`;
};

/** The generated section (markers included) for an action.yml's text. */
export function renderActionDocs(actionYamlText) {
  const action = parse(actionYamlText);
  const inputs = Object.entries(action.inputs ?? {});
  const outputs = Object.entries(action.outputs ?? {});
  return [
    START,
    "<!-- Generated from action.yml by `node scripts/action-docs.mjs`; edit action.yml, not this table. -->",
    "",
    "#### Inputs",
    "",
    "| Input | Description | Default |",
    "|---|---|---|",
    ...inputs.map(
      ([name, spec]) => `| \`${name}\` | ${cell(spec.description)} | ${defaultCell(spec.default)} |`,
    ),
    "",
    "#### Outputs",
    "",
    "| Output | Description |",
    "|---|---|",
    ...outputs.map(([name, spec]) => `| \`${name}\` | ${cell(spec.description)} |`),
    "",
    END,
  ].join("\n");
}

/** README text with the section replaced (or appended when the markers are missing). */
export function updateReadme(readme, section) {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start === -1 || end === -1 || end < start)
    return `${readme.replace(/\n*$/, readme ? "\n\n" : "")}${section}\n`;
  return readme.slice(0, start) + section + readme.slice(end + END.length);
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === self;
if (isMain) {
  const actionFile = option("--action", path.join(root, "action.yml"));
  const readmeFile = option("--readme", path.join(root, "docs", "configuration.md"));
  const readme = fs.existsSync(readmeFile) ? fs.readFileSync(readmeFile, "utf8") : "";
  // Only the section is touched, formatted as Prettier formats it (so `npm run format:check` and this check
  // agree on one text); the rest of the page stays exactly as written.
  const config = (await prettier.resolveConfig(readmeFile)) ?? {};
  const generated = renderActionDocs(fs.readFileSync(actionFile, "utf8"));
  const section = (await prettier.format(generated, { ...config, parser: "markdown" })).trimEnd();
  const next = updateReadme(readme, section);
  if (process.argv.includes("--check")) {
    if (next !== readme) {
      process.stderr.write(
        `${path.relative(process.cwd(), readmeFile)} is out of date with action.yml: run node scripts/action-docs.mjs\n`,
      );
      process.exit(1);
    }
  } else if (next !== readme) {
    fs.writeFileSync(readmeFile, next);
    process.stdout.write(`updated ${path.relative(process.cwd(), readmeFile)}\n`);
  }
}
