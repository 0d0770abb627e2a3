// The recorded Claude Code cases the tests play, committed under test/fixtures/reference/ (its README says
// where they come from); a clone with nothing beside it has them.
import path from "node:path";
import { OUTPUTS_DIR, WORKSPACE_ROOT } from "../../src/sandbox/sandbox.js";

/** The folder of one recorded set, e.g. `referenceDir("claude-code-agent-tools")`. */
export function referenceDir(set: string): string {
  return path.resolve("test/fixtures/reference", set);
}

/**
 * A result's content as JSON, with agent-ci's paths written as the recording writes Claude Code's: a file
 * saved for the model (agent-ci's outputs folder in the sandbox for Claude Code's session tool-results
 * folder, the call's tool_use id `id` in its name for the recording's `$ID1`), and the workspace (`$WS`).
 */
export function asRecorded(content: unknown, id: string): string {
  return JSON.stringify(content)
    .split(`${OUTPUTS_DIR}/`)
    .join("$HOME/.claude/projects/$WS_SLUG/$SESSION/tool-results/")
    .split(`-${id}.`)
    .join("-$ID1.")
    .split(WORKSPACE_ROOT)
    .join("$WS");
}
