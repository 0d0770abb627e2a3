// The recorded Claude Code cases the tests play, committed under test/fixtures/reference/ (its README says
// where they come from); a clone with nothing beside it has them.
import path from "node:path";

/** The folder of one recorded set, e.g. `referenceDir("claude-code-agent-tools")`. */
export function referenceDir(set: string): string {
  return path.resolve("test/fixtures/reference", set);
}
