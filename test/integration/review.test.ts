// --task review on the runner, the real SDK against the fake Messages API: the agent gets the base...head diff
// in its first message, no file-writing tools (plan mode), and the findings schema as StructuredOutput; its
// findings come back placed on the diff. A review that cannot start is a config error with what to do.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { ConfigError } from "../../src/errors.js";
import { runAgent } from "../../src/runner/run.js";
import { reviewJsonSchema } from "../../src/review/findings.js";
import { fake, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.js";
import { makeWorkspace, writeFiles } from "../support/workspace.js";
import { quietIo, tempOut } from "../support/run-io.js";

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function repo(): { dir: string; base: string } {
  const dir = makeWorkspace({ "app.py": "def total(xs):\n    return sum(xs)\n" }, { git: true });
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
      cwd: dir,
      encoding: "utf8",
    }).trim();
  const base = git("rev-parse", "HEAD");
  writeFiles(dir, { "app.py": "def total(xs):\n    return sum(xs) / len(xs)\n" });
  git("commit", "-qam", "average");
  return { dir, base };
}

function scriptOf(turns: unknown[]): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-script-")), "s.json");
  fs.writeFileSync(file, JSON.stringify({ turns }));
  return file;
}

/** The built CLI (bin/agent-ci.js → dist/cli.js), as a user runs it. */
function cli(args: string[]) {
  return spawnSync("node", [path.resolve("bin/agent-ci.js"), ...args], {
    encoding: "utf8",
    env: { ...process.env, ANTHROPIC_API_KEY: "" },
    timeout: 120_000,
  });
}

const config = (input: Partial<RunConfigInput>) =>
  parseRunConfig({
    out: tempOut(),
    task: "review",
    ...input,
  } as RunConfigInput);

describe("--task review", () => {
  it("reviews base...HEAD in plan mode with the real SDK and places the findings on the diff", async () => {
    const { dir, base } = repo();
    const key = ["sk-ant-api03", "REVIEWrev".repeat(5)].join("-");
    const findings = [
      { path: "app.py", line: 2, severity: "major", body: "Divides by zero on an empty list." },
      { path: "app.py", line: 9, severity: "nit", body: "Not in the diff." },
    ];
    const api = await startFakeAnthropic({
      apiKey: key,
      turns: [fake.toolUse("StructuredOutput", { summary: "One bug.", findings })],
    });
    servers.push(api);
    const outcome = await runAgent(
      config({ workspace: dir, reviewBase: base, apiKey: key, baseURL: api.url }),
      quietIo(),
    );
    expect(outcome.exitReason).toBe("completed");
    const request = api.messagesRequests()[0]?.body;
    const names = (request?.tools ?? []).map((t) => ("name" in t ? t.name : ""));
    expect(names).toContain("StructuredOutput");
    expect(names).not.toContain("Edit");
    expect(names).not.toContain("Write");
    const { $schema: _draft, ...expected } = reviewJsonSchema();
    expect(request?.tools?.find((t) => "name" in t && t.name === "StructuredOutput")).toMatchObject({
      input_schema: expected,
    });
    const first = JSON.stringify(request?.messages[0]?.content);
    expect(first).toContain("Review this pull request");
    expect(first).toContain("+    return sum(xs) / len(xs)");
    expect(outcome.review?.inline.map((f) => f.line)).toEqual([2]);
    expect(outcome.review?.outside.map((o) => o.why)).toEqual(["line 9 is not in the diff"]);
    const report = parseReport(fs.readFileSync(outcome.reportPath ?? "", "utf8"));
    expect(report.policy.mode).toBe("plan");
    expect(report.patch.empty).toBe(true);
  });

  it("is a config error without --base, with another mode, with --output-schema, or with a base the history lacks", async () => {
    const { dir, base } = repo();
    expect(() => config({ workspace: dir, script: "x.json" })).toThrow(/needs --base/);
    expect(() => config({ workspace: dir, script: "x.json", reviewBase: base, mode: "acceptEdits" })).toThrow(
      /plan mode/,
    );
    expect(() =>
      config({ workspace: dir, script: "x.json", reviewBase: base, outputSchema: "s.json" }),
    ).toThrow(ConfigError);
    const script = scriptOf([]);
    const outcome = await runAgent(config({ workspace: dir, script, reviewBase: "f".repeat(40) }), quietIo());
    expect(outcome.exitReason).toBe("config_error");
    expect(outcome.error).toMatch(/base commit f{40} is not in the workspace's git history.*fetch-depth: 0/);
  });

  it("works from the CLI: --task review --base prints where the findings went; --output-schema exits 7 when never valid", () => {
    const { dir, base } = repo();
    const findings = [
      { path: "app.py", line: 2, severity: "major", body: "Empty list." },
      { path: "README.md", line: 1, severity: "nit", body: "x" },
    ];
    const out = tempOut();
    const review = cli([
      "run",
      "--workspace",
      dir,
      "--task",
      "review",
      "--base",
      base,
      "--script",
      scriptOf([[{ name: "StructuredOutput", input: { summary: "s", findings } }]]),
      "--out",
      out,
    ]);
    expect(review.status, review.stderr).toBe(0);
    expect(review.stdout).toContain("review: 1 finding(s) on lines of the diff, 1 outside it");
    expect(review.stdout).toContain("README.md:1 nit (the file is not changed by the pull request)");
    expect(review.stdout).toContain(`output: ${out}/output.json`);
    const schema = path.join(out, "schema.json");
    fs.writeFileSync(schema, JSON.stringify({ type: "object", required: ["ok"] }));
    const invalid = cli([
      "run",
      "--workspace",
      dir,
      "--mode",
      "plan",
      "--output-schema",
      schema,
      "--script",
      scriptOf([]),
      "--out",
      path.join(out, "second"),
    ]);
    expect(invalid.status).toBe(7);
    expect(invalid.stdout).toContain("exit reason: schema_invalid");
    expect(invalid.stdout).toContain("output: none (the agent stopped without calling StructuredOutput)");
  });
});
