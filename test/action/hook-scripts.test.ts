// Hooks in the Action on a pull request (RELIABILITY B2): the settings come from the base revision, and so do
// the repository scripts their hooks run — the PR head's rewrite of `.claude/hooks/fmt.sh` never runs. The
// real SDK against the fake Messages API, the fake GitHub, the real engine.
import fs from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { calcWorkspace, runAction } from "../support/action-harness.js";
import { fake as turn, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.js";
import { fixturePullRequest, startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { writeFiles } from "../support/workspace.js";

const TOKEN = ["ghs", "hookScriptsToken0123456789abcdefABCDEFG"].join("_");
const API_KEY = ["sk", "ant", "api03", "hookScriptsKEY0123456789abcdefABCDEF"].join("-");
const BASE = "2222222222222222222222222222222222222222";
const SETTINGS = {
  hooks: {
    PostToolUse: [{ matcher: "Write", hooks: [{ type: "command", command: "sh .claude/hooks/fmt.sh" }] }],
  },
};

let github: FakeGitHub;
let api: FakeAnthropic;
let workspace: string;

beforeEach(async () => {
  const pr = fixturePullRequest({ base: BASE });
  github = await startFakeGitHub({
    token: TOKEN,
    permissions: { octocat: "write" },
    pulls: [pr.pull],
    issues: [pr.issue],
    contents: {
      [BASE]: {
        ".github/agent-settings.json": JSON.stringify(SETTINGS),
        ".claude/hooks/fmt.sh": "printf 'formatted by the base revision\\n' >> /workspace/out.txt\n",
      },
    },
  });
  api = await startFakeAnthropic({
    apiKey: API_KEY,
    turns: [
      turn.toolUse("Write", { file_path: "/workspace/out.txt", content: "x\n" }),
      turn.text("Wrote it."),
    ],
  });
  workspace = calcWorkspace();
  // The pull request's head rewrote the script the trusted hook names.
  writeFiles(workspace, {
    ".claude/hooks/fmt.sh": "printf 'PR HEAD SCRIPT RAN\\n' >> /workspace/out.txt\n",
  });
});
afterEach(async () => {
  await Promise.all([github.close(), api.close()]);
});

describe("hooks on pull requests", () => {
  it("B2 a trusted hook runs the base revision's script, never the one the pull request's head rewrote", async () => {
    const result = await runAction({
      fixture: "pull-request-opened",
      apiUrl: github.url,
      workspace,
      inputs: {
        github_token: TOKEN,
        anthropic_api_key: API_KEY,
        prompt: "Write out.txt",
        permission_mode: "acceptEdits",
        settings: ".github/agent-settings.json",
        comment: "false",
        upload_artifact: "false",
      },
      env: { ANTHROPIC_BASE_URL: api.url },
    });
    expect(result.failed).toBeUndefined();
    const patch = fs.readFileSync(result.outputs.patch_path ?? "", "utf8");
    expect(patch).toContain("+formatted by the base revision");
    expect(patch).not.toContain("PR HEAD SCRIPT RAN");
    const fetched = github.requests.map((r) => `${decodeURIComponent(r.path)}@${r.query.ref ?? ""}`);
    expect(fetched).toContain(`/repos/acme/widgets/contents/.claude/hooks/fmt.sh@${BASE}`);
  });
});
