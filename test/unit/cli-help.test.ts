// The CLI keeps its word without an engine: `run --help` grouped by subject and inside 80 columns, no empty
// defaults, and Claude Code's spellings of the permission flags folded into agent-ci's.
import { describe, expect, it } from "vitest";
import type { Command } from "commander";
import { buildProgram, RUN_HELP_GROUPS } from "../../src/cli.js";

function command(name: string): Command {
  const found = buildProgram().commands.find((c) => c.name() === name);
  if (!found) throw new Error(`no ${name} command`);
  return found;
}

describe("agent-ci run --help", () => {
  it("groups every option under a subject, in 80 columns, with no empty default", () => {
    const run = command("run");
    run.configureOutput({ getOutHelpWidth: () => 80 });
    const help = run.helpInformation();
    for (const group of Object.keys(RUN_HELP_GROUPS)) expect(help).toContain(`\n${group}:\n`);
    expect(help).not.toContain("Other:");
    expect(help.split("\n").filter((line) => line.length > 80)).toEqual([]);
    expect(help).not.toContain("(default: [])");
    // Each option named in the groups exists: the table is not a list of wishes.
    const longs = run.options.map((o) => o.long);
    for (const names of Object.values(RUN_HELP_GROUPS))
      for (const name of names) expect(longs).toContain(name);
  });
});

describe("Claude Code's permission flags", () => {
  it("are folded into --mode, --allow and --deny", async () => {
    let seen: Record<string, unknown> | undefined;
    const program = buildProgram();
    const check = program.commands
      .find((c) => c.name() === "policy")!
      .commands.find((c) => c.name() === "check")!;
    check.action((_call: string, flags: Record<string, unknown>) => {
      seen = flags;
    });
    await program.parseAsync(
      [
        "policy",
        "check",
        "Read(a)",
        "--permission-mode",
        "plan",
        "--allowedTools",
        "Bash(npm test), Read",
        "--disallowedTools",
        "Bash(rm:*)",
        "--allow",
        "Grep",
      ],
      { from: "user" },
    );
    expect(seen).toMatchObject({
      mode: "plan",
      allow: ["Grep", "Bash(npm test)", "Read"],
      deny: ["Bash(rm:*)"],
    });
  });
});

describe("Claude Code's --append-system-prompt", () => {
  it("is --system-prompt-append, hidden from the help but named in its line", async () => {
    let seen: Record<string, unknown> | undefined;
    const program = buildProgram();
    const run = program.commands.find((c) => c.name() === "run")!;
    run.action((flags: Record<string, unknown>) => {
      seen = flags;
    });
    await program.parseAsync(["run", "--append-system-prompt", "Answer in French."], { from: "user" });
    expect(seen?.systemPromptAppend).toBe("Answer in French.");
    expect(seen?.appendSystemPrompt).toBeUndefined();
    run.configureOutput({ getOutHelpWidth: () => 80 });
    const help = run.helpInformation();
    expect(help).not.toContain("--append-system-prompt <text>");
    expect(help.replace(/\s+/g, " ")).toContain("Claude Code's --append-system-prompt works too");
  });
});
