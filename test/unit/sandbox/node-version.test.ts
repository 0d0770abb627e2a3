// The Node.js agent-ci's images carry: one official build, pinned in the toolbelt's recipe alone (the default
// image links its node to the toolbelt's), a current LTS, and the helper bundled for that version.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { toolbeltNodeTarget } from "../../../scripts/embedded.mjs";
import { dockerfilePath, packagePath } from "../../../src/sandbox/image/image.js";
import { TOOLBELT_BIN } from "../../../src/sandbox/image/toolbelt.js";

const PINS = ["NODE_VERSION", "NODE_SHA512_AMD64", "NODE_SHA512_ARM64"] as const;

function pins(dockerfile: string): Record<string, string | undefined> {
  return Object.fromEntries(
    PINS.map((name) => [name, new RegExp(`^ARG ${name}=(\\S+)$`, "m").exec(dockerfile)?.[1]]),
  );
}

describe("the images' Node.js", () => {
  const sandbox = fs.readFileSync(dockerfilePath(), "utf8");
  const toolbelt = fs.readFileSync(`${packagePath("toolbelt")}/Dockerfile`, "utf8");

  it("is one official build, pinned in the toolbelt; the default image links to it and pins none", () => {
    for (const name of PINS) expect(pins(toolbelt)[name], name).toBeDefined();
    expect(pins(toolbelt).NODE_SHA512_AMD64).toMatch(/^[0-9a-f]{128}$/);
    expect(pins(toolbelt).NODE_SHA512_ARM64).toMatch(/^[0-9a-f]{128}$/);
    for (const name of PINS) expect(pins(sandbox)[name], name).toBeUndefined();
    expect(sandbox).toContain(`ln -s ${TOOLBELT_BIN}/node /out/bin/node`);
    // Neither takes Debian's (bookworm's is 18, past its end of life).
    const fromDebian = /apt-get install[^&]*\b(nodejs|npm)\b/;
    expect(sandbox).not.toMatch(fromDebian);
    expect(toolbelt).not.toMatch(fromDebian);
  });

  it("is a current LTS (an even major from 24 on), and the helper's build target follows it", () => {
    const major = Number(pins(toolbelt).NODE_VERSION?.split(".")[0]);
    expect(major).toBeGreaterThanOrEqual(24);
    expect(major % 2).toBe(0);
    expect(toolbeltNodeTarget()).toBe(`node${major}`);
  });
});
