// The checklist rows of docs/RELIABILITY.md as data. Each adversarial test file declares `const ROWS = [...]`, a
// plain literal that scripts/reliability-report.mjs reads from the file's source (it never runs the tests).
// A row is either tested in that file (a test whose name starts with the row id), covered by a named test
// elsewhere (`covered`), or does not apply (`na`, with the reason).
import fs from "node:fs";
import path from "node:path";
import { expect, it, type TestFunction } from "vitest";

export interface CoveringTest {
  /** Path from the repository root. */
  file: string;
  /** The test's title as written in that file (or its start). */
  test: string;
}

export interface Row {
  /** "P4", "C10", … */
  id: string;
  /** The bad input or fault, in a few words. */
  what: string;
  /** Bad input (default) or an injected fault (D, M and the fault tests). */
  kind?: "input" | "fault";
  /** Tested by these tests elsewhere instead of here. */
  covered?: readonly CoveringTest[];
  /** Why the row does not apply to agent-ci as built. */
  na?: string;
  /** Deeper tests of the same behaviour elsewhere (informational). */
  alsoSee?: readonly CoveringTest[];
}

/**
 * `rowTest(ROWS)("P4", "…", fn)` registers a test named "P4 …" for a row the table says is tested here,
 * and `coverageTest(ROWS)` one that checks the table: every row tested here has a test, every covering
 * test named exists.
 */
export function rowTester(rows: readonly Row[]) {
  const registered = new Set<string>();
  const test = (id: string, title: string, fn: TestFunction, timeoutMs = 90_000) => {
    const row = rows.find((r) => r.id === id);
    if (!row) throw new Error(`row ${id} is not in this file's ROWS table`);
    if (row.covered || row.na) throw new Error(`row ${id} is marked as covered elsewhere or not applicable`);
    registered.add(id);
    it(`${id} ${title}`, fn, timeoutMs);
  };
  const checkTable = () =>
    it("ROWS: every row here has a test, and every covering test named elsewhere exists", () => {
      for (const row of rows) {
        if (row.na) {
          expect(row.na.length, `${row.id} needs a reason`).toBeGreaterThan(10);
          continue;
        }
        if (!row.covered) {
          expect(registered.has(row.id), `${row.id} has no test in this file`).toBe(true);
          continue;
        }
        for (const ref of row.covered) {
          const file = path.resolve(ref.file);
          expect(fs.existsSync(file), `${row.id}: ${ref.file} does not exist`).toBe(true);
          expect(
            fs.readFileSync(file, "utf8").includes(ref.test),
            `${row.id}: no test "${ref.test}" in ${ref.file}`,
          ).toBe(true);
        }
      }
    });
  return { test, checkTable };
}
