// Golden-file helpers for the report tests: fixture paths, and UPDATE_GOLDEN=1 to rewrite expected files.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import * as prettier from "prettier";
import {
  configErrorReport,
  deniedNoChangesReport,
  longRunPatch,
  longRunReport,
  SMALL_FIX_PATCH,
  smallFixReport,
  subagentsReport,
  verifyFailedReport,
} from "./report-builders.js";
import type { RunReport } from "../../../../src/report/schema.js";

export const UPDATE_GOLDEN = process.env.UPDATE_GOLDEN === "1";
export const UPDATE_HINT = "run `UPDATE_GOLDEN=1 npx vitest run test/unit/report` and review the diff";

export const FIXTURE_DIR = fileURLToPath(new URL("../../../fixtures/report/", import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

export interface Fixture {
  name: string;
  build: () => RunReport;
  patch?: string;
}

export const FIXTURES: readonly Fixture[] = [
  { name: "small-fix", build: smallFixReport, patch: SMALL_FIX_PATCH },
  { name: "denied-no-changes", build: deniedNoChangesReport },
  { name: "long-run-200", build: longRunReport, patch: longRunPatch() },
  { name: "config-error", build: configErrorReport },
  { name: "verify-failed", build: verifyFailedReport, patch: SMALL_FIX_PATCH },
  { name: "subagents", build: subagentsReport },
];

export function fixturePath(name: string, extension: string): string {
  return `${FIXTURE_DIR}${name}.${extension}`;
}

/** JSON formatted the way the repository's Prettier config formats it (format:check stays green). */
export async function formatJson(value: unknown, path: string): Promise<string> {
  const config = (await prettier.resolveConfig(path)) ?? {};
  return prettier.format(JSON.stringify(value, null, 2), { ...config, parser: "json" });
}

/** Compares `actual` with the golden file, or rewrites it under UPDATE_GOLDEN=1. Returns the expected text. */
export async function golden(path: string, actual: string): Promise<string> {
  if (UPDATE_GOLDEN || !existsSync(path)) {
    await writeFile(path, actual);
    return actual;
  }
  return readFile(path, "utf8");
}
