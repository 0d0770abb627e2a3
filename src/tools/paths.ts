// The one workspace gate: paths the model gives are container paths, resolved
// against the shell's working directory, normalised, and refused when they leave /workspace. Symlinks
// are resolved again inside the container (the sandbox's `confine`), on every call.
import path from "node:path";
import { isInside, relativeToRoot } from "../policy/rule-paths.js";
import { OUTPUTS_DIR, WORKSPACE_ROOT } from "../sandbox/sandbox.js";
import { toolError } from "./define-tool.js";
import type { ToolResult } from "./types.js";

export const MAX_PATH_CHARS = 4096;

export type PathCheck = { ok: true; path: string } | { ok: false; error: ToolResult };

/**
 * The one refusal of a path outside the workspace, for every tool and the pipeline: the path itself leads
 * there (`resolved`), or a symlink inside the container does (checked there on every operation).
 */
export function outsideWorkspace(given: string, resolved?: string): ToolResult {
  const how =
    resolved === undefined
      ? `outside ${WORKSPACE_ROOT} through a symlink`
      : `to ${resolved}, outside ${WORKSPACE_ROOT}`;
  return toolError(
    "outside_workspace",
    `Path ${given} resolves ${how}. Only files under ${WORKSPACE_ROOT} can be accessed.`,
  );
}

const invalidPath = (why: string): PathCheck => ({ ok: false, error: toolError("invalid_input", why) });

/** Resolves `given` against `cwd` and confines it to the workspace (and, for reads, the saved outputs). */
export function resolveInWorkspace(
  given: string,
  cwd: string = WORKSPACE_ROOT,
  options: { allowOutputs?: boolean } = {},
): PathCheck {
  if (given.includes("\0")) return invalidPath("The path contains a NUL byte.");
  if (given.length > MAX_PATH_CHARS)
    return invalidPath(`The path is longer than ${MAX_PATH_CHARS} characters.`);
  if (given.trim() === "") return invalidPath("The path is empty.");
  const resolved = path.posix.resolve(cwd, given);
  if (isInside(resolved, WORKSPACE_ROOT)) return { ok: true, path: resolved };
  if (options.allowOutputs && isInside(resolved, OUTPUTS_DIR)) return { ok: true, path: resolved };
  return { ok: false, error: outsideWorkspace(given, resolved) };
}

/** How a path is shown to the model: relative to the working directory when it is under it. */
export function displayPath(absolute: string, cwd: string): string {
  const relative = relativeToRoot(absolute, cwd);
  return relative === undefined ? absolute : relative || ".";
}
