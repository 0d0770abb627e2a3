/**
 * Which credential the Anthropic API is called with, decided once for the CLI and the Action, and how the
 * bundled `@anthropic-ai/sdk` is given it. Four kinds, in Claude Code's order (a key or token given wins over
 * federation, as in claude-code-action):
 * - `ANTHROPIC_AUTH_TOKEN`: a bearer token (a gateway's), sent as `Authorization: Bearer` (the SDK's `authToken`);
 * - `ANTHROPIC_API_KEY`: an API key (the SDK's `apiKey`);
 * - `CLAUDE_CODE_OAUTH_TOKEN` (the Action's `claude_code_oauth_token`): a Claude OAuth token, sent as a bearer
 *   token with the OAuth beta, as the SDK sends any access token;
 * - workload identity federation: an identity token (a file re-read at each exchange, so it can be kept fresh)
 *   exchanged for a short-lived access token by the SDK's own `oidcFederationProvider` (RFC 7523 jwt-bearer at
 *   `/v1/oauth/token`); the client's token cache exchanges again before the token expires.
 * Everything here runs in agent-ci's process: no credential is handed to the sandbox.
 */
import type { ClientOptions } from "@anthropic-ai/sdk";
import type { AccessTokenProvider } from "@anthropic-ai/sdk/lib/credentials/types";

/** Workload identity federation's settings (claude-code-action's `anthropic_federation_rule_id` and friends). */
export interface FederationSettings {
  /** `fdrl_…`: the federation rule the identity token is checked against. */
  ruleId: string;
  /** The Anthropic organization's UUID. */
  organizationId: string;
  /** `svac_…`: the service account the token acts as. */
  serviceAccountId?: string;
  /** `wrkspc_…` (or `default`): needed when the rule covers several workspaces. */
  workspaceId?: string;
  /** A file holding the identity token (a JWT), read at every exchange. */
  identityTokenFile: string;
}

/** The credential fields of a run's configuration. */
export interface AnthropicCredentialFields {
  apiKey?: string;
  authToken?: string;
  oauthToken?: string;
  federation?: FederationSettings;
}

export type AnthropicCredential =
  | { kind: "auth_token" | "api_key" | "oauth_token"; token: string }
  | { kind: "federation"; federation: FederationSettings };

export type AnthropicCredentialKind = AnthropicCredential["kind"];

/** Where each kind comes from, as the user sets it (named in errors and in the run's log, never its value). */
export const CREDENTIAL_SOURCES: Readonly<Record<AnthropicCredentialKind, string>> = {
  auth_token: "ANTHROPIC_AUTH_TOKEN",
  api_key: "ANTHROPIC_API_KEY",
  oauth_token: "CLAUDE_CODE_OAUTH_TOKEN",
  federation: "workload identity federation",
};

/** Said when a run that calls the Anthropic API has no credential. */
export const NO_ANTHROPIC_CREDENTIAL =
  "ANTHROPIC_API_KEY is not set: set it to run a model (or ANTHROPIC_AUTH_TOKEN, a gateway's bearer token; CLAUDE_CODE_OAUTH_TOKEN; or ANTHROPIC_FEDERATION_RULE_ID, ANTHROPIC_ORGANIZATION_ID and ANTHROPIC_IDENTITY_TOKEN_FILE for workload identity federation), or use --script to run without one";

/** The credential a run signs in with: the first one present, in Claude Code's order; none when none is. */
export function anthropicCredential(fields: AnthropicCredentialFields): AnthropicCredential | undefined {
  if (fields.authToken) return { kind: "auth_token", token: fields.authToken };
  if (fields.apiKey) return { kind: "api_key", token: fields.apiKey };
  if (fields.oauthToken) return { kind: "oauth_token", token: fields.oauthToken };
  if (fields.federation) return { kind: "federation", federation: fields.federation };
  return undefined;
}

/** The credential's secret values known before any call (an exchanged token is learnt later: `onToken`). */
export function credentialSecrets(fields: AnthropicCredentialFields): string[] {
  return [fields.authToken, fields.apiKey, fields.oauthToken].filter((v): v is string => Boolean(v));
}

export interface SdkCredentialOptions {
  /** The API's base URL; the token exchange is made there too. */
  baseURL: string;
  /** Told every access token the federation exchange returns, before it is used (to mask and redact it). */
  onToken?: (token: string) => void;
}

/** The credential as the SDK's client options: exactly one of `apiKey`, `authToken`, `credentials`. */
export function sdkCredentialOptions(
  credential: AnthropicCredential,
  options: SdkCredentialOptions,
): Pick<ClientOptions, "apiKey" | "authToken" | "credentials"> {
  switch (credential.kind) {
    case "api_key":
      return { apiKey: credential.token };
    case "auth_token":
      return { authToken: credential.token };
    case "oauth_token": {
      // An access token with no expiry the client knows: sent as a bearer token with the OAuth beta.
      const token = { token: credential.token, expiresAt: null };
      return { credentials: () => Promise.resolve(token) };
    }
    case "federation": {
      // The SDK's exchange is loaded on the first token asked for (`agent-ci --help` loads no SDK).
      let exchange: Promise<AccessTokenProvider> | undefined;
      const observed: AccessTokenProvider = async (refresh) => {
        exchange ??= federationExchange(credential.federation, options.baseURL);
        const token = await (await exchange)(refresh);
        options.onToken?.(token.token);
        return token;
      };
      return { credentials: observed };
    }
  }
}

/**
 * The credential fields from the environment, under the names Claude Code and the SDK read (federation needs the
 * rule, the organization and an identity token file, as the SDK's `ANTHROPIC_IDENTITY_TOKEN_FILE`).
 */
export function credentialsFromEnv(env: Record<string, string | undefined>): AnthropicCredentialFields {
  const read = (name: string) => env[name]?.trim() || undefined;
  const ruleId = read("ANTHROPIC_FEDERATION_RULE_ID");
  const organizationId = read("ANTHROPIC_ORGANIZATION_ID");
  const identityTokenFile = read("ANTHROPIC_IDENTITY_TOKEN_FILE");
  const federation =
    ruleId && organizationId && identityTokenFile
      ? {
          ruleId,
          organizationId,
          identityTokenFile,
          serviceAccountId: read("ANTHROPIC_SERVICE_ACCOUNT_ID"),
          workspaceId: read("ANTHROPIC_WORKSPACE_ID"),
        }
      : undefined;
  return {
    apiKey: read("ANTHROPIC_API_KEY"),
    authToken: read("ANTHROPIC_AUTH_TOKEN"),
    oauthToken: read("CLAUDE_CODE_OAUTH_TOKEN"),
    federation,
  };
}

/** The SDK's own OIDC federation exchange (RFC 7523 jwt-bearer), reading GitHub's token from its file. */
async function federationExchange(
  federation: Extract<AnthropicCredential, { kind: "federation" }>["federation"],
  baseURL: string,
): Promise<AccessTokenProvider> {
  const [{ identityTokenFromFile }, { oidcFederationProvider }] = await Promise.all([
    import("@anthropic-ai/sdk/lib/credentials/identity-token"),
    import("@anthropic-ai/sdk/lib/credentials/oidc-federation"),
  ]);
  return oidcFederationProvider({
    identityTokenProvider: identityTokenFromFile(federation.identityTokenFile),
    federationRuleId: federation.ruleId,
    organizationId: federation.organizationId,
    serviceAccountId: federation.serviceAccountId,
    workspaceId: federation.workspaceId,
    baseURL: baseURL.replace(/\/+$/, ""),
    fetch: (input, init) => fetch(input, init),
  });
}

/** What an auth failure on the Anthropic API asks the user to check: the credential used. */
export function credentialHint(credential: AnthropicCredential): string {
  if (credential.kind === "federation")
    return "Check the federation rule, the organization (and the workspace when the rule covers several) and the identity token.";
  return `Check ${CREDENTIAL_SOURCES[credential.kind]}.`;
}
