/**
 * The Anthropic API's token exchange for workload identity federation, as a part of the fake Messages API
 * (`startFakeAnthropic({ tokenExchange })`), speaking the wire format `@anthropic-ai/sdk`'s
 * `oidcFederationProvider` sends: `POST /v1/oauth/token`, JSON `{grant_type:
 * "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion, federation_rule_id, organization_id,
 * service_account_id?, workspace_id?}` with `anthropic-beta: oauth-2025-04-20,oidc-federation-2026-04-01`,
 * answered with `{access_token, token_type: "Bearer", expires_in}` or an RFC 6749 error body. Like the real one:
 * an assertion is accepted once (a replayed one is `jti_reused`), and the access token it mints is then
 * accepted on the API only as a bearer token with the OAuth beta. Access tokens are made at run time.
 */
import { randomBytes } from "node:crypto";

export const OAUTH_BETA = "oauth-2025-04-20";
export const FEDERATION_BETA = "oidc-federation-2026-04-01";
export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";

export interface FakeTokenExchangeOptions {
  ruleId: string;
  organizationId: string;
  /** The only identity tokens accepted as assertions (e.g. those the fake GitHub issued for the audience). */
  accepts: (assertion: string) => boolean;
  /** Seconds each access token lasts (default 3600). */
  expiresIn?: number;
}

export interface FakeTokenExchange {
  options: FakeTokenExchangeOptions;
  /** Every access token minted, in order. */
  issued: string[];
  /** Every exchange request's JSON body, in order. */
  exchanges: Array<Record<string, unknown>>;
}

export function fakeTokenExchange(options: FakeTokenExchangeOptions): FakeTokenExchange {
  return { options, issued: [], exchanges: [] };
}

export interface ExchangeAnswer {
  status: number;
  body: Record<string, unknown>;
}

const betas = (headers: Record<string, string>) =>
  (headers["anthropic-beta"] ?? "").split(",").map((beta) => beta.trim());

/** The answer to `POST /v1/oauth/token`. */
export function answerExchange(
  exchange: FakeTokenExchange,
  headers: Record<string, string>,
  body: unknown,
): ExchangeAnswer {
  const refuse = (status: number, error: string, description: string): ExchangeAnswer => ({
    status,
    body: { error, error_description: description },
  });
  if (!(headers["content-type"] ?? "").startsWith("application/json"))
    return refuse(400, "invalid_request", "the body must be JSON");
  if (!betas(headers).includes(OAUTH_BETA) || !betas(headers).includes(FEDERATION_BETA))
    return refuse(400, "invalid_request", `anthropic-beta must include ${OAUTH_BETA} and ${FEDERATION_BETA}`);
  const form = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  exchange.exchanges.push(form);
  if (form.grant_type !== JWT_BEARER_GRANT)
    return refuse(400, "unsupported_grant_type", "grant_type must be jwt-bearer");
  const assertion = typeof form.assertion === "string" ? form.assertion : "";
  const { options } = exchange;
  if (form.organization_id !== options.organizationId || form.federation_rule_id !== options.ruleId)
    return refuse(401, "invalid_grant", "no such federation rule in this organization");
  if (!options.accepts(assertion))
    return refuse(401, "invalid_grant", "the identity token does not match the federation rule");
  const used = exchange.exchanges.slice(0, -1).some((earlier) => earlier.assertion === assertion);
  if (used) return refuse(401, "invalid_grant", "jti_reused: the identity token was already exchanged");
  // Not shaped like a key, so only masking by value (not a redaction pattern) can hide it.
  const token = ["fed", randomBytes(32).toString("hex")].join("-");
  exchange.issued.push(token);
  return {
    status: 200,
    body: { access_token: token, token_type: "Bearer", expires_in: options.expiresIn ?? 3600 },
  };
}

/** Why a request signed with a minted token is refused (undefined: accepted). */
export function checkExchangedToken(
  exchange: FakeTokenExchange,
  headers: Record<string, string>,
  sent: string | undefined,
): string | undefined {
  if (!sent || !exchange.issued.includes(sent)) return "invalid bearer token";
  if (!(headers["authorization"] ?? "").startsWith("Bearer "))
    return "an access token is sent as a bearer token";
  if (!betas(headers).includes(OAUTH_BETA)) return "OAuth authentication is currently not supported.";
  return undefined;
}
