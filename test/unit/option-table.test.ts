// The option table (src/options/) is the one definition of every option: action.yml's inputs are what it
// generates, the CLI's flags and help are made from it, and the defaults each face applies are its defaults.
// Each check here also fails on a hand edit of the thing it compares (action.yml, the CLI's program).
import fs from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ACTION_FILE, renderInputs, updateActionYml } from "../../scripts/action-yml.js";
import {
  formattedSection as claudeArgsSection,
  MIGRATION_FILE,
  updateSection as updateClaudeArgsSection,
} from "../../scripts/claude-args-docs.js";
import { buildProgram } from "../../src/cli.js";
import { INPUT_FLAGS } from "../../src/action/cli-flags.js";
import { parseActionInputs } from "../../src/action/inputs.js";
import { attributeOf } from "../../src/options/commander.js";
import {
  actionSide,
  INPUT_DEFAULTS,
  INPUT_NAMES,
  longOf,
  OPTIONS,
  type OptionDef,
} from "../../src/options/table.js";
import { PermissionsBlockSchema } from "../../src/policy/schema.js";
import { RunConfig } from "../../src/runner/config.js";

const actionText = fs.readFileSync(ACTION_FILE, "utf8");
const entries = Object.entries(OPTIONS) as [string, OptionDef][];

/** What differs between a command's options and the table's CLI sides (empty when they agree). */
function cliProblems(command: Command, which: "run" | "policy"): string[] {
  const table = entries.filter(([, o]) => o.cli && (which === "run" || o.cli.policy));
  const problems: string[] = [];
  const hidden = new Set(
    table.flatMap(([, o]) =>
      (o.claudeCode ?? []).filter((f) => attributeOf(f) !== attributeOf(longOf(o.cli!))),
    ),
  );
  for (const option of command.options) {
    const entry = table.find(([, o]) => longOf(o.cli!) === option.long);
    if (option.hidden) {
      if (!hidden.has(option.long as `--${string}`))
        problems.push(`${option.long}: hidden, not a Claude Code flag of the table`);
    } else if (!entry) problems.push(`${option.flags}: not in the option table`);
    else if (entry[1].cli!.flags !== option.flags || entry[1].cli!.description !== option.description)
      problems.push(`${option.long}: differs from the table`);
  }
  for (const [name, o] of table)
    if (!command.options.some((option) => option.long === longOf(o.cli!)))
      problems.push(`${name}: not a flag`);
  return problems;
}

describe("action.yml's inputs", () => {
  it("are what the option table generates (run npm run action-docs)", () => {
    expect(updateActionYml(actionText)).toBe(actionText);
  });

  it("parse back to the table's descriptions and defaults, in its order", () => {
    const inputs = (parse(actionText) as { inputs: Record<string, { description: string; default: string }> })
      .inputs;
    expect(Object.keys(inputs)).toEqual(INPUT_NAMES);
    for (const name of INPUT_NAMES) {
      expect(inputs[name]?.description, name).toBe(actionSide(name).description);
      expect(String(inputs[name]?.default), name).toBe(INPUT_DEFAULTS[name]);
    }
    expect(renderInputs()).toContain("  claude_args:\n");
  });

  it("no longer match once edited by hand: a description, a default, an input added or removed", () => {
    const edits = [
      actionText.replace("Stop after this many model turns.", "Stop after N turns."),
      actionText.replace('default: "50"', 'default: "40"'),
      actionText.replace("\noutputs:", '  extra:\n    description: x\n    default: ""\n\noutputs:'),
      actionText.replace(/\n {2}max_turns:\n(?: {4}.*\n| {6}.*\n)+/, "\n"),
    ];
    for (const edited of edits) {
      expect(edited).not.toBe(actionText);
      expect(updateActionYml(edited)).not.toBe(edited);
      expect(updateActionYml(edited)).toBe(actionText);
    }
  });
});

describe("the CLI's flags", () => {
  const program = buildProgram();
  const run = program.commands.find((c) => c.name() === "run")!;
  const policy = program.commands.find((c) => c.name() === "policy")!;

  it("are the table's, with its help, for run and for policy check|test", () => {
    expect(cliProblems(run, "run")).toEqual([]);
    for (const command of policy.commands.filter((c) => c.name() === "check" || c.name() === "test"))
      expect(
        cliProblems(command, "policy").filter((p) => !p.startsWith("--replay")),
        command.name(),
      ).toEqual([]);
  });

  it("no longer match once one is added or changed by hand", () => {
    const edited = buildProgram().commands.find((c) => c.name() === "run")!;
    edited.option("--brand-new <x>", "a flag the table does not have");
    edited.options.find((o) => o.long === "--max-turns")!.description = "another text";
    expect(cliProblems(edited, "run")).toEqual([
      "--max-turns: differs from the table",
      "--brand-new <x>: not in the option table",
    ]);
  });

  it("each input's CLI counterpart is a flag run has, or a sentence", () => {
    const longs = run.options.map((o) => o.long);
    for (const [name, flags] of Object.entries(INPUT_FLAGS))
      if (Array.isArray(flags)) for (const flag of flags) expect(longs, `${name}: ${flag}`).toContain(flag);
      else expect(flags, name).toMatch(/\S/);
  });
});

describe("the settings keys the table names", () => {
  it("are keys of a settings file's permissions block that the policy reads", () => {
    const keys = entries.flatMap(([, o]) => (o.settings ? [o.settings] : []));
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const [block, name] = key.split(".");
      expect(block, key).toBe("permissions");
      expect(Object.keys(PermissionsBlockSchema.shape), key).toContain(name);
    }
  });
});

describe("the defaults", () => {
  it("agree between the faces: a CLI default is the input's, and RunConfig defaults to both", () => {
    for (const [name, o] of entries)
      if (o.cli?.default !== undefined && o.action) expect(o.cli.default, name).toBe(o.action.default);
    const config = RunConfig.parse({ workspace: ".", script: "x.json" });
    const action = parseActionInputs((name) => INPUT_DEFAULTS[name]);
    expect(config.maxTurns).toBe(action.max_turns);
    expect(config.timeoutMs).toBe(action.timeout_minutes * 60_000);
    expect(config.network).toBe(action.network);
    expect(config.task).toBe(action.task);
    expect(config.model).toBe(action.model);
    expect(config.workspace).toBe(path.resolve(action.workspace));
  });
});

describe("the migration guide's table of claude_args flags", () => {
  it("is generated from the table and up to date (run npm run action-docs)", async () => {
    const page = fs.readFileSync(MIGRATION_FILE, "utf8");
    expect(updateClaudeArgsSection(page, await claudeArgsSection())).toBe(page);
    const edited = page.replace("| `--max-turns`", "| `--max-turnz`");
    expect(edited).not.toBe(page);
    expect(updateClaudeArgsSection(edited, await claudeArgsSection())).toBe(page);
  });
});
