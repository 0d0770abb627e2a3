/**
 * The token services of an OIDC exchange as fakes on 127.0.0.1, speaking their real wire formats:
 * - GitHub's OIDC token endpoint (`ACTIONS_ID_TOKEN_REQUEST_URL`): `GET …&audience=A` with
 *   `Authorization: Bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN`, answering `{"value": "<jwt>"}` (a JWT-shaped token
 *   whose payload names the audience; unsigned, which no real verifier would accept);
 * - AWS STS: `POST /` form-encoded `Action=AssumeRoleWithWebIdentity` (the query protocol), answering the XML
 *   document with `Credentials`, or an `ErrorResponse`;
 * - Google's STS (`POST /v1/token`, RFC 8693 token exchange, form-encoded) and IAM credentials
 *   (`POST /v1/projects/-/serviceAccounts/{sa}:generateAccessToken`, JSON, Bearer the federated token) on one
 *   server.
 * Each accepts only a token the fake GitHub issued for the audience the real service expects, and records what
 * it was sent. Credential values are made per test, at run time (`canaryCredentials`).
 */
import { listenOnLoopback } from "./loopback.js";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

export interface FakeService {
  url: string;
  /** Request bodies (form or JSON text) and paths, in order. */
  requests: Array<{
    method: string;
    path: string;
    query: string;
    headers: Record<string, string>;
    body: string;
  }>;
  close(): Promise<void>;
}

export interface FakeGitHubOidc extends FakeService {
  /** The value for ACTIONS_ID_TOKEN_REQUEST_TOKEN. */
  requestToken: string;
  /** The value for ACTIONS_ID_TOKEN_REQUEST_URL (carries a query, as GitHub's does). */
  requestUrl: string;
  /** Every token issued, with its audience. */
  issued: Array<{ audience: string; token: string }>;
}

/** Values shaped like the real ones, different every run, never in the repository. */
export function canaryCredentials() {
  const upper = (n: number) =>
    Array.from(randomBytes(n), (b) => "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[b % 32]).join("");
  const b64 = (n: number) => randomBytes(n).toString("base64").replace(/=+$/, "");
  return {
    accessKeyId: ["AS", "IA", upper(16)].join(""),
    secretAccessKey: b64(30),
    sessionToken: ["IQoJb3JpZ2lu", "X2Vj", b64(240)].join(""),
    googleFederatedToken: ["ya", "29.", "d.", b64(60).replace(/[+/]/g, "_")].join(""),
    googleAccessToken: ["ya", "29.", "c.", b64(90).replace(/[+/]/g, "_")].join(""),
  };
}

export async function startFakeGitHubOidc(): Promise<FakeGitHubOidc> {
  const requestToken = randomBytes(24).toString("hex");
  const issued: FakeGitHubOidc["issued"] = [];
  const service = await serve((request, res) => {
    const audience = new URLSearchParams(request.query).get("audience");
    if (request.headers.authorization !== `Bearer ${requestToken}`)
      return json(res, 401, { message: "Bad credentials" });
    if (!audience) return json(res, 400, { message: "audience is required here" });
    const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const token = [
      segment({ alg: "none", typ: "JWT" }),
      segment({
        iss: "https://token.actions.githubusercontent.com",
        aud: audience,
        sub: "repo:acme/widget:ref:refs/heads/main",
        exp: Math.floor(Date.now() / 1000) + 300,
      }),
      randomBytes(16).toString("base64url"),
    ].join(".");
    issued.push({ audience, token });
    return json(res, 200, { count: 1, value: token });
  });
  return { ...service, requestToken, requestUrl: `${service.url}/token?api-version=2.0`, issued };
}

/** True when `token` was issued by the fake GitHub for `audience`. */
export function issuedFor(oidc: FakeGitHubOidc, token: string | null, audience: string): boolean {
  return oidc.issued.some((entry) => entry.token === token && entry.audience === audience);
}

export interface FakeAwsStsOptions {
  oidc: FakeGitHubOidc;
  roleArn: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken: string };
}

export async function startFakeAwsSts(options: FakeAwsStsOptions): Promise<FakeService> {
  return serve((request, res) => {
    const form = new URLSearchParams(request.body);
    if (request.method !== "POST" || form.get("Action") !== "AssumeRoleWithWebIdentity")
      return stsError(res, 400, "InvalidAction", `Could not find operation ${form.get("Action")}`);
    if (form.get("Version") !== "2011-06-15") return stsError(res, 400, "InvalidAction", "unknown Version");
    if (form.get("RoleArn") !== options.roleArn)
      return stsError(res, 403, "AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity");
    if (!issuedFor(options.oidc, form.get("WebIdentityToken"), "sts.amazonaws.com"))
      return stsError(res, 400, "InvalidIdentityToken", "Incorrect token audience");
    const session = form.get("RoleSessionName") ?? "";
    if (!/^[\w+=,.@-]{2,64}$/.test(session))
      return stsError(res, 400, "ValidationError", "RoleSessionName does not satisfy its constraint");
    const { credentials } = options;
    const expiration = new Date(Date.now() + 3600_000).toISOString();
    res.writeHead(200, { "content-type": "text/xml" });
    res.end(`<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <Audience>sts.amazonaws.com</Audience>
    <AssumedRoleUser>
      <AssumedRoleId>AROAFAKEROLEID:${session}</AssumedRoleId>
      <Arn>${options.roleArn.replace(":iam::", ":sts::").replace(":role/", ":assumed-role/")}/${session}</Arn>
    </AssumedRoleUser>
    <Provider>arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com</Provider>
    <Credentials>
      <AccessKeyId>${credentials.accessKeyId}</AccessKeyId>
      <SecretAccessKey>${credentials.secretAccessKey}</SecretAccessKey>
      <SessionToken>${credentials.sessionToken}</SessionToken>
      <Expiration>${expiration}</Expiration>
    </Credentials>
    <SubjectFromWebIdentityToken>repo:acme/widget:ref:refs/heads/main</SubjectFromWebIdentityToken>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata><RequestId>${randomBytes(16).toString("hex")}</RequestId></ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>`);
  });
}

function stsError(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { "content-type": "text/xml" });
  res.end(
    `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>fake</RequestId></ErrorResponse>`,
  );
}

export interface FakeGoogleAuthOptions {
  oidc: FakeGitHubOidc;
  /** projects/N/locations/global/workloadIdentityPools/P/providers/R */
  provider: string;
  serviceAccount: string;
  federatedToken: string;
  accessToken: string;
}

/** Google's STS and IAM credentials on one server: pass its url as both endpoints. */
export async function startFakeGoogleAuth(options: FakeGoogleAuthOptions): Promise<FakeService> {
  return serve((request, res) => {
    if (request.method === "POST" && request.path === "/v1/token") {
      const form = new URLSearchParams(request.body);
      const bad = (description: string) =>
        json(res, 400, { error: "invalid_request", error_description: description });
      if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:token-exchange")
        return bad("grant_type must be token-exchange");
      if (form.get("audience") !== `//iam.googleapis.com/${options.provider}`)
        return bad("The audience does not name this workload identity provider");
      if (form.get("subject_token_type") !== "urn:ietf:params:oauth:token-type:jwt")
        return bad("subject_token_type must be a JWT");
      if (
        !issuedFor(options.oidc, form.get("subject_token"), `https://iam.googleapis.com/${options.provider}`)
      )
        return json(res, 400, {
          error: "invalid_grant",
          error_description: "The audience in the ID token does not match",
        });
      return json(res, 200, {
        access_token: options.federatedToken,
        issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
        token_type: "Bearer",
        expires_in: 3600,
      });
    }
    const route = /^\/v1\/projects\/-\/serviceAccounts\/([^/:]+):generateAccessToken$/.exec(request.path);
    if (request.method === "POST" && route) {
      if (request.headers.authorization !== `Bearer ${options.federatedToken}`)
        return json(res, 401, {
          error: { code: 401, message: "invalid credentials", status: "UNAUTHENTICATED" },
        });
      if (decodeURIComponent(route[1]!) !== options.serviceAccount)
        return json(res, 403, {
          error: {
            code: 403,
            message: "iam.serviceAccounts.getAccessToken denied",
            status: "PERMISSION_DENIED",
          },
        });
      const body = JSON.parse(request.body || "{}") as { scope?: string[] };
      if (!body.scope?.includes("https://www.googleapis.com/auth/cloud-platform"))
        return json(res, 400, {
          error: { code: 400, message: "scope is required", status: "INVALID_ARGUMENT" },
        });
      return json(res, 200, {
        accessToken: options.accessToken,
        expireTime: new Date(Date.now() + 3600_000).toISOString(),
      });
    }
    return json(res, 404, { error: { code: 404, message: `no route ${request.path}`, status: "NOT_FOUND" } });
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function serve(
  handle: (request: FakeService["requests"][number], res: ServerResponse) => void,
): Promise<FakeService> {
  const requests: FakeService["requests"] = [];
  const server = createServer((req, res) => {
    void readAll(req).then((body) => {
      const [path = "/", query = ""] = (req.url ?? "/").split("?", 2);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers))
        headers[name] = Array.isArray(value) ? value.join(", ") : (value ?? "");
      const request = { method: req.method ?? "GET", path, query, headers, body };
      requests.push(request);
      handle(request, res);
    });
  });
  const { url, close } = await listenOnLoopback(server);
  return { url, requests, close };
}

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
