// What verify runs, and whether a patch changed it (RELIABILITY B16): one function over the verify command,
// the patch's changed paths and the two trees' package.json files, table-tested here: the scripts a package
// manager runs (pre/post hooks and the scripts they run), the configuration of the test runner started, the
// Makefile of make, the files a command line names, `cd` and the wrappers looked through; and what does not
// count (the source a fix changes, a test file a runner finds by itself, a dependency added to package.json).
import { describe, expect, it } from "vitest";
import { changedVerifyInputs, shellCommands } from "../../../src/runner/run/verify-inputs.js";

type Tree = Record<string, string>;

const pkg = (scripts: Record<string, string>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name: "x", scripts, ...extra }, null, 2);

/** The verdict for a patch from `before` to `after` (null: the patch deletes the file). */
function check(command: string, before: Tree, after: Record<string, string | null>): Promise<string[]> {
  const changed = new Set(Object.keys(after).filter((file) => after[file] !== before[file]));
  const next: Tree = { ...before };
  for (const [file, text] of Object.entries(after))
    if (text === null) delete next[file];
    else next[file] = text;
  return changedVerifyInputs(command, {
    changed,
    before: async (file) => before[file],
    after: async (file) => next[file],
  });
}

const NODE_TEST = { "package.json": pkg({ test: "node --test test/*.test.js" }) };

describe("changedVerifyInputs", () => {
  it.each<[string, string, Tree, Record<string, string | null>, string[]]>([
    [
      "a test script rewritten to exit 0",
      "npm test",
      NODE_TEST,
      { "package.json": pkg({ test: "exit 0" }) },
      ["package.json scripts.test"],
    ],
    [
      "a pretest hook added",
      "npm test",
      NODE_TEST,
      { "package.json": pkg({ test: "node --test test/*.test.js", pretest: "exit 0" }) },
      ["package.json scripts.pretest"],
    ],
    [
      "a posttest hook of npm run",
      "npm run check",
      { "package.json": pkg({ check: "tsc" }) },
      { "package.json": pkg({ check: "tsc", postcheck: "true" }) },
      ["package.json scripts.postcheck"],
    ],
    [
      "a script the test script runs",
      "npm test",
      { "package.json": pkg({ test: "npm run lint && npm run unit", unit: "jest", lint: "eslint ." }) },
      { "package.json": pkg({ test: "npm run lint && npm run unit", unit: "true", lint: "eslint ." }) },
      ["package.json scripts.unit"],
    ],
    [
      "a dependency added: nothing verify runs",
      "npm test",
      NODE_TEST,
      { "package.json": pkg({ test: "node --test test/*.test.js" }, { dependencies: { a: "1" } }) },
      [],
    ],
    [
      "the fix and a new test a glob finds: nothing verify runs",
      "npm test",
      { ...NODE_TEST, "src/calc.js": "a - b", "test/calc.test.js": "old" },
      { "src/calc.js": "a + b", "test/calc.test.js": "new", "test/more.test.js": "new" },
      [],
    ],
    [
      "jest's configuration file and package.json field",
      "npm test",
      { "package.json": pkg({ test: "jest" }), "jest.config.js": "a" },
      { "jest.config.js": "b", "package.json": pkg({ test: "jest" }, { jest: { testMatch: [] } }) },
      ["jest.config.js", "package.json jest"],
    ],
    [
      "a config file the script names",
      "npm test",
      { "package.json": pkg({ test: "jest --config jest.ci.js" }) },
      { "jest.ci.js": "x" },
      ["jest.ci.js"],
    ],
    ["vitest through npx", "npx vitest run", {}, { "vitest.config.ts": "x" }, ["vitest.config.ts"]],
    ["make's Makefile", "make check", { Makefile: "a" }, { Makefile: "b", "src/a.c": "x" }, ["Makefile"]],
    ["make -C", "/usr/bin/make -C app test", {}, { "app/Makefile": "x", Makefile: "y" }, ["app/Makefile"]],
    [
      "pytest's conftest.py anywhere and pyproject.toml",
      "pytest -q",
      {},
      { "tests/unit/conftest.py": "x", "pyproject.toml": "y", "src/m.py": "z" },
      ["pyproject.toml", "tests/unit/conftest.py"],
    ],
    ["python -m pytest", "python3 -m pytest tests", {}, { "pytest.ini": "x" }, ["pytest.ini"]],
    [
      "a script the command names",
      "bash scripts/check.sh",
      {},
      { "scripts/check.sh": "x" },
      ["scripts/check.sh"],
    ],
    ["an absolute path in the workspace", "/workspace/ci/run", {}, { "ci/run": "x" }, ["ci/run"]],
    ["an option's value", "node test.js --config=ci/v.json", {}, { "ci/v.json": "x" }, ["ci/v.json"]],
    [
      "cd moves the package",
      "cd app && npm test",
      { "app/package.json": pkg({ test: "mocha" }), "package.json": pkg({ test: "mocha" }) },
      {
        "app/package.json": pkg({ test: "true" }),
        "package.json": pkg({ test: "true" }),
        ".mocharc.yml": "x",
      },
      ["app/package.json scripts.test"],
    ],
    [
      "npm's --prefix",
      "npm --prefix web test",
      { "web/package.json": pkg({ test: "a" }) },
      { "web/package.json": pkg({ test: "b" }) },
      ["web/package.json scripts.test"],
    ],
    [
      "the package manager's settings",
      "npm test",
      NODE_TEST,
      { ".npmrc": "script-shell=/bin/true" },
      [".npmrc"],
    ],
    [
      "yarn's settings and committed release",
      "yarn test",
      { "package.json": pkg({ test: "jest" }) },
      { ".yarnrc.yml": "yarnPath: .yarn/releases/y.cjs", ".yarn/releases/y.cjs": "x" },
      [".yarn/releases/y.cjs", ".yarnrc.yml"],
    ],
    [
      "wrappers, assignments and sh -c looked through",
      "CI=1 env -u HOME timeout 60 sh -c 'npm run lint; npm test'",
      { "package.json": pkg({ lint: "eslint .", test: "jest" }) },
      { "package.json": pkg({ lint: ":", test: "jest" }) },
      ["package.json scripts.lint"],
    ],
    [
      "cargo's manifests",
      "cargo test --workspace",
      {},
      { "crates/a/Cargo.toml": "x", "crates/a/src/lib.rs": "y" },
      ["crates/a/Cargo.toml"],
    ],
    [
      "the package.json deleted",
      "npm test",
      NODE_TEST,
      { "package.json": null },
      ["package.json scripts.test"],
    ],
    [
      "a script that runs itself ends",
      "npm test",
      { "package.json": pkg({ test: "npm test" }) },
      { "package.json": pkg({ test: "npm test && true" }) },
      ["package.json scripts.test"],
    ],
    [
      "a new script the changed one runs is named with it",
      "pnpm test",
      { "package.json": pkg({ test: "vitest" }) },
      { "package.json": pkg({ test: "pnpm run fake", fake: "exit 0" }) },
      ["package.json scripts.fake", "package.json scripts.test"],
    ],
  ])("%s", async (_what, command, before, after, expected) => {
    expect(await check(command, before, after)).toEqual(expected);
  });

  it("reads package.json files only, and only those of the packages the command runs", async () => {
    const read: string[] = [];
    const tree = async (file: string) => {
      read.push(file);
      return file === "package.json" ? pkg({ test: "cd sub && npm test" }) : undefined;
    };
    await changedVerifyInputs("npm test && make", {
      changed: new Set(["README.md"]),
      before: tree,
      after: tree,
    });
    expect([...new Set(read)].sort()).toEqual(["package.json", "sub/package.json"]);
  });

  it("takes megabytes of script text in linear time", { timeout: 60_000 }, async () => {
    const huge = pkg({ test: `${"a && ".repeat(200_000)}"${"'".repeat(200_000)}` });
    const found = await check("npm test", { "package.json": huge }, { "package.json": pkg({ test: "x" }) });
    expect(found).toEqual(["package.json scripts.test"]);
  });
});

describe("shellCommands", () => {
  it.each<[string, string[][]]>([
    ["npm test", [["npm", "test"]]],
    ["a && b || c; d | e & f", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]],
    [`echo "a b" 'c d' e\\ f`, [["echo", "a b", "c d", "e f"]]],
    [`x "q\\"uote" # comment\ny`, [["x", 'q"uote'], ["y"]]],
    ["make 2>&1 > out.log < in", [["make", "out.log", "in"]]],
    ["(cd sub && make)", [["cd", "sub"], ["make"]]],
    ["a \\\n b", [["a", "b"]]],
    ["", []],
  ])("%j", (line, expected) => {
    expect(shellCommands(line)).toEqual(expected);
  });
});
