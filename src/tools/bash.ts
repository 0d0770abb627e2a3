// Bash: a command in the sandbox. The working directory persists between calls (only inside
// /workspace); other shell state does not. stdin is /dev/null, the whole process group is killed on
// timeout and when the call ends, and run_in_background hands the command to TaskOutput/KillShell.
import { z } from "zod";
import { escapeControlCharacters, overwrittenByCarriageReturns } from "../text.js";
import { WORKSPACE_ROOT, type ExecResult } from "../sandbox/sandbox.js";
import { defineTool, plainError, toolError } from "./define-tool.js";
import { MAX_COMMAND_CHARS } from "../policy/bash-script.js";
import { isInside } from "../policy/rule-paths.js";
import type { ToolResult } from "./types.js";

export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
export const MAX_BASH_TIMEOUT_MS = 600_000;
export const MAX_BASH_OUTPUT_CHARS = 30_000;
/** Kept whole per stream in the sandbox's capture (head and tail beyond it); the model sees 30,000 chars. */
const CAPTURE_BYTES = 4 * 1024 * 1024;

export const BashInput = z.strictObject({
  command: z.string().min(1).max(MAX_COMMAND_CHARS).describe("The command to execute"),
  timeout: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_BASH_TIMEOUT_MS)
    .optional()
    .describe(
      `Optional timeout in milliseconds (max ${MAX_BASH_TIMEOUT_MS}; default ${DEFAULT_BASH_TIMEOUT_MS})`,
    ),
  description: z
    .string()
    .optional()
    .describe("A clear, concise description of what this command does in 5-10 words"),
  run_in_background: z
    .boolean()
    .optional()
    .describe("Run the command in the background; read its output later with TaskOutput"),
});
export type BashInput = z.infer<typeof BashInput>;

const DESCRIPTION = `Executes a bash command in the sandbox (a Linux container with the repository at /workspace).

- The working directory persists between calls (it cannot leave /workspace); environment variables and other shell state do not
- No network unless the run granted it; no interactive input (stdin is empty): pass flags such as -y, --no-edit
- stdout and stderr come back as one text, in the order they were written
- Output over ${MAX_BASH_OUTPUT_CHARS} characters is cut, and the whole output saved to a file you can Read
- Colour and other terminal escape codes are removed from the output, and a line redrawn with carriage returns (a progress bar) shows only its last state
- Default timeout ${DEFAULT_BASH_TIMEOUT_MS / 1000}s, at most ${MAX_BASH_TIMEOUT_MS / 1000}s; on timeout the whole process tree is killed
- Processes a command leaves running are stopped when it returns: start servers and watchers with run_in_background, then read them with TaskOutput and stop them with KillShell
- Prefer Read, Grep, Glob and Edit over cat, grep, find and sed`;

export function signalNumber(signal: string | null): number {
  const numbers: Record<string, number> = {
    SIGHUP: 1,
    SIGINT: 2,
    SIGQUIT: 3,
    SIGABRT: 6,
    SIGKILL: 9,
    SIGSEGV: 11,
    SIGPIPE: 13,
    SIGALRM: 14,
    SIGTERM: 15,
  };
  return signal ? (numbers[signal] ?? 0) : 0;
}

/** Terminal escape sequences: CSI (colours, cursor moves), OSC (titles, links) and two-byte escapes. */
const ANSI_ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/**
 * Decodes output as text the API accepts (C6): invalid UTF-8 replaced, terminal escapes stripped, what a
 * carriage return overwrote dropped, NULs and other control characters escaped.
 */
export function cleanOutput(data: Buffer): string {
  return escapeControlCharacters(
    overwrittenByCarriageReturns(data.toString("utf8").replace(ANSI_ESCAPES, "")),
  );
}

function withOmission(data: Buffer, head: number, omitted: number): string {
  if (!omitted) return cleanOutput(data);
  return `${cleanOutput(data.subarray(0, head))}\n... [${omitted} bytes omitted] ...\n${cleanOutput(data.subarray(head))}`;
}

/**
 * Claude Code's shape of command output: blank lines before the first line of text and whitespace after
 * the last are dropped (`"\n\n  hello  "` → `"  hello"`). Linear: each leading line is looked at once.
 */
export function trimOutputEdges(text: string): string {
  const end = text.trimEnd();
  let start = 0;
  for (let nl = end.indexOf("\n"); nl !== -1; nl = end.indexOf("\n", start)) {
    if (end.slice(start, nl).trim() !== "") break;
    start = nl + 1;
  }
  return end.slice(start);
}

export function renderExec(
  res: ExecResult,
  timeoutMs: number,
): { text: string; exitCode: number; failed: boolean } {
  const exitCode = res.exitCode ?? 128 + signalNumber(res.signal);
  const parts = [
    trimOutputEdges(withOmission(res.stdout, res.stdoutHead, res.stdoutOmitted)),
    trimOutputEdges(withOmission(res.stderr, res.stderrHead, res.stderrOmitted)),
  ].filter((p) => p !== "");
  if (res.timedOut) {
    parts.push(`Command timed out after ${timeoutMs % 1000 ? `${timeoutMs}ms` : `${timeoutMs / 1000}s`}`);
    if (res.pipesHeld) parts.push("(a process it started was still holding the output pipe)");
  }
  if (res.outputKilled) parts.push("Command killed: it printed far more output than can be kept");
  if (res.oomKilled) {
    const mib = Math.round(res.oomKilled.memoryLimitBytes / 1024 ** 2);
    parts.push(
      `(killed: out of memory (limit ${mib} MiB): the sandbox's memory limit was reached; use less memory, or raise the limit with --memory)`,
    );
  } else if (exitCode === 137 && !res.timedOut && !res.outputKilled)
    parts.push("(killed: SIGKILL, possibly out of memory or the process limit)");
  const failed = exitCode !== 0 || res.timedOut;
  const body = parts.join("\n");
  if (failed) return { text: `Exit code ${exitCode}${body ? `\n${body}` : ""}`, exitCode, failed };
  return { text: body || "(Bash completed with no output)", exitCode, failed };
}

export const BashTool = defineTool<BashInput>({
  name: "Bash",
  description: DESCRIPTION,
  inputSchema: BashInput,
  maxResultSizeChars: MAX_BASH_OUTPUT_CHARS,

  async validateInput(input) {
    if (/[\u200B-\u200F\u202A-\u202E\u2060-\u2064\uFEFF]/.test(input.command)) {
      return toolError(
        "invalid_input",
        "The command contains invisible Unicode characters (zero-width or bidirectional controls); rewrite it without them.",
      );
    }
    return undefined;
  },

  async call(input, ctx): Promise<ToolResult> {
    const cwd = ctx.state.cwd;
    if (input.run_in_background) {
      const id = ctx.state.background.nextShellId();
      await ctx.sandbox.startBackground(id, {
        script: input.command,
        cwd,
        maxOutputBytes: CAPTURE_BYTES,
        caller: ctx.toolUseId,
      });
      ctx.state.background.shells.set(id, { id, command: input.command, startedAt: Date.now() });
      return {
        output: `Command running in background with ID: ${id}. Read its output with TaskOutput and stop it with KillShell.`,
        title: `background ${id}: ${input.command.slice(0, 200)}`,
        metadata: { shellId: id },
      };
    }
    const timeoutMs = input.timeout ?? DEFAULT_BASH_TIMEOUT_MS;
    const res = await ctx.sandbox.exec({
      script: input.command,
      mergeStderr: true,
      cwd,
      timeoutMs,
      maxOutputBytes: CAPTURE_BYTES,
      signal: ctx.signal,
      caller: ctx.toolUseId,
    });
    const rendered = renderExec(res, timeoutMs);
    let text = rendered.text;
    if (res.cwd && res.cwd !== cwd) {
      if (isInside(res.cwd, WORKSPACE_ROOT)) ctx.state.cwd = res.cwd;
      else {
        ctx.state.cwd = WORKSPACE_ROOT;
        text += `\nShell cwd was reset to ${WORKSPACE_ROOT}`;
      }
    }
    // Tools print a proxy's refusal as a bare status ("CONNECT tunnel failed, response 403"): say what and why.
    for (const refusal of res.egressRefused ?? []) text += `\n${refusal}`;
    const title = `$ ${input.command.slice(0, 200)} → exit ${rendered.exitCode}${res.timedOut ? " (timed out)" : ""}`;
    const metadata = { exitCode: rendered.exitCode, timedOut: res.timedOut, durationMs: res.durationMs };
    if (rendered.failed)
      return { ...plainError(res.timedOut ? "timed_out" : "command_failed", text), title, metadata };
    return { output: text, title, metadata };
  },
});
