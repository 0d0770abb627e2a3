// One definer for every tool (STYLE.md habits 1-3): defaults for the flags, and the helpers that keep
// tool results uniform (errors wrapped the way Claude Code wraps validation errors).
import type { Tool, ToolErrorKind, ToolResult } from "./types.js";

export function defineTool<Input>(
  tool: Omit<Tool<Input>, "isReadOnly" | "isConcurrencySafe"> &
    Partial<Pick<Tool<Input>, "isReadOnly" | "isConcurrencySafe">>,
): Tool<Input> {
  return {
    isReadOnly: () => false,
    isConcurrencySafe: () => false,
    ...tool,
  };
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
