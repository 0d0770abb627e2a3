// The Action's Node.js in the sandbox (real engine, real npm registry): with no pin in the repository, the one
// the job set up before the step, which is the `node` on the step's PATH, never the Node.js the Action itself
// runs on (a runner runs a JavaScript action on its own bundled node24); the node_version input over both.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseReport, type RunReport } from "../../src/report/index.js";
import { toolbeltNodeVersion } from "../../src/sandbox/image/toolbelt.js";
import { actionRunner, type ActionRun, scriptFile } from "../support/action-harness.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { makeWorkspace } from "../support/workspace.js";

const TOKEN = ["ghs", "nodeVersionToken0123456789abcdefABCD"].join("_");
let fake: FakeGitHub;

beforeEach(async () => {
  fake = await startFakeGitHub({ token: TOKEN, permissions: { octocat: "write" } });
});
afterEach(async () => {
  await fake.close();
});

const inputs = () => ({
  github_token: TOKEN,
  prompt: "Say which Node.js runs.",
  script: scriptFile([[{ name: "Bash", input: { command: "node --version" } }]], "Done."),
  permission_mode: "bypassPermissions",
  comment: "false",
  upload_artifact: "false",
});
const action = actionRunner(() => ({
  fixture: "workflow-dispatch",
  apiUrl: fake.url,
  workspace: makeWorkspace({ "package.json": '{"name":"p","version":"1.0.0"}\n' }, { git: true }),
  inputs: inputs(),
}));

function reportOf(run: ActionRun): { report: RunReport; said: string } {
  expect(run.failed).toBeUndefined();
  const report = parseReport(JSON.parse(fs.readFileSync(run.outputs.report_path ?? "", "utf8")));
  return { report, said: (report.toolCalls[0]?.resultPreview ?? "").trim() };
}

/** A PATH with every program of this one but node: a job that set up no Node.js. */
function pathWithoutNode(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-no-node-"));
  for (const from of (process.env.PATH ?? "").split(":").filter(Boolean)) {
    let names: string[];
    try {
      names = fs.readdirSync(from);
    } catch {
      continue;
    }
    for (const name of names) {
      if (name === "node" || fs.existsSync(path.join(dir, name))) continue;
      fs.symlinkSync(path.join(from, name), path.join(dir, name));
    }
  }
  return dir;
}

describe("the Action's Node.js", () => {
  it("is the node on the step's PATH when the repository pins none", async () => {
    const onPath = execFileSync("node", ["--version"], { encoding: "utf8" }).trim();
    const { report, said } = reportOf(await action());
    expect(said).toBe(onPath);
    expect(report.image?.node).toMatchObject({ source: "runner", spec: onPath, version: onPath.slice(1) });
  }, 600_000);

  it("is not the Node.js the Action runs on: a step whose PATH has no node gets the image's own", async () => {
    const { report, said } = reportOf(await action({ env: { PATH: pathWithoutNode() } }));
    // This process runs on a Node.js all the same; the image's own is another version.
    expect(process.version).not.toBe(`v${toolbeltNodeVersion()}`);
    expect(said).toBe(`v${toolbeltNodeVersion()}`);
    expect(report.image?.node).toEqual({ source: "image", version: toolbeltNodeVersion(), mounted: false });
  }, 600_000);

  it("is node_version's when it is given, and a node_version that names none fails the step first", async () => {
    const given = reportOf(await action({ inputs: { ...inputs(), node_version: "system" } }));
    expect(given.said).toBe(`v${toolbeltNodeVersion()}`);
    expect(given.report.image?.node).toMatchObject({ source: "option", spec: "system", mounted: false });
    const bad = await action({ inputs: { ...inputs(), node_version: "banana" } });
    expect(bad.failed).toMatch(/node_version: "banana" is not a Node\.js version, range or alias/);
  }, 600_000);
});
