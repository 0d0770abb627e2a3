import { describe, expect, it } from "vitest";
import { markdownTable } from "../../bench/stats.js";

describe("the bench's results table", () => {
  it("keeps a shell pipeline in a measurement or a note inside its cell", () => {
    const table = markdownTable([
      {
        section: "S",
        measurement: "copy-in, `tar | tar`",
        unit: "ms",
        agentCi: 3,
        native: 1,
        note: "rg | stat",
      },
    ]);
    const row = table.split("\n").at(-1)!;
    // Six cells: the row splits on unescaped bars only.
    expect(row.split(/(?<!\\)\|/).slice(1, -1)).toHaveLength(6);
    expect(row).toContain("`tar \\| tar`");
    expect(row).toContain("rg \\| stat");
  });
});
