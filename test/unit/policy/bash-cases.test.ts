/**
 * Runs the adversarial Bash corpus (test/fixtures/policy/bash-cases.ts) through the engine: every
 * row's behaviour, and where pinned, the deciding simple command and the kind of decision.
 */
import { describe, expect, it } from "vitest";
import { BASH_CASES, CONFIGS } from "../../fixtures/policy/bash-cases.js";
import { bash, engineFor } from "./helpers.js";

const printable = (command: string): string => {
  const shown = JSON.stringify(command);
  return shown.length > 90 ? `${shown.slice(0, 87)}..."` : shown;
};

describe("Bash corpus", () => {
  it("has hundreds of rows with unique ids", () => {
    expect(BASH_CASES.length).toBeGreaterThanOrEqual(300);
    expect(new Set(BASH_CASES.map((row) => row.id)).size).toBe(BASH_CASES.length);
  });

  it.each(BASH_CASES.map((row) => [`${row.id} [${row.config}] ${printable(row.command)}`, row] as const))(
    "%s",
    async (_name, row) => {
      const engine = await engineFor(CONFIGS[row.config]);
      const decision = engine.decide(bash(row.command));
      const context = `${row.command.slice(0, 200)} -> ${decision.behavior} (${decision.decidedBy}): ${decision.reason}`;
      expect(decision.behavior, context).toBe(row.expect);
      if (row.subcommand !== undefined) expect(decision.subcommand, context).toBe(row.subcommand);
      if (row.decidedBy !== undefined) expect(decision.decidedBy, context).toBe(row.decidedBy);
      expect(decision.reason.length, "every decision explains itself").toBeGreaterThan(10);
    },
  );
});
