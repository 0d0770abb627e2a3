// The run's tool set, built in one place: the static tools plus the tools bound to run services (Task and
// the background-task tools, made per run), then filtered by the permission mode.
import { ALL_TOOLS, FILE_WRITING_TOOLS } from "../tools/index.js";
import type { AnyTool } from "../tools/types.js";

/** Every tool the run knows (what a call may name), and those enabled in its mode. */
export function runToolSet(
  mode: string,
  bound: readonly AnyTool[] = [],
): { all: readonly AnyTool[]; enabled: readonly AnyTool[] } {
  const all = [...ALL_TOOLS, ...bound];
  const enabled = mode === "plan" ? all.filter((t) => !FILE_WRITING_TOOLS.has(t.name)) : all;
  return { all, enabled };
}
