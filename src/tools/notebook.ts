// Jupyter notebooks as Read shows them and NotebookEdit changes them, in Claude Code's shapes: each cell
// under its own id (`<cell id="c1">…</cell id="c1">`, `cell-N` only for a cell without one), outputs as
// text and images after it, and an edited notebook written back in the layout it had.
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";

const MultilineText = z.union([z.string(), z.array(z.string())]);

const NotebookOutput = z.looseObject({
  output_type: z.string().optional(),
  text: MultilineText.optional(),
  data: z.record(z.string(), z.unknown()).optional(),
  ename: z.string().optional(),
  evalue: z.string().optional(),
  traceback: z.array(z.string()).optional(),
});

export const NotebookCell = z.looseObject({
  cell_type: z.string(),
  id: z.string().optional(),
  source: MultilineText.optional(),
  outputs: z.array(NotebookOutput).optional(),
});
export type NotebookCell = z.infer<typeof NotebookCell>;

export const Notebook = z.looseObject({
  cells: z.array(NotebookCell),
  metadata: z
    .looseObject({ language_info: z.looseObject({ name: z.string().optional() }).optional() })
    .optional(),
  nbformat: z.number().optional(),
  nbformat_minor: z.number().optional(),
});
export type Notebook = z.infer<typeof Notebook>;

/** Outputs of one cell beyond this many characters are not shown; the model is told how to get them. */
const MAX_CELL_OUTPUT_CHARS = 10_000;

type Block = Anthropic.TextBlockParam | Anthropic.ImageBlockParam;

/**
 * The notebook as parsed JSON, once its shape is checked. The checked object itself is returned, not zod's
 * copy: zod puts the keys it knows first, and an edited notebook must keep the key order it had.
 */
export function parseNotebook(text: string): Notebook | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  return Notebook.safeParse(raw).success ? (raw as Notebook) : undefined;
}

const joined = (value: string | string[] | undefined) =>
  Array.isArray(value) ? value.join("") : (value ?? "");

export function notebookLanguage(nb: Notebook): string {
  return nb.metadata?.language_info?.name ?? "python";
}

/** The id a cell is known by: its own, or `cell-N` (its index) for notebooks older than nbformat 4.5. */
export function cellIdOf(cell: NotebookCell, index: number): string {
  return cell.id ?? `cell-${index}`;
}

/** `cell-N` → N, for cells addressed by index. */
export function parseCellIndex(cellId: string): number | undefined {
  const match = /^cell-(\d+)$/.exec(cellId);
  return match ? Number(match[1]) : undefined;
}

function outputBlocks(output: z.infer<typeof NotebookOutput>): Block[] {
  const blocks: Block[] = [];
  const plain = MultilineText.safeParse(output.data?.["text/plain"]);
  const text =
    output.output_type === "error"
      ? `${output.ename ?? ""}: ${output.evalue ?? ""}\n${(output.traceback ?? []).join("\n")}`
      : joined(output.text ?? (plain.success ? plain.data : undefined));
  if (text) blocks.push({ text: `\n${text}`, type: "text" });
  for (const mediaType of ["image/png", "image/jpeg"] as const) {
    const image = output.data?.[mediaType];
    if (typeof image === "string") {
      blocks.push({
        type: "image",
        source: { type: "base64", media_type: mediaType, data: image.replace(/\s/g, "") },
      });
      break;
    }
  }
  return blocks;
}

/** Read's view of a notebook: a text block per run of cells (adjacent text joined by a newline), images apart. */
export function notebookBlocks(nb: Notebook, notebookPath: string): Block[] {
  const language = notebookLanguage(nb);
  const blocks = nb.cells.flatMap((cell, index): Block[] => {
    const id = cellIdOf(cell, index);
    const meta =
      cell.cell_type !== "code"
        ? `<cell_type>${cell.cell_type}</cell_type>`
        : language !== "python"
          ? `<language>${language}</language>`
          : "";
    const content: Block = {
      text: `<cell id="${id}">${meta}${joined(cell.source)}</cell id="${id}">`,
      type: "text",
    };
    if (cell.cell_type !== "code" || !cell.outputs?.length) return [content];
    const outputs = cell.outputs.flatMap(outputBlocks);
    const size = outputs.reduce(
      (n, b) =>
        n + (b.type === "text" ? b.text.length : b.source.type === "base64" ? b.source.data.length : 0),
      0,
    );
    if (size > MAX_CELL_OUTPUT_CHARS) {
      return [
        content,
        {
          text: `\nOutputs are too large to include. Use Bash with: jq '.cells[${index}].outputs' '${notebookPath}'`,
          type: "text",
        },
      ];
    }
    return [content, ...outputs];
  });
  const merged: Block[] = [];
  for (const block of blocks) {
    const last = merged[merged.length - 1];
    if (last?.type === "text" && block.type === "text") last.text += `\n${block.text}`;
    else merged.push(block.type === "text" ? { ...block } : block);
  }
  return merged;
}

/** The notebook as JSON in the layout of the file it came from: its indent and its final newline. */
export function serializeNotebook(nb: Notebook, original: string): string {
  const indent = /^\{\r?\n([ \t]+)"/.exec(original)?.[1] ?? " ";
  const text = JSON.stringify(nb, null, indent);
  const eol = original.includes("\r\n") ? "\r\n" : "\n";
  const withEol = eol === "\n" ? text : text.replace(/\n/g, "\r\n");
  return /\r?\n$/.test(original) ? withEol + eol : withEol;
}
