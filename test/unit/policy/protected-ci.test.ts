// The CI definitions a repository holds are protected paths (RELIABILITY B14): a GitHub workflow's local
// actions (`.github/actions/`, and the action.yml a workflow runs with `uses: ./dir`) and the other CI
// systems' definitions, `.pre-commit-config.yaml` and `.devcontainer/`. Each layer reads the one list in
// src/policy/rule-paths.ts: the tool gate denies Edit, Write and a Bash redirect there in every mode, the
// container layer keeps a change made there out of the patch, and the publish gate refuses a patch touching
// one; an allow rule that names the path opens all three, as for workflows, and a broad one does not.
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { compileContainerRules, loadPolicy, type PolicyCall } from "../../../src/policy/index.js";
import { PROTECTED_PATHS } from "../../../src/policy/rule-paths.js";
import { protectedChanges } from "../../../src/publish/checks.js";
import { engineFor } from "./helpers.js";

/** A workflow that runs a composite action of the repository and the action at the repository's root. */
const WORKFLOW = `on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: ./.github/actions/x
      - uses: ./
        with:
          token: \${{ secrets.DEPLOY_TOKEN }}
`;

/**
 * The metadata files the workflow's local actions are read from, as GitHub reads them: `uses: ./dir` runs
 * the action whose action.yml (or action.yaml) is in `dir`, relative to the repository's root.
 */
function localActionFiles(workflow: string): string[] {
  const doc = parseYaml(workflow) as { jobs: Record<string, { steps?: Array<{ uses?: string }> }> };
  const dirs = Object.values(doc.jobs)
    .flatMap((job) => job.steps ?? [])
    .flatMap((step) => (step.uses?.startsWith("./") ? [step.uses.slice(2).replace(/\/+$/, "")] : []));
  return dirs.flatMap((dir) => ["action.yml", "action.yaml"].map((name) => (dir ? `${dir}/${name}` : name)));
}

/** A path of each CI entry of the protected list, and the entry that protects it. */
const CI_PATHS: Record<string, readonly string[]> = {
  workflows: [".github/workflows/ci.yml"],
  "local-actions": [".github/actions/x/action.yml", ".github/actions/x/entrypoint.sh"],
  "action-definitions": ["action.yml", "action.yaml", "tools/release/action.yml"],
  "gitlab-ci": [".gitlab-ci.yml"],
  circleci: [".circleci/config.yml"],
  jenkinsfile: ["Jenkinsfile"],
  buildkite: [".buildkite/pipeline.yml"],
  "azure-pipelines": ["azure-pipelines.yml"],
  "pre-commit": [".pre-commit-config.yaml"],
  devcontainer: [".devcontainer/devcontainer.json", ".devcontainer.json"],
};
const cases = Object.entries(CI_PATHS).flatMap(([id, paths]) => paths.map((path) => [path, id] as const));

const edit = (tool: string, path: string): PolicyCall => ({
  tool,
  input: tool === "Write" ? { file_path: path, content: "x\n" } : { file_path: path },
  readOnly: false,
});
const bash = (command: string): PolicyCall => ({ tool: "Bash", input: { command }, readOnly: false });

const added = (path: string) =>
  `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+x\n`;

const containerRules = (allow: string[]) =>
  compileContainerRules(
    loadPolicy({
      mode: "bypassPermissions",
      sources: [{ source: { kind: "cli", label: "cli", trusted: true }, allow }],
    }),
  );

describe("protected CI definitions", () => {
  it("B14 every CI entry of the protected list is tested here", () => {
    for (const id of Object.keys(CI_PATHS)) expect(PROTECTED_PATHS.map((p) => p.id)).toContain(id);
  });

  it("B14 the local actions a workflow runs with uses: ./ are protected, a composite action's whole folder with them", async () => {
    const files = localActionFiles(WORKFLOW);
    expect(files).toEqual([
      ".github/actions/x/action.yml",
      ".github/actions/x/action.yaml",
      "action.yml",
      "action.yaml",
    ]);
    const engine = await engineFor({ mode: "bypassPermissions" });
    for (const file of [...files, ".github/actions/x/entrypoint.sh"]) {
      expect(engine.decide(edit("Write", file)).decidedBy, file).toBe("protected-path");
      expect(containerRules([]).readOnly(file)?.text, file).toMatch(/^protected:/);
      expect(protectedChanges(added(file), []), file).toHaveLength(1);
    }
  });

  it.each(cases)(
    "B14 %s is denied to Edit, Write and a Bash redirect in every mode, and an allow rule naming it opens it",
    async (path) => {
      for (const mode of ["default", "acceptEdits", "bypassPermissions"] as const) {
        const engine = await engineFor({ mode, allow: ["Edit(**)", "Bash(echo:*)"] });
        for (const call of [edit("Edit", path), edit("Write", path), bash(`echo x > ${path}`)]) {
          const decision = engine.decide(call);
          expect(decision.behavior, `${mode} ${call.tool}`).toBe("deny");
          expect(decision.decidedBy, decision.reason).toBe("protected-path");
        }
      }
      const named = await engineFor({ mode: "acceptEdits", allow: [`Edit(/${path})`] });
      expect(named.decide(edit("Edit", path)).behavior).toBe("allow");
      expect(named.decide(edit("Write", path)).behavior).toBe("allow");
    },
  );

  it.each(cases)(
    "B14 %s changed in the container stays out of the patch unless an allow rule names it",
    (path, id) => {
      expect(containerRules([]).readOnly(path)?.text).toBe(`protected:${id}`);
      expect(containerRules(["Edit(**)"]).readOnly(path)?.text).toBe(`protected:${id}`);
      expect(containerRules([`Edit(/${path})`]).readOnly(path)).toBeUndefined();
    },
  );

  it.each(cases)("B14 the publish gate refuses a patch touching %s unless an allow rule names it", (path) => {
    const patch = `${added(path)}${added("src/a.js")}`;
    const [refusal, ...more] = protectedChanges(patch, []);
    expect(more).toEqual([]);
    expect(refusal).toContain(`${path} is a protected path (`);
    expect(refusal).toContain(`allow it with Edit(/${path})`);
    expect(protectedChanges(patch, ["Edit(**)"])).toHaveLength(1);
    expect(protectedChanges(patch, [`Edit(/${path})`])).toEqual([]);
  });

  it("B14 what is beside them stays unprotected", async () => {
    const engine = await engineFor({ mode: "acceptEdits" });
    for (const path of [
      ".github/dependabot.yml",
      ".github/CODEOWNERS",
      "docs/action.md",
      "src/actions/run.ts",
      "ci/Jenkinsfile.md",
      ".circleci-notes.md",
    ]) {
      expect(engine.decide(edit("Write", path)).behavior, path).toBe("allow");
      expect(containerRules([]).readOnly(path), path).toBeUndefined();
      expect(protectedChanges(added(path), []), path).toEqual([]);
    }
  });
});
