// Settings files are checked, not skimmed, in the Action: a misspelt permissions key, in the pull request's own
// .claude/settings.json or in the `settings` input, fails the step naming the file, the key and the key it
// resembles, before any model request. The real SDK against the fake Messages API, the fake GitHub.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { actionRunner, calcWorkspace } from "../support/action-harness.js";
import { fake as turn, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.js";
import { fixturePullRequest, startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { writeFiles } from "../support/workspace.js";

const TOKEN = ["ghs", "settingsKeysToken0123456789abcdefABCDEF"].join("_");
const API_KEY = ["sk", "ant", "api03", "settingsKeysAction0123456789abcdefABCDEF"].join("-");
const BASE = "2222222222222222222222222222222222222222";

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
  });
  api = await startFakeAnthropic({ apiKey: API_KEY, turns: [turn.text("Nothing to change.")] });
  workspace = calcWorkspace();
});
afterEach(async () => {
  await Promise.all([github.close(), api.close()]);
});

const action = actionRunner(() => ({
  fixture: "pull-request-opened",
  apiUrl: github.url,
  workspace,
  env: { ANTHROPIC_BASE_URL: api.url },
}));

const inputs = {
  github_token: TOKEN,
  anthropic_api_key: API_KEY,
  prompt: "Fix add()",
  comment: "false",
  upload_artifact: "false",
};

describe("misspelt settings keys in the Action", () => {
  it("the pull request's .claude/settings.json with a misspelt permissions fails the step before any model request", async () => {
    // A misspelt deny in the workspace's file would silently lose the deny rules: the run stops instead.
    writeFiles(workspace, {
      ".claude/settings.json": '{"permisions": {"deny": ["Bash(rm:*)", "Read(./secrets/**)"]}}\n',
    });
    const result = await action({ inputs });
    expect(result.failed).toContain(
      'invalid permission config "permisions" (from workspace:.claude/settings.json): unknown key "permisions" at the top level: did you mean "permissions"?',
    );
    expect(api.requests).toEqual([]);
  });

  it("the settings input with allow spelt alow fails the step before any model request", async () => {
    const result = await action({
      inputs: { ...inputs, settings: '{"permissions": {"alow": ["Bash(npm test)"]}}' },
    });
    expect(result.failed).toContain(
      'invalid permission config "permissions.alow" (from settings): unknown key "alow" in permissions: did you mean "allow"?',
    );
    expect(api.requests).toEqual([]);
  });
});
