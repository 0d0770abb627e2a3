// report.html as a file: self-contained (no external resources), a CSP whose hashes match the inline code,
// data that cannot break out of its <script> block, the patch shown redacted while findings stay visible.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { renderHtml, jsonForScript } from "../../../src/report/html.js";
import { REPORT_CLIENT_JS } from "../../../src/report/html-client-js.js";
import type { ReportPageData } from "../../../src/report/html-data.js";
import { createRedactor } from "../../../src/report/redact.js";
import { FORMAT_SECRETS, pemBlock } from "./support/fake-secrets.js";
import {
  SMALL_FIX_PATCH,
  deniedNoChangesReport,
  longRunPatch,
  longRunReport,
  smallFixReport,
} from "./support/report-builders.js";

function embeddedData(html: string): ReportPageData {
  const json = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)?.[1];
  if (json === undefined) throw new Error("no data block");
  return JSON.parse(json) as ReportPageData;
}

const hash = (text: string) => createHash("sha256").update(text).digest("base64");

describe("renderHtml", () => {
  const html = renderHtml(smallFixReport(), { patchText: SMALL_FIX_PATCH });

  it("loads nothing from outside the file", () => {
    expect(html).not.toMatch(/<(?:link|img|iframe|object|embed|base)\b/i);
    expect(html).not.toMatch(/\s(?:src|href)=["']?(?:https?:|\/\/)/i);
    expect(html).not.toMatch(/@import|url\(\s*["']?(?:https?:|\/\/)/i);
    expect((html.match(/<script\b/g) ?? []).length).toBe(2);
  });

  it("has a Content-Security-Policy allowing only the inline style and script, by hash", () => {
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1] ?? "";
    expect(csp).toContain("default-src &#39;none&#39;");
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? "";
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? "";
    expect(csp).toContain(`script-src &#39;sha256-${hash(script)}&#39;`);
    expect(csp).toContain(`style-src &#39;sha256-${hash(style)}&#39;`);
  });

  it("embeds the report and one summary per call", () => {
    const data = embeddedData(html);
    const expected = smallFixReport();
    expected.toolCalls[5]!.resultPreview = expected.toolCalls[5]!.resultPreview.replace(/\u001b\[\d+m/g, "");
    expect(data.report).toEqual(expected);
    expect(data.callSummaries).toHaveLength(8);
    expect(data.callSummaries[5]).toBe("npm test 2>&1 | tail -n 20");
    expect(data.patch.files.map((file) => file.path)).toEqual([
      "src/calc.js",
      "test/calc.test.js",
      "CHANGELOG.md",
    ]);
  });

  it("cannot be broken out of by hostile strings in the data", () => {
    const report = deniedNoChangesReport();
    report.toolCalls[0]!.resultPreview = "</script><script>alert(1)</script><!-- \u2028";
    const hostile = renderHtml(report);
    expect(hostile.match(/<\/script>/g)).toHaveLength(2);
    expect(hostile).not.toContain("<script>alert(1)");
    expect(embeddedData(hostile).report).toEqual(report);
    expect(jsonForScript({ a: "<&>\u2028" })).toBe('{"a":"\\u003c\\u0026\\u003e\\u2028"}');
  });

  it("joins a secret split by colour codes before redacting, so it is still found", () => {
    const report = smallFixReport();
    const token = FORMAT_SECRETS.ghp ?? "";
    report.toolCalls[5]!.resultPreview = `${token.slice(0, 10)}\u001b[0m${token.slice(10)}`;
    const out = renderHtml(report);
    expect(out).not.toContain(token);
    expect(out).not.toContain(token.slice(10));
  });

  it("shows the patch with secrets masked, keeping line numbers", () => {
    const secretPatch = [
      "diff --git a/src/config.js b/src/config.js",
      "--- a/src/config.js",
      "+++ b/src/config.js",
      "@@ -1,1 +1,6 @@",
      " const a = 1;",
      `+const token = "${FORMAT_SECRETS.ghp}";`,
      ...pemBlock()
        .split("\n")
        .map((line) => `+${line}`),
      "",
    ].join("\n");
    const out = renderHtml(smallFixReport(), { patchText: secretPatch, redactor: createRedactor() });
    expect(out).not.toContain(FORMAT_SECRETS.ghp);
    expect(out).not.toContain(FORMAT_SECRETS.pemBody);
    const lines = embeddedData(out).patch.files[0]!.hunks[0]!.lines;
    expect(lines.map((line) => line[2])).toEqual([1, 2, 3, 4, 5, 6]);
    expect(lines[1]![3]).toBe('const token = "***";');
  });

  it("caps the embedded diff and says so", () => {
    const out = renderHtml(longRunReport(), { patchText: longRunPatch(), maxPatchLines: 40 });
    const patch = embeddedData(out).patch;
    expect(patch.truncated).toBe(true);
    const shown = patch.files.reduce(
      (sum, file) => sum + file.hunks.reduce((n, hunk) => n + hunk.lines.length, 0),
      0,
    );
    expect(shown).toBe(40);
  });

  it("marks the patch as unavailable when no patch text is given", () => {
    expect(embeddedData(renderHtml(smallFixReport())).patch).toEqual({
      available: false,
      truncated: false,
      files: [],
    });
  });

  it("ships a client script that parses", () => {
    expect(() => new Function(REPORT_CLIENT_JS)).not.toThrow();
  });
});
