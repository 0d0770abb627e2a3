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
import { credentialHint, sdkCredentialOptions, type AnthropicCredential } from "./credentials.js";
import { PROVIDERS } from "../options.js";

export { PROVIDERS };
export type Provider = (typeof PROVIDERS)[number];

/** The scope Vertex AI's API is called with. */
const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

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
  return modelProvider(provider).env(env);
}

/** What is missing for a provider to be called, said once for flags and inputs. */
export function providerProblems(settings: ProviderSettings): string[] {
  return modelProvider(settings.provider).problems(settings);
}

export interface ProviderModel {
  /** The id the provider is called with. */
  id: string;
  /** An `anthropic-version` the provider needs for this model instead of the SDK's. */
  apiVersion?: string;
}

/**
 * The id a model is called with on a provider: an alias or an API id through the model table; an id already in
 * the provider's form (a Bedrock inference profile or ARN, a Vertex `model@date`) as given.
 */
export function providerModel(model: string, provider: Provider, region = ""): ProviderModel {
  return modelProvider(provider).model(resolveModelAlias(model), region);
}

/**
 * A model on Bedrock: a model the table does not know is `anthropic.<id>`; the id gets the inference profile's
 * geography from the region (`us.`, `eu.`, `jp.`, `apac.`, `global.`), which Bedrock requires for Claude 3.7
 * and later.
 */
function bedrockModel(name: string, region: string): ProviderModel {
  const ids = modelIdsFor(name);
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
export async function commonJs<T extends object>(loading: Promise<T>): Promise<T> {
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

/** The options every provider's client is made with. */
interface CommonClientOptions {
  maxRetries: number;
  timeout: number;
  logLevel: "warn";
  logger: ClientOptions["logger"];
}

/** The provider's client. */
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
  return modelProvider(settings.provider).client(settings, common, options);
}

/** An Anthropic API client with the run's credential. */
async function anthropicClient(
  settings: ProviderSettings,
  common: CommonClientOptions,
  options: ClientOptions,
): Promise<ModelClient> {
  const baseURL = settings.baseURL || process.env.ANTHROPIC_BASE_URL?.trim() || "https://api.anthropic.com";
  const credential = settings.credential ?? { kind: "api_key", token: settings.apiKey ?? "" };
  const { default: Anthropic } = await import("@anthropic-ai/sdk");
  return new Anthropic({
    ...common,
    ...sdkCredentialOptions(credential, { baseURL, onToken: options.onToken }),
    baseURL,
  });
}

/** A Bedrock client: AWS credentials are resolved by the client when it signs. */
async function bedrockClient(settings: ProviderSettings, common: CommonClientOptions): Promise<ModelClient> {
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

/**
 * A Vertex AI client: Google's credentials are resolved first (the Vertex SDK would start the lookup in its
 * constructor and leave a failure unhandled).
 */
async function vertexClient(settings: ProviderSettings, common: CommonClientOptions): Promise<ModelClient> {
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

/** AWS credentials from the chain, unless given or a Bedrock API key is set. */
async function checkAwsCredentials(settings: ProviderSettings): Promise<void> {
  if (settings.awsCredentials || process.env.AWS_BEARER_TOKEN_BEDROCK) return;
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

/** Google credentials from Application Default Credentials, unless an access token is given. */
async function checkGoogleCredentials(settings: ProviderSettings): Promise<void> {
  if (settings.googleAccessToken) return;
  try {
    await (await googleAuthClient(settings)).getRequestHeaders();
  } catch (error) {
    throw new Error(
      `no Google credentials for Vertex AI (${(error as Error).message}): run gcloud auth application-default login, run after google-github-actions/auth, or give the Action gcp_workload_identity_provider`,
      { cause: error },
    );
  }
}

/**
 * What differs per provider, asked of one object rather than switched on its name: its name, the features it
 * does not serve, how it signs in, where its settings come from, the model's id on it, its client.
 */
export interface ModelProvider {
  readonly id: Provider;
  /** Its name for people ("Amazon Bedrock"). */
  readonly name: string;
  /** The run's model as the run's first line names it ("model X", "model X on Amazon Bedrock"). */
  describe(model: string): string;
  /**
   * Run features it does not serve, with why; the run turns the tool off and says so. Prompt caching,
   * streaming, retries, thinking, the context-management betas (`anthropic_beta` in Bedrock's and Vertex's
   * body), subagents and WebFetch's side calls work alike on all three.
   */
  readonly gaps: Readonly<Partial<Record<"WebSearch", string>>>;
  /**
   * It signs in with an Anthropic credential (an API key, an OAuth or federated token), checked by a call of
   * the driver's; a cloud signs in with its own credentials, which stay on the host (never in the sandbox).
   */
  readonly anthropicSignIn: boolean;
  /** Its endpoint, region and project from the variables its SDK and Claude Code read. */
  env(env: Record<string, string | undefined>): Pick<ProviderSettings, "baseURL" | "region" | "projectId">;
  /** What is missing for it to be called. */
  problems(settings: ProviderSettings): string[];
  /** The id a model (an alias already resolved) is called with on it. */
  model(name: string, region: string): ProviderModel;
  client(
    settings: ProviderSettings,
    common: CommonClientOptions,
    options: ClientOptions,
  ): Promise<ModelClient>;
  /** Resolves its credentials before the sandbox starts; throws with what to set. */
  checkCredentials?(settings: ProviderSettings): Promise<void>;
  /** What an auth failure asks the user to check. */
  authHint(credential: AnthropicCredential): string;
}

const read = (env: Record<string, string | undefined>, name: string) => env[name]?.trim() || undefined;

const MODEL_PROVIDERS: Readonly<Record<Provider, ModelProvider>> = {
  anthropic: {
    id: "anthropic",
    name: "Anthropic API",
    describe: (model) => `model ${model}`,
    gaps: {},
    anthropicSignIn: true,
    env: (env) => ({ baseURL: read(env, "ANTHROPIC_BASE_URL") }),
    problems: () => [],
    model: (name) => ({ id: name }),
    client: anthropicClient,
    authHint: credentialHint,
  },
  bedrock: {
    id: "bedrock",
    name: "Amazon Bedrock",
    describe: (model) => `model ${model} on Amazon Bedrock`,
    gaps: { WebSearch: "Amazon Bedrock does not run the API's web_search server tool" },
    anthropicSignIn: false,
    env: (env) => ({
      baseURL: read(env, "ANTHROPIC_BEDROCK_BASE_URL"),
      region: read(env, "AWS_REGION") ?? read(env, "AWS_DEFAULT_REGION"),
    }),
    problems: (settings) =>
      settings.region ? [] : ["Amazon Bedrock needs a region: set AWS_REGION (e.g. us-east-1)"],
    model: bedrockModel,
    client: bedrockClient,
    checkCredentials: checkAwsCredentials,
    authHint: () => "Check the AWS credentials, the region, and that the model is enabled in Bedrock there.",
  },
  vertex: {
    id: "vertex",
    name: "Google Vertex AI",
    describe: (model) => `model ${model} on Google Vertex AI`,
    gaps: {},
    anthropicSignIn: false,
    env: (env) => ({
      baseURL: read(env, "ANTHROPIC_VERTEX_BASE_URL"),
      region: read(env, "CLOUD_ML_REGION"),
      projectId: read(env, "ANTHROPIC_VERTEX_PROJECT_ID"),
    }),
    problems: (settings) => {
      if (!settings.region)
        return ["Google Vertex AI needs a region: set CLOUD_ML_REGION (e.g. us-east5, or global)"];
      if (settings.googleAccessToken && !settings.projectId)
        return ["Google Vertex AI needs a project: set ANTHROPIC_VERTEX_PROJECT_ID"];
      return [];
    },
    model: (name) => ({ id: name.includes("@") ? name : (modelIdsFor(name)?.vertex ?? name) }),
    client: vertexClient,
    checkCredentials: checkGoogleCredentials,
    authHint: () =>
      "Check the Google credentials, the project, and that the model is enabled in Vertex AI there.",
  },
};

/** The provider a run's model is served by. */
export function modelProvider(provider: Provider): ModelProvider {
  return MODEL_PROVIDERS[provider];
}
