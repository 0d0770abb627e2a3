#!/usr/bin/env node
// Prints the "Performance" section of docs/benchmarks.md from the last `npm run bench` (bench/results.json),
// or with `--update [FILE]` puts it in place of that file's current "## Performance" section (up to the next
// "## " heading; FILE defaults to docs/benchmarks.md), appending it when there is none. The README shows a few
// key rows of it, copied by hand.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const resultsFile = path.join(root, "bench", "results.json");
if (!fs.existsSync(resultsFile)) {
  console.error("bench/results.json is missing: run `npm run bench` first");
  process.exit(1);
}
const results = JSON.parse(fs.readFileSync(resultsFile, "utf8"));
const section = String(results.readme ?? "").trimEnd() + "\n";

const at = process.argv.indexOf("--update");
if (at === -1) {
  process.stdout.write(section);
  process.exit(0);
}
const readmeFile = path.resolve(process.argv[at + 1] ?? path.join(root, "docs", "benchmarks.md"));
const readme = fs.existsSync(readmeFile) ? fs.readFileSync(readmeFile, "utf8") : "";
const start = readme.search(/^## Performance\b/m);
let updated;
if (start === -1) {
  updated = `${readme.trimEnd()}\n\n${section}`;
} else {
  const rest = readme.slice(start + 1);
  const next = rest.search(/^## /m);
  const end = next === -1 ? readme.length : start + 1 + next;
  updated = `${readme.slice(0, start)}${section}${end < readme.length ? "\n" : ""}${readme.slice(end)}`;
}
fs.writeFileSync(readmeFile, updated.replace(/^\n+/, ""));
console.error(`updated the Performance section of ${path.relative(process.cwd(), readmeFile)}`);
