// A full disk mid-write must never leave a truncated report that looks complete (writes go to a temp file,
// then rename). node:fs/promises is wrapped so that writing report.json fails with ENOSPC after a partial write.
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRedactor } from "../../../src/report/redact.js";
import { writeReportFiles } from "../../../src/report/write-files.js";
import { longRunReport, smallFixReport } from "./support/report-builders.js";

const disk = vi.hoisted(() => ({ full: false }));

vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs/promises")>();
  const open: typeof actual.open = async (...args: Parameters<typeof actual.open>) => {
    const handle = await actual.open(...args);
    if (!disk.full || !String(args[0]).includes(".report.json.")) return handle;
    // report.json is the last of the three temp files: the other two were already written when it fails.
    return new Proxy(handle, {
      get(target, property) {
        if (property === "writeFile") {
          return async (data: string) => {
            await target.writeFile(data.slice(0, 100));
            throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  return { ...actual, open };
});

const dirs: string[] = [];
afterEach(async () => {
  disk.full = false;
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe("writeReportFiles on a full disk", () => {
  it("keeps the previous complete set of files and leaves no partial or temp file", async () => {
    const outDir = await mkdtemp(join(tmpdir(), "agent-ci-full-"));
    dirs.push(outDir);
    const redactor = createRedactor();
    await writeReportFiles(outDir, smallFixReport(), { redactor });
    const before = await readFile(join(outDir, "report.json"), "utf8");
    const markdownBefore = await readFile(join(outDir, "report.md"), "utf8");

    disk.full = true;
    await expect(writeReportFiles(outDir, longRunReport(), { redactor })).rejects.toThrow(/ENOSPC/);

    expect(await readFile(join(outDir, "report.json"), "utf8")).toBe(before);
    expect(JSON.parse(before)).toMatchObject({ runId: smallFixReport().runId });
    expect(await readFile(join(outDir, "report.md"), "utf8"), "the set stays from one run").toBe(
      markdownBefore,
    );
    expect((await readdir(outDir)).sort()).toEqual(["report.html", "report.json", "report.md"]);
  });

  it("writes no report.json at all when the first write fails", async () => {
    const outDir = await mkdtemp(join(tmpdir(), "agent-ci-full-"));
    dirs.push(outDir);
    disk.full = true;
    await expect(writeReportFiles(outDir, smallFixReport(), { redactor: createRedactor() })).rejects.toThrow(
      /ENOSPC/,
    );
    expect(await readdir(outDir)).toEqual([]);
  });
});
