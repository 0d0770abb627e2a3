// The Changes section: file list with counts, then each file's diff (capped by the page data).
import { formatBytes, formatInt } from "../format.js";
import { diffTable } from "./diff-view.js";
import { h } from "./dom.js";
import { badge, data, panel, plural, report } from "./page.js";

function blocks(added: number, removed: number): HTMLSpanElement {
  const total = added + removed;
  const el = h("span", { class: "blocks", "aria-hidden": "true" });
  const a = total ? Math.round((added / total) * 5) : 0;
  const d = total ? Math.min(5 - a, Math.round((removed / total) * 5)) : 0;
  for (let i = 0; i < 5; i++) el.appendChild(h("i", { class: i < a ? "a" : i < a + d ? "d" : "" }));
  return el;
}
function statusBadgeFor(status: string): HTMLSpanElement {
  const kind =
    status === "added"
      ? "ok"
      : status === "deleted"
        ? "denied"
        : status === "modified"
          ? "neutral"
          : "accent";
  return badge(kind, status);
}
function fileTitle(file: { path: string; oldPath?: string | undefined }): string {
  return file.oldPath ? `${file.oldPath} \u2192 ${file.path}` : file.path;
}
/** The secret findings, by file and then by line, to mask in the diffs. */
function findingsByFile(): Map<string, Map<number, string>> {
  const byFile = new Map<string, Map<number, string>>();
  for (const f of report.patch.secretFindings) {
    const lines = byFile.get(f.file) ?? new Map<number, string>();
    byFile.set(f.file, lines);
    if (f.line !== undefined) lines.set(f.line, f.kind);
  }
  return byFile;
}

/** The callout naming each possible secret, when the patch has any. */
function secretsCallout(): HTMLDivElement | null {
  const findings = report.patch.secretFindings;
  if (!findings.length) return null;
  return h("div", { class: "callout critical", style: { "margin-top": "0", "margin-bottom": "12px" } }, [
    h("span", { class: "title", text: "Possible secrets" }),
    findings.map((f, i) => [
      i ? ", " : "",
      h("code", { text: f.file + (f.line !== undefined ? `:${f.line}` : "") }),
      ` (${f.kind})`,
    ]),
    ". The patch file is unchanged; secret values are masked in this view.",
  ]);
}

/** The file list: each changed file with its status and counts, linking to its diff. */
function fileList(): HTMLDivElement {
  const list = h("div", { class: "file-list" });
  report.patch.files.forEach((file, i) => {
    list.appendChild(
      h("a", { class: "file-row", href: `#file-${i}` }, [
        statusBadgeFor(file.status),
        h("span", { class: "path", text: fileTitle(file) }),
        file.binary
          ? badge("neutral", "binary")
          : [
              h("span", { class: "plus", text: `+${formatInt(file.added)}` }),
              h("span", { class: "minus", text: `\u2212${formatInt(file.removed)}` }),
              blocks(file.added, file.removed),
            ],
      ]),
    );
  });
  return list;
}

/** Each file's diff, open when the patch is small, with the page data's caps said where they cut. */
function fileDiffs(body: HTMLElement): void {
  const view = data.patch;
  if (!view.available) {
    body.appendChild(
      h("div", { class: "callout info" }, [
        h("span", { class: "title", text: "Patch not included" }),
        "patch.diff was not found next to report.json, so only the file list is shown.",
      ]),
    );
    return;
  }
  const findings = findingsByFile();
  view.files.forEach((file, i) => {
    const content = file.binary
      ? h("div", { class: "binary", text: "Binary file (not shown)." })
      : !file.hunks.length
        ? h("div", { class: "binary", text: "No textual change (mode change, rename or empty file)." })
        : diffTable(file.hunks, findings.get(file.path));
    const open = view.files.length <= 10 && file.lines < 1500;
    body.appendChild(
      h("details", { class: "file", id: `file-${i}`, open }, [
        h("summary", null, [
          statusBadgeFor(file.status),
          h("span", { class: "path", text: fileTitle(file) }),
          file.binary
            ? null
            : [
                h("span", { class: "plus", text: `+${formatInt(file.added)}` }),
                h("span", { class: "minus", text: `\u2212${formatInt(file.removed)}` }),
              ],
        ]),
        content,
        file.omittedLines
          ? h("div", {
              class: "note",
              style: { padding: "6px 12px" },
              text: `${formatInt(file.omittedLines)} more lines not shown; see patch.diff.`,
            })
          : null,
      ]),
    );
  });
  if (view.truncated)
    body.appendChild(
      h("div", {
        class: "note",
        text: "The patch is long; some files or lines are not shown here. patch.diff has all of it.",
      }),
    );
}

/** Expand all / collapse all, when there is more than one diff to open. */
function expandButtons(): HTMLElement | null {
  const view = data.patch;
  if (!view.available || view.files.length <= 1) return null;
  const setAll = (open: boolean) => {
    for (const d of document.querySelectorAll<HTMLDetailsElement>("details.file")) d.open = open;
  };
  return h("div", { class: "seg" }, [
    h("button", { type: "button", text: "Expand all", onclick: () => setAll(true) }),
    h("button", { type: "button", text: "Collapse all", onclick: () => setAll(false) }),
  ]);
}

export function renderChanges(): HTMLElement {
  const patch = report.patch;
  const body = h("div", { class: "section-body" });
  if (patch.empty) {
    body.appendChild(h("div", { class: "empty", text: "The run produced no changes." }));
  } else {
    const callout = secretsCallout();
    if (callout) body.appendChild(callout);
    body.appendChild(fileList());
    fileDiffs(body);
  }
  const expand = expandButtons();
  const sub = patch.empty
    ? "no changes"
    : `${plural(patch.files.length, "file")} \u00b7 +${formatInt(patch.added)} \u2212${formatInt(patch.removed)} \u00b7 ` +
      `${formatBytes(patch.bytes)} \u00b7 sha256 ${patch.sha256.slice(0, 12)}`;
  return panel("changes-section", "Changes", sub, body, expand);
}
