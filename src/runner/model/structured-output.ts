// Structured output: the run ends with a JSON object valid against a schema the user gives
// (`--output-schema FILE`, the Action's `output_schema`). The model gets one more tool, StructuredOutput (the
// name Claude Code's SDK uses), whose input_schema is that schema; the loop answers it itself (it touches no
// file, so it needs no sandbox or permission) and validates the input with ajv. When the object is missing or
// invalid the model is told why once; a second miss ends the run with `schema_invalid`.
import fs from "node:fs";
import type Anthropic from "@anthropic-ai/sdk";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { ConfigError } from "../../errors.js";

export const STRUCTURED_OUTPUT_TOOL = "StructuredOutput";
/** Validator messages sent back to the model and kept in the report, at most this many. */
const MAX_ERRORS = 20;

export type JsonSchema = Record<string, unknown>;

/** The result of checking one StructuredOutput call. */
export type StructuredCheck =
  { valid: true; value: Record<string, unknown> } | { valid: false; errors: string[] };

/** What the report records about the run's structured output. */
export interface StructuredOutcome {
  /** Where the schema came from: a file name, `inline`, or a built-in one (`review`). */
  schema: string;
  valid: boolean;
  /** StructuredOutput calls the model made. */
  attempts: number;
  /** The validator's messages for the last invalid object, or why there was none. */
  errors: string[];
  /** The valid object (absent unless `valid`). */
  value?: Record<string, unknown>;
}

/** The schema as given: a JSON Schema object, or the path of a file holding one. */
export function readSchema(source: string | JsonSchema): { schema: JsonSchema; name: string } {
  if (typeof source !== "string") return { schema: source, name: "inline" };
  let text: string;
  try {
    text = fs.readFileSync(source, "utf8");
  } catch (e) {
    throw new ConfigError(`--output-schema: cannot read ${source}: ${(e as Error).message}`);
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`--output-schema: ${source} is not JSON: ${(e as Error).message}`);
  }
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw new ConfigError(`--output-schema: ${source} must hold a JSON Schema object`);
  }
  return { schema: schema as JsonSchema, name: source.split(/[\\/]/).pop() ?? source };
}

function formatError(e: ErrorObject): string {
  const where = e.instancePath || "(root)";
  const extra =
    e.keyword === "additionalProperties"
      ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})`
      : "";
  return `${where}: ${e.message ?? e.keyword}${extra}`;
}

/** One run's schema, compiled: the tool the model is given and the check of its input. */
export class StructuredOutputSpec {
  readonly tool: Anthropic.Tool;
  private readonly validate: ValidateFunction;

  /** Throws ConfigError when the schema cannot be compiled or does not describe an object. */
  constructor(
    readonly schema: JsonSchema,
    readonly name: string,
  ) {
    if (schema.type !== "object") {
      throw new ConfigError(
        `--output-schema: the schema must describe an object ("type": "object"); the model answers through a tool whose input is an object`,
      );
    }
    const draft2020 = typeof schema.$schema === "string" && schema.$schema.includes("2020-12");
    const options = { allErrors: true, strict: false };
    const ajv = draft2020 ? new Ajv2020(options) : new Ajv(options);
    try {
      this.validate = ajv.compile(schema);
    } catch (e) {
      throw new ConfigError(`--output-schema: ${name} is not a valid JSON Schema: ${(e as Error).message}`);
    }
    const { $schema: _draft, $id: _id, ...inputSchema } = schema;
    this.tool = {
      name: STRUCTURED_OUTPUT_TOOL,
      description:
        "Return the final result of this run as a JSON object matching this tool's input schema. Call it exactly once, as your last action, when your work is done; the run ends when it accepts the object.",
      input_schema: inputSchema as Anthropic.Tool.InputSchema,
    };
  }

  check(input: unknown): StructuredCheck {
    if (this.validate(input)) return { valid: true, value: input as Record<string, unknown> };
    const errors = (this.validate.errors ?? []).map(formatError);
    const shown = errors.slice(0, MAX_ERRORS);
    if (errors.length > MAX_ERRORS) shown.push(`… and ${errors.length - MAX_ERRORS} more`);
    return { valid: false, errors: shown.length ? shown : ["the object does not match the schema"] };
  }

  /** The system prompt's line about it. */
  instruction(): string {
    return `This run must end with a structured result: when your work is done, call the ${STRUCTURED_OUTPUT_TOOL} tool once with an object that matches its input schema. The run ends when it accepts the object; an answer in text alone does not count.`;
  }
}
