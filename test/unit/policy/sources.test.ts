/**
 * Configuration: rule syntax errors, sources and trust (R16, R18), mode selection, precedence,
 * Claude Code settings files and presets.
 */
import { describe, expect, it } from "vitest";
import {
  createPolicyEngine,
  loadPolicy,
  parseRule,
  parseSettingsFile,
  PolicyConfigError,
  presetSource,
  PRESET_NAMES,
  type PolicySourceInput,
  type RuleSource,
} from "../../../src/policy/index.js";
import { bash } from "./helpers.js";

const cli: RuleSource = { kind: "cli", label: "--allow", trusted: true };
const action: RuleSource = { kind: "action", label: "action inputs", trusted: true };
const workspace: RuleSource = { kind: "workspace-settings", label: ".claude/settings.json", trusted: false };
const agentCiFile: RuleSource = { kind: "workspace-settings", label: ".agent-ci.json", trusted: false };

function configError(run: () => unknown): PolicyConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof PolicyConfigError) return error;
    throw error;
  }
  throw new Error("expected a PolicyConfigError");
}

describe("rule syntax", () => {
  it.each([
    ["Bash"],
    ["Bash(npm test)"],
    ["Bash(npm run test:*)"],
    ["Bash(git diff *)"],
    ["Bash(*)"],
    ['Bash(git commit -m "fix (x)":*)'],
    ["Read(./.env)"],
    ["Read(**/*.pem)"],
    ["Edit(src/**)"],
    ["Edit(/.github/**)"],
    ["Read(//etc/hosts)"],
    ["Read(~/.ssh/**)"],
    ["Write"],
    ["Write(docs/**)"],
    ["Glob"],
    ["Grep"],
    ["WebFetch"],
    ["WebFetch(domain:example.com)"],
    ["WebFetch(domain:*.example.com)"],
    ["TodoWrite"],
    ["Task(reviewer)"],
    ["mcp__github"],
    ["mcp__github__create_issue"],
    ["mcp__github__*"],
  ])("accepts %s", (text) => {
    const rule = parseRule(text, "allow", cli);
    expect(rule.text).toBe(text);
    expect(rule.source).toBe(cli);
  });

  it.each([
    ["", "empty rule"],
    ["bash(ls)", "did you mean Bash"],
    ["Foo", "unknown tool"],
    ["Shell(ls)", "unknown tool"],
    ["mcp__", "malformed MCP"],
    ["Bash(ls", "unbalanced parentheses"],
    ["Bash)ls(", "unbalanced parentheses"],
    ["Bash(echo ( x)", "unbalanced parentheses"],
    ["Bash()", "empty specifier"],
    ["Bash(  )", "empty specifier"],
    ["Edit()", "empty specifier"],
    ["Bash(ls:* x)", "only valid at the end"],
    ["Bash(a:*:*)", "only valid at the end"],
    ["Bash(npm run *:*)", "cannot also contain"],
    ["Bash(src/**)", "path-glob syntax"],
    ["Bash(echo 'open)", "unbalanced single quote"],
    ["Read(npm test:*)", "Bash prefix syntax"],
    ["Read(~alice/x)", "~user"],
    ["Read(!x)", "negated"],
    ["Edit(a\nb)", "control characters"],
    ["TodoWrite(x)", "takes no specifier"],
    ["BashOutput(1)", "takes no specifier"],
    ["mcp__x__y(z)", "takes no specifier"],
    ["WebFetch(example.com)", "domain:"],
    ["WebFetch(domain:a/b)", "invalid domain"],
  ])("rejects %j", (text, reason) => {
    const error = configError(() => parseRule(text, "deny", cli));
    expect(error.subject).toBe(text);
    expect(error.source).toBe("--allow");
    expect(error.reason).toContain(reason);
    expect(error.message).toContain(JSON.stringify(text));
  });

  it("fails loadPolicy on the first invalid rule, naming it and its source", () => {
    const error = configError(() =>
      loadPolicy({ sources: [{ source: workspace, deny: ["Read(./.env)", "Bash(rm -rf:* x)"] }] }),
    );
    expect(error.subject).toBe("Bash(rm -rf:* x)");
    expect(error.source).toBe(".claude/settings.json");
  });
});

describe("modes", () => {
  it.each([["default"], ["plan"], ["acceptEdits"], ["bypassPermissions"]] as const)("accepts %s", (mode) => {
    expect(loadPolicy({ mode, sources: [] }).mode).toBe(mode);
  });

  it("reads Claude Code's dontAsk as default (agent-ci never asks)", () => {
    expect(loadPolicy({ mode: "dontAsk", sources: [] }).mode).toBe("default");
  });

  it.each([["yolo"], ["Plan"], ["bypass"], [""]])("rejects the mode %j", (mode) => {
    const error = configError(() => loadPolicy({ mode, sources: [] }));
    expect(error.reason).toContain("unknown permission mode");
  });

  it("rejects an unknown defaultMode even from an untrusted source", () => {
    expect(() => loadPolicy({ sources: [{ source: workspace, defaultMode: "yolo" }] })).toThrow(
      PolicyConfigError,
    );
  });

  it("defaults to default mode", () => {
    expect(loadPolicy({ sources: [] })).toMatchObject({ mode: "default", modeSource: "built-in default" });
  });

  it("takes the last trusted defaultMode, and the mode option over all", () => {
    const sources: PolicySourceInput[] = [
      { source: action, defaultMode: "plan" },
      { source: cli, defaultMode: "acceptEdits" },
    ];
    expect(loadPolicy({ sources })).toMatchObject({ mode: "acceptEdits", modeSource: "--allow" });
    expect(loadPolicy({ mode: "plan", sources })).toMatchObject({ mode: "plan", modeSource: "mode option" });
  });
});

describe("sources and trust (R18)", () => {
  const sources: PolicySourceInput[] = [
    { source: cli, allow: ["Bash(npm test:*)"], deny: ["Bash(curl:*)"] },
    {
      source: workspace,
      allow: ["Bash(*)", "Edit"],
      deny: ["Read(./.env)"],
      ask: ["Bash(git push:*)"],
      defaultMode: "bypassPermissions",
      additionalDirectories: ["/"],
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "curl evil" }] }] },
    },
    { source: agentCiFile, allow: ["Bash"] },
  ];

  it("keeps deny and ask rules from untrusted sources and drops everything that grants", () => {
    const policy = loadPolicy({ sources });
    expect(policy.mode).toBe("default");
    expect(policy.rules.map((rule) => `${rule.behavior} ${rule.text} ${rule.source.label}`)).toEqual([
      "deny Bash(curl:*) --allow",
      "allow Bash(npm test:*) --allow",
      "deny Read(./.env) .claude/settings.json",
      "ask Bash(git push:*) .claude/settings.json",
    ]);
    expect(policy.additionalDirectories).toEqual([]);
    expect(policy.hooks).toEqual([]);
    expect(policy.ignored.map((entry) => [entry.kind, entry.text, entry.source])).toEqual([
      ["rule", "Bash(*)", ".claude/settings.json"],
      ["rule", "Edit", ".claude/settings.json"],
      ["mode", "bypassPermissions", ".claude/settings.json"],
      ["directory", "/", ".claude/settings.json"],
      ["hooks", "PreToolUse Bash: curl evil", ".claude/settings.json"],
      ["rule", "Bash", ".agent-ci.json"],
    ]);
    for (const entry of policy.ignored) expect(entry.reason).toContain("pull request");
  });

  it("accepts everything from workspace files when trustWorkspace is set", () => {
    const policy = loadPolicy({ sources, trustWorkspace: true });
    expect(policy.mode).toBe("bypassPermissions");
    expect(policy.ignored).toEqual([]);
    expect(policy.rules.filter((rule) => rule.behavior === "allow")).toHaveLength(4);
    expect(policy.hooks).toHaveLength(1);
  });

  it("a PR that allows Bash(*) gains nothing", async () => {
    const engine = await createPolicyEngine(loadPolicy({ sources }));
    expect(engine.decide(bash("rm -rf .")).behavior).toBe("deny");
    expect(engine.decide(bash("npm test")).behavior).toBe("allow");
    expect(engine.decide(bash("curl x")).behavior).toBe("deny");
    expect(engine.decide(bash("git push")).reason).toContain("dontAsk");
  });
});

describe("precedence (R16)", () => {
  it.each([
    [
      "deny beats allow",
      { allow: ["Bash(git:*)"], deny: ["Bash(git push:*)"] },
      "git push",
      "deny",
      "Bash(git push:*)",
    ],
    [
      "ask beats allow",
      { allow: ["Bash(git:*)"], ask: ["Bash(git push:*)"] },
      "git push",
      "deny",
      "Bash(git push:*)",
    ],
    [
      "deny beats ask",
      { deny: ["Bash(git push:*)"], ask: ["Bash(git:*)"] },
      "git push",
      "deny",
      "Bash(git push:*)",
    ],
    [
      "allow when nothing else matches",
      { allow: ["Bash(git:*)"], ask: ["Bash(git push:*)"] },
      "git log",
      "allow",
      "Bash(git:*)",
    ],
    ["bare Bash deny beats any allow", { allow: ["Bash(ls:*)"], deny: ["Bash"] }, "ls", "deny", "Bash"],
  ] as const)("%s", async (_name, rules, command, behavior, ruleText) => {
    const policy = loadPolicy({ sources: [{ source: cli, ...rules }] });
    for (const mode of ["default", "acceptEdits", "bypassPermissions"] as const) {
      const decision = (await createPolicyEngine({ ...policy, mode })).decide(bash(command));
      expect(decision.behavior).toBe(behavior);
      // bypassPermissions skips allow rules: an allow there is the mode's.
      if (behavior === "deny" || mode !== "bypassPermissions") expect(decision.rule?.text).toBe(ruleText);
    }
  });

  it("merges rules from every source; a deny anywhere wins", async () => {
    const policy = loadPolicy({
      sources: [
        { source: cli, allow: ["Bash(rm:*)"] },
        { source: workspace, deny: ["Bash(rm -rf:*)"] },
      ],
    });
    const engine = await createPolicyEngine(policy);
    expect(engine.decide(bash("rm x")).behavior).toBe("allow");
    const decision = engine.decide(bash("rm -fr x"));
    expect(decision).toMatchObject({
      behavior: "deny",
      rule: { text: "Bash(rm -rf:*)", source: ".claude/settings.json" },
    });
  });
});

describe("Claude Code settings files", () => {
  it("reads permissions and hooks, tolerating unknown keys", () => {
    const input = parseSettingsFile(
      JSON.stringify({
        $schema: "https://json.schemastore.org/claude-code-settings.json",
        model: "x",
        env: { A: "1" },
        permissions: {
          allow: ["Bash(npm test:*)"],
          deny: ["Read(./.env)"],
          ask: ["Bash(git push:*)"],
          defaultMode: "acceptEdits",
          additionalDirectories: ["/tmp/x"],
          disableBypassPermissionsMode: "disable",
        },
        hooks: {
          PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./guard.sh", timeout: 5 }] }],
          Stop: [{ hooks: [{ type: "command", command: "echo stop" }] }],
        },
      }),
      cli,
    );
    expect(input).toMatchObject({
      allow: ["Bash(npm test:*)"],
      deny: ["Read(./.env)"],
      ask: ["Bash(git push:*)"],
      defaultMode: "acceptEdits",
      additionalDirectories: ["/tmp/x"],
    });
    const policy = loadPolicy({ sources: [input] });
    expect(policy.hooks).toEqual([
      { event: "PreToolUse", matcher: "Bash", command: "./guard.sh", timeoutSeconds: 5, source: "--allow" },
    ]);
  });

  it("accepts a file without permissions", () => {
    expect(parseSettingsFile({ model: "x" }, workspace)).toMatchObject({ allow: undefined, deny: undefined });
  });

  it.each([
    ["not JSON", "{ permissions: ", "not valid JSON"],
    ["allow is not a list", JSON.stringify({ permissions: { allow: "Bash" } }), "permissions.allow"],
    ["a rule is not a string", JSON.stringify({ permissions: { deny: [1] } }), "permissions.deny.0"],
    ["permissions is not an object", JSON.stringify({ permissions: [] }), "permissions"],
    [
      "a hook of an unknown type",
      JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "script", command: "x" }] }] } }),
      "hooks",
    ],
    ["a top level that is not an object", "[]", "top level"],
  ])("rejects %s", (_name, text, where) => {
    const error = configError(() => parseSettingsFile(text, workspace));
    expect(error.source).toBe(".claude/settings.json");
    expect(error.reason).toContain(where);
  });

  it("rejects an invalid hook matcher at load time", () => {
    const input = parseSettingsFile(
      { hooks: { PreToolUse: [{ matcher: "Bash(", hooks: [{ type: "command", command: "x" }] }] } },
      cli,
    );
    expect(() => loadPolicy({ sources: [input] })).toThrow(/invalid hook matcher/);
  });
});

describe("presets", () => {
  it.each(PRESET_NAMES.map((name) => [name]))("%s loads and validates", (name) => {
    const policy = loadPolicy({ sources: [presetSource(name)] });
    expect(policy.modeSource).toBe(`preset:${name}`);
  });

  it("maps to the expected modes", () => {
    expect(loadPolicy({ sources: [presetSource("read-only")] }).mode).toBe("plan");
    expect(loadPolicy({ sources: [presetSource("edit")] }).mode).toBe("acceptEdits");
    expect(loadPolicy({ sources: [presetSource("full")] }).mode).toBe("bypassPermissions");
  });

  it("lets later sources add rules and override the mode", async () => {
    const policy = loadPolicy({
      sources: [
        presetSource("edit"),
        { source: cli, deny: ["Bash(npm run build:*)"], defaultMode: "default" },
      ],
    });
    expect(policy.mode).toBe("default");
    const engine = await createPolicyEngine(policy);
    expect(engine.decide(bash("npm test")).behavior).toBe("allow");
    expect(engine.decide(bash("npm run build")).behavior).toBe("deny");
    expect(engine.decide(bash("git push origin main")).rule?.source).toBe("preset:edit");
  });

  it("rejects an unknown preset", () => {
    expect(configError(() => presetSource("yolo")).reason).toContain("read-only, edit, full");
  });
});
