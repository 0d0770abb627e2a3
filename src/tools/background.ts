// BashOutput and KillShell: the two halves of Bash's run_in_background.
import { z } from "zod";
import { SandboxFsError } from "../sandbox/sandbox.js";
import { trimTrailingNewlines } from "../text.js";
import { cleanOutput } from "./bash.js";
import { defineTool, toolError } from "./define-tool.js";
import type { ToolContext, ToolResult } from "./types.js";

export const BashOutputInput = z.strictObject({
  bash_id: z.string().describe("The ID of the background shell to read output from"),
  filter: z
    .string()
    .optional()
    .describe("Optional regular expression: only output lines matching it are shown"),
});
export type BashOutputInput = z.infer<typeof BashOutputInput>;

export const KillShellInput = z.strictObject({
  shell_id: z.string().describe("The ID of the background shell to kill"),
});
export type KillShellInput = z.infer<typeof KillShellInput>;

function unknownShell(ctx: ToolContext, id: string): ToolResult {
  const known = [...ctx.state.shells.keys()];
  return toolError(
    "not_found",
    `No background shell with ID ${id}.${known.length ? ` Known: ${known.join(", ")}.` : ""}`,
  );
}

export const BashOutputTool = defineTool<BashOutputInput>({
  name: "BashOutput",
  description:
    "Reads the output a background shell (Bash with run_in_background) printed since the last read, with its status and exit code.",
  inputSchema: BashOutputInput,
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
    if (!ctx.state.shells.has(input.bash_id)) return unknownShell(ctx, input.bash_id);
    let status;
    try {
      status = await ctx.sandbox.readBackground(input.bash_id);
    } catch (e) {
      if (e instanceof SandboxFsError)
        return toolError("not_found", `Background shell ${input.bash_id} is gone (${e.message}).`);
      throw e;
    }
    let text = trimTrailingNewlines(cleanOutput(status.output));
    if (input.filter) {
      const re = new RegExp(input.filter);
      text = text
        .split("\n")
        .filter((line) => re.test(line))
        .join("\n");
    }
    const parts = [`<status>${status.status}</status>`];
    if (status.exitCode !== null) parts.push(`<exit_code>${status.exitCode}</exit_code>`);
    parts.push(text ? `<output>\n${text}\n</output>` : "<output>(no new output)</output>");
    parts.push(`<timestamp>${new Date().toISOString()}</timestamp>`);
    return { output: parts.join("\n\n"), title: `${input.bash_id}: ${status.status}` };
  },
});

export const KillShellTool = defineTool<KillShellInput>({
  name: "KillShell",
  description: "Kills a running background shell (and every process it started) by its ID.",
  inputSchema: KillShellInput,
  maxResultSizeChars: 10_000,

  async call(input, ctx) {
    const shell = ctx.state.shells.get(input.shell_id);
    if (!shell) return unknownShell(ctx, input.shell_id);
    try {
      await ctx.sandbox.killBackground(input.shell_id);
    } catch (e) {
      if (!(e instanceof SandboxFsError)) throw e;
    }
    ctx.state.shells.delete(input.shell_id);
    return {
      output: `Successfully killed shell: ${input.shell_id} (${shell.command})`,
      title: `killed ${input.shell_id}`,
    };
  },
});
