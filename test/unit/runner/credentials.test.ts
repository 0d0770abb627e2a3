/**
 * Which credential a run signs in to the Anthropic API with (one rule for the CLI and the Action), what a run
 * without one is told, and how each reaches the API through the real @anthropic-ai/sdk and the fake Messages API:
 * a bearer token, an OAuth token with its beta, and workload identity federation's exchange (the SDK's own),
 * made once for the pre-flight check and the turns, its access token masked and never in an error.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { AnthropicDriver } from "../../../src/runner/model/anthropic-driver.js";
import { parseRunConfig } from "../../../src/runner/config.js";
import {
  anthropicCredential,
  credentialsFromEnv,
  NO_ANTHROPIC_CREDENTIAL,
} from "../../../src/runner/model/credentials.js";
import { ModelApiError } from "../../../src/runner/model/driver.js";
import {
  fake,
  sentCredential,
  startFakeAnthropic,
  type FakeAnthropic,
} from "../../support/fake-anthropic.js";
import { fakeTokenExchange, OAUTH_BETA } from "../../support/fake-token-exchange.js";

const MODEL = "claude-sonnet-5-5";
const secret = (prefix: string) => [prefix, randomBytes(16).toString("hex")].join("-");
const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function identityFile(token: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-idtoken-")), "token");
  fs.writeFileSync(file, token, { mode: 0o600 });
  return file;
}

function turn() {
  return {
    system: "You are agent-ci.",
    messages: [{ role: "user" as const, content: "Say hi." }],
    tools: [],
    signal: new AbortController().signal,
  };
}

describe("which credential a run uses", () => {
  const federation = { ruleId: "fdrl_1", organizationId: "org", identityTokenFile: "/tmp/t" };

  it("takes Claude Code's order: ANTHROPIC_AUTH_TOKEN, ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, then federation", () => {
    const all = { authToken: "t", apiKey: "k", oauthToken: "o", federation };
    expect(anthropicCredential(all)?.kind).toBe("auth_token");
    expect(anthropicCredential({ ...all, authToken: undefined })?.kind).toBe("api_key");
    expect(anthropicCredential({ oauthToken: "o", federation })?.kind).toBe("oauth_token");
    expect(anthropicCredential({ federation })).toEqual({ kind: "federation", federation });
    expect(anthropicCredential({ apiKey: "" })).toBeUndefined();
  });

  it("reads the environment under Claude Code's and the SDK's names; federation only with rule, organization and token file", () => {
    expect(
      credentialsFromEnv({
        ANTHROPIC_AUTH_TOKEN: " t ",
        ANTHROPIC_API_KEY: "",
        CLAUDE_CODE_OAUTH_TOKEN: "o",
      }),
    ).toEqual({ authToken: "t", apiKey: undefined, oauthToken: "o", federation: undefined });
    const env = { ANTHROPIC_FEDERATION_RULE_ID: "fdrl_1", ANTHROPIC_ORGANIZATION_ID: "org" };
    expect(credentialsFromEnv(env).federation).toBeUndefined();
    expect(credentialsFromEnv({ ...env, ANTHROPIC_IDENTITY_TOKEN_FILE: "/f" }).federation).toEqual({
      ruleId: "fdrl_1",
      organizationId: "org",
      identityTokenFile: "/f",
      serviceAccountId: undefined,
      workspaceId: undefined,
    });
  });

  it("refuses a model run with no credential, saying what to set", () => {
    const base = { workspace: os.tmpdir(), prompt: "p" };
    expect(() => parseRunConfig(base)).toThrow(NO_ANTHROPIC_CREDENTIAL);
    for (const name of ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "--script"])
      expect(NO_ANTHROPIC_CREDENTIAL).toContain(name);
    expect(parseRunConfig({ ...base, authToken: "t" }).authToken).toBe("t");
    expect(parseRunConfig({ ...base, oauthToken: "o" }).oauthToken).toBe("o");
    expect(parseRunConfig({ ...base, federation }).federation).toEqual(federation);
  });
});

describe("signing in through the SDK", () => {
  it("sends ANTHROPIC_AUTH_TOKEN as Authorization: Bearer, for the check and the turn", async () => {
    const token = secret("gw");
    const api = await startFakeAnthropic({ apiKey: token, turns: [fake.text("hi")] });
    servers.push(api);
    const driver = new AnthropicDriver({
      credential: { kind: "auth_token", token },
      baseURL: api.url,
      model: MODEL,
      maxTokens: 1_024,
    });
    await expect(driver.checkCredentials({ model: MODEL })).resolves.toEqual({ status: "ok" });
    await driver.nextTurn(turn());
    expect(api.requests).toHaveLength(2);
    for (const request of api.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${token}`);
      expect(request.headers["x-api-key"]).toBeUndefined();
    }
  });

  it("sends a Claude OAuth token as a bearer token with the OAuth beta", async () => {
    const token = secret("oat");
    const api = await startFakeAnthropic({ apiKey: token, turns: [fake.text("hi")] });
    servers.push(api);
    const driver = new AnthropicDriver({
      credential: { kind: "oauth_token", token },
      baseURL: api.url,
      model: MODEL,
      maxTokens: 1_024,
    });
    await driver.nextTurn(turn());
    expect(sentCredential(api.requests[0]!)).toBe(token);
    expect(api.requests[0]?.headers["anthropic-beta"]).toContain(OAUTH_BETA);
  });

  it("exchanges the identity token once for the check and the turns, and tells the access token before use", async () => {
    const identity = secret("jwt");
    const exchange = fakeTokenExchange({
      ruleId: "fdrl_1",
      organizationId: "org",
      accepts: (a) => a === identity,
    });
    const api = await startFakeAnthropic({
      tokenExchange: exchange,
      turns: [fake.text("one"), fake.text("two")],
    });
    servers.push(api);
    const told: string[] = [];
    const driver = new AnthropicDriver({
      credential: {
        kind: "federation",
        federation: {
          ruleId: "fdrl_1",
          organizationId: "org",
          workspaceId: "wrkspc_1",
          identityTokenFile: identityFile(identity),
        },
      },
      onSecret: (value) => told.push(value),
      baseURL: api.url,
      model: MODEL,
      maxTokens: 1_024,
    });
    await expect(driver.checkCredentials({ model: MODEL })).resolves.toEqual({ status: "ok" });
    await driver.nextTurn(turn());
    await driver.nextTurn(turn());
    expect(exchange.exchanges).toHaveLength(1);
    expect(exchange.exchanges[0]).toMatchObject({ assertion: identity, workspace_id: "wrkspc_1" });
    expect(told).toEqual(exchange.issued);
    for (const request of api.requests.filter((r) => r.path !== "/v1/oauth/token"))
      expect(sentCredential(request)).toBe(exchange.issued[0]);
  });

  it("exchanges again before the access token expires, with the identity token the file holds by then", async () => {
    const [first, second] = [secret("jwt"), secret("jwt")];
    // Ten seconds left is inside the SDK's mandatory refresh window: the next request exchanges again.
    const exchange = fakeTokenExchange({
      ruleId: "fdrl_1",
      organizationId: "org",
      accepts: (a) => a === first || a === second,
      expiresIn: 10,
    });
    const api = await startFakeAnthropic({
      tokenExchange: exchange,
      turns: [fake.text("one"), fake.text("two")],
    });
    servers.push(api);
    const file = identityFile(first);
    const driver = new AnthropicDriver({
      credential: {
        kind: "federation",
        federation: { ruleId: "fdrl_1", organizationId: "org", identityTokenFile: file },
      },
      baseURL: api.url,
      model: MODEL,
      maxTokens: 1_024,
    });
    await driver.nextTurn(turn());
    fs.writeFileSync(file, second);
    await driver.nextTurn(turn());
    expect(exchange.exchanges.map((e) => e.assertion)).toEqual([first, second]);
    const sent = api.messagesRequests().map((r) => sentCredential(r));
    expect(sent).toEqual(exchange.issued);
    expect(new Set(sent).size).toBe(2);
  });

  it("fails the check as an auth error naming the federation settings when the exchange refuses the identity token", async () => {
    const exchange = fakeTokenExchange({ ruleId: "fdrl_1", organizationId: "org", accepts: () => false });
    const api = await startFakeAnthropic({ tokenExchange: exchange });
    servers.push(api);
    const identity = secret("jwt");
    const driver = new AnthropicDriver({
      credential: {
        kind: "federation",
        federation: { ruleId: "fdrl_1", organizationId: "org", identityTokenFile: identityFile(identity) },
      },
      baseURL: api.url,
      model: MODEL,
      maxTokens: 1_024,
    });
    const error = await driver.checkCredentials({ model: MODEL }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelApiError);
    expect((error as ModelApiError).kind).toBe("auth");
    expect((error as ModelApiError).message).toMatch(/token exchange: .*401.*Check the federation rule/);
    expect((error as ModelApiError).message).not.toContain(identity);
  });
});
