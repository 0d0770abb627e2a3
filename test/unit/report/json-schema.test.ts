// schema/report.schema.json is generated from the zod schema; this test fails when it is out of date.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { REPORT_SCHEMA_VERSION, reportJsonSchema } from "../../../src/report/schema.js";
import { REPO_ROOT, UPDATE_GOLDEN, formatJson } from "./support/golden.js";

const SCHEMA_PATH = `${REPO_ROOT}schema/report.schema.json`;
const REGENERATE = "UPDATE_GOLDEN=1 npx vitest run test/unit/report/json-schema.test.ts";

describe("schema/report.schema.json", () => {
  it("is in sync with src/report/schema.ts", async () => {
    const generated = reportJsonSchema();
    if (UPDATE_GOLDEN || !existsSync(SCHEMA_PATH))
      await writeFile(SCHEMA_PATH, await formatJson(generated, SCHEMA_PATH));
    const committed = JSON.parse(await readFile(SCHEMA_PATH, "utf8")) as unknown;
    expect(committed, `schema/report.schema.json is out of date; regenerate it with: ${REGENERATE}`).toEqual(
      generated,
    );
  });

  it("is formatted the way Prettier formats it", async () => {
    const text = await readFile(SCHEMA_PATH, "utf8");
    expect(text, `schema/report.schema.json is not formatted; regenerate it with: ${REGENERATE}`).toBe(
      await formatJson(JSON.parse(text), SCHEMA_PATH),
    );
  });

  it("pins the schema version and documents the top-level fields", () => {
    const schema = reportJsonSchema() as {
      $schema: string;
      title: string;
      properties: Record<string, { const?: unknown; description?: string }>;
      required: string[];
    };
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.title).toBe("agent-ci run report");
    expect(schema.properties.schemaVersion?.const).toBe(REPORT_SCHEMA_VERSION);
    expect(schema.required).toEqual(
      expect.arrayContaining([
        "schemaVersion",
        "runId",
        "exitReason",
        "outcome",
        "toolCalls",
        "turns",
        "patch",
        "denials",
      ]),
    );
  });
});
