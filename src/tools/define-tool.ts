// One definer for every tool: defaults for the flags, and the helpers that keep
// tool results uniform (errors wrapped the way Claude Code wraps validation errors).
import { z } from "zod";
import { aliasesOf } from "../policy/tool-catalog.js";
import type { Tool, ToolErrorKind, ToolResult } from "./types.js";

/** A tool answers to the other names the catalogue gives it (Claude Code's older and newer names). */
export function defineTool<Input>(
  tool: Omit<Tool<Input>, "isReadOnly" | "isConcurrencySafe" | "aliases"> &
    Partial<Pick<Tool<Input>, "isReadOnly" | "isConcurrencySafe">>,
): Tool<Input> {
  const aliases = aliasesOf(tool.name);
  return {
    isReadOnly: () => false,
    isConcurrencySafe: () => false,
    ...(aliases.length ? { aliases } : {}),
    ...tool,
  };
}

/** The JSON Schema the Messages API gets for a zod input schema. */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _schema, ...json } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return { ...json, type: "object" };
}

/** A recoverable error the model can act on, in Claude Code's `<tool_use_error>` wrapper. */
export function toolError(kind: ToolErrorKind, message: string): ToolResult {
  return {
    output: `<tool_use_error>${message}</tool_use_error>`,
    isError: true,
    kind,
    title: message.split("\n")[0],
  };
}

/** An error result that is plain text (Claude Code does not wrap failures of the call itself). */
export function plainError(kind: ToolErrorKind, message: string): ToolResult {
  return { output: message, isError: true, kind, title: message.split("\n")[0] };
}
