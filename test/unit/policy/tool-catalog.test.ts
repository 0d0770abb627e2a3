// The tool catalogue is the one place a tool's category is stated: every tool agent-ci offers must be in it,
// and what reads it (rules, plan mode, the report) follows it. WebFetch(domain:…) rules match hosts with the
// egress allowlist's matcher.
import { describe, expect, it } from "vitest";
import { parseRule, toolCategory, toolEntry, toolsOfCategory } from "../../../src/policy/index.js";
import { summarizeCall } from "../../../src/report/format.js";
import { ALL_TOOLS, FILE_WRITING_TOOLS } from "../../../src/tools/index.js";
import { engineFor } from "./helpers.js";

describe("the tool catalogue", () => {
  it.each(ALL_TOOLS.map((tool) => tool.name))("declares %s", (name) => {
    expect(toolEntry(name)).toBeDefined();
  });

  it("leaves exactly the edit category out of plan mode", () => {
    expect(ALL_TOOLS.filter((tool) => FILE_WRITING_TOOLS.has(tool.name)).map((tool) => tool.name)).toEqual(
      ALL_TOOLS.filter((tool) => toolCategory(tool.name) === "edit").map((tool) => tool.name),
    );
    expect(toolsOfCategory("edit")).toEqual(["Edit", "MultiEdit", "Write", "NotebookEdit"]);
  });

  it("gives MCP tools their own category, and nothing to a name nobody declared", () => {
    expect(toolCategory("mcp__github__create_issue")).toBe("mcp");
    expect(toolCategory("Frobnicate")).toBeUndefined();
  });

  it("summarises a call by the path field its tool declares", () => {
    expect(summarizeCall("NotebookEdit", { notebook_path: "/workspace/a.ipynb", new_source: "x" })).toBe(
      "a.ipynb",
    );
    expect(summarizeCall("Grep", { pattern: "TODO", path: "/workspace/src" })).toBe("TODO  in src");
  });
});

describe("WebFetch(domain:…) rules", () => {
  const source = { kind: "cli", label: "cli", trusted: true } as const;
  const fetch = (url: string) => ({ tool: "WebFetch", input: { url }, readOnly: true });

  it("deny a host however its URL spells it", async () => {
    const engine = await engineFor({ mode: "bypassPermissions", deny: ["WebFetch(domain:secret.test)"] });
    for (const url of ["https://secret.test/", "https://SECRET.test./x", "http://secret.test:8080/"])
      expect(engine.decide(fetch(url)).behavior, url).toBe("deny");
    expect(engine.decide(fetch("https://notsecret.test/")).behavior).toBe("allow");
  });

  it("match names below a wildcard, not the domain itself", async () => {
    const engine = await engineFor({ allow: ["WebFetch(domain:*.docs.test)"] });
    expect(engine.decide(fetch("https://api.docs.test/x")).behavior).toBe("allow");
    expect(engine.decide(fetch("https://docs.test/x")).behavior).toBe("deny");
    expect(engine.decide(fetch("https://evildocs.test/x")).behavior).toBe("deny");
  });

  it.each(["domain:10.0.0.1", "domain:a..b", "domain:host.test:443", "host.test"])(
    "refuse the specifier %s at load",
    (specifier) => {
      expect(() => parseRule(`WebFetch(${specifier})`, "allow", source)).toThrow(/WebFetch|domain/);
    },
  );
});
