// The compiled check of a JSON Schema (draft-07, or 2020-12 when the schema declares it), with ajv. Its own
// module so that ajv is loaded (`import()` of this file) only by a run that has a schema to check.
import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";

export type { ErrorObject, ValidateFunction } from "ajv";

/** Throws when the schema does not compile. */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const draft2020 = typeof schema.$schema === "string" && schema.$schema.includes("2020-12");
  const options = { allErrors: true, strict: false };
  return (draft2020 ? new Ajv2020(options) : new Ajv(options)).compile(schema);
}
