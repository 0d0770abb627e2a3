/**
 * The model table seen from the providers: each name or alias to the id Bedrock (with its inference profile's
 * geography) and Vertex AI are called with, provider ids priced from the same rows, and the provider settings
 * read from the environment and checked as flags and inputs share them.
 */
import { describe, expect, it } from "vitest";
import { parseRunConfig } from "../../../src/runner/config.js";
import { MODEL_ALIASES, modelIdsFor, priceFor } from "../../../src/runner/model/pricing.js";
import {
  providerEnv,
  providerModel,
  providerProblems,
  providersFromEnv,
} from "../../../src/runner/model/providers.js";

describe("providerModel", () => {
  it.each([
    ["sonnet", "anthropic", "", { id: "claude-sonnet-5-5" }],
    ["claude-opus-4-1", "anthropic", "", { id: "claude-opus-4-1" }],
    ["sonnet", "bedrock", "eu-west-1", { id: "eu.anthropic.claude-sonnet-5-5" }],
    ["claude-opus-4-7", "bedrock", "us-east-1", { id: "us.anthropic.claude-opus-4-7" }],
    [
      "claude-sonnet-4-5",
      "bedrock",
      "us-east-1",
      { id: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", apiVersion: "bedrock-2023-05-31" },
    ],
    [
      "claude-opus-4-6",
      "bedrock",
      "ap-northeast-1",
      { id: "apac.anthropic.claude-opus-4-6-v1", apiVersion: "bedrock-2023-05-31" },
    ],
    ["haiku", "bedrock", "ap-northeast-1", { id: "jp.anthropic.claude-haiku-5-5" }],
    ["claude-haiku-5-5", "bedrock", "ap-southeast-2", { id: "apac.anthropic.claude-haiku-5-5" }],
    ["claude-sonnet-5", "bedrock", "sa-east-1", { id: "global.anthropic.claude-sonnet-5" }],
    // A provider's own id (a profile, an ARN) is used as given; the version still follows the model.
    [
      "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "bedrock",
      "eu-west-1",
      { id: "global.anthropic.claude-sonnet-4-5-20250929-v1:0", apiVersion: "bedrock-2023-05-31" },
    ],
    [
      "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc",
      "bedrock",
      "us-east-1",
      { id: "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc" },
    ],
    ["claude-new-9", "bedrock", "us-west-2", { id: "us.anthropic.claude-new-9" }],
    ["opus", "vertex", "us-east5", { id: "claude-opus-5-5" }],
    ["claude-sonnet-4-5", "vertex", "global", { id: "claude-sonnet-4-5@20250929" }],
    ["claude-opus-4-0", "vertex", "global", { id: "claude-opus-4@20250514" }],
    ["claude-3-5-sonnet", "vertex", "europe-west1", { id: "claude-3-5-sonnet-v2@20241022" }],
    ["claude-sonnet-4-5@20251231", "vertex", "global", { id: "claude-sonnet-4-5@20251231" }],
  ] as const)("%s on %s (%s)", (model, provider, region, expected) => {
    expect(providerModel(model, provider, region)).toEqual(expected);
  });
});

describe("the model table", () => {
  const names = [
    "claude-sonnet-5-5",
    "claude-opus-4-6",
    "claude-sonnet-4-5",
    "claude-opus-4-0",
    "claude-3-5-sonnet",
    "claude-3-haiku",
  ];

  it.each(names)("prices %s the same under its API, Bedrock and Vertex ids", (name) => {
    const ids = modelIdsFor(name)!;
    const api = priceFor(name);
    expect(api.estimated).toBe(false);
    for (const id of [ids.bedrock, `us.${ids.bedrock}`, ids.vertex]) {
      expect(priceFor(id).price).toEqual(api.price);
      expect(priceFor(id).estimated).toBe(false);
      expect(modelIdsFor(id)).toMatchObject({ bedrock: ids.bedrock, vertex: ids.vertex });
    }
  });

  it("resolves every alias to a model in the table", () => {
    for (const model of Object.values(MODEL_ALIASES)) expect(modelIdsFor(model)?.id).toBe(model);
  });
});

describe("provider settings", () => {
  it("reads the provider as Claude Code does, and both at once as a conflict to report", () => {
    expect(providersFromEnv({ CLAUDE_CODE_USE_BEDROCK: "1" })).toEqual(["bedrock"]);
    expect(providersFromEnv({ CLAUDE_CODE_USE_VERTEX: "true" })).toEqual(["vertex"]);
    expect(providersFromEnv({ CLAUDE_CODE_USE_BEDROCK: "0", CLAUDE_CODE_USE_VERTEX: "" })).toEqual([]);
    expect(providersFromEnv({ CLAUDE_CODE_USE_BEDROCK: "1", CLAUDE_CODE_USE_VERTEX: "1" })).toHaveLength(2);
  });

  it("takes the endpoint, region and project from each provider's own variables", () => {
    const env = {
      ANTHROPIC_BASE_URL: "https://gateway.example",
      ANTHROPIC_BEDROCK_BASE_URL: "https://bedrock.example",
      AWS_DEFAULT_REGION: "eu-central-1",
      ANTHROPIC_VERTEX_BASE_URL: "https://vertex.example/v1",
      CLOUD_ML_REGION: "us-east5",
      ANTHROPIC_VERTEX_PROJECT_ID: "widget-prod",
    };
    expect(providerEnv("anthropic", env)).toEqual({ baseURL: "https://gateway.example" });
    expect(providerEnv("bedrock", env)).toEqual({
      baseURL: "https://bedrock.example",
      region: "eu-central-1",
    });
    expect(providerEnv("bedrock", { ...env, AWS_REGION: "us-west-2" }).region).toBe("us-west-2");
    expect(providerEnv("vertex", env)).toEqual({
      baseURL: "https://vertex.example/v1",
      region: "us-east5",
      projectId: "widget-prod",
    });
  });

  it("says what a provider is missing", () => {
    expect(providerProblems({ provider: "bedrock" })).toEqual([expect.stringMatching(/AWS_REGION/)]);
    expect(providerProblems({ provider: "vertex" })).toEqual([expect.stringMatching(/CLOUD_ML_REGION/)]);
    expect(providerProblems({ provider: "vertex", region: "global", googleAccessToken: "t" })).toEqual([
      expect.stringMatching(/ANTHROPIC_VERTEX_PROJECT_ID/),
    ]);
    expect(providerProblems({ provider: "bedrock", region: "us-east-1" })).toEqual([]);
  });

  it("needs no Anthropic key on a cloud, and keeps the cloud's credentials out of --env", () => {
    const base = { workspace: ".", prompt: "x" };
    expect(parseRunConfig({ ...base, provider: "bedrock", region: "us-east-1", model: "haiku" }).model).toBe(
      MODEL_ALIASES.haiku,
    );
    expect(() => parseRunConfig({ ...base, provider: "bedrock" })).toThrow(/AWS_REGION/);
    expect(() =>
      parseRunConfig({ ...base, provider: "bedrock", region: "us-east-1", env: ["AWS_SECRET_ACCESS_KEY"] }),
    ).toThrow(/--env AWS_SECRET_ACCESS_KEY: the model's cloud credentials stay on the host/);
    expect(() => parseRunConfig(base)).toThrow(/ANTHROPIC_API_KEY is not set/);
  });
});
