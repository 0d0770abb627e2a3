// Skills and slash commands from trusted folders: frontmatter, names, trust of the workspace's own, argument
// substitution, and the expansion of a prompt's leading `/name args`.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseRule } from "../../../src/policy/rules.js";
import {
  loadCatalogue,
  MAX_INSTRUCTION_BYTES,
  substituteArguments,
} from "../../../src/runner/instructions/instructions.js";
import { parseFrontmatter } from "../../../src/runner/instructions/frontmatter.js";
import { expandSlashCommand } from "../../../src/runner/instructions/slash-command.js";
import { createSkillTool, skillToolDescription } from "../../../src/tools/skill.js";
import { FakeSandbox } from "../../support/fake-sandbox.js";
import { writeFiles } from "../../support/workspace.js";

function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-skills-"));
  writeFiles(dir, files);
  return dir;
}

const GREET =
  "---\nname: greet\ndescription: Greets someone by name.\nallowed-tools: Bash, Read\n---\nGreet $ARGUMENTS.\n";

describe("parseFrontmatter", () => {
  it("splits the YAML mapping off the body, and leaves a file without one whole", () => {
    expect(parseFrontmatter(GREET)).toEqual({
      found: true,
      frontmatter: { name: "greet", description: "Greets someone by name.", "allowed-tools": "Bash, Read" },
      body: "Greet $ARGUMENTS.\n",
    });
    expect(parseFrontmatter("# Title\nbody\n")).toEqual({
      found: false,
      frontmatter: {},
      body: "# Title\nbody\n",
    });
    expect(parseFrontmatter("---\nno end\n")).toEqual({
      found: false,
      frontmatter: {},
      body: "---\nno end\n",
    });
    expect(() => parseFrontmatter("---\n- a list\n---\nx")).toThrow(/not a YAML mapping/);
  });

  it("is linear on a long frontmatter of one line", () => {
    const long = `---\nk: ${"x".repeat(2_000_000)}\n---\nbody`;
    expect(parseFrontmatter(long).body).toBe("body");
  });
});

describe("substituteArguments", () => {
  it("fills $ARGUMENTS and $1…, and appends arguments a body does not ask for", () => {
    expect(substituteArguments("Fix $1 in $2 ($ARGUMENTS)", "auth login")).toBe(
      "Fix auth in login (auth login)",
    );
    expect(substituteArguments("Do it.\n", "now")).toBe("Do it.\n\nARGUMENTS: now\n");
    expect(substituteArguments("Do it.\n", "")).toBe("Do it.\n");
    expect(substituteArguments("$ARGUMENTS", "$1 $& $$")).toBe("$1 $& $$");
  });
});

describe("loadCatalogue", () => {
  it("reads trusted folders, and the workspace's only when trusted", () => {
    const skills = tree({ "greet/SKILL.md": GREET, "bad/SKILL.md": "---\nname: bad\n---\nno description\n" });
    const commands = tree({
      "fix.md": "---\ndescription: Fix a test\nmodel: claude-haiku-5-5\n---\nFix $1\n",
      "ns/sub.md": "Sub command\n",
    });
    const workspace = tree({
      ".claude/skills/local/SKILL.md": "---\ndescription: Local skill\n---\nLocal\n",
      ".claude/commands/pr.md": "From the pull request\n",
    });
    const base = {
      skillsDirs: [{ dir: skills, origin: "flag" as const }],
      commandsDirs: [{ dir: commands, origin: "flag" as const }],
      workspace,
      containerRoot: "/workspace",
    };
    const untrusted = loadCatalogue({ ...base, trustWorkspace: false });
    expect(untrusted.skills.map((s) => s.name)).toEqual(["greet"]);
    expect(untrusted.skills[0]).toMatchObject({
      allowedTools: ["Bash", "Read"],
      origin: "flag",
      body: "Greet $ARGUMENTS.\n",
    });
    expect(untrusted.commands.map((c) => c.name)).toEqual(["fix", "ns:sub"]);
    expect(untrusted.commands[0]).toMatchObject({ description: "Fix a test", model: "claude-haiku-5-5" });
    expect(untrusted.commands[1]?.description).toBe("Sub command");
    expect(untrusted.ignored.map((i) => i.source)).toEqual([
      "workspace:.claude/skills",
      "workspace:.claude/commands",
    ]);
    expect(untrusted.problems).toEqual([
      expect.stringMatching(/bad\/SKILL.md: the frontmatter has no description/),
    ]);

    const trusted = loadCatalogue({ ...base, trustWorkspace: true });
    expect(trusted.skills.map((s) => [s.name, s.origin, s.containerDir])).toEqual([
      ["greet", "flag", undefined],
      ["local", "workspace", "/workspace/.claude/skills/local"],
    ]);
    expect(trusted.commands.map((c) => c.name)).toEqual(["fix", "ns:sub", "pr"]);
    expect(trusted.ignored).toEqual([]);
  });

  it("refuses an oversized file and a folder that is not there, without throwing", () => {
    const skills = tree({
      "big/SKILL.md": `---\ndescription: big\n---\n${"x".repeat(MAX_INSTRUCTION_BYTES)}`,
    });
    const catalogue = loadCatalogue({
      skillsDirs: [{ dir: skills, origin: "flag" }],
      commandsDirs: [{ dir: path.join(skills, "missing"), origin: "flag" }],
      workspace: skills,
      containerRoot: "/workspace",
      trustWorkspace: false,
    });
    expect(catalogue.skills).toEqual([]);
    expect(catalogue.problems).toEqual([
      expect.stringMatching(/over the \d+-byte limit/),
      expect.stringMatching(/missing: not a folder/),
    ]);
  });
});

describe("expandSlashCommand", () => {
  const catalogue = loadCatalogue({
    skillsDirs: [],
    commandsDirs: [
      {
        dir: tree({
          "fix-flaky-test.md": "---\ndescription: d\n---\nFix the flaky test in $1 ($ARGUMENTS).\n",
        }),
        origin: "flag",
      },
    ],
    workspace: os.tmpdir(),
    containerRoot: "/workspace",
    trustWorkspace: false,
  });

  it("expands the first line's command and keeps the lines after it", () => {
    const one = expandSlashCommand("/fix-flaky-test auth", catalogue);
    expect(one.kind === "expanded" && one.expanded.prompt).toBe("Fix the flaky test in auth (auth).");
    const more = expandSlashCommand("/fix-flaky-test auth login\n\n<issue>context</issue>", catalogue);
    expect(more.kind === "expanded" && more.expanded.prompt).toBe(
      "Fix the flaky test in auth (auth login).\n\n<issue>context</issue>",
    );
  });

  it("leaves ordinary prompts and paths alone, and names the known commands for an unknown one", () => {
    expect(expandSlashCommand("Fix the build", catalogue).kind).toBe("none");
    expect(expandSlashCommand("/usr/bin/env is missing", catalogue).kind).toBe("none");
    const unknown = expandSlashCommand("/deploy prod", catalogue);
    expect(unknown).toMatchObject({ kind: "unknown", name: "deploy" });
    expect(unknown.kind === "unknown" && unknown.message).toMatch(/known: \/fix-flaky-test/);
  });
});

describe("the Skill tool", () => {
  it("lists each skill's name and description, and answers as Claude Code does", async () => {
    const workspace = tree({ ".claude/skills/greet/SKILL.md": GREET });
    const { skills } = loadCatalogue({
      skillsDirs: [],
      commandsDirs: [],
      workspace,
      containerRoot: "/workspace",
      trustWorkspace: true,
    });
    expect(skillToolDescription(skills)).toContain(
      "<name>\ngreet\n</name>\n<description>\nGreets someone by name.\n</description>",
    );
    const tool = createSkillTool(skills);
    const ctx = {
      sandbox: new FakeSandbox(),
      state: {} as never,
      toolUseId: "t",
      signal: new AbortController().signal,
    };
    expect(await tool.call({ skill: "greet", args: "Ada" }, ctx)).toMatchObject({
      output: "Launching skill: greet",
      followUp: [
        {
          type: "text",
          text: "Base directory for this skill: /workspace/.claude/skills/greet\n\nGreet Ada.\n",
        },
      ],
    });
    expect(await tool.call({ skill: "nope" }, ctx)).toMatchObject({
      isError: true,
      output: "<tool_use_error>Unknown skill: nope</tool_use_error>",
    });
  });

  it("copies a skill from outside the workspace into the sandbox and names that folder", async () => {
    const dir = tree({ "greet/SKILL.md": GREET, "greet/scripts/run.sh": "echo hi\n" });
    const { skills } = loadCatalogue({
      skillsDirs: [{ dir, origin: "flag" }],
      commandsDirs: [],
      workspace: os.tmpdir(),
      containerRoot: "/workspace",
      trustWorkspace: false,
    });
    const sandbox = new FakeSandbox();
    const result = await createSkillTool(skills).call(
      { skill: "greet" },
      { sandbox, state: {} as never, toolUseId: "t", signal: new AbortController().signal },
    );
    expect(result.followUp?.[0]?.text).toMatch(
      /^Base directory for this skill: \/tmp\/agent-ci-skills\/greet\n/,
    );
    expect(
      (
        await sandbox.readFile("/tmp/agent-ci-skills/greet/scripts/run.sh", { confine: false })
      )?.data.toString(),
    ).toBe("echo hi\n");
  });
});

describe("Skill rules", () => {
  it("parses Skill and Skill(name)", () => {
    expect(parseRule("Skill", "allow", { kind: "cli", label: "cli", trusted: true })).toMatchObject({
      tool: "Skill",
    });
    expect(parseRule("Skill(greet)", "deny", { kind: "cli", label: "cli", trusted: true })).toMatchObject({
      tool: "Skill",
      specifier: "greet",
    });
  });
});
