// A value given as JSON, inline or in a file (--mcp-config, --agents and the Action's inputs of the same
// kind): which of the two it is, and its parsed value, read one way everywhere.
import fs from "node:fs";
import { ConfigError } from "./errors.js";

/** Inline JSON rather than the path of a file holding it: the value starts with `{` (after blanks). */
export const isInlineJson = (value: string): boolean => value.trimStart().startsWith("{");

/** JSON text parsed; a ConfigError naming `label` when it is not JSON. */
export function parseJson(text: string, label: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${label}: not JSON (${(e as Error).message})`);
  }
}

/** The value of inline JSON or of the file it names; a ConfigError naming `label` when neither reads. */
export function readJsonSource(value: string, label: string): unknown {
  if (isInlineJson(value)) return parseJson(value, label);
  let text: string;
  try {
    text = fs.readFileSync(value, "utf8");
  } catch (e) {
    throw new ConfigError(`${label}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return parseJson(text, label);
}
