// The project's Node.js in the sandbox, on the real engine with the real npm registry: a workspace whose
// .nvmrc says 20 runs `node --version` and `npm test` on the official Node.js 20 build, mounted from a volume
// filled once per version (a second run fetches nothing); --node-version sets it on any image, and a user's
// image keeps its own Node.js otherwise. The record and the log say which Node.js ran and why.
import fs from "node:fs";
import path from "node:path";
import Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { parseReport, type RunReport } from "../../src/report/index.js";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { runAgent } from "../../src/runner/run.js";
import { defaultImageTag } from "../../src/sandbox/image/image.js";
import { nodeVolumeName } from "../../src/sandbox/node/volume.js";
import { toolbeltNodeVersion } from "../../src/sandbox/image/toolbelt.js";
import { fixtureImageTag } from "../support/fixture-images.js";
import { scriptFile } from "../support/action-harness.js";
import { quietIo, tempOut } from "../support/run-io.js";
import { makeWorkspace } from "../support/workspace.js";

const docker = new Docker();

/** A project whose tests say which Node.js ran them. */
const PROJECT = {
  "package.json": `${JSON.stringify({
    name: "pinned",
    version: "1.0.0",
    scripts: { test: "node -e \"console.log('tests ran on', process.version)\"" },
  })}\n`,
};
const CHECK = "node --version && npm --version && npx --version && npm test";

async function run(
  files: Record<string, string>,
  input: Partial<RunConfigInput> = {},
): Promise<{ report: RunReport; output: string; logs: string[] }> {
  const logs: string[] = [];
  const config = parseRunConfig({
    workspace: makeWorkspace({ ...PROJECT, ...files }),
    out: tempOut(),
    mode: "bypassPermissions",
    script: scriptFile([[{ name: "Bash", input: { command: CHECK } }]], "Ran the tests."),
    ...input,
  } as RunConfigInput);
  const outcome = await runAgent(config, quietIo({ stderr: (l) => logs.push(l) }));
  expect(outcome.exitReason, outcome.error).toBe("completed");
  const report = parseReport(JSON.parse(fs.readFileSync(outcome.reportPath ?? "", "utf8")));
  const call = report.toolCalls[0];
  expect(call?.isError, call?.resultPreview).toBe(false);
  return { report, output: call?.resultPreview ?? "", logs };
}

describe("the project's Node.js", () => {
  it("is the one its .nvmrc pins: node, npm and npm test run on Node.js 20, fetched once", async () => {
    const first = await run({ ".nvmrc": "20\n" });
    const version = first.report.image?.node?.version ?? "";
    expect(version).toMatch(/^20\.\d+\.\d+$/);
    const [nodeLine, npmLine, npxLine] = first.output.split("\n");
    expect(nodeLine).toBe(`v${version}`);
    expect(npmLine).toBe(first.report.image?.node?.npm);
    expect(npxLine).toBe(npmLine);
    expect(first.output).toContain(`tests ran on v${version}`);
    expect(first.report.image?.node).toEqual({
      source: ".nvmrc",
      file: ".nvmrc",
      spec: "20",
      version,
      mounted: true,
      npm: expect.stringMatching(/^\d+\.\d+\.\d+$/),
    });
    expect(first.report.image?.tools).toContainEqual({
      name: "node",
      from: "agent-ci",
      path: "/opt/agent-ci-node/bin/node",
    });
    expect(first.logs).toContain(
      `Node.js ${version} for the Bash tool's node, npm and npx: the workspace's .nvmrc says "20", the official build from the npm registry`,
    );
    // The engine keeps it by version: the next run mounts the same volume and fetches nothing.
    const volume = await docker
      .getVolume(nodeVolumeName(version, first.report.image?.architecture ?? ""))
      .inspect();
    expect(volume.Labels).toMatchObject({ "agent-ci.node": version });
    const second = await run({ ".node-version": `v${version}\n` });
    expect(second.output).toContain(`tests ran on v${version}`);
    expect(second.report.image?.node).toMatchObject({ source: ".node-version", version, mounted: true });
    expect(second.logs.filter((l) => /fetching Node\.js/.test(l))).toEqual([]);
  }, 600_000);

  it("is the default image's own, said so, when the workspace pins none", async () => {
    const { report, output, logs } = await run({});
    const own = toolbeltNodeVersion();
    expect(output).toContain(`tests ran on v${own}`);
    expect(report.image?.node).toEqual({ source: "image", version: own, mounted: false });
    expect(logs).toContain(
      `Node.js ${own} for the Bash tool's node, npm and npx: the default image's own (the workspace pins none)`,
    );
  }, 300_000);

  it("is --node-version's on a user's image, which otherwise keeps its own whatever the workspace pins", async () => {
    const image = defaultImageTag();
    const own = await run({ ".nvmrc": "20\n" }, { image });
    expect(own.output).toContain(`tests ran on v${toolbeltNodeVersion()}`);
    expect(own.report.image?.node).toBeUndefined();
    const asked = await run({ ".nvmrc": "22\n" }, { image, nodeVersion: "lts/iron" });
    expect(asked.output).toMatch(/tests ran on v20\.\d+\.\d+/);
    expect(asked.report.image?.node).toMatchObject({ source: "option", spec: "lts/iron", mounted: true });
  }, 600_000);

  it("that an image cannot run (no glibc) ends the start with the reason and what to do", async () => {
    const config = parseRunConfig({
      workspace: makeWorkspace(PROJECT),
      out: tempOut(),
      script: scriptFile([[{ name: "Bash", input: { command: CHECK } }]]),
      image: fixtureImageTag("busybox"),
      nodeVersion: "20",
    } as RunConfigInput);
    const outcome = await runAgent(config, quietIo({}));
    expect(outcome.exitReason).toBe("engine_error");
    // Said by the start's check, or by the volume's fill where this is the version's first use on the engine.
    expect(outcome.error).toMatch(
      /Node\.js 20\.\d+\.\d+ (from the volume \S+ does not answer in this image|\(node-linux-\w+\) does not run in)/,
    );
    expect(outcome.error).toMatch(/the official builds need glibc .*--node-version system/);
  }, 300_000);

  it("that names no Node.js ends the run as a configuration error before any container", async () => {
    const config = parseRunConfig({
      workspace: makeWorkspace({ ...PROJECT, ".nvmrc": "21.99\n" }),
      out: tempOut(),
      script: scriptFile([[{ name: "Bash", input: { command: CHECK } }]]),
    } as RunConfigInput);
    const outcome = await runAgent(config, quietIo({}));
    expect(outcome.exitReason).toBe("config_error");
    expect(outcome.error).toMatch(
      /the workspace's \.nvmrc says "21\.99": no published Node\.js build is in "21\.99"/,
    );
    const report = parseReport(JSON.parse(fs.readFileSync(path.join(outcome.outDir, "report.json"), "utf8")));
    expect(report.image).toBeUndefined();
  }, 300_000);
});
