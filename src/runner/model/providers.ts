/**
 * Where a run's model is served: the Anthropic API, Amazon Bedrock or Google Vertex AI, each through its official
 * SDK (`@anthropic-ai/sdk`, `@anthropic-ai/bedrock-sdk`, `@anthropic-ai/vertex-sdk`). The three clients share the
 * Messages surface, so the driver streams, retries and caches the same way on each; what differs is made here:
 * the client, the model's id on the provider (from the one model table in pricing.ts), the credentials, and the
 * features a provider does not serve.
 *
 * Credentials are resolved the way the clouds' own SDKs resolve them (the AWS default chain: environment,
 * profile, SSO, web identity, container and instance roles; Google's Application Default Credentials), unless the
 * run was given a short-lived credential (the Action's OIDC exchange). They stay in this process: nothing here is
 * handed to the sandbox.
 *
 * Each SDK is loaded when its provider's client is made (`import()`): a run on the Anthropic API never loads the
 * clouds' SDKs, and a scripted run loads none.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { AuthClient } from "google-auth-library";
import { BEDROCK_LEGACY_API_VERSION, modelIdsFor, resolveModelAlias } from "./pricing.js";
import { sdkCredentialOptions, type AnthropicCredential } from "./credentials.js";
import { PROVIDERS } from "../options.js";

export { PROVIDERS };
export type Provider = (typeof PROVIDERS)[number];

export const PROVIDER_NAMES: Readonly<Record<Provider, string>> = {
  anthropic: "Anthropic API",
  bedrock: "Amazon Bedrock",
  vertex: "Google Vertex AI",
};

/** The scope Vertex AI's API is called with. */
const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/**
 * Run features a provider does not serve, with why; the run turns the tool off and says so. Prompt caching,
 * streaming, retries, thinking, the context-management betas (`anthropic_beta` in Bedrock's and Vertex's body),
 * subagents and WebFetch's side calls work alike on all three.
 */
export const PROVIDER_GAPS: Readonly<Record<Provider, Readonly<Partial<Record<"WebSearch", string>>>>> = {
  anthropic: {},
  bedrock: { WebSearch: "Amazon Bedrock does not run the API's web_search server tool" },
  vertex: {},
};

/** A short-lived AWS credential (the Action's `aws_role_to_assume`). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface ProviderSettings {
  provider: Provider;
  /** Anthropic only: an API key (`credential`, when given, is used instead). */
  apiKey?: string;
  /** Anthropic only: the run's credential (credentials.ts). */
  credential?: AnthropicCredential;
  /** The provider's endpoint (ANTHROPIC_BASE_URL, ANTHROPIC_BEDROCK_BASE_URL, ANTHROPIC_VERTEX_BASE_URL). */
  baseURL?: string;
  /** Bedrock: the AWS region; Vertex: the Google Cloud region (or `global`). */
  region?: string;
  /** Vertex: the Google Cloud project. */
  projectId?: string;
  /** Bedrock: used instead of the AWS credential chain. */
  awsCredentials?: AwsCredentials;
  /** Vertex: an OAuth access token used instead of Application Default Credentials. */
  googleAccessToken?: string;
}

/** What the driver calls on a client: the same on the three SDKs. */
export interface ModelClient {
  messages: Pick<Anthropic["messages"], "create" | "stream">;
  beta: { messages: Pick<Anthropic["beta"]["messages"], "stream"> };
}

/** Which provider the environment asks for, as Claude Code reads it (`CLAUDE_CODE_USE_BEDROCK=1` …). */
export function providersFromEnv(env: Record<string, string | undefined>): Provider[] {
  const on = (name: string) => /^(1|true|yes|on)$/i.test(env[name]?.trim() ?? "");
  return [
    ...(on("CLAUDE_CODE_USE_BEDROCK") ? (["bedrock"] as const) : []),
    ...(on("CLAUDE_CODE_USE_VERTEX") ? (["vertex"] as const) : []),
  ];
}

/** A provider's endpoint, region and project from the variables its SDK and Claude Code read. */
export function providerEnv(
  provider: Provider,
  env: Record<string, string | undefined>,
): Pick<ProviderSettings, "baseURL" | "region" | "projectId"> {
  const read = (name: string) => env[name]?.trim() || undefined;
  if (provider === "bedrock")
    return {
      baseURL: read("ANTHROPIC_BEDROCK_BASE_URL"),
      region: read("AWS_REGION") ?? read("AWS_DEFAULT_REGION"),
    };
  if (provider === "vertex")
    return {
      baseURL: read("ANTHROPIC_VERTEX_BASE_URL"),
      region: read("CLOUD_ML_REGION"),
      projectId: read("ANTHROPIC_VERTEX_PROJECT_ID"),
    };
  return { baseURL: read("ANTHROPIC_BASE_URL") };
}

/** What is missing for a provider to be called, said once for flags and inputs. */
export function providerProblems(settings: ProviderSettings): string[] {
  if (settings.provider === "bedrock" && !settings.region)
    return ["Amazon Bedrock needs a region: set AWS_REGION (e.g. us-east-1)"];
  if (settings.provider === "vertex" && !settings.region)
    return ["Google Vertex AI needs a region: set CLOUD_ML_REGION (e.g. us-east5, or global)"];
  if (settings.provider === "vertex" && settings.googleAccessToken && !settings.projectId)
    return ["Google Vertex AI needs a project: set ANTHROPIC_VERTEX_PROJECT_ID"];
  return [];
}

export interface ProviderModel {
  /** The id the provider is called with. */
  id: string;
  /** An `anthropic-version` the provider needs for this model instead of the SDK's. */
  apiVersion?: string;
}

/**
 * The id a model is called with on a provider: an alias or an API id through the model table; an id already in
 * the provider's form (a Bedrock inference profile or ARN, a Vertex `model@date`) as given. A model the table
 * does not know is `anthropic.<id>` on Bedrock and `<id>` on Vertex. On Bedrock the id gets the inference
 * profile's geography from the region (`us.`, `eu.`, `jp.`, `apac.`, `global.`), which Bedrock requires for
 * Claude 3.7 and later.
 */
export function providerModel(model: string, provider: Provider, region = ""): ProviderModel {
  const name = resolveModelAlias(model);
  if (provider === "anthropic") return { id: name };
  const ids = modelIdsFor(name);
  if (provider === "vertex") return { id: name.includes("@") ? name : (ids?.vertex ?? name) };
  const apiVersion = ids?.bedrockLegacyVersion ? BEDROCK_LEGACY_API_VERSION : undefined;
  const given = name.includes(".") || name.includes(":");
  const base = ids?.bedrock ?? `anthropic.${name}`;
  const id = given ? name : `${bedrockGeography(region, ids?.bedrockLegacyVersion === true)}.${base}`;
  return { id, ...(apiVersion ? { apiVersion } : {}) };
}

/** The inference profile geography of an AWS region. */
function bedrockGeography(region: string, older: boolean): string {
  if (region.startsWith("us-gov-")) return "us-gov";
  if (region.startsWith("us-") || region.startsWith("ca-")) return "us";
  if (region.startsWith("eu-")) return "eu";
  // Tokyo and Osaka have Japan-only profiles for the newer models; the older ones are in the APAC profiles.
  if (region === "ap-northeast-1" || region === "ap-northeast-3") return older ? "apac" : "jp";
  if (region.startsWith("ap-")) return "apac";
  return "global";
}

export interface ClientOptions {
  timeout: number;
  logger: Pick<Console, "error" | "warn" | "info" | "debug">;
  /** Told each access token the client obtains (workload identity federation), to mask and redact it. */
  onToken?: (token: string) => void;
}

/**
 * A CommonJS package's exports through `import()`: Node gives them as named exports and as `default`; in the
 * bundle's chunk they are only `default`.
 */
async function commonJs<T extends object>(loading: Promise<T>): Promise<T> {
  const loaded = (await loading) as T & { default?: T };
  return loaded.default ?? loaded;
}

/** The AWS default credential chain, built once so its cache lives as long as the run. */
async function awsCredentialChain() {
  const { createCredentialChain, fromEnv, fromNodeProviderChain } = await commonJs(
    import("@aws-sdk/credential-providers"),
  );
  // Environment credentials first even when AWS_PROFILE is set, as the AWS CLI (and the Bedrock SDK) do.
  return createCredentialChain(fromEnv(), fromNodeProviderChain());
}

/**
 * The provider's client. Google's credentials are resolved first (the Vertex SDK would start the lookup in its
 * constructor and leave a failure unhandled); AWS credentials are resolved by the client when it signs.
 */
export async function createModelClient(
  settings: ProviderSettings,
  options: ClientOptions,
): Promise<ModelClient> {
  const common = {
    maxRetries: 0,
    timeout: options.timeout,
    logLevel: "warn" as const,
    logger: options.logger,
  };
  if (settings.provider === "bedrock") {
    const { AnthropicBedrock } = await import("@anthropic-ai/bedrock-sdk");
    const bedrock = {
      ...common,
      ...(settings.baseURL ? { baseURL: settings.baseURL } : {}),
      ...(settings.region ? { awsRegion: settings.region } : {}),
    };
    const credentials = settings.awsCredentials;
    if (credentials)
      // The given credential signs (SigV4), even when AWS_BEARER_TOKEN_BEDROCK is set.
      return new AnthropicBedrock({
        ...bedrock,
        apiKey: null,
        awsAccessKey: credentials.accessKeyId,
        awsSecretKey: credentials.secretAccessKey,
        awsSessionToken: credentials.sessionToken ?? null,
      });
    const chain = await awsCredentialChain();
    return new AnthropicBedrock({ ...bedrock, providerChainResolver: () => Promise.resolve(chain) });
  }
  if (settings.provider === "vertex") {
    const [authClient, { AnthropicVertex }] = await Promise.all([
      googleAuthClient(settings),
      import("@anthropic-ai/vertex-sdk"),
    ]);
    return new AnthropicVertex({
      ...common,
      ...(settings.baseURL ? { baseURL: settings.baseURL } : {}),
      region: settings.region ?? null,
      projectId: settings.projectId ?? null,
      authClient,
    });
  }
  const baseURL = settings.baseURL || process.env.ANTHROPIC_BASE_URL?.trim() || "https://api.anthropic.com";
  const credential = settings.credential ?? { kind: "api_key", token: settings.apiKey ?? "" };
  const { default: Anthropic } = await import("@anthropic-ai/sdk");
  return new Anthropic({
    ...common,
    ...sdkCredentialOptions(credential, { baseURL, onToken: options.onToken }),
    baseURL,
  });
}

/** An access token as given, else Application Default Credentials. */
async function googleAuthClient(settings: ProviderSettings): Promise<AuthClient> {
  const { GoogleAuth, OAuth2Client } = await commonJs(import("google-auth-library"));
  if (settings.googleAccessToken) {
    const client = new OAuth2Client();
    client.setCredentials({ access_token: settings.googleAccessToken });
    return client;
  }
  // A known project spares the library a Resource Manager lookup (which an external account would make).
  return new GoogleAuth({
    scopes: CLOUD_PLATFORM_SCOPE,
    ...(settings.projectId ? { projectId: settings.projectId } : {}),
  }).getClient();
}

/**
 * Resolves a cloud provider's credentials once before the sandbox starts, so a run without any fails fast with
 * what to set. Throws with that advice; the Anthropic API's key is checked by the driver's own call.
 */
export async function checkCloudCredentials(settings: ProviderSettings): Promise<void> {
  if (settings.provider === "bedrock" && !settings.awsCredentials) {
    if (process.env.AWS_BEARER_TOKEN_BEDROCK) return;
    try {
      await (
        await awsCredentialChain()
      )();
    } catch (error) {
      throw new Error(
        `no AWS credentials for Amazon Bedrock (${(error as Error).message}): set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE, run after aws-actions/configure-aws-credentials, or give the Action aws_role_to_assume`,
        { cause: error },
      );
    }
  }
  if (settings.provider === "vertex" && !settings.googleAccessToken) {
    try {
      await (await googleAuthClient(settings)).getRequestHeaders();
    } catch (error) {
      throw new Error(
        `no Google credentials for Vertex AI (${(error as Error).message}): run gcloud auth application-default login, run after google-github-actions/auth, or give the Action gcp_workload_identity_provider`,
        { cause: error },
      );
    }
  }
}
