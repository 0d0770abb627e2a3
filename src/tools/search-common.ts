// What Grep and Glob share: the search root (a directory under /workspace, default the working
// directory), ripgrep's flags that keep VCS folders out, and turning a failed rg into a tool error.
import { relativeToRoot } from "../policy/rule-paths.js";
import { SandboxFsError } from "../sandbox/sandbox.js";
import { plainError, toolError } from "./define-tool.js";
import { outsideWorkspace, resolveInWorkspace } from "./paths.js";
import type { ExecResult } from "../sandbox/sandbox.js";
import type { ToolContext, ToolResult } from "./types.js";

export const VCS_EXCLUDES = [
  "--glob",
  "!.git",
  "--glob",
  "!.svn",
  "--glob",
  "!.hg",
  "--glob",
  "!.bzr",
  "--glob",
  "!.jj",
];
export const SEARCH_TIMEOUT_MS = 60_000;

export interface SearchRoot {
  /** Absolute container path that was searched. */
  root: string;
  /** How rg is given it, relative to the working directory so that rg prints paths the model can use. */
  arg: string;
  isFile: boolean;
}

export async function searchRoot(
  ctx: ToolContext,
  given: string | undefined,
): Promise<SearchRoot | ToolResult> {
  // The working directory is checked by the search's own request (`confineCwd`): no stat of it first.
  if (given === undefined) return { root: ctx.state.cwd, arg: "", isFile: false };
  // Searching is read-only: the saved full output of a cut result may be searched, as its notice says (T18).
  const gate = resolveInWorkspace(given ?? ctx.state.cwd, ctx.state.cwd, { allowOutputs: true });
  if (!gate.ok) return gate.error;
  try {
    const stat = await ctx.sandbox.stat(gate.path);
    if (!stat)
      return plainError(
        "not_found",
        `Path does not exist: ${given}. Note: your current working directory is ${ctx.state.cwd}.`,
      );
    // ripgrep reads a path it is given even when it is a FIFO, which blocks until the search times out (P14).
    if (stat.type === "other")
      return toolError(
        "invalid_input",
        `${given} is not a regular file or a directory (a FIFO, socket or device); only files and directories can be searched.`,
      );
    const arg = relativeToRoot(gate.path, ctx.state.cwd) ?? gate.path;
    return { root: gate.path, arg, isFile: stat.type === "file" };
  } catch (e) {
    if (e instanceof SandboxFsError && e.code === "EOUTSIDE") return outsideWorkspace(given ?? ctx.state.cwd);
    throw e;
  }
}

export function isSearchRoot(value: SearchRoot | ToolResult): value is SearchRoot {
  return "root" in value;
}

export function rgFailure(stderr: Buffer, timedOut: boolean): ToolResult {
  if (timedOut)
    return plainError(
      "timed_out",
      `The search timed out after ${SEARCH_TIMEOUT_MS / 1000}s. Narrow the path, glob or pattern.`,
    );
  const message = stderr.toString("utf8").trim().replace(/^rg: /gm, "");
  return toolError("invalid_input", `ripgrep failed: ${message || "unknown error"}`);
}

/**
 * Runs a search program in the working directory, which the same request checks is a directory inside the
 * workspace (a SandboxFsError with a message for the model otherwise).
 */
export function searchExec(ctx: ToolContext, argv: string[]): Promise<ExecResult> {
  return ctx.sandbox.exec({
    argv,
    cwd: ctx.state.cwd,
    confineCwd: true,
    timeoutMs: SEARCH_TIMEOUT_MS,
    signal: ctx.signal,
  });
}

/**
 * Runs rg to list files (its arguments must print NUL-separated paths) and returns them sorted by
 * modification time over the whole result. ripgrep's own --sort orders each directory's entries, not the
 * whole list, so the times come from find (fstatat): coreutils' stat asks statx with AT_NO_AUTOMOUNT, which
 * gVisor's runsc as Debian bookworm ships it refuses (EINVAL). find reads the names from rg's output itself
 * (`-files0-from`), so it takes none as an expression, and no xargs or second shell starts between them (a
 * process start is most of what a search of a small tree costs in the container). Arguments go as argv
 * ($@), never into the script text.
 */
export async function filesByMtime(
  ctx: ToolContext,
  rgArgs: string[],
  order: "oldest" | "newest",
): Promise<{ res: ExecResult; files: string[] }> {
  const script = 'rg "$@" | find -files0-from - -maxdepth 0 -printf "%T@\\t%p\\0"';
  const res = await searchExec(ctx, ["bash", "-o", "pipefail", "-c", script, "rg", ...rgArgs]);
  const entries = res.stdout
    .toString("utf8")
    .split("\0")
    .filter(Boolean)
    .map((record) => {
      const tab = record.indexOf("\t");
      return { mtime: Number(record.slice(0, tab)), file: record.slice(tab + 1).replace(/^\.\//, "") };
    });
  const sign = order === "oldest" ? 1 : -1;
  entries.sort((a, b) => sign * (a.mtime - b.mtime) || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { res, files: entries.map((e) => e.file) };
}
