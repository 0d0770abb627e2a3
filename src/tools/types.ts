// The shared shape of a tool: one object per tool made with `defineTool`, seeing only
// the narrow `Sandbox` and the run's host-side state.
import type Anthropic from "@anthropic-ai/sdk";
import type { StructuredPatch } from "diff";
import type { z } from "zod";
import type { Sandbox } from "../sandbox/sandbox.js";
import type { RunState } from "./state.js";

export type ToolErrorKind =
  | "unknown_tool"
  | "disabled_tool"
  | "invalid_input"
  | "outside_workspace"
  | "not_found"
  | "is_directory"
  | "binary_file"
  | "too_large"
  | "not_read"
  | "modified_since_read"
  | "no_match"
  | "not_unique"
  | "no_change"
  | "already_exists"
  | "permission_denied"
  | "hook_blocked"
  | "command_failed"
  | "timed_out"
  | "sandbox_error"
  /** An MCP server answered with an error, or could not be reached. */
  | "mcp_error"
  /** The run ended (cancel, wall clock, the sandbox gone) before the call finished. */
  | "interrupted";

export type ToolContent =
  string | Array<Anthropic.TextBlockParam | Anthropic.ImageBlockParam | Anthropic.DocumentBlockParam>;

/** What a call produced, for three audiences. */
export interface ToolResult {
  /** For the model: exactly the tool_result content. */
  output: ToolContent;
  isError?: boolean;
  kind?: ToolErrorKind;
  /** One line for the report. */
  title?: string;
  /**
   * Text blocks for the model that follow the tool results in the same user message (a skill's
   * instructions, as Claude Code sends them).
   */
  followUp?: Anthropic.TextBlockParam[];
  /** For the report; never parsed out of `output`. */
  metadata?: {
    exitCode?: number | null;
    timedOut?: boolean;
    patch?: StructuredPatch;
    [key: string]: unknown;
  };
}

export interface ToolContext {
  sandbox: Sandbox;
  state: RunState;
  toolUseId: string;
  signal: AbortSignal;
  /** The name the model called the tool by: one of its aliases, when it used one. */
  calledAs?: string;
}

export interface Tool<Input = Record<string, unknown>> {
  readonly name: string;
  /** Other names the tool answers to when called (Claude Code's newer names); never advertised. */
  readonly aliases?: readonly string[];
  readonly description: string;
  readonly inputSchema: z.ZodType<Input>;
  /**
   * The JSON Schema the API gets, when it is not made from `inputSchema`: an MCP tool sends its server's
   * schema unchanged (its `inputSchema` accepts any object: the server checks its own arguments).
   */
  readonly apiInputSchema?: Record<string, unknown>;
  /** An MCP server's tool: which server and tool it calls, and whether the server marks it read-only. */
  readonly mcp?: { server: string; tool: string; readOnlyHint: boolean };
  /** Characters of output the model gets; beyond it the output is cut and the whole kept. */
  readonly maxResultSizeChars: number;
  isReadOnly(input: Input): boolean;
  isConcurrencySafe(input: Input): boolean;
  /** The path the call is about, as given (file_path or path), for the workspace gate and the policy. */
  targetPath?(input: Input): string | undefined;
  /** Semantic checks before the permission stage; a result here stops the call. */
  validateInput?(input: Input, ctx: ToolContext): Promise<ToolResult | undefined>;
  call(input: Input, ctx: ToolContext): Promise<ToolResult>;
}

/** Erases the input type where tools are handled as a list (the pipeline parses input with the schema first). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any>;
