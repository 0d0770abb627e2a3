// The configuration reference holds every flag and every Action input: the tables in docs/configuration.md
// are generated from the commander program (src/cli.ts) and each input's counterpart
// (src/action/cli-flags.ts) by `npm run action-docs`, and this fails when the committed page is stale, an
// input has no counterpart, or a counterpart names a flag the CLI does not have.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli.js";
import { INPUT_FLAGS } from "../../src/action/cli-flags.js";
import { INPUT_NAMES } from "../../src/action/inputs.js";
import { DOC_FILE, END, formattedSection, START, updateSection } from "../../scripts/cli-docs.js";

const page = fs.readFileSync(DOC_FILE, "utf8");
const committed = page.slice(page.indexOf(START), page.indexOf(END) + END.length);
const run = buildProgram().commands.find((c) => c.name() === "run")!;

describe("the CLI flag reference in docs/configuration.md", () => {
  it("is generated from src/cli.ts and up to date (run npm run action-docs)", async () => {
    expect(page).toContain(START);
    expect(updateSection(page, await formattedSection(DOC_FILE))).toBe(page);
  });

  it("has a row for every shown flag of agent-ci run, and names every Action input", () => {
    for (const option of run.options.filter((o) => !o.hidden))
      expect(committed, option.long).toMatch(new RegExp(`^\\| (\`-\\w\`, )?\`${option.long}\``, "m"));
    for (const name of INPUT_NAMES) expect(committed, name).toContain(`\`${name}\``);
  });

  it("gives every Action input a counterpart, and each flag it names exists", () => {
    expect(Object.keys(INPUT_FLAGS).sort()).toEqual([...INPUT_NAMES].sort());
    const longs = run.options.map((o) => o.long);
    for (const [name, flags] of Object.entries(INPUT_FLAGS))
      if (Array.isArray(flags)) for (const flag of flags) expect(longs, `${name}: ${flag}`).toContain(flag);
  });

  it("goes stale when a flag is added", async () => {
    const program = buildProgram();
    program.commands.find((c) => c.name() === "run")!.option("--brand-new <x>", "a flag nobody documented");
    const section = await formattedSection(DOC_FILE, program);
    expect(section).toMatch(/^\| `--brand-new` /m);
    expect(updateSection(page, section)).not.toBe(page);
  });
});
