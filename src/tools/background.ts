// Background work: TaskOutput reads, KillShell stops, shells (Bash run_in_background) and subagents (Task
// run_in_background) alike — the seeds' v2.1 tools. Older and newer names are aliases of these two (the tool
// catalogue says which): BashOutput of TaskOutput, TaskStop and KillBash of KillShell. Each tool takes both
// vocabularies' inputs and answers in the shape of the name the model called: BashOutput's and KillShell's
// for those names, TaskOutput's and Claude Code 2.1.328's TaskStop's (the recorded `taskstop-*` cases) for
// theirs, whichever parameter name came with it (a TaskStop given v2.0's `shell_id` is still a TaskStop).
// Without the name (a direct call), the parameter's vocabulary decides.
import { z } from "zod";
import { SandboxFsError } from "../sandbox/sandbox.js";
import { trimTrailingNewlines } from "../text.js";
import { cleanOutput } from "./bash.js";
import { defineTool, jsonSchemaOf, toolError } from "./define-tool.js";
import type { BackgroundAgent } from "./background-tasks.js";
import { handBack } from "./task.js";
import type { ToolContext, ToolResult } from "./types.js";

const MAX_WAIT_MS = 600_000;
const DEFAULT_WAIT_MS = 30_000;
/** How often a blocking read looks at a background shell again. */
const SHELL_POLL_MS = 250;

/** What the model is offered: the seeds' v2.1 TaskOutput. */
const TaskOutputAdvertised = z.strictObject({
  task_id: z.string().describe("The ID of the background task (a shell or an agent)"),
  block: z.boolean().optional().describe("Wait for the task to finish (default true)"),
  timeout: z
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_MS)
    .optional()
    .describe(`How long to wait in ms when blocking (default ${DEFAULT_WAIT_MS}, max ${MAX_WAIT_MS})`),
});

/** What it accepts: BashOutput's `bash_id` and `filter` too (BashOutput never waits). */
export const TaskOutputInput = TaskOutputAdvertised.extend({
  task_id: z.string().optional(),
  bash_id: z.string().optional().describe("BashOutput's name for task_id"),
  filter: z
    .string()
    .optional()
    .describe("Optional regular expression: only output lines matching it are shown"),
}).refine((input) => (input.task_id === undefined) !== (input.bash_id === undefined), {
  message: "Give task_id (or BashOutput's bash_id), not both",
});
export type TaskOutputInput = z.infer<typeof TaskOutputInput>;

const KillShellAdvertised = z.strictObject({
  shell_id: z.string().describe("The ID of the background shell or agent to stop"),
});

/** KillShell's `shell_id`, or TaskStop's `task_id`. */
export const KillShellInput = z
  .strictObject({
    shell_id: z.string().optional(),
    task_id: z.string().optional().describe("TaskStop's name for shell_id"),
  })
  .refine((input) => (input.shell_id === undefined) !== (input.task_id === undefined), {
    message: "Give shell_id (or TaskStop's task_id), not both",
  });
export type KillShellInput = z.infer<typeof KillShellInput>;

function unknownShell(ctx: ToolContext, id: string): ToolResult {
  const known = [...ctx.state.background.shells.keys()];
  return toolError(
    "not_found",
    `No background shell with ID ${id}.${known.length ? ` Known: ${known.join(", ")}.` : ""}`,
  );
}

const noTask = (id: string) => toolError("not_found", `No task found with ID: ${id}`);

/** Resolves after `ms`, or at once when the call is cancelled. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** Keeps the lines `filter` matches (all when there is none). */
function filtered(text: string, filter: string | undefined): string {
  if (!filter) return text;
  const re = new RegExp(filter);
  return text
    .split("\n")
    .filter((line) => re.test(line))
    .join("\n");
}

/** The call is BashOutput's: by the name the model used, else by its `bash_id`. */
const asBashOutput = (input: TaskOutputInput, ctx: ToolContext): boolean =>
  ctx.calledAs !== undefined ? ctx.calledAs === "BashOutput" : input.bash_id !== undefined;

async function shellOutput(id: string, input: TaskOutputInput, ctx: ToolContext): Promise<ToolResult> {
  // BashOutput's callers read and return; TaskOutput's wait unless asked not to.
  const legacy = asBashOutput(input, ctx);
  const block = !legacy && (input.block ?? true);
  const until = Date.now() + (block ? (input.timeout ?? DEFAULT_WAIT_MS) : 0);
  let text = "";
  for (;;) {
    let status;
    try {
      status = await ctx.sandbox.readBackground(id);
    } catch (e) {
      if (e instanceof SandboxFsError)
        return toolError("not_found", `Background shell ${id} is gone (${e.message}).`);
      throw e;
    }
    text += cleanOutput(status.output);
    if (status.status !== "running" || Date.now() >= until || ctx.signal.aborted) {
      const out = filtered(trimTrailingNewlines(text), input.filter);
      const parts = legacy
        ? [`<status>${status.status}</status>`]
        : [
            `<retrieval_status>${status.status === "running" ? (block ? "timeout" : "not_ready") : "success"}</retrieval_status>`,
            `<task_id>${id}</task_id>`,
            "<task_type>local_bash</task_type>",
            `<status>${status.status}</status>`,
          ];
      if (status.exitCode !== null) parts.push(`<exit_code>${status.exitCode}</exit_code>`);
      parts.push(out ? `<output>\n${out}\n</output>` : "<output>(no new output)</output>");
      if (legacy) parts.push(`<timestamp>${new Date().toISOString()}</timestamp>`);
      return { output: parts.join("\n\n"), title: `${id}: ${status.status}` };
    }
    await pause(SHELL_POLL_MS, ctx.signal);
  }
}

async function agentOutput(
  id: string,
  agent: BackgroundAgent,
  input: TaskOutputInput,
  ctx: ToolContext,
): Promise<ToolResult> {
  const signal = ctx.signal;
  const block = !asBashOutput(input, ctx) && (input.block ?? true);
  if (block && agent.status === "running") {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      agent.done,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, input.timeout ?? DEFAULT_WAIT_MS);
        signal.addEventListener("abort", () => resolve(), { once: true });
      }),
    ]);
    clearTimeout(timer);
  }
  const running = agent.status === "running";
  const parts = [
    `<retrieval_status>${running ? (block ? "timeout" : "not_ready") : "success"}</retrieval_status>`,
    `<task_id>${id}</task_id>`,
    "<task_type>local_agent</task_type>",
    `<status>${agent.status}</status>`,
  ];
  if (!running) parts.push(`<output>\n${handBack(agent.outcome())}\n</output>`);
  return { output: parts.join("\n\n"), title: `${id}: ${agent.status}` };
}

export const TaskOutputTool = defineTool<TaskOutputInput>({
  name: "TaskOutput",
  description:
    "Reads the output of a background task: a shell started with Bash run_in_background (what it printed since the last read, its status and exit code), or an agent started with Task run_in_background (its report once it finished). By default waits for it to finish (block, up to timeout ms).",
  inputSchema: TaskOutputInput,
  apiInputSchema: jsonSchemaOf(TaskOutputAdvertised),
  maxResultSizeChars: 30_000,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,

  async validateInput(input) {
    if (input.filter === undefined) return undefined;
    try {
      new RegExp(input.filter);
      return undefined;
    } catch (e) {
      return toolError("invalid_input", `Invalid filter regular expression: ${(e as Error).message}`);
    }
  },

  async call(input, ctx) {
    const id = (input.task_id ?? input.bash_id) as string;
    if (ctx.state.background.shells.has(id)) return shellOutput(id, input, ctx);
    const agent = ctx.state.background.agent(id);
    if (agent) return agentOutput(id, agent, input, ctx);
    return asBashOutput(input, ctx) ? unknownShell(ctx, id) : noTask(id);
  },
});

export const KillShellTool = defineTool<KillShellInput>({
  name: "KillShell",
  description:
    "Stops a running background task by its ID: a shell (and every process it started) or an agent started with Task run_in_background.",
  inputSchema: KillShellInput,
  apiInputSchema: jsonSchemaOf(KillShellAdvertised),
  maxResultSizeChars: 10_000,

  async call(input, ctx) {
    // TaskStop's callers get its JSON result, as Claude Code 2.1.328 records it, whatever id parameter
    // they passed; a direct call without the name goes by the parameter (task_id is TaskStop's).
    const asTaskStop = ctx.calledAs !== undefined ? ctx.calledAs === "TaskStop" : input.task_id !== undefined;
    const id = (input.task_id ?? input.shell_id) as string;
    const shell = ctx.state.background.shells.get(id);
    if (shell) {
      if (asTaskStop) {
        let status;
        try {
          status = await ctx.sandbox.readBackground(id);
        } catch (e) {
          if (!(e instanceof SandboxFsError)) throw e;
        }
        if (status && status.status !== "running")
          return toolError("not_found", `Task ${id} is not running (${status.status}).`);
      }
      try {
        await ctx.sandbox.killBackground(id);
      } catch (e) {
        if (!(e instanceof SandboxFsError)) throw e;
      }
      ctx.state.background.shells.delete(id);
      return {
        output: asTaskStop
          ? JSON.stringify({
              message: `Successfully stopped task: ${id} (${shell.command})`,
              task_id: id,
              task_type: "local_bash",
              command: shell.command,
            })
          : `Successfully killed shell: ${id} (${shell.command})`,
        title: `stopped ${id}`,
      };
    }
    const agent = ctx.state.background.agent(id);
    if (!agent) return asTaskStop ? noTask(id) : unknownShell(ctx, id);
    if (agent.status !== "running")
      return toolError("not_found", `Task ${id} is not running (${agent.status}).`);
    agent.stop();
    await agent.done;
    return {
      output: asTaskStop
        ? JSON.stringify({
            message: `Successfully stopped task: ${id} (${agent.description})`,
            task_id: id,
            task_type: "local_agent",
            description: agent.description,
          })
        : `Successfully stopped agent: ${id} (${agent.type}: ${agent.description})`,
      title: `stopped ${id}`,
    };
  },
});
