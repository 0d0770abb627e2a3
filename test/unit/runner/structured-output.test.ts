// The structured-output schema: compiled with ajv, the tool the model gets, and the messages it gets back.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors.js";
import {
  readSchema,
  STRUCTURED_OUTPUT_TOOL,
  StructuredOutputSpec,
} from "../../../src/runner/model/structured-output.js";

const SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    verdict: { enum: ["pass", "fail"] },
    reasons: { type: "array", items: { type: "string" }, minItems: 1 },
  },
  required: ["verdict", "reasons"],
  additionalProperties: false,
};

function schemaFile(text: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-schema-")), "schema.json");
  fs.writeFileSync(file, text);
  return file;
}

describe("StructuredOutputSpec", () => {
  it("gives the model a StructuredOutput tool whose input schema is the user's, without $schema", () => {
    const spec = new StructuredOutputSpec(SCHEMA, "schema.json");
    expect(spec.tool.name).toBe(STRUCTURED_OUTPUT_TOOL);
    expect(spec.tool.input_schema).toEqual({
      type: "object",
      properties: SCHEMA.properties,
      required: SCHEMA.required,
      additionalProperties: false,
    });
    expect(spec.instruction()).toContain(STRUCTURED_OUTPUT_TOOL);
  });

  it("accepts a valid object and names every problem of an invalid one", () => {
    const spec = new StructuredOutputSpec(SCHEMA, "schema.json");
    expect(spec.check({ verdict: "pass", reasons: ["tests pass"] })).toEqual({
      valid: true,
      value: { verdict: "pass", reasons: ["tests pass"] },
    });
    const bad = spec.check({ verdict: "maybe", reasons: [], extra: 1 });
    expect(bad.valid).toBe(false);
    if (bad.valid) return;
    expect(bad.errors).toEqual(
      expect.arrayContaining([
        expect.stringContaining("/verdict"),
        expect.stringContaining("/reasons"),
        expect.stringContaining("(extra)"),
      ]),
    );
    expect(spec.check("not an object")).toMatchObject({
      valid: false,
      errors: [expect.stringContaining("(root)")],
    });
  });

  it("caps the messages sent back at 20", () => {
    const properties = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`f${i}`, { type: "string" }]),
    );
    const spec = new StructuredOutputSpec(
      { type: "object", properties, required: Object.keys(properties) },
      "wide.json",
    );
    const result = spec.check({});
    expect(result.valid).toBe(false);
    if (!result.valid) {
      expect(result.errors).toHaveLength(21);
      expect(result.errors.at(-1)).toBe("… and 20 more");
    }
  });

  it("reads draft-07 schemas too", () => {
    const spec = new StructuredOutputSpec(
      { $schema: "http://json-schema.org/draft-07/schema#", type: "object", required: ["a"] },
      "d7.json",
    );
    expect(spec.check({ a: 1 }).valid).toBe(true);
    expect(spec.check({}).valid).toBe(false);
  });

  it("refuses, as a config error, a schema that is not an object schema or does not compile", () => {
    expect(() => new StructuredOutputSpec({ type: "array" }, "a.json")).toThrow(ConfigError);
    expect(
      () => new StructuredOutputSpec({ type: "object", properties: { a: { type: "nonsense" } } }, "b.json"),
    ).toThrow(/not a valid JSON Schema/);
  });
});

describe("readSchema", () => {
  it("reads a file, or takes an inline object as it is", () => {
    expect(readSchema(schemaFile(JSON.stringify(SCHEMA)))).toEqual({ schema: SCHEMA, name: "schema.json" });
    expect(readSchema({ type: "object" })).toEqual({ schema: { type: "object" }, name: "inline" });
  });

  it("says what is wrong with a missing file, bad JSON, or JSON that is not an object", () => {
    expect(() => readSchema("/nonexistent/schema.json")).toThrow(/cannot read/);
    expect(() => readSchema(schemaFile("{ not json"))).toThrow(/is not JSON/);
    expect(() => readSchema(schemaFile("[1, 2]"))).toThrow(/JSON Schema object/);
  });
});
