// Writing report files: redaction before writing, validation, atomic replace, re-rendering a saved report.
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createRedactor } from "../../../src/report/redact.js";
import { ReportSchemaError } from "../../../src/report/schema.js";
import { atomicWriteFile, renderReportFile, writeReportFiles } from "../../../src/report/write-files.js";
import { KNOWN_SECRETS } from "./support/fake-secrets.js";
import { fixturePath } from "./support/golden.js";
import { SMALL_FIX_PATCH, smallFixReport } from "./support/report-builders.js";

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "agent-ci-write-"));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe("writeReportFiles", () => {
  it("writes report.json, report.md and report.html, and nothing else", async () => {
    const outDir = join(await tempDir(), "nested", "run-1");
    const written = await writeReportFiles(outDir, smallFixReport(), {
      redactor: createRedactor(),
      patchText: SMALL_FIX_PATCH,
    });
    expect((await readdir(outDir)).sort()).toEqual(["report.html", "report.json", "report.md"]);
    expect(JSON.parse(await readFile(written.paths.json, "utf8"))).toEqual(written.report);
    expect(await readFile(written.paths.markdown, "utf8")).toMatch(/^### ✅ agent-ci: Changes ready/);
    expect(await readFile(written.paths.html, "utf8")).toMatch(/^<!doctype html>/);
  });

  it("redacts known secrets before writing", async () => {
    const outDir = await tempDir();
    const report = smallFixReport();
    report.toolCalls[5]!.resultPreview = `token=${KNOWN_SECRETS.githubToken}`;
    report.toolCalls[5]!.input = { command: `curl -H "x-api-key: ${KNOWN_SECRETS.anthropicKey}" localhost` };
    const written = await writeReportFiles(outDir, report, {
      redactor: createRedactor({ secrets: [KNOWN_SECRETS.githubToken, KNOWN_SECRETS.anthropicKey] }),
    });
    for (const path of Object.values(written.paths)) {
      const text = await readFile(path, "utf8");
      expect(text).not.toContain(KNOWN_SECRETS.githubToken);
      expect(text).not.toContain(KNOWN_SECRETS.anthropicKey);
    }
    expect(written.report.toolCalls[5]!.resultPreview).toBe("token=***");
  });

  it("refuses an invalid report before writing anything, naming the field", async () => {
    const outDir = await tempDir();
    const report = { ...smallFixReport(), exitReason: "exploded" };
    await expect(writeReportFiles(outDir, report as never, { redactor: createRedactor() })).rejects.toThrow(
      ReportSchemaError,
    );
    await expect(writeReportFiles(outDir, report as never, { redactor: createRedactor() })).rejects.toThrow(
      /exitReason/,
    );
    expect(await readdir(outDir)).toEqual([]);
  });
});

describe("atomicWriteFile", () => {
  it("replaces the file whole and leaves no temp file", async () => {
    const dir = await tempDir();
    const path = join(dir, "report.json");
    await writeFile(path, "old");
    await atomicWriteFile(path, "new content");
    expect(await readFile(path, "utf8")).toBe("new content");
    expect(await readdir(dir)).toEqual(["report.json"]);
  });
});

describe("renderReportFile", () => {
  it("re-renders a saved report as Markdown identical to the golden file", async () => {
    const markdown = await renderReportFile(fixturePath("small-fix", "json"), "md");
    expect(markdown).toBe(await readFile(fixturePath("small-fix", "md"), "utf8"));
  });

  it("finds patch.diff next to report.json for the HTML diff", async () => {
    const dir = await tempDir();
    await cp(fixturePath("small-fix", "json"), join(dir, "report.json"));
    const withoutPatch = await renderReportFile(join(dir, "report.json"), "html");
    expect(withoutPatch).toContain('"available":false');
    await cp(fixturePath("small-fix", "diff"), join(dir, "patch.diff"));
    const withPatch = await renderReportFile(join(dir, "report.json"), "html");
    expect(withPatch).toContain('"available":true');
    expect(withPatch).toContain("return a + b;");
  });

  it("explains what is wrong with a file that is not a report", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "report.json"), JSON.stringify({ schemaVersion: 99 }));
    await expect(renderReportFile(join(dir, "report.json"), "md")).rejects.toThrow(/newer agent-ci/);
    await writeFile(join(dir, "report.json"), "not json");
    await expect(renderReportFile(join(dir, "report.json"), "html")).rejects.toThrow(/not valid JSON/);
  });
});
