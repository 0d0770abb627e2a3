// The Action's OIDC inputs end to end: on workflow_dispatch, the Action fetches the workflow's OIDC token from
// the fake GitHub endpoint (ACTIONS_ID_TOKEN_REQUEST_URL/TOKEN, through @actions/core), exchanges it with the
// real @aws-sdk/client-sts at a fake AWS STS (aws_role_to_assume) or with google-auth-library at a fake Google
// STS + IAM credentials (gcp_workload_identity_provider + gcp_service_account), and runs the model on the fake
// Bedrock or Vertex endpoint, which accepts only the short-lived credential. The credential is never in the
// container's environment (`env` from inside), the artifact files, the summary, the outputs or the shown log.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { secretVariants } from "../../src/report/index.js";
import { actionRunner, calcWorkspace, type ActionRun } from "../support/action-harness.js";
import { fake as turn, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.js";
import {
  canaryCredentials,
  startFakeAwsSts,
  startFakeGitHubOidc,
  startFakeGoogleAuth,
  type FakeGitHubOidc,
} from "../support/fake-cloud-auth.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { startFakeBedrock, startFakeVertex } from "../support/fake-model-clouds.js";

let github: FakeGitHub;
let oidc: FakeGitHubOidc;
let workspace: string;
const closers: Array<{ close(): Promise<void> }> = [];

beforeEach(async () => {
  github = await startFakeGitHub({ permissions: { octocat: "write" } });
  oidc = await startFakeGitHubOidc();
  closers.push(github, oidc);
  workspace = calcWorkspace();
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c.close()));
});

/** `env` in the container, then the fix (read first, as Edit requires). */
async function model(): Promise<FakeAnthropic> {
  const api = await startFakeAnthropic({
    turns: [
      turn.toolUse("Bash", { command: "env" }),
      turn.toolUse("Read", { file_path: "/workspace/src/calc.js" }),
      turn.toolUse("Edit", { file_path: "/workspace/src/calc.js", old_string: "a - b", new_string: "a + b" }),
      turn.text("Fixed add()."),
    ],
  });
  closers.push(api);
  return api;
}

function baseInputs(): Record<string, string> {
  return {
    prompt: "Fix add()",
    github_token: "",
    permission_mode: "acceptEdits",
    allowed_tools: "Bash(env)",
    comment: "false",
    upload_artifact: "false",
  };
}

function oidcEnv(): Record<string, string> {
  return { ACTIONS_ID_TOKEN_REQUEST_URL: oidc.requestUrl, ACTIONS_ID_TOKEN_REQUEST_TOKEN: oidc.requestToken };
}

/** The run completed with the fix, `env` showed no cloud variable, and no form of a value is anywhere. */
function expectCleanRun(result: ActionRun, api: FakeAnthropic, values: string[]): void {
  expect(result.failed).toBeUndefined();
  expect(result.outputs).toMatchObject({ exit_reason: "completed", has_changes: "true" });
  const envResult = JSON.stringify(api.messagesRequests()[1]?.body.messages.at(-1));
  expect(envResult).toContain("PATH=");
  expect(envResult).not.toMatch(/AWS_|GOOGLE_|ACTIONS_ID_TOKEN|CLOUDSDK_/);
  const outDir = path.dirname(result.outputs.report_path ?? "");
  const written = fs
    .readdirSync(outDir, { recursive: true, encoding: "utf8" })
    .map((f) => path.join(outDir, f))
    .filter((f) => fs.statSync(f).isFile())
    .map((f) => fs.readFileSync(f, "utf8"));
  const shown = result.stdout
    .split("\n")
    .filter((line) => !line.startsWith("::add-mask::"))
    .join("\n");
  const everything = [...written, result.summary, fs.readFileSync(result.files.output, "utf8"), shown].join(
    "\n",
  );
  for (const value of values) {
    for (const form of secretVariants(value))
      expect(everything.includes(form), "a form of a credential").toBe(false);
    // The runner is told to mask it in its own log.
    expect(result.stdout).toContain(`::add-mask::${value}`);
  }
}

const action = actionRunner(() => ({ fixture: "workflow-dispatch", apiUrl: github.url, workspace }));

describe("the Action's OIDC exchange", () => {
  it("assumes aws_role_to_assume with the workflow's token and signs Bedrock requests with the result", async () => {
    const creds = canaryCredentials();
    const roleArn = "arn:aws:iam::123456789012:role/agent-ci";
    const sts = await startFakeAwsSts({ oidc, roleArn, credentials: creds });
    const api = await model();
    const bedrock = await startFakeBedrock(api, {
      accessKeyId: creds.accessKeyId,
      sessionToken: creds.sessionToken,
      region: "us-west-2",
    });
    closers.push(sts, bedrock);

    const result = await action({
      inputs: { ...baseInputs(), use_bedrock: "true", aws_role_to_assume: roleArn, aws_region: "us-west-2" },
      env: { ...oidcEnv(), ANTHROPIC_BEDROCK_BASE_URL: bedrock.url },
      hooks: { cloudAuth: { awsSts: sts.url } },
    });

    expectCleanRun(result, api, [creds.secretAccessKey, creds.sessionToken]);
    expect(oidc.issued.map((t) => t.audience)).toEqual(["sts.amazonaws.com"]);
    expect(new URLSearchParams(sts.requests[0]?.body).get("RoleSessionName")).toMatch(/^agent-ci-/);
    expect(bedrock.requests).toHaveLength(4);
    for (const request of bedrock.requests) {
      expect(request.headers.authorization).toContain(`Credential=${creds.accessKeyId}/`);
      expect(request.headers["x-amz-security-token"]).toBe(creds.sessionToken);
    }
    expect(result.stdout).toContain(`assumed ${roleArn} with the workflow's OIDC token`);
  });

  it("exchanges the workflow's token at the workload identity provider and calls Vertex AI as the service account", async () => {
    const creds = canaryCredentials();
    const provider = "projects/123456789/locations/global/workloadIdentityPools/ci/providers/github";
    const serviceAccount = "agent-ci@widget-prod.iam.gserviceaccount.com";
    const google = await startFakeGoogleAuth({
      oidc,
      provider,
      serviceAccount,
      federatedToken: creds.googleFederatedToken,
      accessToken: creds.googleAccessToken,
    });
    const api = await model();
    const vertex = await startFakeVertex(api, {
      accessToken: creds.googleAccessToken,
      projectId: "widget-prod",
      region: "global",
    });
    closers.push(google, vertex);

    const result = await action({
      inputs: {
        ...baseInputs(),
        use_vertex: "true",
        gcp_workload_identity_provider: provider,
        gcp_service_account: serviceAccount,
      },
      env: {
        ...oidcEnv(),
        ANTHROPIC_VERTEX_BASE_URL: `${vertex.url}/v1`,
        ANTHROPIC_VERTEX_PROJECT_ID: "widget-prod",
        CLOUD_ML_REGION: "global",
      },
      hooks: { cloudAuth: { googleSts: google.url, googleIamCredentials: google.url } },
    });

    expectCleanRun(result, api, [creds.googleAccessToken]);
    expect(oidc.issued.map((t) => t.audience)).toEqual([`https://iam.googleapis.com/${provider}`]);
    expect(google.requests.map((r) => r.path)).toEqual([
      "/v1/token",
      `/v1/projects/-/serviceAccounts/${encodeURIComponent(serviceAccount)}:generateAccessToken`,
    ]);
    expect(vertex.requests).toHaveLength(4);
  });

  it("says the job needs id-token: write when there is no OIDC token to exchange", async () => {
    const result = await action({
      inputs: {
        ...baseInputs(),
        use_bedrock: "true",
        aws_role_to_assume: "arn:aws:iam::123456789012:role/agent-ci",
        aws_region: "us-west-2",
      },
      env: { ACTIONS_ID_TOKEN_REQUEST_URL: "", ACTIONS_ID_TOKEN_REQUEST_TOKEN: "" },
    });
    expect(result.failed).toMatch(
      /aws_role_to_assume: could not get the workflow's OIDC token .*id-token: write/,
    );
  });
});
