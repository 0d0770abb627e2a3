// The demo's scripted fix, end to end through Amazon Bedrock and through Google Vertex AI with the real provider
// SDKs (@anthropic-ai/bedrock-sdk, @anthropic-ai/vertex-sdk) against local fakes of their endpoints, credentials
// found the way the clouds' SDKs find them (AWS: the environment; Google: an external-account credentials file
// as google-github-actions/auth writes one, exchanged at a fake Google STS and IAM). The model answers with the
// turns of examples/buggy-calc/fix.script.json; first it runs `env` in the container, which must show no cloud
// credential, and no credential value may reach the record, the events, the logs or stdout.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseReport, secretVariants } from "../../src/report/index.js";
import type { RunConfigInput } from "../../src/runner/config.js";
import type { RunOutcome } from "../../src/runner/run.js";
import { fake, startFakeAnthropic, type FakeAnthropic, type FakeTurn } from "../support/fake-anthropic.js";
import {
  canaryCredentials,
  startFakeGitHubOidc,
  startFakeGoogleAuth,
  type FakeService,
} from "../support/fake-cloud-auth.js";
import { startFakeBedrock, startFakeVertex, type FakeCloudEndpoint } from "../support/fake-model-clouds.js";
import { applyToCopy } from "../support/workspace.js";
import { runScripted } from "../engines/support.js";

const EXAMPLE = path.resolve("examples/buggy-calc");
const closers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c.close()));
});

/** `env` in the container, then the demo's scripted fix as model turns. */
function demoTurns(): FakeTurn[] {
  const script = JSON.parse(fs.readFileSync(path.join(EXAMPLE, "fix.script.json"), "utf8")) as {
    turns: Array<Array<{ name: string; input: Record<string, unknown> }>>;
    final: string;
  };
  return [
    fake.toolUse("Bash", { command: "env", description: "Show the environment" }),
    ...script.turns.map((calls) => fake.toolUses(calls)),
    fake.text(script.final),
  ];
}

/** A run on the example through runAgent, with the demo's prompt. */
const run = (input: Partial<RunConfigInput>) => runScripted({ prompt: "Fix the failing test", ...input });

/** Everything a run wrote or printed, as one text. */
function everything(outcome: RunOutcome, lines: string[], logs: string[]): string {
  const files = fs
    .readdirSync(outcome.outDir, { recursive: true, encoding: "utf8" })
    .map((f) => path.join(outcome.outDir, f))
    .filter((f) => fs.statSync(f).isFile());
  return [...files.map((f) => fs.readFileSync(f, "utf8")), ...lines, ...logs].join("\n");
}

/** The demo's fix applied, the record saying where the model ran, `env` clean, no value anywhere. */
function expectCleanFix(
  api: FakeAnthropic,
  result: Awaited<ReturnType<typeof run>>,
  provider: string,
  canaries: string[],
) {
  const { outcome, lines, logs } = result;
  expect(outcome.exitReason, outcome.error).toBe("completed");
  const fixed = applyToCopy(EXAMPLE, fs.readFileSync(outcome.patchPath));
  expect(fs.readFileSync(path.join(fixed, "src/calc.js"), "utf8")).toContain("return sum / values.length;");
  const report = parseReport(fs.readFileSync(path.join(outcome.outDir, "report.json"), "utf8"));
  expect(report.model).toMatchObject({ driver: "anthropic", provider });
  // The demo ends with the tests passing.
  expect(report.toolCalls.at(-1)).toMatchObject({ tool: "Bash", exitCode: 0, isError: false });
  // What the model was sent back from `env`: the container's variables, none of the host's cloud ones.
  const envResult = JSON.stringify(api.messagesRequests()[1]?.body.messages.at(-1));
  expect(envResult).toContain("PATH=");
  expect(envResult).not.toMatch(/AWS_|GOOGLE_|CLOUDSDK_|ANTHROPIC_/);
  // Prompt caching rides along unchanged: the breakpoints reach the API through the provider.
  expect(JSON.stringify(api.messagesRequests()[1]?.body)).toContain('"cache_control"');
  const written = everything(outcome, lines, logs);
  for (const canary of canaries)
    for (const form of secretVariants(canary))
      expect(written.includes(form), `a form of a credential`).toBe(false);
}

describe("providers", () => {
  it("runs the demo's fix on Amazon Bedrock, signed with the AWS credentials from the environment", async () => {
    const creds = canaryCredentials();
    const api = await startFakeAnthropic({ turns: demoTurns() });
    closers.push(api);
    const bedrock: FakeCloudEndpoint = await startFakeBedrock(api, {
      accessKeyId: creds.accessKeyId,
      sessionToken: creds.sessionToken,
      region: "eu-west-1",
    });
    closers.push(bedrock);
    vi.stubEnv("AWS_ACCESS_KEY_ID", creds.accessKeyId);
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", creds.secretAccessKey);
    vi.stubEnv("AWS_SESSION_TOKEN", creds.sessionToken);
    vi.stubEnv("AWS_PROFILE", undefined);
    vi.stubEnv("AWS_BEARER_TOKEN_BEDROCK", undefined);

    const result = await run({
      provider: "bedrock",
      region: "eu-west-1",
      baseURL: bedrock.url,
      model: "sonnet",
    });

    expectCleanFix(api, result, "bedrock", [creds.secretAccessKey, creds.sessionToken]);
    // Streamed, one request per turn, each to the model's EU inference profile, version in the body.
    expect(bedrock.requests.map((r) => r.path)).toEqual(
      demoTurns().map(() => "/model/eu.anthropic.claude-sonnet-5-5/invoke-with-response-stream"),
    );
    for (const request of bedrock.requests) {
      expect(request.body).toMatchObject({ anthropic_version: expect.any(String) });
      expect(request.headers.authorization).toContain(`Credential=${creds.accessKeyId}/`);
    }
    // The key id is redacted as a token format wherever it appears.
    expect(everything(result.outcome, result.lines, result.logs)).not.toContain(creds.accessKeyId);
  });

  it("runs the demo's fix on Google Vertex AI, with the credentials file google-github-actions/auth writes", async () => {
    const creds = canaryCredentials();
    const oidc = await startFakeGitHubOidc();
    closers.push(oidc);
    const provider = "projects/123456789/locations/global/workloadIdentityPools/ci/providers/github";
    const serviceAccount = "agent-ci@widget-prod.iam.gserviceaccount.com";
    const google: FakeService = await startFakeGoogleAuth({
      oidc,
      provider,
      serviceAccount,
      federatedToken: creds.googleFederatedToken,
      accessToken: creds.googleAccessToken,
    });
    closers.push(google);
    const api = await startFakeAnthropic({ turns: demoTurns() });
    closers.push(api);
    const vertex = await startFakeVertex(api, {
      accessToken: creds.googleAccessToken,
      projectId: "widget-prod",
      region: "us-east5",
    });
    closers.push(vertex);
    // The GitHub token the auth step fetched, in a file, and the external-account file that points at it.
    const answer = await fetch(
      `${oidc.requestUrl}&audience=${encodeURIComponent(`https://iam.googleapis.com/${provider}`)}`,
      {
        headers: { authorization: `Bearer ${oidc.requestToken}` },
      },
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-gcp-"));
    fs.writeFileSync(path.join(dir, "token"), ((await answer.json()) as { value: string }).value);
    const credentialsFile = path.join(dir, "credentials.json");
    fs.writeFileSync(
      credentialsFile,
      JSON.stringify({
        type: "external_account",
        audience: `//iam.googleapis.com/${provider}`,
        subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
        token_url: `${google.url}/v1/token`,
        service_account_impersonation_url: `${google.url}/v1/projects/-/serviceAccounts/${serviceAccount}:generateAccessToken`,
        credential_source: { file: path.join(dir, "token") },
      }),
    );
    vi.stubEnv("GOOGLE_APPLICATION_CREDENTIALS", credentialsFile);

    const result = await run({
      provider: "vertex",
      region: "us-east5",
      projectId: "widget-prod",
      baseURL: `${vertex.url}/v1`,
      model: "claude-sonnet-4-5",
    });

    expectCleanFix(api, result, "vertex", [creds.googleFederatedToken, creds.googleAccessToken]);
    expect(vertex.requests.map((r) => r.path)).toEqual(
      demoTurns().map(
        () =>
          "/v1/projects/widget-prod/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
      ),
    );
    expect(google.requests.map((r) => r.path)).toContain(
      `/v1/projects/-/serviceAccounts/${serviceAccount}:generateAccessToken`,
    );
  });
});
