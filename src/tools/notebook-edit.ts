// NotebookEdit: replace, insert or delete one cell of a Jupyter notebook, by the cell's id, with Claude
// Code's results and refusals. Read-before-edit as for Edit; the notebook keeps its JSON layout.
import crypto from "node:crypto";
import path from "node:path";
import { z } from "zod";
import { defineTool, toolError } from "./define-tool.js";
import {
  checkFreshness,
  isToolResult,
  loadTarget,
  MAX_EDIT_INPUT_CHARS,
  patchOf,
  refuseNonText,
  writeAndRecord,
} from "./file-edit-common.js";
import { cellIdOf, parseCellIndex, parseNotebook, serializeNotebook, type NotebookCell } from "./notebook.js";

export const NotebookEditInput = z.strictObject({
  notebook_path: z
    .string()
    .describe("The absolute path to the Jupyter notebook file to edit (under /workspace)"),
  cell_id: z
    .string()
    .optional()
    .describe(
      "The id of the cell to edit, as Read shows it. With edit_mode=insert the new cell goes after it (at the start without one)",
    ),
  new_source: z.string().max(MAX_EDIT_INPUT_CHARS).describe("The new source for the cell"),
  cell_type: z
    .enum(["code", "markdown"])
    .optional()
    .describe("The type of the cell. Required with edit_mode=insert; default: the cell's current type"),
  edit_mode: z
    .enum(["replace", "insert", "delete"])
    .optional()
    .describe("replace (default), insert or delete"),
});
export type NotebookEditInput = z.infer<typeof NotebookEditInput>;

const DESCRIPTION = `Replaces the source of one cell of a Jupyter notebook (.ipynb), inserts a new cell, or deletes one.

Usage:
- Read the notebook first in this run; cells are addressed by the id Read shows (<cell id="…">).
- edit_mode=insert adds a cell after cell_id (at the start without cell_id) and needs cell_type.
- edit_mode=delete removes the cell with cell_id.
- Replacing a code cell clears its outputs and execution count.`;

/** Cells ids of nbformat 4.5 and later; older notebooks have none and are addressed as cell-N. */
function hasCellIds(nb: { nbformat?: number | undefined; nbformat_minor?: number | undefined }): boolean {
  const major = nb.nbformat ?? 0;
  return major > 4 || (major === 4 && (nb.nbformat_minor ?? 0) >= 5);
}

export const NotebookEditTool = defineTool<NotebookEditInput>({
  name: "NotebookEdit",
  description: DESCRIPTION,
  inputSchema: NotebookEditInput,
  maxResultSizeChars: 100_000,
  targetPath: (input) => input.notebook_path,

  async validateInput(input) {
    if (path.posix.extname(input.notebook_path).toLowerCase() !== ".ipynb") {
      return toolError(
        "invalid_input",
        "File must be a Jupyter notebook (.ipynb file). For editing other file types, use the Edit tool.",
      );
    }
    if (input.edit_mode === "insert" && !input.cell_type)
      return toolError("invalid_input", "Cell type is required when using edit_mode=insert.");
    if (input.cell_id === undefined && input.edit_mode !== "insert") {
      return toolError("invalid_input", "Cell ID must be specified when not inserting a new cell.");
    }
    return undefined;
  },

  async call(input, ctx) {
    const loaded = await loadTarget(ctx, input.notebook_path);
    if (isToolResult(loaded)) return loaded;
    if (!loaded.exists)
      return toolError(
        "not_found",
        `Notebook file does not exist. Note: your current working directory is ${ctx.state.cwd}.`,
      );
    const refused = refuseNonText(loaded, input.notebook_path) ?? checkFreshness(ctx, loaded);
    if (refused) return refused;
    const nb = parseNotebook(loaded.text);
    if (!nb)
      return toolError(
        "invalid_input",
        "Notebook is not valid JSON (or has no cells list). Fix it with Edit, or rewrite it with Write.",
      );

    let index = 0;
    if (input.cell_id !== undefined) {
      index = nb.cells.findIndex((cell) => cell.id === input.cell_id);
      if (index === -1) {
        const byIndex = parseCellIndex(input.cell_id);
        if (byIndex === undefined)
          return toolError("not_found", `Cell with ID "${input.cell_id}" not found in notebook.`);
        if (byIndex >= nb.cells.length)
          return toolError("not_found", `Cell with index ${byIndex} does not exist in notebook.`);
        index = byIndex;
      }
      if (input.edit_mode === "insert") index += 1;
    }
    // Replacing the cell after the last one appends, as Claude Code does.
    const mode =
      (input.edit_mode ?? "replace") === "replace" && index === nb.cells.length
        ? "insert"
        : (input.edit_mode ?? "replace");
    const cellType = input.cell_type ?? "code";

    let shownId: string;
    if (mode === "delete") {
      shownId = cellIdOf(nb.cells[index] as NotebookCell, index);
      nb.cells.splice(index, 1);
    } else if (mode === "insert") {
      const id = hasCellIds(nb) ? crypto.randomBytes(6).toString("hex") : undefined;
      const cell: NotebookCell =
        cellType === "markdown"
          ? { cell_type: "markdown", id, source: input.new_source, metadata: {} }
          : {
              cell_type: "code",
              id,
              source: input.new_source,
              metadata: {},
              execution_count: null,
              outputs: [],
            };
      nb.cells.splice(index, 0, cell);
      shownId = cellIdOf(cell, index);
    } else {
      const cell = nb.cells[index] as NotebookCell;
      cell.source = input.new_source;
      if (cell.cell_type === "code") {
        cell.execution_count = null;
        cell.outputs = [];
      }
      if (input.cell_type && input.cell_type !== cell.cell_type) cell.cell_type = input.cell_type;
      shownId = cellIdOf(cell, index);
    }

    const updated = serializeNotebook(nb, loaded.text);
    await writeAndRecord(ctx, loaded.path, updated);
    const metadata = { patch: patchOf(loaded.path, loaded.text, updated), cellId: shownId, editMode: mode };
    if (mode === "delete")
      return {
        output: `Deleted cell ${shownId}`,
        title: `${loaded.path}: deleted cell ${shownId}`,
        metadata,
      };
    const verb = mode === "insert" ? "Inserted" : "Updated";
    return {
      output: `${verb} cell ${shownId} with ${input.new_source}`,
      title: `${loaded.path}: ${verb.toLowerCase()} cell ${shownId}`,
      metadata,
    };
  },
});
