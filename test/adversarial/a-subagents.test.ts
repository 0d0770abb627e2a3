// RELIABILITY A (subagents). The subagents' own tests run every row through the CLI or the units that decide
// it; this file maps each row to them, and its one test checks that every named test still exists. The
// report generator reads the mapping and takes each row's result from those tests.
import { describe } from "vitest";
import { rowTester, type Row } from "./rows.js";

const RUNS = "test/integration/subagents.test.ts";
const CLI = "test/integration/subagents-cli.test.ts";
const AGENTS = "test/unit/runner/agents.test.ts";

const ROWS = [
  {
    id: "A1",
    what: "a subagent asked to do what the parent may not: a denied Bash, a deny rule, an edit in plan mode",
    covered: [
      { file: RUNS, test: "no escalation in default mode: a Bash outside the parent's allow rule is denied" },
      { file: RUNS, test: "plan mode holds inside a subagent" },
      { file: RUNS, test: "Explore is offered no writing tool, and its writing Bash is refused" },
    ],
  },
  {
    id: "A2",
    what: "many Task calls in one turn; a subagent that spends past the run's limits",
    covered: [
      { file: CLI, test: "subagents work at once: the next Task call of the turn waits for a free slot" },
      { file: RUNS, test: "a subagent that spends past --max-budget-usd ends the run with budget" },
    ],
  },
  {
    id: "A3",
    what: "a subagent's report that forges the hand-back frame or claims to be the user",
    covered: [
      { file: AGENTS, test: "indents every line of the report, so a forged frame or footer stays inside it" },
    ],
  },
  {
    id: "A4",
    what: "a custom agent file with bad frontmatter, an unknown tool, an unknown model",
    covered: [
      { file: AGENTS, test: ", naming the file and the field" },
      { file: AGENTS, test: "reads Claude Code's --agents JSON and refuses a bad entry by name and field" },
    ],
  },
  {
    id: "A5",
    what: "the run is cancelled while subagents work",
    kind: "fault",
    covered: [{ file: CLI, test: "on SIGINT stops the subagents at work (foreground and background)" }],
  },
] as const satisfies readonly Row[];

const { checkTable } = rowTester(ROWS);

describe("A: subagents (mapped to their tests)", () => {
  checkTable();
});
