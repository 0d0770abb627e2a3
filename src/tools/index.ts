// Every tool, listed explicitly, and the JSON Schema the API gets for each.
import type Anthropic from "@anthropic-ai/sdk";
import { toolsOfCategory } from "../policy/tool-catalog.js";
import { KillShellTool, TaskOutputTool } from "./background.js";
import { BashTool } from "./bash.js";
import { jsonSchemaOf } from "./define-tool.js";
import { EditTool } from "./edit.js";
import { GlobTool } from "./glob.js";
import { GrepTool } from "./grep.js";
import { NotebookEditTool } from "./notebook-edit.js";
import { ReadTool } from "./read.js";
import { TodoWriteTool } from "./todo-write.js";
import type { AnyTool } from "./types.js";
import { WriteTool } from "./write.js";

export const ALL_TOOLS: readonly AnyTool[] = [
  BashTool,
  TaskOutputTool,
  KillShellTool,
  ReadTool,
  EditTool,
  WriteTool,
  NotebookEditTool,
  GrepTool,
  GlobTool,
  TodoWriteTool,
];

/** Tools that change files (the catalogue's "edit" category): absent from a plan-mode run's tool set (R10). */
export const FILE_WRITING_TOOLS: ReadonlySet<string> = new Set(toolsOfCategory("edit"));

export function toolByName(tools: readonly AnyTool[], name: string): AnyTool | undefined {
  return tools.find((t) => t.name === name);
}

/** The tool definitions sent to the Messages API, generated from the zod schemas. */
export function apiToolDefinitions(tools: readonly AnyTool[]): Anthropic.Tool[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: (tool.apiInputSchema ?? jsonSchemaOf(tool.inputSchema)) as Anthropic.Tool.InputSchema,
  }));
}
