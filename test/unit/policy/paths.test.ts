/**
 * Path rules (RELIABILITY P1–P3, P11, P12, R15): canonical matching, gitignore semantics, case
 * sensitivity, workspace containment and protected paths, for file tools.
 */
import { describe, expect, it } from "vitest";
import type { PolicyCall } from "../../../src/policy/index.js";
import {
  compilePathPattern,
  isInside,
  normalizeAbsolute,
  resolveContainerPath,
} from "../../../src/policy/rule-paths.js";
import { engineFor, type EngineConfig } from "./helpers.js";

interface PathRow {
  readonly name: string;
  readonly config: EngineConfig;
  readonly call: PolicyCall;
  readonly expect: "allow" | "deny";
  readonly decidedBy?: string;
}

const read = (path: string, paths?: string[]): PolicyCall => ({
  tool: "Read",
  input: { file_path: path },
  readOnly: true,
  paths,
});
const edit = (path: string, paths?: string[], tool = "Edit"): PolicyCall => ({
  tool,
  input: { file_path: path },
  readOnly: false,
  paths,
});

const denyEnv: EngineConfig = { deny: ["Read(./.env)"] };
const srcOnly: EngineConfig = { allow: ["Edit(src/**)"] };

const rows: PathRow[] = [
  // Read(./.env): every spelling of the same file, and only that file.
  { name: ".env", config: denyEnv, call: read(".env"), expect: "deny", decidedBy: "rule" },
  { name: "./.env", config: denyEnv, call: read("./.env"), expect: "deny", decidedBy: "rule" },
  {
    name: "/workspace/.env",
    config: denyEnv,
    call: read("/workspace/.env"),
    expect: "deny",
    decidedBy: "rule",
  },
  { name: "sub/../.env", config: denyEnv, call: read("sub/../.env"), expect: "deny", decidedBy: "rule" },
  { name: "/workspace/sub/../.env", config: denyEnv, call: read("/workspace/sub/../.env"), expect: "deny" },
  { name: "//workspace//.env", config: denyEnv, call: read("//workspace//.env"), expect: "deny" },
  { name: "/workspace/./.env", config: denyEnv, call: read("/workspace/./.env"), expect: "deny" },
  {
    name: "symlink resolved by the pipeline",
    config: denyEnv,
    call: read("link-to-env", ["/workspace/.env"]),
    expect: "deny",
  },
  { name: "case variant .ENV (case-sensitive)", config: denyEnv, call: read(".ENV"), expect: "allow" },
  { name: "case variant .Env", config: denyEnv, call: read(".Env"), expect: "allow" },
  { name: "sub/.env is another file", config: denyEnv, call: read("sub/.env"), expect: "allow" },
  { name: ".env.local", config: denyEnv, call: read(".env.local"), expect: "allow" },
  {
    name: "Grep of .env",
    config: denyEnv,
    call: { tool: "Grep", input: { pattern: "K", path: ".env" }, readOnly: true },
    expect: "deny",
  },
  {
    name: "Grep of the workspace",
    config: denyEnv,
    call: { tool: "Grep", input: { pattern: "K" }, readOnly: true },
    expect: "allow",
  },
  {
    name: "Glob naming .env",
    config: denyEnv,
    call: { tool: "Glob", input: { pattern: ".env" }, readOnly: true },
    expect: "deny",
  },
  // Containment (P1–P3): in every mode, before any rule.
  {
    name: "/workspace-evil/x",
    config: {},
    call: read("/workspace-evil/x"),
    expect: "deny",
    decidedBy: "outside-workspace",
  },
  {
    name: "/workspace/../workspace2/x",
    config: {},
    call: read("/workspace/../workspace2/x"),
    expect: "deny",
  },
  { name: "../../etc/passwd", config: {}, call: read("../../etc/passwd"), expect: "deny" },
  { name: "/etc/shadow", config: { mode: "bypassPermissions" }, call: read("/etc/shadow"), expect: "deny" },
  {
    name: "/proc/self/environ",
    config: { mode: "bypassPermissions" },
    call: read("/proc/self/environ"),
    expect: "deny",
  },
  {
    name: "/var/run/docker.sock",
    config: { mode: "bypassPermissions" },
    call: read("/var/run/docker.sock"),
    expect: "deny",
  },
  {
    name: "pipeline path outside",
    config: { mode: "bypassPermissions" },
    call: read("leak", ["/etc/passwd"]),
    expect: "deny",
  },
  { name: "empty path", config: {}, call: read(""), expect: "deny" },
  { name: "NUL in path", config: {}, call: read("a\u0000b"), expect: "deny" },
  {
    name: "Glob ../**",
    config: {},
    call: { tool: "Glob", input: { pattern: "../**" }, readOnly: true },
    expect: "deny",
  },
  {
    name: "Glob /etc/*",
    config: {},
    call: { tool: "Glob", input: { pattern: "/etc/*" }, readOnly: true },
    expect: "deny",
  },
  {
    name: "Grep path /",
    config: {},
    call: { tool: "Grep", input: { pattern: "x", path: "/" }, readOnly: true },
    expect: "deny",
  },
  {
    name: "Glob src/**/*.ts",
    config: {},
    call: { tool: "Glob", input: { pattern: "src/**/*.ts" }, readOnly: true },
    expect: "allow",
  },
  {
    name: "the workspace root itself",
    config: {},
    call: { tool: "LS", input: { path: "/workspace" }, readOnly: true },
    expect: "allow",
  },
  // Edit(src/**) (R15).
  { name: "src/a.ts", config: srcOnly, call: edit("src/a.ts"), expect: "allow", decidedBy: "rule" },
  { name: "src/deep/b.ts", config: srcOnly, call: edit("src/deep/b.ts"), expect: "allow" },
  { name: "/workspace/src/a.ts", config: srcOnly, call: edit("/workspace/src/a.ts"), expect: "allow" },
  { name: "src//a.ts", config: srcOnly, call: edit("src//a.ts"), expect: "allow" },
  {
    name: "Write governed by Edit rules",
    config: srcOnly,
    call: edit("src/new.ts", undefined, "Write"),
    expect: "allow",
  },
  {
    name: "MultiEdit governed by Edit rules",
    config: srcOnly,
    call: edit("src/a.ts", undefined, "MultiEdit"),
    expect: "allow",
  },
  {
    name: "src/../.github/workflows/ci.yml",
    config: srcOnly,
    call: edit("src/../.github/workflows/ci.yml"),
    expect: "deny",
    decidedBy: "protected-path",
  },
  {
    name: "./src/../../x",
    config: srcOnly,
    call: edit("./src/../../x"),
    expect: "deny",
    decidedBy: "outside-workspace",
  },
  {
    name: "src/l -> ../.git (resolved)",
    config: srcOnly,
    call: edit("src/l/config", ["/workspace/.git/config"]),
    expect: "deny",
    decidedBy: "protected-path",
  },
  { name: "srcx/a.ts", config: srcOnly, call: edit("srcx/a.ts"), expect: "deny", decidedBy: "mode" },
  { name: "SRC/a.ts (case-sensitive)", config: srcOnly, call: edit("SRC/a.ts"), expect: "deny" },
  { name: "src itself", config: srcOnly, call: edit("src"), expect: "allow" },
  // Pattern forms.
  { name: "*.pem at the root", config: { deny: ["Read(*.pem)"] }, call: read("a.pem"), expect: "deny" },
  { name: "*.pem at any depth", config: { deny: ["Read(*.pem)"] }, call: read("x/y/a.pem"), expect: "deny" },
  {
    name: "*.pem is not a.pem.txt",
    config: { deny: ["Read(*.pem)"] },
    call: read("a.pem.txt"),
    expect: "allow",
  },
  { name: "**/*.pem", config: { deny: ["Read(**/*.pem)"] }, call: read("k/key.pem"), expect: "deny" },
  {
    name: "secrets/ at any depth",
    config: { deny: ["Read(secrets/)"] },
    call: read("x/secrets/a"),
    expect: "deny",
  },
  {
    name: "/config/*.json anchored",
    config: { deny: ["Read(/config/*.json)"] },
    call: read("config/a.json"),
    expect: "deny",
  },
  {
    name: "/config/*.json single level",
    config: { deny: ["Read(/config/*.json)"] },
    call: read("config/sub/a.json"),
    expect: "allow",
  },
  {
    name: "/config/*.json not nested",
    config: { deny: ["Read(/config/*.json)"] },
    call: read("x/config/a.json"),
    expect: "allow",
  },
  {
    name: "a/b anchored by its middle slash",
    config: { deny: ["Read(a/b)"] },
    call: read("x/a/b"),
    expect: "allow",
  },
  {
    name: "a/b matches its contents",
    config: { deny: ["Read(a/b)"] },
    call: read("a/b/c.txt"),
    expect: "deny",
  },
  {
    name: "//abs rule",
    config: { deny: ["Read(//workspace/secret.txt)"] },
    call: read("secret.txt"),
    expect: "deny",
  },
  { name: "{a,b} braces", config: { deny: ["Read(/{a,b}.key)"] }, call: read("b.key"), expect: "deny" },
  // Protected paths (P12).
  {
    name: ".git/hooks/pre-commit in bypass",
    config: { mode: "bypassPermissions" },
    call: edit(".git/hooks/pre-commit"),
    expect: "deny",
    decidedBy: "protected-path",
  },
  {
    name: ".git/config in acceptEdits",
    config: { mode: "acceptEdits" },
    call: edit(".git/config", undefined, "Write"),
    expect: "deny",
  },
  {
    name: "nested .git",
    config: { mode: "acceptEdits" },
    call: edit("vendor/x/.git/config"),
    expect: "deny",
  },
  { name: ".gitattributes", config: { mode: "acceptEdits" }, call: edit(".gitattributes"), expect: "deny" },
  {
    name: "sub/.gitattributes",
    config: { mode: "acceptEdits" },
    call: edit("sub/.gitattributes"),
    expect: "deny",
  },
  {
    name: ".github/workflows/ci.yml",
    config: { mode: "bypassPermissions" },
    call: edit(".github/workflows/ci.yml"),
    expect: "deny",
  },
  {
    name: ".agent-ci.json",
    config: { mode: "bypassPermissions" },
    call: edit(".agent-ci.json"),
    expect: "deny",
  },
  {
    name: ".claude/settings.json",
    config: { mode: "bypassPermissions" },
    call: edit(".claude/settings.json"),
    expect: "deny",
  },
  {
    name: ".claude/settings.local.json",
    config: { mode: "bypassPermissions" },
    call: edit(".claude/settings.local.json"),
    expect: "deny",
  },
  { name: ".mcp.json", config: { mode: "bypassPermissions" }, call: edit(".mcp.json"), expect: "deny" },
  {
    name: "reading a protected path is fine",
    config: {},
    call: read(".github/workflows/ci.yml"),
    expect: "allow",
  },
  {
    name: ".github/dependabot.yml is not protected",
    config: { mode: "acceptEdits" },
    call: edit(".github/dependabot.yml"),
    expect: "allow",
  },
  {
    name: ".gitignore is not protected",
    config: { mode: "acceptEdits" },
    call: edit(".gitignore"),
    expect: "allow",
  },
  {
    name: ".claude/commands/x.md is not protected",
    config: { mode: "acceptEdits" },
    call: edit(".claude/commands/x.md"),
    expect: "allow",
  },
  {
    name: "a broad rule does not name workflows",
    config: { allow: ["Edit(/.github/**)"] },
    call: edit(".github/workflows/ci.yml"),
    expect: "deny",
    decidedBy: "protected-path",
  },
  {
    name: "Edit(**) does not name .git",
    config: { mode: "bypassPermissions", allow: ["Edit(**)"] },
    call: edit(".git/config"),
    expect: "deny",
  },
  {
    name: "explicit workflow rule",
    config: { allow: ["Edit(.github/workflows/**)"] },
    call: edit(".github/workflows/ci.yml"),
    expect: "allow",
    decidedBy: "rule",
  },
  {
    name: "explicit .gitattributes rule",
    config: { mode: "acceptEdits", allow: ["Edit(/.gitattributes)"] },
    call: edit(".gitattributes"),
    expect: "allow",
  },
  {
    name: "explicit .git rule",
    config: { allow: ["Edit(.git/hooks/**)"] },
    call: edit(".git/hooks/pre-commit"),
    expect: "allow",
  },
  {
    name: "explicit rule for another protected file",
    config: { allow: ["Edit(.github/workflows/**)"] },
    call: edit(".mcp.json"),
    expect: "deny",
  },
  {
    name: "deny beats an explicit allow",
    config: { allow: ["Edit(.github/workflows/**)"], deny: ["Edit(.github/**)"] },
    call: edit(".github/workflows/ci.yml"),
    expect: "deny",
    decidedBy: "rule",
  },
  // additionalDirectories extend the roots.
  {
    name: "additional directory",
    config: { mode: "acceptEdits", additionalDirectories: ["/tmp/scratch"] },
    call: edit("/tmp/scratch/x"),
    expect: "allow",
  },
  {
    name: "outside the additional directory",
    config: { mode: "acceptEdits", additionalDirectories: ["/tmp/scratch"] },
    call: edit("/tmp/other"),
    expect: "deny",
  },
  {
    name: "a rule cannot extend the workspace",
    config: { allow: ["Edit(//tmp/**)"] },
    call: edit("/tmp/x"),
    expect: "deny",
    decidedBy: "outside-workspace",
  },
];

describe("path rules", () => {
  it.each(rows.map((row) => [row.name, row] as const))("%s", async (_name, row) => {
    const decision = (await engineFor(row.config)).decide(row.call);
    expect(decision.behavior, decision.reason).toBe(row.expect);
    if (row.decidedBy !== undefined) expect(decision.decidedBy, decision.reason).toBe(row.decidedBy);
  });
});

describe("path helpers", () => {
  it.each([
    ["/workspace/a/../b", "/workspace/b"],
    ["/workspace/./a//b/", "/workspace/a/b"],
    ["/../../etc", "/etc"],
    ["//", "/"],
    ["/workspace/..", "/"],
  ])("normalizes %s", (input, output) => {
    expect(normalizeAbsolute(input)).toBe(output);
  });

  it.each([
    ["/workspace", "/workspace", true],
    ["/workspace/a", "/workspace", true],
    ["/workspace-evil", "/workspace", false],
    ["/workspace-evil/x", "/workspace", false],
    ["/workspac", "/workspace", false],
    ["/anything", "/", true],
  ] as const)("isInside(%s, %s) is %s", (path, root, inside) => {
    expect(isInside(path, root)).toBe(inside);
  });

  it("resolves relative, home and invalid paths", () => {
    expect(resolveContainerPath("a/b", "/workspace/src", "/home/agent")).toBe("/workspace/src/a/b");
    expect(resolveContainerPath("~/x", "/workspace", "/home/agent")).toBe("/home/agent/x");
    expect(resolveContainerPath("~", "/workspace", "/home/agent")).toBe("/home/agent");
    expect(resolveContainerPath("", "/workspace", "/home/agent")).toBeUndefined();
    expect(resolveContainerPath("a\u0000", "/workspace", "/home/agent")).toBeUndefined();
  });

  it("compiles the Claude Code pattern forms", () => {
    const context = { workspaceRoot: "/workspace", homeDir: "/home/agent" };
    expect(compilePathPattern("//etc/x", context).glob).toBe("/etc/x");
    expect(compilePathPattern("~/.ssh/*", context).glob).toBe("/home/agent/.ssh/*");
    expect(compilePathPattern("/src/**", context).glob).toBe("/workspace/src/**");
    expect(compilePathPattern("./.env", context).glob).toBe("/workspace/.env");
    expect(compilePathPattern("src/*.ts", context).glob).toBe("/workspace/src/*.ts");
    expect(compilePathPattern(".env", context).glob).toBe("/workspace/**/.env");
    expect(compilePathPattern(".env", context).literalName).toBe(".env");
    expect(compilePathPattern("./.env", context).literal).toBe("/workspace/.env");
  });
});
