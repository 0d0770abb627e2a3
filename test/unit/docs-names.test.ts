// The documentation names only flags and Action inputs that exist. In README.md and docs/*.md:
// - a `--flag` written on its own in code (`--network none`), or in an `agent-ci …` command (in code or in
//   a fenced block) is a flag of one of agent-ci's commands (src/cli.ts), or a Claude Code flag that
//   claude_args honours or refuses by name (src/options/), or one of the other programs' flags listed below;
// - an input written as the Action's (`Action's \`x\``, `Action: \`x\``, `\`x\` (Action)`) is in action.yml,
//   one written as the publish action's in publish/action.yml;
// - a YAML block's `uses: OWNER/agent-ci…@v1` step passes only inputs its action.yml declares.
// docs/configuration.md's generated tables are held to src/cli.ts by cli-reference.test.ts; they pass here too.
import fs from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { CLAUDE_ARGS_FLAGS, CLAUDE_ARGS_REFUSED } from "../../src/options/table.js";
import { buildProgram } from "../../src/cli.js";

const root = path.resolve(import.meta.dirname, "../..");
const pages = [
  "README.md",
  ...fs
    .readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** Other programs' flags the documentation names, each with its program: never agent-ci's. */
const OTHER_PROGRAMS: Record<string, string> = {
  "--platform": "docker import, and runsc's --platform=kvm",
  "--tlsverify": "dockerd",
  "--privileged": "docker run",
  "--host-uds": "runsc",
  "--directory": "git apply",
  "--force-with-lease": "git push",
  "--liftoff-only": "V8",
  "--wasm-tiering-budget": "V8",
  "--json-schema": "Claude Code, in claude-code-action's claude_args (agent-ci's is output_schema)",
};

function allFlags(command: Command, into = new Set<string>()): Set<string> {
  for (const option of command.options) {
    if (option.long) into.add(option.long);
    // commander's --no-x also documents --x, and the reverse.
    if (option.long?.startsWith("--no-")) into.add(`--${option.long.slice(5)}`);
    else if (option.long) into.add(`--no-${option.long.slice(2)}`);
  }
  for (const sub of command.commands) allFlags(sub, into);
  return into;
}
const cliFlags = allFlags(buildProgram());
for (const builtIn of ["--help", "--version"]) cliFlags.add(builtIn);

interface ActionYml {
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
}
function namesOf(file: string): { inputs: string[]; outputs: string[] } {
  const yml = parseAllDocuments(fs.readFileSync(path.join(root, file), "utf8"))[0]?.toJS() as ActionYml;
  return { inputs: Object.keys(yml.inputs ?? {}), outputs: Object.keys(yml.outputs ?? {}) };
}
const ACTIONS: Record<string, { inputs: string[]; outputs: string[] }> = {
  "": namesOf("action.yml"),
  "/publish": namesOf("publish/action.yml"),
  "/choose": namesOf("choose/action.yml"),
};

/** An input, or where prose names it as the action's, an output (`the publish action's \`branch\``). */
interface Named {
  action: string;
  name: string;
  output?: boolean;
}
function exists({ action, name, output }: Named): boolean {
  const names = ACTIONS[action];
  return Boolean(names && (names.inputs.includes(name) || (output && names.outputs.includes(name))));
}

const FENCE = /^(```|~~~)([^\n]*)\n([\s\S]*?)^\1[^\n]*$/gm;
const COMMAND = /(?:^|[\s($])(?:npx )?agent-ci (?:run|publish|choose|policy|report)\b[^\n]*/g;
const FLAG = /(?:^|[\s=(])(--[a-zA-Z][\w-]*)/g;

/** The flags a page gives to agent-ci: in `agent-ci …` commands, and `--flag`s written alone in code. */
function agentCiFlags(text: string): string[] {
  const flags: string[] = [];
  const outside = text.replace(FENCE, (_, _fence: string, _info: string, body: string) => {
    // A command continued over lines with a backslash is one command.
    for (const [line] of body.replace(/\\\n/g, " ").matchAll(COMMAND))
      flags.push(...[...line.matchAll(FLAG)].map((m) => m[1] ?? ""));
    return "";
  });
  for (const [, span = ""] of outside.matchAll(/`([^`\n]+)`/g)) {
    if (/^--[a-zA-Z]/.test(span)) flags.push(/^--[\w-]+/.exec(span)?.[0] ?? "");
    else
      for (const [line] of span.matchAll(COMMAND))
        flags.push(...[...line.matchAll(FLAG)].map((m) => m[1] ?? ""));
  }
  return flags;
}

/** Inputs (and outputs) a page names as an Action's, by the action ("" for agent-ci's own, "/publish"). */
function namedInputs(text: string): Named[] {
  const found: Named[] = [];
  const prose = text.replace(FENCE, "");
  for (const m of prose.matchAll(/\b(publish [Aa]ction's|Action's|Action:) `([a-z][a-z0-9_]*):?`/g))
    found.push({ action: m[1]?.startsWith("publish") ? "/publish" : "", name: m[2] ?? "", output: true });
  for (const m of prose.matchAll(/`([a-z][a-z0-9_]*):?` \(Action\)/g))
    found.push({ action: "", name: m[1] ?? "", output: true });
  for (const [, , info = "", body = ""] of text.matchAll(FENCE)) {
    if (!/^\s*ya?ml\b/.test(info)) continue;
    for (const doc of parseAllDocuments(body)) found.push(...stepInputs(doc.toJS() as unknown));
  }
  return found;
}

/** The `with:` keys of every `uses: OWNER/agent-ci…@…` step in a YAML value. */
function stepInputs(value: unknown): Named[] {
  if (Array.isArray(value)) return value.flatMap(stepInputs);
  if (typeof value !== "object" || value === null) return [];
  const record = value as Record<string, unknown>;
  const uses = typeof record.uses === "string" ? /^OWNER\/agent-ci(\/\w+)?@/.exec(record.uses) : null;
  const own =
    uses && typeof record.with === "object" && record.with
      ? Object.keys(record.with).map((name) => ({ action: uses[1] ?? "", name }))
      : [];
  return [...own, ...Object.values(record).flatMap(stepInputs)];
}

describe("names in the documentation", () => {
  it.each(pages)("%s: every flag it gives agent-ci exists", (page) => {
    const known = (flag: string) =>
      cliFlags.has(flag) ||
      CLAUDE_ARGS_FLAGS.has(flag as `--${string}`) ||
      Object.hasOwn(CLAUDE_ARGS_REFUSED, flag) ||
      Object.hasOwn(OTHER_PROGRAMS, flag);
    const text = fs.readFileSync(path.join(root, page), "utf8");
    expect(agentCiFlags(text).filter((flag) => !known(flag))).toEqual([]);
  });

  it.each(pages)("%s: every Action input it names exists", (page) => {
    const text = fs.readFileSync(path.join(root, page), "utf8");
    const unknown = namedInputs(text).filter((named) => !exists(named));
    expect(unknown).toEqual([]);
  });

  it("finds the names the pages give (so the checks above are not empty)", () => {
    const texts = pages.map((page) => fs.readFileSync(path.join(root, page), "utf8"));
    const flags = new Set(texts.flatMap(agentCiFlags));
    const inputs = texts.flatMap(namedInputs);
    expect(flags.size).toBeGreaterThan(40);
    expect(inputs.length).toBeGreaterThan(30);
    expect(inputs.filter((n) => n.action === "/publish").length).toBeGreaterThan(0);
  });

  it("README.md gives the version package.json has", () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
      version: string;
    };
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");
    const given = [...readme.matchAll(/\bversion (\d+\.\d+\.\d+)\b/g)].map((m) => m[1]);
    expect(given.length).toBeGreaterThan(0);
    expect(given.filter((v) => v !== version)).toEqual([]);
  });

  it("catches a flag and an input that do not exist", () => {
    const text =
      "Set `--pids-limit 100`, or run `agent-ci run --frobnicate`; the Action's `pids_limit` too.\n" +
      "```yaml\n- uses: OWNER/agent-ci/publish@v1\n  with:\n    no_such_input: x\n```\n";
    expect(agentCiFlags(text)).toEqual(["--pids-limit", "--frobnicate"]);
    expect(namedInputs(text).filter((named) => !exists(named))).toEqual([
      { action: "", name: "pids_limit", output: true },
      { action: "/publish", name: "no_such_input" },
    ]);
  });
});
