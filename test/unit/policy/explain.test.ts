/**
 * What the report and the CLI use: describeDecision, narrowestAllowRule (checked by round trip:
 * adding the rule admits the call), bashSubcommands, the container rules and replay.
 */
import { describe, expect, it } from "vitest";
import {
  bashSubcommands,
  compileContainerRules,
  createPolicyEngine,
  describeDecision,
  loadPolicy,
  narrowestAllowRule,
  narrowestAllowRules,
  replayDecisions,
  type PolicyCall,
  type RecordedCall,
} from "../../../src/policy/index.js";
import { bash, engineFor, fileCall, type EngineConfig } from "./helpers.js";

describe("describeDecision", () => {
  it("is one line naming the verdict, what decided and why", async () => {
    const decision = (await engineFor({ deny: ["Bash(rm:*)"] })).decide(bash("ls\nrm -rf ."));
    const line = describeDecision(decision);
    expect(line).not.toContain("\n");
    expect(line).toMatch(
      /^DENY \[rule Bash\(rm:\*\) from cli\] \(default mode\) "rm -rf \.": Permission denied/,
    );
    expect(describeDecision((await engineFor({})).decide(bash("ls")))).toMatch(/^ALLOW \[read-only-check\]/);
  });
});

describe("narrowestAllowRule", () => {
  const rows: ReadonlyArray<readonly [string, PolicyCall, EngineConfig, string]> = [
    ["npm test -- --watch", bash("npm test -- --watch"), {}, "Bash(npm test:*)"],
    ["npm test", bash("npm test"), {}, "Bash(npm test)"],
    ["npm run build -- --prod", bash("npm run build -- --prod"), {}, "Bash(npm run build:*)"],
    ["git push origin main", bash("git push origin main"), {}, "Bash(git push:*)"],
    ["rm -rf dist", bash("rm -rf dist"), {}, "Bash(rm -rf dist)"],
    ["curl", bash("curl"), {}, "Bash(curl)"],
    ["only the unproven command", bash("git status && curl -s x"), {}, "Bash(curl -s x)"],
    ["the command inside a wrapper", bash("timeout 60 npm ci"), {}, "Bash(npm ci)"],
    ["a run-time argument", bash("npm test $ARGS"), {}, "Bash(npm test:*)"],
    ["an argument with spaces", bash('git commit -m "fix it"'), {}, "Bash(git commit:*)"],
    ["two commands", bash("make && make install"), {}, "Bash(make), Bash(make install)"],
    ["a redirect in default mode", bash("ls > out.txt"), {}, "Edit(/out.txt)"],
    ["a read outside the workspace", bash("cat /etc/os-release"), {}, "Bash(cat /etc/os-release)"],
    ["Edit in src", fileCall("Edit", "src/a.ts"), {}, "Edit(src/a.ts)"],
    ["Write at the root", fileCall("Write", "README.md"), {}, "Edit(/README.md)"],
    [
      "a protected path names it",
      fileCall("Edit", ".github/workflows/ci.yml"),
      {},
      "Edit(.github/workflows/ci.yml)",
    ],
    [
      "a protected .gitattributes",
      fileCall("Write", ".gitattributes"),
      { mode: "acceptEdits" },
      "Edit(/.gitattributes)",
    ],
    [
      "WebFetch",
      { tool: "WebFetch", input: { url: "https://docs.example.com/a" }, readOnly: true },
      {},
      "WebFetch(domain:docs.example.com)",
    ],
    ["an MCP tool", { tool: "mcp__srv__write", input: {}, readOnly: false }, {}, "mcp__srv__write"],
  ];

  it.each(rows)("%s → its rule admits the call", async (_name, request, config, expected) => {
    const engine = await engineFor(config);
    const denied = engine.decide(request);
    expect(denied.behavior).toBe("deny");
    const rule = narrowestAllowRule(request, denied);
    expect(rule).toBe(expected);
    const widened = await engineFor({
      ...config,
      allow: [...(config.allow ?? []), ...narrowestAllowRules(request, denied)],
    });
    expect(widened.decide(request).behavior, widened.decide(request).reason).toBe("allow");
  });

  it.each([
    ["a deny rule decided", bash("rm x"), { deny: ["Bash(rm:*)"] }],
    ["an ask rule decided", bash("git push"), { ask: ["Bash(git push:*)"] }],
    ["plan mode", bash("npm test"), { mode: "plan" }],
    ["a line that cannot be read", bash("$CMD x"), {}],
    ["outside the workspace", fileCall("Edit", "/etc/x"), {}],
  ] as const)("is undefined when %s", async (_name, request, config) => {
    const denied = (await engineFor(config)).decide(request);
    expect(denied.behavior).toBe("deny");
    expect(narrowestAllowRule(request, denied)).toBeUndefined();
  });
});

describe("bashSubcommands", () => {
  it("lists every simple command, wrappers removed, words unquoted", async () => {
    const commands = await bashSubcommands(
      `git status && timeout 5 npm test | tee >(cat) ; FOO=1 bash -c "ls"`,
    );
    expect(commands.map((command) => command.argv.join(" "))).toEqual([
      "git status",
      "npm test",
      "tee >(cat)",
      "cat",
      "FOO=1 bash -c ls",
      "ls",
    ]);
    expect(commands[1]?.text).toBe("timeout 5 npm test");
  });

  it.each([
    ["r''m x", "rm x"],
    ["\\rm x", "rm x"],
    ['"r"m x', "rm x"],
    ["$'\\x72m' x", "rm x"],
    ["$'\\162\\155' x", "rm x"],
    ["echo $'a\\tb'", "echo a\tb"],
    ["echo ~/x", "echo /home/agent/x"],
    ["echo '~/x'", "echo ~/x"],
    ['echo "a\\"b\\$c"', 'echo a"b$c'],
    ["echo a\\ b", "echo a b"],
  ])("normalises %s", async (command, argv) => {
    const [first] = await bashSubcommands(command);
    expect(first?.argv.join(" ")).toBe(argv);
  });
});

describe("compileContainerRules", () => {
  const policy = loadPolicy({
    mode: "default",
    sources: [
      {
        source: { kind: "cli", label: "cli", trusted: true },
        deny: ["Read(./.env)", "Read(**/*.pem)", "Edit(dist/**)", "Bash(rm:*)"],
        ask: ["Read(secrets/)"],
        allow: ["Edit(.github/workflows/release.yml)"],
      },
    ],
  });
  const rules = compileContainerRules(policy);

  it.each([
    [".env", "Read(./.env)"],
    ["certs/server.pem", "Read(**/*.pem)"],
    ["a/secrets/token", "Read(secrets/)"],
    ["sub/.env", undefined],
    ["src/a.ts", undefined],
    ["../escape", undefined],
  ])("excludeFromCopy(%s)", (path, rule) => {
    expect(rules.excludeFromCopy(path)?.text).toBe(rule);
  });

  it.each([
    ["dist/app.js", "Edit(dist/**)"],
    [".git/hooks/pre-commit", "protected:git"],
    [".git/config", "protected:git"],
    ["vendor/lib/.git/hooks/x", "protected:git"],
    [".git/objects/ab/cd", undefined],
    [".git/index", undefined],
    [".github/workflows/ci.yml", "protected:workflows"],
    [".github/workflows/release.yml", undefined],
    [".gitattributes", "protected:gitattributes"],
    [".claude/settings.json", "protected:claude-settings"],
    [".agent-ci.json", "protected:agent-ci-config"],
    [".mcp.json", "protected:mcp-config"],
    ["src/a.ts", undefined],
  ])("readOnly(%s)", (path, rule) => {
    expect(rules.readOnly(path)?.text).toBe(rule);
  });

  it("lists what it enforced, and freezes the workspace in plan mode", () => {
    expect(rules.workspaceReadOnly).toBe(false);
    expect(
      rules.enforced.filter((entry) => entry.layer === "copy-exclude").map((entry) => entry.text),
    ).toEqual(["Read(./.env)", "Read(**/*.pem)", "Read(secrets/)"]);
    expect(
      rules.enforced.some((entry) => entry.text === "Edit(dist/**)" && entry.layer === "read-only"),
    ).toBe(true);
    expect(compileContainerRules({ ...policy, mode: "plan" }).workspaceReadOnly).toBe(true);
  });
});

describe("replayDecisions", () => {
  it("lists the calls whose decision flips under a new policy", async () => {
    const calls: RecordedCall[] = [
      {
        id: "t1",
        tool: "Bash",
        input: { command: "npm test" },
        readOnly: false,
        decision: { behavior: "deny" },
      },
      {
        id: "t2",
        tool: "Bash",
        input: { command: "git status" },
        readOnly: false,
        decision: { behavior: "allow" },
      },
      {
        id: "t3",
        tool: "Edit",
        input: { file_path: "src/a.ts" },
        readOnly: false,
        decision: { behavior: "allow" },
      },
      {
        id: "t4",
        tool: "Bash",
        input: { command: "rm -rf ." },
        readOnly: false,
        decision: { behavior: "allow" },
      },
    ];
    const engine = await createPolicyEngine(
      loadPolicy({
        sources: [
          {
            source: { kind: "cli", label: "cli", trusted: true },
            allow: ["Bash(npm test:*)", "Edit(src/**)"],
            deny: ["Bash(rm:*)"],
          },
        ],
      }),
    );
    const flips = replayDecisions(calls, engine);
    expect(flips.map((flip) => [flip.id, flip.before, flip.after.behavior])).toEqual([
      ["t1", "deny", "allow"],
      ["t4", "allow", "deny"],
    ]);
    expect(flips[1]?.after.rule?.text).toBe("Bash(rm:*)");
  });
});
