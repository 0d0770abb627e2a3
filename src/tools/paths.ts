// The one workspace gate (STYLE.md habit 12): paths the model gives are container paths, resolved
// against the shell's working directory, normalised, and refused when they leave /workspace. Symlinks
// are resolved again inside the container (the sandbox's `confine`), on every call.
import path from "node:path";
import { OUTPUTS_DIR, WORKSPACE_ROOT } from "../sandbox/sandbox.js";

export const MAX_PATH_CHARS = 4096;

export type PathCheck = { ok: true; path: string } | { ok: false; message: string };

export function isWithin(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root + "/");
}

/** Resolves `given` against `cwd` and confines it to the workspace (and, for reads, the saved outputs). */
export function resolveInWorkspace(given: string, cwd: string = WORKSPACE_ROOT, options: { allowOutputs?: boolean } = {}): PathCheck {
  if (given.includes("\0")) return { ok: false, message: "The path contains a NUL byte." };
  if (given.length > MAX_PATH_CHARS) return { ok: false, message: `The path is longer than ${MAX_PATH_CHARS} characters.` };
  if (given.trim() === "") return { ok: false, message: "The path is empty." };
  const resolved = path.posix.resolve(cwd, given);
  if (isWithin(WORKSPACE_ROOT, resolved)) return { ok: true, path: resolved };
  if (options.allowOutputs && isWithin(OUTPUTS_DIR, resolved)) return { ok: true, path: resolved };
  return {
    ok: false,
    message: `Path ${given} resolves to ${resolved}, outside ${WORKSPACE_ROOT}. Only files under ${WORKSPACE_ROOT} can be accessed.`,
  };
}

/** How a path is shown to the model: relative to the working directory when it is under it. */
export function displayPath(absolute: string, cwd: string): string {
  if (absolute === cwd) return ".";
  return isWithin(cwd, absolute) ? absolute.slice(cwd.length + 1) : absolute;
}
