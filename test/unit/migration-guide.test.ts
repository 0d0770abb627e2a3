// The migration guide answers for every input and output of claude-code-action's action.yml (a copy of its
// inputs and outputs is kept in test/fixtures/claude-code-action/, with the upstream commit it came from), and
// every agent-ci input or output it names as an equivalent exists in agent-ci's own action.yml (or the publish
// action's, where the row says so). Its claude_args table is generated from the option table and held to it
// by option-table.test.ts.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = path.resolve(import.meta.dirname, "../..");
const guide = fs.readFileSync(path.join(root, "docs/migrating-from-claude-code-action.md"), "utf8");

interface ActionYml {
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
}
function names(file: string): { inputs: string[]; outputs: string[] } {
  const yml = parse(fs.readFileSync(path.join(root, file), "utf8")) as ActionYml;
  return { inputs: Object.keys(yml.inputs ?? {}), outputs: Object.keys(yml.outputs ?? {}) };
}
const upstream = names("test/fixtures/claude-code-action/action.yml");
const agentCi = names("action.yml");
const publish = names("publish/action.yml");

/** The rows of the first table under a `## heading`, each a list of cells (header and rule left out). */
function table(heading: string): string[][] {
  const start = guide.indexOf(`\n## ${heading}\n`);
  expect(start, `the guide has a "## ${heading}" section`).toBeGreaterThanOrEqual(0);
  const section = guide.slice(start + 1).split(/\n## /)[0] ?? "";
  const lines = section.split("\n").filter((l) => l.startsWith("|"));
  return lines.slice(2).map((line) =>
    line
      .slice(1, line.lastIndexOf("|"))
      .split(/(?<!\\)\|/)
      .map((c) => c.trim()),
  );
}

/** Code spans of a cell. */
function spans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");
}
/** The code spans of a cell that are written as input or output names. */
const identifiers = (cell: string) => spans(cell).filter((s) => /^[a-z][a-z0-9_]*$/.test(s));

describe.each([
  { heading: "Inputs", kind: "inputs" as const },
  { heading: "Outputs", kind: "outputs" as const },
])("the migration guide's $heading", ({ heading, kind }) => {
  const rows = table(heading);

  it(`has a row for every one of claude-code-action's ${kind}, and none for a name it does not have`, () => {
    const named = rows.flatMap(([first]) => spans(first ?? ""));
    expect(upstream[kind].length).toBeGreaterThan(0);
    expect(upstream[kind].filter((name) => !named.includes(name))).toEqual([]);
    expect(named.filter((name) => !upstream[kind].includes(name))).toEqual([]);
    expect(new Set(named).size, "a name in two rows").toBe(named.length);
  });

  it("names as agent-ci's only inputs and outputs its action.yml has (the publish action's where it says so)", () => {
    for (const [first, second = ""] of rows) {
      expect(second, `${first}: an equivalent or why there is none`).not.toBe("");
      const known = [...agentCi.inputs, ...agentCi.outputs];
      if (/publish action/.test(second)) known.push(...publish.inputs, ...publish.outputs);
      const unknown = identifiers(second).filter((name) => !known.includes(name));
      expect(unknown, first).toEqual([]);
      for (const [, name] of second.matchAll(/publish action's `([a-z_]+)`/g))
        expect([...publish.inputs, ...publish.outputs], `${first}: publish ${name}`).toContain(name);
    }
  });
});

describe("the claude-code-action fixture", () => {
  it("says which upstream commit it was copied from", () => {
    const text = fs.readFileSync(path.join(root, "test/fixtures/claude-code-action/action.yml"), "utf8");
    expect(text).toMatch(/github\.com\/anthropics\/claude-code-action\/blob\/[0-9a-f]{40}\/action\.yml/);
  });
});
