// TodoWrite: the run's task list. It changes nothing in the sandbox; the list goes into the report.
import { z } from "zod";
import { defineTool, toolError } from "./define-tool.js";

export const TodoWriteInput = z.strictObject({
  todos: z
    .array(
      z.strictObject({
        content: z.string().min(1).describe('What to do, imperative ("Run the tests")'),
        status: z.enum(["pending", "in_progress", "completed"]),
        activeForm: z
          .string()
          .min(1)
          .optional()
          .describe('The same, present continuous ("Running the tests")'),
        id: z.string().optional(),
      }),
    )
    .max(200)
    .describe("The updated todo list"),
});
export type TodoWriteInput = z.infer<typeof TodoWriteInput>;

export const TodoWriteTool = defineTool<TodoWriteInput>({
  name: "TodoWrite",
  description:
    "Creates and updates the task list for this run: use it for work of three or more steps, keep exactly one task in_progress, and mark tasks completed as soon as they are done.",
  inputSchema: TodoWriteInput,
  maxResultSizeChars: 10_000,
  isReadOnly: () => true,
  isConcurrencySafe: () => false,

  async validateInput(input) {
    const active = input.todos.filter((t) => t.status === "in_progress").length;
    if (active > 1)
      return toolError("invalid_input", `Only one task may be in_progress at a time (${active} are).`);
    return undefined;
  },

  async call(input, ctx) {
    ctx.state.todos = input.todos.map(({ content, status, activeForm }) => ({ content, status, activeForm }));
    const done = input.todos.filter((t) => t.status === "completed").length;
    return {
      output:
        "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable",
      title: `${input.todos.length} todos (${done} completed)`,
    };
  },
});
