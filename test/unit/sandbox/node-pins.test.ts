// The project's Node.js pin, read from each file as its own tool reads it: .nvmrc as nvm (nvm_process_nvmrc),
// .node-version as nodenv (nodenv-version-file-read), .tool-versions as asdf (toolversions.go), package.json's
// volta.node as Volta; and which file wins when several are there.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  parseNodeVersionFile,
  parseNvmrc,
  parseToolVersions,
  parseVoltaNode,
  PinFileError,
  readProjectPin,
} from "../../../src/sandbox/node/pins.js";
import { makeWorkspace } from "../../support/workspace.js";

describe(".nvmrc, as nvm reads it", () => {
  it("takes the one bare line, trimmed, whatever the line ending", () => {
    expect(parseNvmrc("20\n")).toBe("20");
    expect(parseNvmrc("  v20.11.1  \r\n")).toBe("v20.11.1");
    expect(parseNvmrc("lts/iron")).toBe("lts/iron");
    expect(parseNvmrc("\n\n>=18\n\n")).toBe(">=18");
  });

  it("drops comments and blank lines, and leaves key=value settings to other tools", () => {
    expect(parseNvmrc("# the CI's Node\nlts/* # for now\n\nnpm=10\n")).toBe("lts/*");
  });

  it("names nothing when only comments and blanks are there (nvm: an empty .nvmrc)", () => {
    expect(parseNvmrc("")).toBeUndefined();
    expect(parseNvmrc("# nothing yet\n   \n")).toBeUndefined();
  });

  it("refuses what nvm calls an invalid .nvmrc: two versions, a node= key, a repeated key, only settings", () => {
    expect(() => parseNvmrc("20\n22\n")).toThrow(PinFileError);
    expect(() => parseNvmrc("node=20\n20\n")).toThrow(/node=/);
    expect(() => parseNvmrc("a=1\na=2\n20\n")).toThrow(/repeated/);
    expect(() => parseNvmrc("a=1\n")).toThrow(/no version line/);
  });
});

describe(".node-version, as nodenv reads it", () => {
  it("takes the first word of the file, split on spaces, tabs and line ends", () => {
    expect(parseNodeVersionFile("20.11.1\n")).toBe("20.11.1");
    expect(parseNodeVersionFile("\r\n\t v20 trailing words\nsecond line")).toBe("v20");
    expect(parseNodeVersionFile("   \n")).toBeUndefined();
  });

  it("takes nodenv's node- prefix, and refuses a version with .. in it", () => {
    expect(parseNodeVersionFile("node-v20.11.1")).toBe("v20.11.1");
    expect(() => parseNodeVersionFile("../../20")).toThrow(/\.\./);
  });

  it("reads only the first 1024 bytes", () => {
    expect(parseNodeVersionFile(`${" ".repeat(1024)}20`)).toBeUndefined();
  });
});

describe(".tool-versions, as asdf reads it", () => {
  it("takes the first version of the first nodejs line (the others are asdf's fallbacks)", () => {
    const text = "# tools\npython 3.12.1\nnodejs 20.11.1 18.19.0 # the CI's\nnodejs 22.1.0\n";
    expect(parseToolVersions(text)).toBe("20.11.1");
  });

  it("splits on spaces only, as asdf does: a tab does not separate the tool from its version", () => {
    expect(parseToolVersions("nodejs\t20.11.1\n")).toBeUndefined();
    expect(parseToolVersions("nodejs   20.11.1\r\n")).toBe("20.11.1");
  });

  it("reads mise's node name too, and no other tool's line", () => {
    expect(parseToolVersions("node 22.1.0\n")).toBe("22.1.0");
    expect(parseToolVersions("ruby 3.3.0\nnodejs\n")).toBeUndefined();
  });

  it("refuses asdf's ref: and path: versions (built from source, a folder on that machine)", () => {
    expect(() => parseToolVersions("nodejs ref:v20.11.1\n")).toThrow(/ref/);
    expect(() => parseToolVersions("nodejs path:/opt/node\n")).toThrow(/path/);
    expect(parseToolVersions("nodejs system\n")).toBe("system");
  });
});

describe("package.json volta.node, as Volta reads it", () => {
  it("takes volta.node, and nothing from a manifest without it", () => {
    expect(parseVoltaNode('{"volta":{"node":"20.11.1","npm":"10.2.4"}}')).toBe("20.11.1");
    expect(parseVoltaNode('{"engines":{"node":">=18"}}')).toBeUndefined();
    expect(parseVoltaNode('{"volta":{"extends":"../package.json"}}')).toBeUndefined();
    expect(parseVoltaNode("not json")).toBeUndefined();
  });

  it("refuses a volta.node that is not a string", () => {
    expect(() => parseVoltaNode('{"volta":{"node":20}}')).toThrow(/not a string/);
  });
});

describe("the workspace's pin", () => {
  it("is the first file that names a version: .nvmrc, .node-version, .tool-versions, volta.node", () => {
    const all = {
      ".nvmrc": "20\n",
      ".node-version": "22\n",
      ".tool-versions": "nodejs 18.19.0\n",
      "package.json": '{"volta":{"node":"16.20.2"}}',
    };
    expect(readProjectPin(makeWorkspace(all))).toEqual({ source: ".nvmrc", file: ".nvmrc", spec: "20" });
    const { ".nvmrc": _n, ...rest } = all;
    expect(readProjectPin(makeWorkspace(rest))?.source).toBe(".node-version");
    const { ".node-version": _v, ...fewer } = rest;
    expect(readProjectPin(makeWorkspace(fewer))).toMatchObject({ source: ".tool-versions", spec: "18.19.0" });
    expect(readProjectPin(makeWorkspace({ "package.json": all["package.json"] }))).toEqual({
      source: "volta",
      file: "package.json",
      spec: "16.20.2",
    });
    expect(readProjectPin(makeWorkspace({ "README.md": "hi" }))).toBeUndefined();
  });

  it("passes over a file that names nothing, and names the file of one its tool would refuse", () => {
    expect(readProjectPin(makeWorkspace({ ".nvmrc": "# none\n", ".node-version": "22\n" }))?.source).toBe(
      ".node-version",
    );
    expect(() => readProjectPin(makeWorkspace({ ".nvmrc": "20\n22\n" }))).toThrow(
      /the workspace's \.nvmrc: more than one version line/,
    );
  });

  it("follows a link inside the workspace, never one out of it, and reads no folder", () => {
    expect(
      readProjectPin(makeWorkspace({ ".node-version": "20\n", ".nvmrc": { symlink: ".node-version" } })),
    ).toMatchObject({ source: ".nvmrc", spec: "20" });
    const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-outside-")), "secret");
    fs.writeFileSync(outside, "host-only-text\n");
    expect(() => readProjectPin(makeWorkspace({ ".nvmrc": { symlink: outside } }))).toThrow(
      /\.nvmrc: a link out of the workspace/,
    );
    expect(readProjectPin(makeWorkspace({ ".nvmrc/x": "20" }))).toBeUndefined();
  });

  it("reads a huge version file only as far as it needs, in one pass", () => {
    const ws = makeWorkspace({ ".nvmrc": `20\n${"#".repeat(20 * 2 ** 20)}` });
    expect(readProjectPin(ws)).toMatchObject({ spec: "20" });
  });
});
