// NotebookEdit through the pipeline over a real sandbox: replace, insert and delete by cell id, Claude
// Code's results and refusals, read-before-edit, and the notebook's JSON layout kept.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultOf, startHarness, type ToolHarness } from "../support/tool-harness.js";

const CELLS = [
  {
    cell_type: "code",
    id: "c1",
    metadata: {},
    execution_count: 3,
    outputs: [{ output_type: "stream", name: "stdout", text: ["1\n"] }],
    source: ["print(1)\n"],
  },
  { cell_type: "markdown", id: "c2", metadata: {}, source: ["# Title\n"] },
];
const notebook = (extra: Record<string, unknown> = {}) => ({
  cells: CELLS,
  metadata: { kernelspec: { name: "python3" } },
  nbformat: 4,
  nbformat_minor: 5,
  ...extra,
});

describe("NotebookEdit (real sandbox)", () => {
  let h: ToolHarness;
  const edit = (input: Record<string, unknown>) => h.call("NotebookEdit", input);
  const read = (file: string) => h.call("Read", { file_path: `/workspace/${file}` });
  const cat = (file: string) => h.sh(`cat ${file}`);

  beforeAll(async () => {
    h = await startHarness({
      // Each test edits its own copy, so they do not depend on each other's order.
      ...Object.fromEntries(
        ["replace", "insert", "delete", "type", "append", "errors"].map((n) => [
          `${n}.ipynb`,
          `${JSON.stringify(notebook(), null, 1)}\n`,
        ]),
      ),
      "two-space.ipynb": JSON.stringify(notebook(), null, 2),
      "old.ipynb": `${JSON.stringify({ cells: CELLS.map(({ id: _id, ...c }) => c), metadata: {}, nbformat: 4, nbformat_minor: 2 }, null, 1)}\n`,
      "unread.ipynb": `${JSON.stringify(notebook(), null, 1)}\n`,
      "broken.ipynb": "{ not json",
      "notes.txt": "text\n",
    });
  });
  afterAll(async () => {
    await h?.dispose();
  });

  it("replaces a code cell's source, clears its outputs, and keeps every other byte of the layout", async () => {
    await read("replace.ipynb");
    const r = await edit({
      notebook_path: "/workspace/replace.ipynb",
      cell_id: "c1",
      new_source: "print(2)",
    });
    expect(resultOf(r)).toEqual({ isError: false, text: "Updated cell c1 with print(2)" });
    const cells = [{ ...CELLS[0], execution_count: null, outputs: [], source: "print(2)" }, CELLS[1]];
    expect(await cat("replace.ipynb")).toBe(`${JSON.stringify(notebook({ cells }), null, 1)}\n`);
  });

  it("keeps a two-space indent and a missing final newline", async () => {
    await read("two-space.ipynb");
    const r = await edit({ notebook_path: "/workspace/two-space.ipynb", cell_id: "c2", new_source: "# New" });
    expect(resultOf(r)).toEqual({ isError: false, text: "Updated cell c2 with # New" });
    expect(await cat("two-space.ipynb")).toBe(
      JSON.stringify(notebook({ cells: [CELLS[0], { ...CELLS[1], source: "# New" }] }), null, 2),
    );
  });

  it("inserts a cell after the one named, with a new id that Read then shows", async () => {
    await read("insert.ipynb");
    const r = await edit({
      notebook_path: "/workspace/insert.ipynb",
      cell_id: "c1",
      new_source: "x = 1",
      cell_type: "code",
      edit_mode: "insert",
    });
    expect(r.isError).toBe(false);
    const id = /^Inserted cell (\S+) with x = 1$/.exec(resultOf(r).text)?.[1];
    expect(id).toMatch(/^[0-9a-f]{12}$/);
    const after = JSON.parse(await cat("insert.ipynb")) as { cells: Array<{ id: string }> };
    expect(after.cells.map((c) => c.id)).toEqual(["c1", id, "c2"]);
    expect(after.cells[1]).toEqual({
      cell_type: "code",
      id,
      source: "x = 1",
      metadata: {},
      execution_count: null,
      outputs: [],
    });
    expect(resultOf(await read("insert.ipynb")).text).toContain(`<cell id="${id}">x = 1</cell id="${id}">`);
  });

  it("inserts a markdown cell at the start when no cell_id is given", async () => {
    await read("append.ipynb");
    const r = await edit({
      notebook_path: "/workspace/append.ipynb",
      new_source: "Intro",
      cell_type: "markdown",
      edit_mode: "insert",
    });
    expect(r.isError).toBe(false);
    const after = JSON.parse(await cat("append.ipynb")) as {
      cells: Array<{ cell_type: string; source: unknown; id: string }>;
    };
    expect(after.cells.map((c) => c.id)).toEqual([expect.any(String), "c1", "c2"]);
    expect(after.cells[0]).toMatchObject({ cell_type: "markdown", source: "Intro", metadata: {} });
  });

  it("deletes a cell", async () => {
    await read("delete.ipynb");
    const r = await edit({
      notebook_path: "/workspace/delete.ipynb",
      cell_id: "c2",
      new_source: "",
      edit_mode: "delete",
    });
    expect(resultOf(r)).toEqual({ isError: false, text: "Deleted cell c2" });
    expect(JSON.parse(await cat("delete.ipynb")).cells).toEqual([CELLS[0]]);
  });

  it("changes a cell's type when cell_type differs", async () => {
    await read("type.ipynb");
    const r = await edit({
      notebook_path: "/workspace/type.ipynb",
      cell_id: "c2",
      new_source: "print(3)",
      cell_type: "code",
    });
    expect(resultOf(r)).toEqual({ isError: false, text: "Updated cell c2 with print(3)" });
    expect(JSON.parse(await cat("type.ipynb")).cells[1]).toEqual({
      ...CELLS[1],
      cell_type: "code",
      source: "print(3)",
    });
  });

  it("addresses cells of a notebook without ids as cell-N, as Read shows them", async () => {
    expect(resultOf(await read("old.ipynb")).text).toContain(
      '<cell id="cell-1"><cell_type>markdown</cell_type>',
    );
    const r = await edit({
      notebook_path: "/workspace/old.ipynb",
      cell_id: "cell-1",
      new_source: "# Renamed",
    });
    expect(resultOf(r)).toEqual({ isError: false, text: "Updated cell cell-1 with # Renamed" });
    const after = JSON.parse(await cat("old.ipynb")) as { cells: Array<Record<string, unknown>> };
    expect(after.cells[1]).toEqual({ cell_type: "markdown", metadata: {}, source: "# Renamed" });
    const missing = await edit({ notebook_path: "/workspace/old.ipynb", cell_id: "cell-9", new_source: "x" });
    expect(missing.isError).toBe(true);
    expect(resultOf(missing).text).toBe(
      "<tool_use_error>Cell with index 9 does not exist in notebook.</tool_use_error>",
    );
  });

  it("refuses what Claude Code refuses, and leaves the file as it was", async () => {
    await read("errors.ipynb");
    const before = await cat("errors.ipynb");
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { notebook_path: "/workspace/errors.ipynb", cell_id: "nope", new_source: "y" },
        /^<tool_use_error>Cell with ID "nope" not found in notebook\.<\/tool_use_error>$/,
      ],
      [
        { notebook_path: "/workspace/notes.txt", cell_id: "c1", new_source: "y" },
        /File must be a Jupyter notebook \(\.ipynb file\)\./,
      ],
      [
        { notebook_path: "/workspace/errors.ipynb", cell_id: "c1", new_source: "y", edit_mode: "insert" },
        /Cell type is required when using edit_mode=insert\./,
      ],
      [
        { notebook_path: "/workspace/errors.ipynb", new_source: "y" },
        /Cell ID must be specified when not inserting a new cell\./,
      ],
      [
        { notebook_path: "/workspace/unread.ipynb", cell_id: "c1", new_source: "y" },
        /File has not been read yet\. Read it first/,
      ],
      [
        { notebook_path: "/workspace/missing.ipynb", cell_id: "c1", new_source: "y" },
        /Notebook file does not exist\./,
      ],
      [
        { notebook_path: "/workspace/errors.ipynb", cell_id: "c1", new_source: "y", edit_mode: "move" },
        /InputValidationError/,
      ],
    ];
    for (const [input, message] of cases) {
      const r = await edit(input);
      expect(r.isError, JSON.stringify(input)).toBe(true);
      expect(resultOf(r).text).toMatch(message);
    }
    expect(await cat("errors.ipynb")).toBe(before);
  });

  it("refuses a notebook that is not JSON, once read", async () => {
    await read("broken.ipynb");
    const r = await edit({ notebook_path: "/workspace/broken.ipynb", cell_id: "c1", new_source: "y" });
    expect(r.isError).toBe(true);
    expect(resultOf(r).text).toMatch(/Notebook is not valid JSON/);
  });
});
