// The publish gate's findings (RELIABILITY B7) on hand-written patches: each kind named with its file and
// line, what is not a finding left alone, the allowed kinds checked, and megabytes of one character in a
// patch's lines scanned without trouble.
import { describe, expect, it } from "vitest";
import { FINDING_KINDS, gateFindings, parseFindingKinds } from "../../../src/publish/findings.js";
import { summarizePatch, type RunReport } from "../../../src/report/index.js";
import { smallFixReport } from "../report/support/report-builders.js";

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

const find = (patch: string, maxBinaryBytes = 1024) =>
  gateFindings(reportFor(patch), patch, { maxBinaryBytes }).then((all) =>
    all.map((f) => `${f.kind} ${f.file}${f.line ? `:${f.line}` : ""}`),
  );

describe("gateFindings", () => {
  it("B7 names lifecycle scripts in any package.json, minified or not, and the package managers' own hooks", async () => {
    const patch = [
      added("package.json", [
        "{",
        '  "scripts": {',
        '    "test": "vitest",',
        '    "prepare": "husky"',
        "  }",
        "}",
      ]),
      added("packages/a/package.json", ['{"scripts":{"preinstall":"node x.js"}}']),
      added(".npmrc", ["registry=https://registry.npmjs.org/", "script-shell=/tmp/x"]),
      added(".pnpmfile.cjs", ["module.exports = {}"]),
    ].join("");
    expect(await find(patch)).toEqual([
      "lifecycle_script package.json:4",
      "lifecycle_script packages/a/package.json:1",
      "lifecycle_script .npmrc:2",
      "lifecycle_script .pnpmfile.cjs:1",
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
    const findings = await gateFindings(reportFor(patch), patch, { maxBinaryBytes: 1024 });
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
      const patch = added("package.json", [text.replace(/\n/g, " ")]);
      expect(Array.isArray(await find(patch))).toBe(true);
    },
  );
});

describe("parseFindingKinds", () => {
  it("takes the known kinds once each and refuses an unknown one", () => {
    expect(parseFindingKinds(["secret", "git_hook", "secret"])).toEqual(["secret", "git_hook"]);
    expect(() => parseFindingKinds(["all"])).toThrow(
      `unknown finding kind(s) "all": one of ${FINDING_KINDS.join(", ")}`,
    );
  });
});
