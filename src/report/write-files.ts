// Writing the report: redact, validate, render, then write report.json, report.md and report.html atomically
// (temp files in the same folder, fsync, then rename), so a full disk or a crash never leaves a truncated file
// that looks complete, nor a set of files from two different runs. Also the whole outputs of oversized tool
// calls (tool-outputs/), through the same redactor, and re-rendering a saved report.json (`agent-ci report render`).
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { access, mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { renderHtml } from "./html.js";
import { renderMarkdown, type MarkdownOptions } from "./markdown.js";
import { createRedactor, type Redactor } from "./redact.js";
import { parseReport, type RunReport, type RunReportInput } from "./schema.js";

export const REPORT_FILE_NAMES = { json: "report.json", markdown: "report.md", html: "report.html" } as const;
/** The patch file the runner writes next to report.json. */
export const PATCH_FILE_NAME = "patch.diff";
/** The folder next to report.json where a tool call's output too large for the model is kept whole. */
export const TOOL_OUTPUTS_DIR = "tool-outputs";

export interface WriteReportOptions {
  /** The run's patch text, shown as a diff in report.html. */
  patchText?: string;
  /** The run's redactor (knows the secret values). Applied to everything before it is written. */
  redactor: Redactor;
  markdown?: MarkdownOptions;
}

export interface WrittenReport {
  /** The redacted, validated report that was written. */
  report: RunReport;
  paths: { json: string; markdown: string; html: string };
}

function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
}

async function writeTemp(path: string, data: string | Uint8Array): Promise<string> {
  const temp = tempPathFor(path);
  const handle = await open(temp, "wx", 0o644);
  try {
    await (typeof data === "string" ? handle.writeFile(data, "utf8") : handle.writeFile(data));
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
  await handle.close();
  return temp;
}

/**
 * Writes several files so that each is either its old content or its whole new content, and a failed write
 * (a full disk) changes none of them: every temp file is written and synced first, then all are renamed.
 */
export async function atomicWriteFiles(
  files: readonly { path: string; data: string | Uint8Array }[],
): Promise<void> {
  const temps: string[] = [];
  try {
    for (const file of files) temps.push(await writeTemp(file.path, file.data));
  } catch (error) {
    await Promise.all(temps.map((temp) => rm(temp, { force: true }).catch(() => undefined)));
    throw error;
  }
  for (const [i, file] of files.entries()) await rename(temps[i] ?? "", file.path);
}

/** Writes `data` to `path` so that `path` is either its old content or the whole new content, never a part. */
export async function atomicWriteFile(path: string, data: string | Uint8Array): Promise<void> {
  await atomicWriteFiles([{ path, data }]);
}

/** report.json text; a last redaction pass over the serialized text is kept only if the JSON stays valid. */
function reportJsonText(report: RunReport, redactor: Redactor): string {
  const text = `${JSON.stringify(report, null, 2)}\n`;
  const rescanned = redactor.redact(text);
  if (rescanned === text) return text;
  try {
    JSON.parse(rescanned);
    return rescanned;
  } catch {
    return text;
  }
}

/**
 * Redacts and validates `report` (throws ReportSchemaError before writing anything if it does not match the
 * schema), then writes report.json, report.md and report.html into `outDir` (created if missing).
 */
export async function writeReportFiles(
  outDir: string,
  report: RunReport | RunReportInput,
  options: WriteReportOptions,
): Promise<WrittenReport> {
  const rendered = renderReportFiles(outDir, report, options);
  await mkdir(outDir, { recursive: true });
  await atomicWriteFiles(rendered.files);
  return { report: rendered.report, paths: rendered.paths };
}

/**
 * The same files written synchronously, for the one place that cannot wait: the watchdog's exit, which runs
 * inside code that holds the event loop.
 */
export function writeReportFilesSync(
  outDir: string,
  report: RunReport | RunReportInput,
  options: WriteReportOptions,
): WrittenReport {
  const rendered = renderReportFiles(outDir, report, options);
  mkdirSync(outDir, { recursive: true });
  for (const file of rendered.files) writeFileSync(file.path, file.data);
  return { report: rendered.report, paths: rendered.paths };
}

function renderReportFiles(outDir: string, report: RunReport | RunReportInput, options: WriteReportOptions) {
  const { redactor } = options;
  const validated = parseReport(redactor.redactDeep(report));
  const json = reportJsonText(validated, redactor);
  const markdown = redactor.redact(renderMarkdown(validated, options.markdown));
  const html = renderHtml(validated, { patchText: options.patchText, redactor });
  const paths = {
    json: join(outDir, REPORT_FILE_NAMES.json),
    markdown: join(outDir, REPORT_FILE_NAMES.markdown),
    html: join(outDir, REPORT_FILE_NAMES.html),
  };
  const files = [
    { path: paths.markdown, data: markdown },
    { path: paths.html, data: html },
    { path: paths.json, data: json },
  ];
  return { report: validated, paths, files };
}

/**
 * Keeps one tool call's whole output in `<outDir>/tool-outputs/<name>`, redacted by the run's redactor as
 * report.json is (the whole text at once, so a secret is found wherever the model's copy was cut). Returns
 * the path it wrote.
 */
export async function writeToolOutput(
  outDir: string,
  name: string,
  text: string,
  redactor: Redactor,
): Promise<string> {
  const dir = join(outDir, TOOL_OUTPUTS_DIR);
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  await atomicWriteFile(path, redactor.redact(text));
  return path;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

export interface RenderReportFileOptions {
  /** Patch to show in HTML. Default: patch.diff next to the report, when it exists. */
  patchPath?: string;
  markdown?: MarkdownOptions;
}

/**
 * Re-renders a saved report.json as Markdown or HTML (for `agent-ci report render report.json --format md|html`).
 * Throws ReportSchemaError with a clear message when the file is not a report this version can read.
 */
export async function renderReportFile(
  reportPath: string,
  format: "md" | "html",
  options: RenderReportFileOptions = {},
): Promise<string> {
  const report = parseReport(await readFile(reportPath, "utf8"));
  const redactor = createRedactor();
  if (format === "md") return redactor.redact(renderMarkdown(report, options.markdown));
  const patchPath = options.patchPath ?? join(dirname(reportPath), PATCH_FILE_NAME);
  const patchText = (await exists(patchPath)) ? await readFile(patchPath, "utf8") : undefined;
  return renderHtml(report, { patchText, redactor });
}
