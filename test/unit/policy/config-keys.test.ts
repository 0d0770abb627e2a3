/**
 * Settings files are checked, not skimmed: the resemblance rule (Damerau–Levenshtein, optimal string
 * alignment, case aside, at most two edits), which keys are known, and what a settings file's keys come to —
 * a misspelling of a key agent-ci reads stops the run naming the file, the key and the key it resembles;
 * Claude Code's other keys and unknown ones are noted and the run goes on.
 */
import { describe, expect, it } from "vitest";
import {
  CLAUDE_HOOK_EVENTS,
  CLAUDE_PERMISSIONS_KEYS,
  CLAUDE_SETTINGS_KEYS,
  checkKeys,
  describeIgnored,
  keyDistance,
  loadPolicy,
  parseSettingsFile,
  PolicyConfigError,
  RESEMBLANCE_EDITS,
  resembles,
  SETTINGS_KEY_RULES,
  type RuleSource,
} from "../../../src/policy/index.js";

const trustedFile: RuleSource = { kind: "settings-file", label: "settings:team.json", trusted: true };
const workspaceFile: RuleSource = {
  kind: "workspace-settings",
  label: "workspace:.claude/settings.json",
  trusted: false,
};

function configError(run: () => unknown): PolicyConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof PolicyConfigError) return error;
    throw error;
  }
  throw new Error("expected a PolicyConfigError");
}

describe("the distance between two keys", () => {
  it.each([
    ["deny", "deny", 0],
    ["defaultmode", "defaultMode", 0],
    ["DENY", "deny", 0],
    ["alow", "allow", 1],
    ["deney", "deny", 1],
    ["permisions", "permissions", 1],
    ["dney", "deny", 1],
    ["aks", "ask", 1],
    ["permissoins", "permissions", 1],
    ["hook", "hooks", 1],
    ["PreToolUSe", "PreToolUse", 0],
    ["PreTooluse ", "PreToolUse", 1],
    ["alllow", "allow", 1],
    ["denny", "deny", 1],
    ["defualtMode", "defaultMode", 1],
    ["mcpServer", "mcpServers", 1],
    ["comand", "command", 1],
    ["tols", "tools", 1],
    ["modle", "model", 1],
    ["alwo", "allow", 2],
    ["dny", "deny", 1],
    ["", "ask", 3],
    ["env", "ask", 3],
    ["allowed", "allow", 2],
    ["allowedTools", "allow", 7],
    ["model", "hooks", 4],
    ["requiredMaximumVersion", "requiredMinimumVersion", 2],
  ])("%j to %j is %i", (a, b, distance) => {
    expect(keyDistance(a, b)).toBe(distance);
    expect(keyDistance(b, a)).toBe(distance);
  });

  it.each([
    ["permisions", ["permissions", "hooks"], "permissions"],
    ["defaultmode", ["allow", "deny", "ask", "defaultMode"], "defaultMode"],
    ["deney", ["allow", "deny", "ask"], "deny"],
    ["Allow", ["allow"], "allow"],
    ["alwo", ["allow"], "allow"],
    ["alowed", ["allow"], undefined],
    ["statusLine", ["permissions", "hooks"], undefined],
    ["x", ["permissions", "hooks"], undefined],
    ["a".repeat(1_000_000), ["permissions", "hooks"], undefined],
  ])("%j resembles %j: %s", (key, known, like) => {
    expect(resembles(key, known)).toBe(like);
  });

  it(`counts at most ${RESEMBLANCE_EDITS} edits as a resemblance, one for a key of three characters`, () => {
    expect(RESEMBLANCE_EDITS).toBe(2);
    expect(resembles("dxxy", ["deny"])).toBe("deny");
    expect(resembles("dxxx", ["deny"])).toBeUndefined();
    expect(resembles("aks", ["ask"])).toBe("ask");
    expect(resembles("asks", ["ask"])).toBe("ask");
    expect(resembles("all", ["ask"])).toBeUndefined();
    expect(resembles("a", ["ask"])).toBeUndefined();
    expect(resembles("uri", ["url"])).toBe("url");
  });
});

describe("the keys agent-ci knows", () => {
  it("reads the keys of its schema, and knows every key Claude Code documents", () => {
    expect(SETTINGS_KEY_RULES.top.read).toEqual(["permissions", "hooks"]);
    expect(SETTINGS_KEY_RULES.top.accepted).toEqual(["$schema"]);
    expect(SETTINGS_KEY_RULES.permissions.read).toEqual([
      "allow",
      "deny",
      "ask",
      "defaultMode",
      "additionalDirectories",
    ]);
    expect(SETTINGS_KEY_RULES.hooks.read).toEqual(["PreToolUse", "PostToolUse"]);
    // What agent-ci reads is Claude Code's (the JSON Schema pointer aside).
    expect(CLAUDE_SETTINGS_KEYS).toEqual(expect.arrayContaining(["permissions", "hooks"]));
    expect(CLAUDE_PERMISSIONS_KEYS).toEqual(expect.arrayContaining([...SETTINGS_KEY_RULES.permissions.read]));
    expect(CLAUDE_HOOK_EVENTS).toEqual(expect.arrayContaining([...SETTINGS_KEY_RULES.hooks.read]));
    for (const list of [CLAUDE_SETTINGS_KEYS, CLAUDE_PERMISSIONS_KEYS, CLAUDE_HOOK_EVENTS])
      expect(new Set(list).size).toBe(list.length);
  });

  it("accepts a settings file with every documented key, each noted as unused but those agent-ci reads", () => {
    const everything = {
      ...Object.fromEntries(CLAUDE_SETTINGS_KEYS.map((k) => [k, null])),
      $schema: "https://json.schemastore.org/claude-code-settings.json",
      permissions: {
        ...Object.fromEntries(CLAUDE_PERMISSIONS_KEYS.map((k) => [k, "disable"])),
        allow: [],
        deny: ["Read(./secrets/**)"],
        ask: [],
        defaultMode: "default",
        additionalDirectories: [],
      },
      hooks: Object.fromEntries(CLAUDE_HOOK_EVENTS.map((k) => [k, []])),
    };
    const input = parseSettingsFile(JSON.parse(JSON.stringify(everything)), trustedFile);
    expect(input.deny).toEqual(["Read(./secrets/**)"]);
    expect(input.unusedKeys?.map((i) => i.severity)).toEqual(["info", "info", "info"]);
    const [top, permissions, hooks] = input.unusedKeys ?? [];
    expect(top?.reason).toBe("Claude Code keys that agent-ci does not use");
    expect(top?.text).toMatch(/^advisorModel, agent, .* and 119 more$/);
    expect(permissions?.text).toBe("disableBypassPermissionsMode, disableAutoMode");
    expect(hooks?.text).toMatch(/^PostToolUseFailure, PostToolBatch, /);
  });

  it("takes $schema without a word, and a key like it is no misspelling: nothing depends on it", () => {
    const input = parseSettingsFile({ $schema: "x", schema: "y", permissions: {} }, trustedFile);
    expect(input.unusedKeys?.map(describeIgnored)).toEqual([
      'settings:team.json ("schema"): unknown key, not used: agent-ci does not know it (a newer Claude Code key, or a misspelling)',
    ]);
  });

  it("no documented key is within two edits of a key agent-ci reads in the same place", () => {
    for (const rules of Object.values(SETTINGS_KEY_RULES))
      for (const key of rules.documented)
        if (!rules.read.includes(key)) expect(resembles(key, rules.read), key).toBeUndefined();
  });
});

describe("a settings file's keys", () => {
  it.each([
    ["a misspelt permissions", { permisions: { deny: ["Bash(rm:*)"] } }, "permisions", "permissions"],
    ["permissions in another case", { Permissions: { deny: ["Bash(rm:*)"] } }, "Permissions", "permissions"],
    ["a misspelt hooks", { hook: {} }, "hook", "hooks"],
    ["a misspelt allow", { permissions: { alow: ["Bash(npm test)"] } }, "permissions.alow", "allow"],
    ["a misspelt deny", { permissions: { deney: ["Read(./.env)"] } }, "permissions.deney", "deny"],
    [
      "defaultMode in lower case",
      { permissions: { defaultmode: "plan" } },
      "permissions.defaultmode",
      "defaultMode",
    ],
    [
      "a misspelt additionalDirectories",
      { permissions: { aditionalDirectories: ["/x"] } },
      "permissions.aditionalDirectories",
      "additionalDirectories",
    ],
    ["a misspelt hook event", { hooks: { PreToolUSe: [] } }, "hooks.PreToolUSe", "PreToolUse"],
  ])("refuses %s, naming the file, the key and the key it resembles", (_what, file, key, like) => {
    for (const source of [trustedFile, workspaceFile]) {
      const error = configError(() => parseSettingsFile(JSON.stringify(file), source));
      expect(error.subject).toBe(key);
      expect(error.source).toBe(source.label);
      expect(error.message).toContain(`(from ${source.label})`);
      expect(error.message).toContain(`did you mean "${like}"?`);
      expect(error.message).toContain(`unknown key "${key.split(".").at(-1)}"`);
    }
  });

  it("the issue's file: a misspelt permissions with deny rules refuses the run, never runs without them", () => {
    const error = configError(() =>
      parseSettingsFile('{"permisions": {"deny": ["Bash(rm:*)", "Read(./secrets/**)"]}}', workspaceFile),
    );
    expect(error.message).toBe(
      'invalid permission config "permisions" (from workspace:.claude/settings.json): unknown key "permisions" at the top level: did you mean "permissions"? agent-ci stops rather than run without what a misspelt key says (keys are case-sensitive)',
    );
  });

  it("notes an unknown key far from every known one, in the policy's ignored list, and goes on", () => {
    const input = parseSettingsFile(
      { permissions: { deny: ["Read(./.env)"], rulesFromTheFuture: [] }, someNewSetting: true, modle: "x" },
      workspaceFile,
    );
    const policy = loadPolicy({ sources: [input] });
    expect(policy.rules.map((r) => r.text)).toEqual(["Read(./.env)"]);
    expect(policy.ignored).toEqual([
      {
        kind: "key",
        source: "workspace:.claude/settings.json",
        text: '"someNewSetting", "modle" (like model)',
        reason:
          "unknown keys, not used: agent-ci does not know them (a newer Claude Code key, or a misspelling)",
        severity: "warning",
      },
      {
        kind: "key",
        source: "workspace:.claude/settings.json",
        text: '"rulesFromTheFuture"',
        reason:
          "unknown key in permissions, not used: agent-ci does not know it (a newer Claude Code key, or a misspelling)",
        severity: "warning",
      },
    ]);
    expect(describeIgnored(policy.ignored[1]!)).toBe(
      'workspace:.claude/settings.json ("rulesFromTheFuture"): unknown key in permissions, not used: agent-ci does not know it (a newer Claude Code key, or a misspelling)',
    );
  });

  it("names a key with control characters or a megabyte of text quoted and cut", () => {
    const long = "x".repeat(1_000_000);
    const { ignored } = checkKeys({ [long]: 1, "x\ny\nz": 2 }, SETTINGS_KEY_RULES.permissions);
    expect(ignored[0]?.text).toBe(`"${"x".repeat(80)}…", "x\\ny\\nz"`);
    const error = configError(() => parseSettingsFile({ permissions: { "alow\u0000": [] } }, trustedFile));
    expect(error.message).toContain('unknown key "alow\\u0000"');
  });

  it("lists twenty unknown keys by name and counts the rest", () => {
    const keys = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`unknownKey${i}`, i]));
    const { problems, ignored } = checkKeys(keys, SETTINGS_KEY_RULES.top);
    expect(problems).toEqual([]);
    expect(ignored[0]?.text).toMatch(/^"unknownKey0", .*"unknownKey19" and 99980 more$/);
  });
});
