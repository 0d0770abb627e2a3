// TaskOutput and TaskStop: the seeds' v2.1 tools for background work, shells (Bash run_in_background) and
// subagents (Task run_in_background) alike. TaskStop is Claude Code 2.1.328's name and result shape; the
// seeds' KillShell and BashOutput stay for shells. Made per run: they need the run's background subagents.
import { z } from "zod";
import { SandboxFsError } from "../sandbox/sandbox.js";
import { trimTrailingNewlines } from "../text.js";
import { cleanOutput } from "./bash.js";
import { defineTool, toolError } from "./define-tool.js";
import { handBack, type SubagentOutcome } from "./task.js";
import type { ToolContext, ToolResult } from "./types.js";

/** A background subagent, as these tools see it. */
export interface BackgroundAgent {
  type: string;
  description: string;
  status: string;
  done: Promise<void>;
  stop(): void;
  outcome(): SubagentOutcome;
}

export interface BackgroundAgents {
  backgroundAgent(id: string): BackgroundAgent | undefined;
}

const MAX_WAIT_MS = 600_000;
const DEFAULT_WAIT_MS = 30_000;
/** How often a blocking read looks at a background shell again. */
const SHELL_POLL_MS = 250;

export const TaskOutputInput = z.strictObject({
  task_id: z.string().describe("The ID of the background task (a shell or an agent)"),
  block: z.boolean().default(true).describe("Wait for the task to finish (default true)"),
  timeout: z
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_MS)
    .default(DEFAULT_WAIT_MS)
    .describe("How long to wait in ms when blocking (max 600000)"),
});
export type TaskOutputInput = z.infer<typeof TaskOutputInput>;

export const TaskStopInput = z.strictObject({
  task_id: z.string().describe("The ID of the background task to stop"),
});
export type TaskStopInput = z.infer<typeof TaskStopInput>;

const noTask = (id: string) => toolError("not_found", `No task found with ID: ${id}`);

/** Resolves after `ms`, or at once when the call is cancelled. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

async function shellOutput(id: string, input: TaskOutputInput, ctx: ToolContext): Promise<ToolResult> {
  const until = Date.now() + (input.block ? input.timeout : 0);
  let text = "";
  for (;;) {
    let status;
    try {
      status = await ctx.sandbox.readBackground(id);
    } catch (e) {
      if (e instanceof SandboxFsError) return toolError("not_found", `Task ${id} is gone (${e.message}).`);
      throw e;
    }
    text += cleanOutput(status.output);
    if (status.status !== "running" || Date.now() >= until || ctx.signal.aborted) {
      const retrieval = status.status === "running" ? (input.block ? "timeout" : "not_ready") : "success";
      const parts = [
        `<retrieval_status>${retrieval}</retrieval_status>`,
        `<task_id>${id}</task_id>`,
        "<task_type>local_bash</task_type>",
        `<status>${status.status}</status>`,
      ];
      if (status.exitCode !== null) parts.push(`<exit_code>${status.exitCode}</exit_code>`);
      const out = trimTrailingNewlines(text);
      parts.push(out ? `<output>\n${out}\n</output>` : "<output>(no new output)</output>");
      return { output: parts.join("\n\n"), title: `${id}: ${status.status}` };
    }
    await pause(SHELL_POLL_MS, ctx.signal);
  }
}

async function agentOutput(
  id: string,
  agent: BackgroundAgent,
  input: TaskOutputInput,
  signal: AbortSignal,
): Promise<ToolResult> {
  if (input.block && agent.status === "running") {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      agent.done,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, input.timeout);
        signal.addEventListener("abort", () => resolve(), { once: true });
      }),
    ]);
    clearTimeout(timer);
  }
  const running = agent.status === "running";
  const parts = [
    `<retrieval_status>${running ? (input.block ? "timeout" : "not_ready") : "success"}</retrieval_status>`,
    `<task_id>${id}</task_id>`,
    "<task_type>local_agent</task_type>",
    `<status>${agent.status}</status>`,
  ];
  if (!running) parts.push(`<output>\n${handBack(agent.outcome())}\n</output>`);
  return { output: parts.join("\n\n"), title: `${id}: ${agent.status}` };
}

export function createBackgroundTaskTools(agents: BackgroundAgents) {
  const TaskOutputTool = defineTool<TaskOutputInput>({
    name: "TaskOutput",
    description:
      "Reads the output of a background task: a shell started with Bash run_in_background, or an agent started with Task run_in_background. By default waits for it to finish (block, up to timeout ms).",
    inputSchema: TaskOutputInput,
    maxResultSizeChars: 30_000,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    async call(input, ctx) {
      if (ctx.state.shells.has(input.task_id)) return shellOutput(input.task_id, input, ctx);
      const agent = agents.backgroundAgent(input.task_id);
      if (agent) return agentOutput(input.task_id, agent, input, ctx.signal);
      return noTask(input.task_id);
    },
  });

  const TaskStopTool = defineTool<TaskStopInput>({
    name: "TaskStop",
    description: "Stops a running background task (a shell or an agent) by its ID.",
    inputSchema: TaskStopInput,
    maxResultSizeChars: 10_000,
    async call(input, ctx) {
      const id = input.task_id;
      const shell = ctx.state.shells.get(id);
      if (shell) {
        let status;
        try {
          status = await ctx.sandbox.readBackground(id);
        } catch (e) {
          if (!(e instanceof SandboxFsError)) throw e;
        }
        if (status && status.status !== "running")
          return toolError("not_found", `Task ${id} is not running (${status.status}).`);
        try {
          await ctx.sandbox.killBackground(id);
        } catch (e) {
          if (!(e instanceof SandboxFsError)) throw e;
        }
        ctx.state.shells.delete(id);
        return {
          output: JSON.stringify({
            message: `Successfully stopped task: ${id} (${shell.command})`,
            task_id: id,
            task_type: "local_bash",
            command: shell.command,
          }),
          title: `stopped ${id}`,
        };
      }
      const agent = agents.backgroundAgent(id);
      if (!agent) return noTask(id);
      if (agent.status !== "running")
        return toolError("not_found", `Task ${id} is not running (${agent.status}).`);
      agent.stop();
      await agent.done;
      return {
        output: JSON.stringify({
          message: `Successfully stopped task: ${id} (${agent.description})`,
          task_id: id,
          task_type: "local_agent",
          description: agent.description,
        }),
        title: `stopped ${id}`,
      };
    },
  });
  return [TaskOutputTool, TaskStopTool];
}
