// A generated section of a documentation page, between two markers: replacing it, formatting it as Prettier
// formats the page (so `prettier --check` and the generators' checks agree on one text), and writing it, or with
// --check failing when the page differs. The generators (cli-docs.ts, trigger-docs.ts, claude-args-docs.ts) say
// what goes in.
import fs from "node:fs";
import path from "node:path";
import * as prettier from "prettier";

/** The page with the section between `start` and `end` replaced (or appended when the markers are missing). */
export function replaceSection(page: string, section: string, start: string, end: string): string {
  const from = page.indexOf(start);
  const to = page.indexOf(end);
  if (from === -1 || to === -1 || to < from) return `${page.replace(/\n*$/, page ? "\n\n" : "")}${section}\n`;
  return page.slice(0, from) + section + page.slice(to + end.length);
}

/** Markdown as Prettier formats it in `file`. */
export async function formatMarkdown(file: string, markdown: string): Promise<string> {
  const config = (await prettier.resolveConfig(file)) ?? {};
  return (await prettier.format(markdown, { ...config, parser: "markdown" })).trimEnd();
}

/** Writes `next` over `file`, or with --check on the command line exits 1 when they differ, naming `source`. */
export function writeOrCheck(file: string, next: string, source: string): void {
  const page = fs.readFileSync(file, "utf8");
  if (next === page) return;
  const shown = path.relative(process.cwd(), file);
  if (process.argv.includes("--check")) {
    process.stderr.write(`${shown} is out of date with ${source}: run npm run action-docs\n`);
    process.exit(1);
  }
  fs.writeFileSync(file, next);
  process.stdout.write(`updated ${shown}\n`);
}
