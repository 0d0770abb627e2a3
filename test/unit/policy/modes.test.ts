/**
 * Modes × tools: what each permission mode allows with no rules, with allow rules, and that deny
 * rules win in every mode (docs/permissions.md).
 */
import { describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";
import {
  compileContainerRules,
  loadPolicy,
  PERMISSION_MODES,
  type PermissionMode,
  type PolicyCall,
} from "../../../src/policy/index.js";
import { MODE_MEANINGS } from "../../../src/policy/modes.js";
import { bash, engineFor, type EngineConfig } from "./helpers.js";

type Expected = Readonly<Record<PermissionMode, "allow" | "deny">>;

const all = (behavior: "allow" | "deny"): Expected => ({
  default: behavior,
  plan: behavior,
  acceptEdits: behavior,
  bypassPermissions: behavior,
});
const only = (...allowed: PermissionMode[]): Expected =>
  Object.fromEntries(
    PERMISSION_MODES.map((mode) => [mode, allowed.includes(mode) ? "allow" : "deny"]),
  ) as Expected;

const call = (tool: string, input: Record<string, unknown>, readOnly: boolean): PolicyCall => ({
  tool,
  input,
  readOnly,
});
const file = (tool: string, path: string, readOnly: boolean): PolicyCall =>
  call(tool, { file_path: path }, readOnly);

const noRules: ReadonlyArray<readonly [string, PolicyCall, Expected]> = [
  ["Read", file("Read", "src/a.ts", true), all("allow")],
  ["Grep", call("Grep", { pattern: "x" }, true), all("allow")],
  ["Glob", call("Glob", { pattern: "**/*.ts" }, true), all("allow")],
  ["LS", call("LS", { path: "src" }, true), all("allow")],
  ["Edit", file("Edit", "src/a.ts", false), only("acceptEdits", "bypassPermissions")],
  ["Write", file("Write", "src/a.ts", false), only("acceptEdits", "bypassPermissions")],
  ["MultiEdit", file("MultiEdit", "src/a.ts", false), only("acceptEdits", "bypassPermissions")],
  [
    "NotebookEdit",
    call("NotebookEdit", { notebook_path: "a.ipynb" }, false),
    only("acceptEdits", "bypassPermissions"),
  ],
  ["TodoWrite", call("TodoWrite", { todos: [] }, false), all("allow")],
  ["BashOutput", call("BashOutput", { bash_id: "1" }, true), all("allow")],
  ["KillShell", call("KillShell", { shell_id: "1" }, false), all("allow")],
  ["WebFetch (network)", call("WebFetch", { url: "https://example.com" }, true), only("bypassPermissions")],
  // Starting a subagent needs no rule, in any mode: its calls are decided one by one by the same policy.
  ["Task", call("Task", { subagent_type: "x", prompt: "p" }, false), all("allow")],
  ["TaskOutput", call("TaskOutput", { task_id: "1" }, true), all("allow")],
  // An MCP tool needs an allow rule even when its server marks it read-only (Claude Code would ask).
  ["read-only MCP tool", call("mcp__srv__read", {}, true), only("bypassPermissions")],
  ["writing MCP tool", call("mcp__srv__write", {}, false), only("bypassPermissions")],
  ["Bash proven read-only", bash("git status && ls -la"), all("allow")],
  ["Bash writing", bash("npm install"), only("bypassPermissions")],
  ["Bash redirect to a file", bash("ls > out.txt"), only("acceptEdits", "bypassPermissions")],
  ["Bash redirect to /dev/null", bash("ls > /dev/null"), all("allow")],
  ["Edit of a workflow", file("Edit", ".github/workflows/ci.yml", false), all("deny")],
  ["Read outside", file("Read", "/etc/passwd", true), all("deny")],
  ["Write outside", file("Write", "/etc/x", false), all("deny")],
  ["Bash write outside", bash("echo x > /etc/x"), all("deny")],
];

const withAllows: EngineConfig = {
  allow: [
    "Edit(src/**)",
    "Bash(npm install:*)",
    "WebFetch(domain:example.com)",
    "Task",
    "mcp__srv__write",
    "mcp__srv__read",
  ],
};
const allowRows: ReadonlyArray<readonly [string, PolicyCall, Expected]> = [
  ["Edit by rule", file("Edit", "src/a.ts", false), only("default", "acceptEdits", "bypassPermissions")],
  ["Edit outside the rule", file("Edit", "lib/a.ts", false), only("acceptEdits", "bypassPermissions")],
  ["Bash by rule", bash("npm install left-pad"), only("default", "acceptEdits", "bypassPermissions")],
  ["WebFetch by domain", call("WebFetch", { url: "https://example.com/x" }, true), all("allow")],
  [
    "WebFetch other domain",
    call("WebFetch", { url: "https://evil.example.org/" }, true),
    only("bypassPermissions"),
  ],
  ["Task by rule", call("Task", { subagent_type: "x" }, false), all("allow")],
  [
    "MCP by server rule",
    call("mcp__srv__write", {}, false),
    only("default", "acceptEdits", "bypassPermissions"),
  ],
  // Plan mode: a read-only-hinted MCP tool runs with a rule naming it.
  ["read-only MCP tool by rule", call("mcp__srv__read", {}, true), all("allow")],
];

const withDenies: EngineConfig = {
  allow: ["Bash", "Edit", "Read"],
  deny: ["Read(./.env)", "Bash(git status:*)", "Edit(src/**)", "Grep", "Task(Explore)"],
};
const denyRows: ReadonlyArray<readonly [string, PolicyCall, Expected]> = [
  ["Read denied path", file("Read", ".env", true), all("deny")],
  ["Bash denied command", bash("git status"), all("deny")],
  ["Bash denied inside a compound", bash("echo a && git status --short"), all("deny")],
  ["Edit denied path", file("Edit", "src/a.ts", false), all("deny")],
  ["Grep denied tool", call("Grep", { pattern: "x" }, true), all("deny")],
  ["Read other path", file("Read", "README.md", true), all("allow")],
  ["Task of a denied type", call("Task", { subagent_type: "Explore", prompt: "p" }, false), all("deny")],
  ["Agent (the alias) of a denied type", call("Agent", { subagent_type: "Explore" }, false), all("deny")],
  ["Task of another type", call("Task", { subagent_type: "Plan", prompt: "p" }, false), all("allow")],
];

// B4: the resource tools are the server's they name: its rules decide them as they decide its tools.
const resourcesOf = (server?: string) => [
  call("ListMcpResourcesTool", server === undefined ? {} : { server }, true),
  call("ReadMcpResourceTool", { server, uri: "x://y" }, true),
];
const withServerDenies: EngineConfig = {
  allow: ["mcp__open"],
  deny: ["mcp__srv", "mcp__other__*", "mcp__open__one_tool"],
};
const serverDenyRows: ReadonlyArray<readonly [string, PolicyCall, Expected]> = [
  ...resourcesOf("srv").map((c) => [`${c.tool} of a denied server`, c, all("deny")] as const),
  ...resourcesOf("other").map((c) => [`${c.tool} of a server denied by __*`, c, all("deny")] as const),
  // A rule on one of the server's tools is not a rule on the server.
  ...resourcesOf("open").map((c) => [`${c.tool} of a server with one tool denied`, c, all("allow")] as const),
  ...resourcesOf("fine").map((c) => [`${c.tool} of a server without rules`, c, all("allow")] as const),
  ["ListMcpResourcesTool of every server", call("ListMcpResourcesTool", {}, true), all("allow")],
  ["a tool of the denied server", call("mcp__srv__read", {}, true), all("deny")],
];

describe.each([
  ["no rules", {}, noRules],
  ["allow rules", withAllows, allowRows],
  ["deny rules", withDenies, denyRows],
  ["MCP server deny rules", withServerDenies, serverDenyRows],
] as const)("modes × tools with %s", (_label, config, rows) => {
  for (const mode of PERMISSION_MODES) {
    it.each(rows.map(([name, request, expected]) => [name, request, expected[mode]] as const))(
      `${mode}: %s → %s`,
      async (_name, request, expected) => {
        const decision = (await engineFor({ ...config, mode })).decide(request);
        expect(decision.behavior, decision.reason).toBe(expected);
        expect(decision.mode).toBe(mode);
      },
    );
  }
});

describe("decisions explain themselves", () => {
  it("names the deny rule and its source", async () => {
    const decision = (await engineFor({ deny: ["Bash(rm:*)"] })).decide(bash("ls && rm -rf ."));
    expect(decision).toMatchObject({
      behavior: "deny",
      decidedBy: "rule",
      rule: { text: "Bash(rm:*)", source: "cli" },
      subcommand: "rm -rf .",
    });
    expect(decision.reason).toContain("Bash(rm:*)");
  });

  it("turns ask into a dontAsk denial", async () => {
    const decision = (await engineFor({ mode: "bypassPermissions", ask: ["Edit(src/**)"] })).decide(
      file("Edit", "src/a.ts", false),
    );
    expect(decision.behavior).toBe("deny");
    expect(decision.rule?.text).toBe("Edit(src/**)");
    expect(decision.reason).toContain("dontAsk");
  });

  it("says which mode stopped an edit and what rule would admit it", async () => {
    const decision = (await engineFor({})).decide(file("Edit", "src/a.ts", false));
    expect(decision.decidedBy).toBe("mode");
    expect(decision.reason).toContain("Edit(src/a.ts)");
  });

  it("B4 names the server's deny rule that refused a resource read", async () => {
    const decision = (await engineFor({ mode: "plan", deny: ["mcp__srv"] })).decide(
      call("ReadMcpResourceTool", { server: "srv", uri: "x://y" }, true),
    );
    expect(decision).toMatchObject({ behavior: "deny", decidedBy: "rule", rule: { text: "mcp__srv" } });
    expect(decision.reason).toContain("ReadMcpResourceTool on the MCP server srv");
  });

  it("names the allow rule that admitted a call", async () => {
    const decision = (await engineFor({ allow: ["Bash(npm test:*)"] })).decide(bash("npm test -- --watch"));
    expect(decision).toMatchObject({
      behavior: "allow",
      decidedBy: "rule",
      rule: { text: "Bash(npm test:*)" },
    });
  });

  it("rejects a Bash call without a command string", async () => {
    const decision = (await engineFor({ mode: "bypassPermissions" })).decide({
      tool: "Bash",
      input: {},
      readOnly: false,
    });
    expect(decision).toMatchObject({ behavior: "deny", decidedBy: "parse-failure" });
  });

  it("checks relative Bash paths from the call's working directory (C14)", async () => {
    const engine = await engineFor({ mode: "plan" });
    expect(engine.decide(bash("cat x", "/workspace/src")).behavior).toBe("allow");
    expect(engine.decide(bash("cat x", "/")).behavior).toBe("deny");
    expect(engine.decide(bash("ls", "/etc")).behavior).toBe("deny");
  });
});

describe("robustness", () => {
  it("never throws on odd input", async () => {
    const engine = await engineFor({ allow: ["Bash(echo:*)"], deny: ["Read(./.env)"] });
    const inputs: PolicyCall[] = [
      { tool: "Bash", input: { command: 42 }, readOnly: false },
      { tool: "Bash", input: { command: "" }, readOnly: false },
      { tool: "Bash", input: { command: "\\" }, readOnly: false },
      { tool: "Read", input: { file_path: ["a"] }, readOnly: true },
      { tool: "Read", input: {}, readOnly: true },
      { tool: "Glob", input: { pattern: "{{{{" }, readOnly: true },
      { tool: "WebFetch", input: { url: "not a url" }, readOnly: true },
      { tool: "Unknown", input: {}, readOnly: false },
      { tool: "Bash", input: { command: "echo hi" }, readOnly: false, cwd: "relative/dir" },
    ];
    for (const request of inputs) expect(() => engine.decide(request)).not.toThrow();
  });
});

describe("what a mode means, said once (src/policy/modes.ts)", () => {
  it("is what the gate decides and what the container enforces, in every mode", async () => {
    for (const mode of PERMISSION_MODES) {
      const meaning = MODE_MEANINGS[mode];
      const engine = await engineFor({ mode });
      const edit = engine.decide(call("Edit", { file_path: "src/a.ts" }, false));
      const install = engine.decide(bash("npm install left-pad"));
      expect({ mode, edit: edit.behavior, install: install.behavior }).toEqual({
        mode,
        edit: meaning.editsWithoutRule ? "allow" : "deny",
        install: meaning.everythingWithoutRule ? "allow" : "deny",
      });
      const policy = loadPolicy({ mode, sources: [] });
      expect(compileContainerRules(policy).workspaceReadOnly).toBe(meaning.readOnly);
    }
  });

  it("is decided nowhere else: src/ names the plan mode only in the policy", () => {
    const src = path.resolve(import.meta.dirname, "../../../src");
    const outside = fs
      .readdirSync(src, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts") && !file.startsWith(`policy${path.sep}`))
      .filter((file) => fs.readFileSync(path.join(src, file), "utf8").includes('"plan"'));
    expect(outside).toEqual([]);
  });
});
