// Golden files: each committed record in test/fixtures/report/*.json renders to the committed *.md.
import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../../../src/report/markdown.js";
import { parseReport } from "../../../src/report/schema.js";
import { FIXTURES, UPDATE_GOLDEN, UPDATE_HINT, fixturePath, formatJson, golden } from "./support/golden.js";

describe.each(FIXTURES)("fixture $name", (fixture) => {
  it("the committed record is what the builder makes, and it validates", async () => {
    const path = fixturePath(fixture.name, "json");
    const built = fixture.build();
    if (UPDATE_GOLDEN) await writeFile(path, await formatJson(built, path));
    if (UPDATE_GOLDEN && fixture.patch !== undefined)
      await writeFile(fixturePath(fixture.name, "diff"), fixture.patch);
    const committed = parseReport(await readFile(path, "utf8"));
    expect(committed, `test/fixtures/report/${fixture.name}.json is stale: ${UPDATE_HINT}`).toEqual(built);
  });

  it("renders the golden Markdown", async () => {
    const report = parseReport(await readFile(fixturePath(fixture.name, "json"), "utf8"));
    const markdown = renderMarkdown(report);
    const expected = await golden(fixturePath(fixture.name, "md"), markdown);
    expect(markdown, `report.md for ${fixture.name} changed: ${UPDATE_HINT}`).toBe(expected);
  });
});
