/**
 * The driver on Bedrock and Vertex AI behaves as on the API: a throttle (429) and an error in the middle of a
 * stream (Bedrock's exception frame) are retried as whole turns, a turn streams, and a side call is one
 * non-streaming request (Bedrock's `invoke`, Vertex's `rawPredict`), each with the model's provider id. The real
 * provider SDKs talk to the fakes of test/support/fake-model-clouds.ts, which answer from the fake Messages API.
 */
import { afterEach, describe, expect, it } from "vitest";
import { AnthropicDriver } from "../../../src/runner/model/anthropic-driver.js";
import { fake, startFakeAnthropic } from "../../support/fake-anthropic.js";
import { canaryCredentials } from "../../support/fake-cloud-auth.js";
import { startFakeBedrock, startFakeVertex } from "../../support/fake-model-clouds.js";

const closers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c.close()));
});

const request = () => ({
  system: "You fix bugs.",
  messages: [{ role: "user" as const, content: "Fix it" }],
  tools: [],
  signal: new AbortController().signal,
});

describe("the driver on a cloud provider", () => {
  it("retries a Bedrock throttle and a mid-stream exception, then streams the turn; a side call is invoke", async () => {
    const creds = canaryCredentials();
    const api = await startFakeAnthropic({
      turns: [
        fake.rateLimited(),
        { type: "stream_error", error: { type: "overloaded_error", message: "Overloaded" } },
        fake.text("Done."),
        fake.text("The page says hello."),
      ],
    });
    const bedrock = await startFakeBedrock(api, { ...creds, region: "us-east-1" });
    closers.push(api, bedrock);
    const delays: number[] = [];
    const logs: string[] = [];
    const driver = new AnthropicDriver({
      apiKey: "",
      model: "claude-sonnet-5-5",
      maxTokens: 1_024,
      cloud: { provider: "bedrock", region: "us-east-1", baseURL: bedrock.url, awsCredentials: creds },
      sleep: async (ms) => void delays.push(ms),
      random: () => 0.5,
      logger: (line) => logs.push(line),
    });

    const turn = await driver.nextTurn(request());
    expect(turn).toMatchObject({ content: [{ type: "text", text: "Done." }], attempts: 3 });
    expect(delays).toHaveLength(2);
    const side = await driver.sideCall({
      purpose: "fetch",
      model: "claude-haiku-5-5",
      maxTokens: 256,
      messages: [{ role: "user", content: "Read this page" }],
      signal: new AbortController().signal,
    });
    expect(side.content).toEqual([expect.objectContaining({ type: "text", text: "The page says hello." })]);
    expect(bedrock.requests.map((r) => r.path)).toEqual([
      ...Array(3).fill("/model/us.anthropic.claude-sonnet-5-5/invoke-with-response-stream"),
      "/model/us.anthropic.claude-haiku-5-5/invoke",
    ]);
    expect(logs.join("\n")).not.toContain(creds.secretAccessKey);
  });

  it("names Bedrock and what to check when the credentials are refused, without retrying", async () => {
    const creds = canaryCredentials();
    const api = await startFakeAnthropic({ turns: [fake.text("never")] });
    const bedrock = await startFakeBedrock(api, { ...creds, region: "us-east-1" });
    closers.push(api, bedrock);
    const wrong = canaryCredentials();
    const driver = new AnthropicDriver({
      apiKey: "",
      model: "claude-sonnet-5-5",
      maxTokens: 1_024,
      cloud: { provider: "bedrock", region: "us-east-1", baseURL: bedrock.url, awsCredentials: wrong },
      sleep: async () => undefined,
    });
    const error = await driver.nextTurn(request()).catch((e: Error) => e);
    expect(error).toMatchObject({ kind: "auth" });
    expect((error as Error).message).toMatch(
      /^Amazon Bedrock rejected the credentials: 403 .*Check the AWS credentials/,
    );
    expect((error as Error).message).not.toContain(wrong.secretAccessKey);
    expect(bedrock.requests).toHaveLength(1);
  });

  it("streams a turn and makes a side call on Vertex AI with the given token", async () => {
    const creds = canaryCredentials();
    const api = await startFakeAnthropic({ turns: [fake.text("Done."), fake.text("Hello.")] });
    const vertex = await startFakeVertex(api, {
      accessToken: creds.googleAccessToken,
      projectId: "widget-prod",
      region: "europe-west1",
    });
    closers.push(api, vertex);
    const driver = new AnthropicDriver({
      apiKey: "",
      model: "claude-sonnet-4-5",
      maxTokens: 1_024,
      cloud: {
        provider: "vertex",
        region: "europe-west1",
        projectId: "widget-prod",
        baseURL: `${vertex.url}/v1`,
        googleAccessToken: creds.googleAccessToken,
      },
    });
    expect(await driver.nextTurn(request())).toMatchObject({ content: [{ type: "text", text: "Done." }] });
    await driver.sideCall({
      purpose: "fetch",
      model: "haiku",
      maxTokens: 256,
      messages: [{ role: "user", content: "Read this page" }],
      signal: new AbortController().signal,
    });
    const base = "/v1/projects/widget-prod/locations/europe-west1/publishers/anthropic/models";
    expect(vertex.requests.map((r) => r.path)).toEqual([
      `${base}/claude-sonnet-4-5@20250929:streamRawPredict`,
      `${base}/claude-haiku-5-5:rawPredict`,
    ]);
  });
});
