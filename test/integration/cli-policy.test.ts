// `agent-ci policy check` and `policy test --replay` as users run them (the bundle in dist/): the decision
// and why, and exit codes a CI job can gate on.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const CLI = path.resolve("bin/agent-ci.js");
/** A recorded run: mode acceptEdits, allow Bash(npm test:*), deny Bash(git push:*) and Read(./.env). */
const REPORT = path.resolve("test/fixtures/report/small-fix.json");

function cli(args: string[]) {
  return spawnSync("node", [CLI, ...args], {
    encoding: "utf8",
    env: { ...process.env, ANTHROPIC_API_KEY: "" },
    timeout: 120_000,
  });
}

describe("agent-ci policy check", () => {
  it("prints ALLOW with the rule and exits 0", () => {
    const r = cli(["policy", "check", "Bash(npm test -- --watch=false)", "--allow", "Bash(npm test:*)"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ALLOW {2}Bash\(npm test -- --watch=false\)\n/);
    expect(r.stdout).toContain("by:     Bash(npm test:*) (command line)");
  });

  it("prints DENY with the reason and the narrowest allow rule, and exits 1", () => {
    const r = cli(["policy", "check", "Bash(npm install left-pad)", "--allow", "Bash(npm test:*)"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^DENY {2}Bash\(npm install left-pad\)\n/);
    expect(r.stdout).toContain("narrowest allow rule: Bash(npm install:*)");
    expect(r.stdout).toContain("no allow rule matches it");
    const denied = cli([
      "policy",
      "check",
      "Edit(src/a.ts)",
      "--mode",
      "bypassPermissions",
      "--deny",
      "Edit(src/**)",
    ]);
    expect(denied.status).toBe(1);
    expect(denied.stdout).toContain("by:     Edit(src/**) (command line)");
  });

  it("explains an MCP tool: denied without a rule naming the one it needs, allowed by its server's rule, deny wins", () => {
    const bare = cli(["policy", "check", "mcp__github__create_issue"]);
    expect(bare.status).toBe(1);
    expect(bare.stdout).toContain("narrowest allow rule: mcp__github__create_issue");
    const allowed = cli(["policy", "check", "mcp__github__create_issue", "--allow", "mcp__github"]);
    expect(allowed.status, allowed.stdout).toBe(0);
    expect(allowed.stdout).toContain("by:     mcp__github (command line)");
    const denied = cli([
      "policy",
      "check",
      "mcp__everything__get-sum",
      "--allow",
      "mcp__everything__*",
      "--deny",
      "mcp__everything__get-sum",
    ]);
    expect(denied.status).toBe(1);
    expect(denied.stdout).toContain("by:     mcp__everything__get-sum (command line)");
  });

  it("admits an environment assignment only with a rule that spells it out", () => {
    const command = "Bash(PYTHONPATH=src python3 -m unittest tests.test_x)";
    const named = cli([
      "policy",
      "check",
      command,
      "--allow",
      "Bash(PYTHONPATH=src python3 -m unittest tests.test_x)",
    ]);
    expect(named.status, named.stdout).toBe(0);
    const prefix = cli(["policy", "check", command, "--allow", "Bash(PYTHONPATH=src python3:*)"]);
    expect(prefix.status, prefix.stdout).toBe(0);
    const unnamed = cli(["policy", "check", command, "--allow", "Bash(python3:*)"]);
    expect(unnamed.status).toBe(1);
    expect(unnamed.stdout).toMatch(/setting PYTHONPATH can make commands run other programs/);
  });

  it("exits 2 on a call or a rule it cannot read", () => {
    const call = cli(["policy", "check", "Bash(unclosed"]);
    expect(call.status).toBe(2);
    expect(call.stdout).toMatch(/^agent-ci: .*expected Tool or Tool\(argument\)/);
    const rule = cli(["policy", "check", "Bash(ls)", "--allow", "Bash(a:*:*)"]);
    expect(rule.status).toBe(2);
  });
});

describe("agent-ci policy test --replay", () => {
  it("uses the rules and mode the report recorded: nothing flips, exit 0", () => {
    const r = cli(["policy", "test", "--replay", REPORT]);
    expect(r.status, r.stdout).toBe(0);
    expect(r.stdout).toBe(
      "8 recorded calls re-decided under mode acceptEdits with the 3 recorded rules: 0 flipped\n",
    );
  });

  it("lists each flipped decision and exits 1 when a rule given here changes one", () => {
    const r = cli(["policy", "test", "--replay", REPORT, "--deny", "Bash(npm test:*)"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      "toolu_06  Bash(npm test 2>&1 | tail -n 20): allow → deny  (Bash(npm test:*))",
    );
    expect(r.stdout).toMatch(/with the 3 recorded rules and the ones given here: 1 flipped\n$/);
  });

  it("lets --mode override the recorded mode, and an added allow rule flip a denial", () => {
    const plan = cli(["policy", "test", "--replay", REPORT, "--mode", "plan"]);
    expect(plan.status).toBe(1);
    expect(plan.stdout).toMatch(/Edit\(\/workspace\/src\/calc\.js\): allow → deny/);
    expect(plan.stdout).toMatch(/under mode plan/);
    // The recorded deny of git push still wins over an added allow: deny rules always win.
    expect(cli(["policy", "test", "--replay", REPORT, "--allow", "Bash(git push:*)"]).status).toBe(0);
  });

  it("exits 2 on a report it cannot read", () => {
    const bad = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-replay-")), "report.json");
    fs.writeFileSync(bad, "{}");
    const r = cli(["policy", "test", "--replay", bad]);
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(/^agent-ci: /);
    expect(cli(["policy", "test", "--replay", path.join(path.dirname(bad), "missing.json")]).status).toBe(2);
  });
});
