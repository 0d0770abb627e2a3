// A diff as a table (line numbers, sign, text, secret flags), from the page's view of the patch or a call's
// structured patch.
import type { LineSign, ViewHunk, ViewLine } from "../html-data.js";
import type { CallPatch } from "../schema.js";
import { h } from "./dom.js";

const LINE_CLASSES: Record<LineSign, string> = { "+": "add", "-": "del", " ": "ctx", "\\": "note" };

export function diffTable(
  hunks: ViewHunk[],
  findings: ReadonlyMap<number, string> | undefined,
): HTMLDivElement {
  const table = h("table", { class: "diff" });
  for (const hunk of hunks) {
    table.appendChild(
      h("tr", { class: "hunk" }, [
        h("td", { class: "ln" }),
        h("td", { class: "ln" }),
        h("td", { colspan: "2", text: hunk.header }),
      ]),
    );
    for (const [type, oldNo, newNo, text] of hunk.lines) {
      const cls = LINE_CLASSES[type];
      const finding = type === "+" && newNo !== null ? findings?.get(newNo) : undefined;
      table.appendChild(
        h("tr", { class: cls + (finding ? " secret" : "") }, [
          h("td", { class: "ln", text: oldNo === null ? "" : String(oldNo) }),
          h("td", { class: "ln", text: newNo === null ? "" : String(newNo) }),
          h("td", { class: "sign", text: type === "\\" ? "" : type }),
          h("td", null, [
            text,
            finding ? h("span", { class: "secret-flag", text: `secret: ${finding}` }) : null,
          ]),
        ]),
      );
    }
  }
  return h("div", { class: "diff-wrap" }, table);
}
export function structuredToHunks(patch: CallPatch): ViewHunk[] {
  return patch.hunks.map((hunk) => {
    let oldNo = hunk.oldStart;
    let newNo = hunk.newStart;
    return {
      header: `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`,
      lines: hunk.lines.map((raw): ViewLine => {
        const type = raw.charAt(0);
        const text = raw.slice(1);
        if (type === "+") return ["+", null, newNo++, text];
        if (type === "-") return ["-", oldNo++, null, text];
        if (type === "\\") return ["\\", null, null, raw];
        return [" ", oldNo++, newNo++, text];
      }),
    };
  });
}
