/**
 * Differential test against bash's own parser. `bash --pretty-print` prints a script the way bash
 * parsed it — a function body one command per indented line — without running it. For every corpus row
 * and a batch of fuzz lines that the matcher reads without complaint, every command bash sees must
 * also be one the matcher sees: a command it misses is a way around the rules (this is how the
 * "line starting with a backslash" misparse of tree-sitter-bash was found).
 *
 * Only a script file is pretty-printed (`--pretty-print -c` would run the command), with an empty
 * PATH, in a temporary directory.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { PolicyEngine } from "../../../src/policy/index.js";
import { BASH_CASES } from "../../fixtures/policy/bash-cases.js";
import { engineFor } from "./helpers.js";
import { seededRandom as prng } from "../../support/seeded-random.js";

/** In CI (`.ci/run` installs every prerequisite) a missing one fails the tests instead of skipping them. */
const IN_CI = process.env.CI === "true";

const bashPath = spawnSync("sh", ["-c", "command -v bash"], { encoding: "utf8" }).stdout.trim();
/** `--pretty-print` arrived in bash 5.2; older shells reject the option without running anything. */
const bashAvailable = bashPath !== "" && spawnSync(bashPath, ["--pretty-print", "/dev/null"]).status === 0;
const sandbox = mkdtempSync(join(tmpdir(), "agent-ci-differential-"));

afterAll(() => rmSync(sandbox, { recursive: true, force: true }));

/**
 * bash's normalised version of the line, or undefined when bash rejects it. `--pretty-print` of a
 * script file only parses and prints; nothing in the file runs.
 */
function bashNormalised(line: string): string | undefined {
  const file = join(sandbox, "line.sh");
  writeFileSync(file, `__agent_ci_f() {\n${line}\n}\n`);
  const result = spawnSync(bashPath, ["--pretty-print", file], {
    cwd: sandbox,
    env: { PATH: "/nonexistent" },
    encoding: "utf8",
    timeout: 5_000,
    maxBuffer: 8 * 1024 * 1024,
  });
  if (result.status !== 0) return undefined;
  const lines = result.stdout.split("\n");
  const open = lines.indexOf("{ ");
  const close = lines.lastIndexOf("}");
  return open === -1 || close <= open ? undefined : lines.slice(open + 1, close).join("\n");
}

function commandNames(engine: PolicyEngine, line: string): { names: Set<string>; clean: boolean } {
  const analysis = engine.analyzeBash(line);
  const names = new Set<string>();
  for (const fact of analysis.facts) {
    for (const view of fact.views) {
      const name = view.argv[0]?.value;
      if (name !== undefined) names.add(name.slice(name.lastIndexOf("/") + 1));
    }
  }
  return { names, clean: analysis.rejection === undefined && analysis.problems.length === 0 };
}

/** Lines bash can take inside a function body that the matcher reads cleanly. */
function candidates(engine: PolicyEngine): string[] {
  const lines = new Set<string>();
  for (const row of BASH_CASES) {
    // Heredocs are skipped: bash prints `cat <<EOF | sh` with the pipe after the body, a layout
    // tree-sitter over-reads (it then sees extra commands: safe, but not comparable).
    if (row.command.length > 4_000 || /[\u0000\r]/.test(row.command) || row.command.includes("<<")) continue;
    if (!commandNames(engine, row.command).clean) continue;
    lines.add(row.command);
  }
  for (const prefix of [
    "echo hi",
    "echo 'hi'",
    "git status",
    "ls &&",
    "ls |",
    "{ ls; }",
    "(ls)",
    "ls >/dev/null",
  ]) {
    for (const separator of ["\n", "\n\n", " \n", "\n\t", ";\n"]) {
      for (const start of [
        "\\rm",
        '"rm"',
        "'rm'",
        "r\\m",
        "$'rm'",
        "rm",
        "\\\\rm",
        "\\$rm",
        "\\'rm",
        '\\"rm',
        "\\ rm",
        "{rm,x}",
        "~/rm",
      ]) {
        lines.add(`${prefix}${separator}${start} x`);
      }
    }
  }
  return [...lines];
}

const SOUP_TOKENS = [
  ...[
    "rm",
    "x",
    "ls",
    "echo",
    "a",
    "b",
    "git",
    "status",
    "cat",
    "-rf",
    "a=1",
    "if",
    "then",
    "fi",
    "for",
    "in",
    "do",
    "done",
  ],
  ...[
    "case",
    "esac",
    ";;",
    " ",
    " ",
    " ",
    " ",
    " ",
    " ",
    "\n",
    "\t",
    ";",
    "&&",
    "||",
    "|",
    "&",
    "|&",
    "(",
    ")",
    "{ ",
    "}",
  ],
  ...[
    "'",
    '"',
    "\\",
    "$",
    "`",
    "$(",
    "<",
    ">",
    ">>",
    "2>&1",
    "#",
    "=",
    "*",
    "?",
    "[",
    "]",
    "~",
    ",",
    "!",
    "%",
    "@",
    ":",
  ],
  ...["$'\\x72'", "<<<", "\\\n", "$((1))", "${x}", "{a,b}"],
];

/**
 * Lines bash prints in a layout tree-sitter itself misreads when reading bash's output back (a
 * `{` or `!` used as a word, a trailing `$`): those comparisons say nothing about the matcher.
 */
const unreliableNormalisation = (normalised: string): boolean => /(?:^|\n)\s*[{!(] |\$;/.test(normalised);

describe.skipIf(!bashAvailable && !IN_CI)("differential: the matcher sees every command bash sees", () => {
  it("on the corpus and on line-start edge cases", async () => {
    const engine = await engineFor({ mode: "bypassPermissions" });
    const missed: string[] = [];
    let compared = 0;
    for (const line of candidates(engine)) {
      const ours = commandNames(engine, line);
      if (!ours.clean) continue;
      const normalised = bashNormalised(line);
      if (normalised === undefined) continue;
      compared++;
      const theirs = commandNames(engine, normalised);
      // bash prints `coproc cmd` with its default name: `coproc COPROC cmd`.
      const unseen = [...theirs.names].filter((name) => !ours.names.has(name) && name !== "COPROC");
      if (unseen.length > 0) missed.push(`${JSON.stringify(line)} → bash also runs ${unseen.join(", ")}`);
    }
    expect(compared).toBeGreaterThan(300);
    expect(missed).toEqual([]);
  }, 120_000);

  it("on random token soup (seeded)", async () => {
    const engine = await engineFor({ mode: "bypassPermissions" });
    const random = prng(20_250_101);
    const missed: string[] = [];
    let compared = 0;
    for (let i = 0; i < 2_500; i++) {
      let line = "";
      const length = 2 + Math.floor(random() * 10);
      for (let j = 0; j < length; j++) line += SOUP_TOKENS[Math.floor(random() * SOUP_TOKENS.length)];
      if (line.includes("<<")) continue;
      const ours = commandNames(engine, line);
      if (!ours.clean) continue;
      const normalised = bashNormalised(line);
      if (normalised === undefined || unreliableNormalisation(normalised)) continue;
      compared++;
      const theirs = commandNames(engine, normalised);
      const unseen = [...theirs.names].filter((name) => !ours.names.has(name) && name !== "COPROC");
      if (unseen.length > 0) missed.push(`${JSON.stringify(line)} → bash also runs ${unseen.join(", ")}`);
    }
    expect(compared).toBeGreaterThan(200);
    expect(missed).toEqual([]);
  }, 120_000);
});
