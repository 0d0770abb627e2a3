// Settings files are checked, not skimmed, through the command as a user runs it (the built CLI against the
// fake Messages API): a misspelt key of a settings file, an MCP config or an agent file stops the run with
// exit 2 before any model request, naming the file, the key and the key it resembles; a key agent-ci does
// not know is a warning in the log and in report.json, and the run goes on.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { endedBeforeAnyContainer } from "../../src/runner/run.js";
import { runCli } from "../support/cli-process.js";
import { fake, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.js";
import { tempOut } from "../support/run-io.js";
import { makeWorkspace } from "../support/workspace.js";

const API_KEY = ["sk", "ant", "api03", "settingsKeysKEY0123456789abcdefABCDEF"].join("-");

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function api(turns = [fake.text("Nothing to change.")]): Promise<FakeAnthropic> {
  const server = await startFakeAnthropic({ apiKey: API_KEY, turns });
  servers.push(server);
  return server;
}

const run = (server: FakeAnthropic, workspace: string, out: string, extra: string[] = []) =>
  runCli(["run", "--workspace", workspace, "--prompt", "Look around", "--out", out, ...extra], {
    ANTHROPIC_API_KEY: API_KEY,
    ANTHROPIC_BASE_URL: server.url,
  });

const tempFile = (name: string, content: string): string => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-keys-")), name);
  fs.writeFileSync(file, content);
  return file;
};

const readReport = (out: string) => parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));

interface Case {
  what: string;
  files: Record<string, string>;
  extra: () => string[];
  message: string;
}

describe("misspelt configuration keys through the CLI", () => {
  it.each<Case>([
    {
      what: "the workspace's .claude/settings.json with a misspelt permissions",
      files: { ".claude/settings.json": '{"permisions": {"deny": ["Bash(rm:*)", "Read(./secrets/**)"]}}\n' },
      extra: () => [],
      message:
        'invalid permission config "permisions" (from workspace:.claude/settings.json): unknown key "permisions" at the top level: did you mean "permissions"?',
    },
    {
      what: "a --settings file with defaultmode for defaultMode",
      files: {},
      extra: () => ["--settings", tempFile("team.json", '{"permissions": {"defaultmode": "plan"}}')],
      message:
        'invalid permission config "permissions.defaultmode" (from settings:team.json): unknown key "defaultmode" in permissions: did you mean "defaultMode"?',
    },
    {
      what: "an --mcp-config file with a server's comand",
      files: {},
      extra: () => ["--mcp-config", tempFile("mcp.json", '{"mcpServers": {"fs": {"comand": "mcp-fs"}}}')],
      message: 'unknown key "comand" in MCP server "fs": did you mean "command"?',
    },
    {
      what: "an --agents-dir file with tols for tools",
      files: {},
      extra: () => [
        "--agents-dir",
        path.dirname(
          tempFile("reviewer.md", "---\nname: reviewer\ndescription: d\ntols: Read\n---\nReview.\n"),
        ),
      ],
      message: 'reviewer.md: unknown key "tols" in the front matter: did you mean "tools"?',
    },
  ])("$what: exit 2, the key named, no model request, no container", async ({ files, extra, message }) => {
    const server = await api();
    const workspace = makeWorkspace({ "README.md": "hello\n", ...files }, { git: true });
    const out = tempOut();

    const result = await run(server, workspace, out, extra());

    expect(result.code, result.stderr.slice(-2000)).toBe(2);
    expect(result.stderr).toContain(message);
    expect(server.requests).toEqual([]);
    const report = readReport(out);
    expect(report.exitReason).toBe("config_error");
    expect(report.error?.message).toContain(message);
    // It ended before any container existed (the CLI's own test for a config error it reports in one line).
    expect(endedBeforeAnyContainer({ exitReason: report.exitReason, report })).toBe(true);
    expect(report.image).toBeUndefined();
  });
});

describe("unknown keys through the CLI", () => {
  it("are a warning in the log and in report.json, and the run goes on with the rules it read", async () => {
    const server = await api();
    const settings = {
      someNewSetting: true,
      env: { A: "1" },
      permissions: { deny: ["Read(./secrets/**)"], rulesFromTheFuture: [] },
    };
    const workspace = makeWorkspace(
      { "README.md": "hello\n", ".claude/settings.json": JSON.stringify(settings) },
      { git: true },
    );
    const agents = path.dirname(
      tempFile("reviewer.md", "---\nname: reviewer\ndescription: d\nsudo: true\n---\nReview.\n"),
    );
    const out = tempOut();

    const result = await run(server, workspace, out, ["--agents-dir", agents]);

    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    expect(server.messagesRequests()).toHaveLength(1);
    const lines = [
      'workspace:.claude/settings.json ("someNewSetting"): unknown key, not used: agent-ci does not know it (a newer Claude Code key, or a misspelling)',
      "workspace:.claude/settings.json (env): Claude Code key that agent-ci does not use",
      'workspace:.claude/settings.json ("rulesFromTheFuture"): unknown key in permissions, not used: agent-ci does not know it (a newer Claude Code key, or a misspelling)',
      `agents-dir:${agents}/reviewer.md ("sudo"): unknown key in the front matter, not used: agent-ci does not know it (a newer Claude Code key, or a misspelling)`,
    ];
    for (const line of lines) expect(result.stderr).toContain(line);
    const report = readReport(out);
    expect(report.exitReason).toBe("completed");
    expect(report.policy.rules.map((r) => [r.behavior, r.text])).toEqual([["deny", "Read(./secrets/**)"]]);
    expect(report.policy.ignored.map((i) => i.text)).toEqual([
      '"someNewSetting"',
      "env",
      '"rulesFromTheFuture"',
    ]);
    const warnings = report.warnings.filter((w) => ["settings_keys", "agents_ignored"].includes(w.kind));
    expect(warnings.map((w) => [w.severity, w.message])).toEqual([
      ["warning", lines[0]],
      ["info", lines[1]],
      ["warning", lines[2]],
      ["warning", lines[3]],
    ]);
  });
});
