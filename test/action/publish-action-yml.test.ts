// publish/action.yml and the code agree: every input with the same default, every output set by the code,
// the bundle it runs is the one the build makes; and the example workflows use the publish action with
// inputs that exist, in a job with write permissions and no model key.
// Bypasses the harness: it reads publish/action.yml and the code's defaults; no step runs.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PUBLISH_INPUT_DEFAULTS, PUBLISH_OUTPUT_NAMES } from "../../src/publish/action.js";
import { SIGNED_COMMIT_MAX_BYTES } from "../../src/publish/options.js";
import { ACTION_ENTRIES } from "../../scripts/bundles.mjs";

const root = path.resolve(import.meta.dirname, "../..");
const action = parse(fs.readFileSync(path.join(root, "publish/action.yml"), "utf8")) as {
  inputs: Record<string, { default?: string; required?: boolean; description?: string }>;
  outputs: Record<string, unknown>;
  runs: { using: string; main: string };
};

describe("publish/action.yml", () => {
  it("declares the inputs the code reads, with the same defaults, in the same order", () => {
    expect(Object.keys(action.inputs)).toEqual(Object.keys(PUBLISH_INPUT_DEFAULTS));
    for (const [name, value] of Object.entries(PUBLISH_INPUT_DEFAULTS))
      expect(String(action.inputs[name]?.default ?? ""), name).toBe(value);
  });

  it("declares the outputs the code sets", () => {
    expect(Object.keys(action.outputs)).toEqual([...PUBLISH_OUTPUT_NAMES]);
  });

  it("runs the publish bundle the build makes", () => {
    expect(action.runs.main).toBe("../dist/publish.js");
    expect(ACTION_ENTRIES.publish).toBe("src/publish.ts");
  });

  it("names use_commit_signing's size limit as the code applies it, here and in docs/publishing.md", () => {
    const limit = `${SIGNED_COMMIT_MAX_BYTES / 1024 / 1024} MiB`;
    expect(action.inputs.use_commit_signing?.description).toContain(`more than ${limit}`);
    expect(fs.readFileSync(path.join(root, "docs/publishing.md"), "utf8")).toContain(
      `more than ${limit} in total`,
    );
  });

  it("documents that GITHUB_TOKEN pull requests trigger no workflows", () => {
    expect(fs.readFileSync(path.join(root, "publish/action.yml"), "utf8")).toMatch(
      /GITHUB_TOKEN start no workflows/,
    );
  });
});

describe("examples/workflows/two-job-pattern.yml", () => {
  const workflow = parse(
    fs.readFileSync(path.join(root, "examples/workflows/two-job-pattern.yml"), "utf8"),
  ) as {
    jobs: Record<
      string,
      { permissions: Record<string, string>; steps: Array<{ uses?: string; with?: Record<string, string> }> }
    >;
  };
  it("publishes in a second job with contents: write, pull-requests: write and no model key", () => {
    const publish = workflow.jobs.publish;
    expect(publish?.permissions).toEqual({ contents: "write", "pull-requests": "write" });
    const step = publish?.steps.find((s) => s.uses === "OWNER/agent-ci/publish@v1");
    expect(step).toBeDefined();
    for (const key of Object.keys(step?.with ?? {}))
      expect(Object.keys(PUBLISH_INPUT_DEFAULTS)).toContain(key);
    expect(JSON.stringify(publish)).not.toMatch(/ANTHROPIC|anthropic_api_key/);
    expect(workflow.jobs.agent?.permissions).toEqual({ contents: "read" });
  });
});
