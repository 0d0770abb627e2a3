// Keyless sign-in to the Anthropic API end to end: the Action gets the workflow's OIDC token from the fake GitHub
// endpoint (ACTIONS_ID_TOKEN_REQUEST_URL/TOKEN, through @actions/core) for the audience claude-code-action asks
// for, keeps it in an identity token file, and the model client's credential chain (@anthropic-ai/sdk's
// oidcFederationProvider) exchanges it at the fake token endpoint, which accepts only that GitHub token, for an
// access token the fake Messages API accepts alone. No API key is anywhere in the environment. The exchanged
// token is masked, and is in no output file, artifact, summary, step output or shown log line.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { secretVariants } from "../../src/report/index.js";
import { actionRunner, calcWorkspace, recordingUploader } from "../support/action-harness.js";
import { fake as turn, sentCredential, startFakeAnthropic } from "../support/fake-anthropic.js";
import { issuedFor, startFakeGitHubOidc, type FakeGitHubOidc } from "../support/fake-cloud-auth.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { fakeTokenExchange } from "../support/fake-token-exchange.js";

const AUDIENCE = "https://api.anthropic.com";

let github: FakeGitHub;
let oidc: FakeGitHubOidc;
const closers: Array<{ close(): Promise<void> }> = [];

beforeEach(async () => {
  github = await startFakeGitHub({ permissions: { octocat: "write" } });
  oidc = await startFakeGitHubOidc();
  closers.push(github, oidc);
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c.close()));
});

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => path.join(dir, f))
    .filter((f) => fs.statSync(f).isFile());
}

const action = actionRunner(() => ({
  fixture: "workflow-dispatch",
  apiUrl: github.url,
  workspace: calcWorkspace(),
}));

describe("workload identity federation in the Action", () => {
  it("signs in with only a federation rule and the workflow's OIDC token, and the exchanged token is masked and in no output", async () => {
    const ruleId = `fdrl_${Date.now().toString(36)}`;
    const organizationId = "3f2c9a1e-5b7d-4c8e-9f01-23456789abcd";
    const exchange = fakeTokenExchange({
      ruleId,
      organizationId,
      accepts: (assertion) => issuedFor(oidc, assertion, AUDIENCE),
    });
    const api = await startFakeAnthropic({
      tokenExchange: exchange,
      turns: [
        turn.toolUse("Bash", { command: "env" }),
        turn.toolUse("Read", { file_path: "/workspace/src/calc.js" }),
        turn.toolUse("Edit", {
          file_path: "/workspace/src/calc.js",
          old_string: "a - b",
          new_string: "a + b",
        }),
        turn.text("Fixed add()."),
      ],
    });
    closers.push(api);
    const artifact = recordingUploader();

    const result = await action({
      inputs: {
        prompt: "Fix add()",
        github_token: "",
        permission_mode: "acceptEdits",
        allowed_tools: "Bash(env)",
        comment: "false",
        anthropic_federation_rule_id: ruleId,
        anthropic_organization_id: organizationId,
      },
      env: {
        ACTIONS_ID_TOKEN_REQUEST_URL: oidc.requestUrl,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: oidc.requestToken,
        ANTHROPIC_BASE_URL: api.url,
      },
      artifacts: artifact,
    });

    expect(result.failed).toBeUndefined();
    expect(result.outputs).toMatchObject({ exit_reason: "completed", has_changes: "true" });
    // One GitHub token for claude-code-action's audience, exchanged once for the check and every turn.
    expect(oidc.issued.map((t) => t.audience)).toEqual([AUDIENCE]);
    expect(exchange.exchanges).toEqual([
      {
        grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
        assertion: oidc.issued[0]?.token,
        federation_rule_id: ruleId,
        organization_id: organizationId,
      },
    ]);
    expect(exchange.issued).toHaveLength(1);
    const accessToken = exchange.issued[0]!;
    const apiCalls = api.requests.filter((r) => r.path !== "/v1/oauth/token");
    expect(api.messagesRequests()).toHaveLength(4);
    for (const request of apiCalls) expect(sentCredential(request)).toBe(accessToken);

    // The container saw neither the token nor the runtime's OIDC variables.
    const envResult = JSON.stringify(api.messagesRequests()[1]?.body.messages.at(-1));
    expect(envResult).toContain("PATH=");
    expect(envResult).not.toMatch(/ACTIONS_ID_TOKEN|ANTHROPIC_/);

    const outDir = path.dirname(result.outputs.report_path ?? "");
    expect(artifact.uploads).toHaveLength(1);
    const shown = result.stdout
      .split("\n")
      .filter((line) => !line.startsWith("::add-mask::"))
      .join("\n");
    const everything = [
      ...filesUnder(outDir).map((f) => fs.readFileSync(f, "utf8")),
      ...filesUnder(artifact.dir).map((f) => fs.readFileSync(f, "utf8")),
      result.summary,
      fs.readFileSync(result.files.output, "utf8"),
      envResult,
      shown,
    ].join("\n");
    for (const form of secretVariants(accessToken))
      expect(everything.includes(form), "a form of the access token").toBe(false);
    expect(result.stdout).toContain(`::add-mask::${accessToken}`);
    expect(result.stdout).toContain(`::add-mask::${oidc.issued[0]?.token}`);
    // The identity token file went with the step.
    expect(fs.readdirSync(result.files.temp).filter((f) => f.startsWith("agent-ci-identity-"))).toEqual([]);
  });

  it("fails before any container, saying what to set, when the rule has no organization", async () => {
    const result = await action({
      inputs: {
        prompt: "Fix add()",
        github_token: "",
        comment: "false",
        anthropic_federation_rule_id: "fdrl_x",
      },
      env: {
        ACTIONS_ID_TOKEN_REQUEST_URL: oidc.requestUrl,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: oidc.requestToken,
      },
    });
    expect(result.failed).toMatch(/anthropic_federation_rule_id and anthropic_organization_id: .*needs both/);
    expect(oidc.issued).toEqual([]);
  });
});
