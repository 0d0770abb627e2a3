// The Action's OIDC exchange: the workflow's GitHub ID token (`permissions: id-token: write`) for a short-lived
// cloud credential, with each cloud's own library, as aws-actions/configure-aws-credentials and
// google-github-actions/auth do: AWS STS AssumeRoleWithWebIdentity (@aws-sdk/client-sts), and Google's STS token
// exchange plus IAM credentials generateAccessToken (google-auth-library's workload identity federation client).
// The credential stays in this process: it goes to the runner's model client and to the redaction list, never to
// the container. Without these inputs nothing is exchanged and the clouds' SDKs find credentials their usual way.
// Each library is loaded when its exchange runs (`import()`): a run that asks for neither never loads them.
import { commonJs, type AwsCredentials } from "../runner/model/providers.js";
import { ActionInputError, type ActionInputs } from "./inputs.js";

/** The clouds' token endpoints; tests point them at local fakes. Default: the real ones. */
export interface CloudAuthEndpoints {
  /** AWS STS (else the SDK's: AWS_ENDPOINT_URL_STS, or the region's endpoint). */
  awsSts?: string;
  /** Google STS's base (default https://sts.googleapis.com). */
  googleSts?: string;
  /** Google IAM credentials' base (default https://iamcredentials.googleapis.com). */
  googleIamCredentials?: string;
}

export interface CloudCredentials {
  awsCredentials?: AwsCredentials;
  googleAccessToken?: string;
  /** Every value to mask and redact. */
  secrets: string[];
}

export interface ExchangeOptions {
  inputs: Pick<
    ActionInputs,
    | "use_bedrock"
    | "use_vertex"
    | "aws_role_to_assume"
    | "gcp_workload_identity_provider"
    | "gcp_service_account"
  >;
  /** Bedrock's region, which STS is called in too. */
  region?: string;
  /** GitHub's OIDC token for an audience (@actions/core's getIDToken). */
  idToken: (audience: string) => Promise<string>;
  endpoints: CloudAuthEndpoints;
  /** Names the AWS session, so CloudTrail shows which run used the role. */
  sessionName: string;
  log: (line: string) => void;
}

/** The audience AWS's STS expects in a GitHub token, as configure-aws-credentials asks for it. */
export const AWS_AUDIENCE = "sts.amazonaws.com";
const GOOGLE_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/** The short-lived credential the inputs ask for; none when they name no role or pool. */
export async function exchangeOidcToken(options: ExchangeOptions): Promise<CloudCredentials> {
  const { inputs } = options;
  if (inputs.use_bedrock && inputs.aws_role_to_assume)
    return assumeAwsRole(options, inputs.aws_role_to_assume);
  if (inputs.use_vertex && inputs.gcp_workload_identity_provider)
    return googleAccessToken(options, inputs.gcp_workload_identity_provider, inputs.gcp_service_account);
  return { secrets: [] };
}

async function githubToken(options: ExchangeOptions, audience: string, input: string): Promise<string> {
  try {
    return await options.idToken(audience);
  } catch (error) {
    throw new ActionInputError(
      `${input}: could not get the workflow's OIDC token (${(error as Error).message}); the job needs "permissions: id-token: write"`,
      { cause: error },
    );
  }
}

async function assumeAwsRole(options: ExchangeOptions, roleArn: string): Promise<CloudCredentials> {
  if (!options.region)
    throw new ActionInputError("aws_role_to_assume: needs a region: set aws_region or AWS_REGION");
  const token = await githubToken(options, AWS_AUDIENCE, "aws_role_to_assume");
  const { AssumeRoleWithWebIdentityCommand, STSClient } = await commonJs(import("@aws-sdk/client-sts"));
  const sts = new STSClient({
    region: options.region,
    ...(options.endpoints.awsSts ? { endpoint: options.endpoints.awsSts } : {}),
  });
  try {
    const answer = await sts.send(
      new AssumeRoleWithWebIdentityCommand({
        RoleArn: roleArn,
        RoleSessionName: options.sessionName,
        WebIdentityToken: token,
      }),
    );
    const credentials = answer.Credentials;
    if (!credentials?.AccessKeyId || !credentials.SecretAccessKey)
      throw new Error("STS answered without credentials");
    const aws: AwsCredentials = {
      accessKeyId: credentials.AccessKeyId,
      secretAccessKey: credentials.SecretAccessKey,
      ...(credentials.SessionToken ? { sessionToken: credentials.SessionToken } : {}),
    };
    const until = credentials.Expiration ? `, until ${credentials.Expiration.toISOString()}` : "";
    options.log(`aws_role_to_assume: assumed ${roleArn} with the workflow's OIDC token${until}`);
    return { awsCredentials: aws, secrets: [aws.accessKeyId, aws.secretAccessKey, aws.sessionToken ?? ""] };
  } catch (error) {
    throw new ActionInputError(
      `aws_role_to_assume: AWS STS refused the OIDC token for ${roleArn}: ${(error as Error).message}`,
      { cause: error },
    );
  } finally {
    sts.destroy();
  }
}

async function googleAccessToken(
  options: ExchangeOptions,
  provider: string,
  serviceAccount: string | undefined,
): Promise<CloudCredentials> {
  const sts = (options.endpoints.googleSts ?? "https://sts.googleapis.com").replace(/\/+$/, "");
  const iam = (options.endpoints.googleIamCredentials ?? "https://iamcredentials.googleapis.com").replace(
    /\/+$/,
    "",
  );
  const { IdentityPoolClient } = await commonJs(import("google-auth-library"));
  const client = new IdentityPoolClient({
    type: "external_account",
    audience: `//iam.googleapis.com/${provider}`,
    subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
    token_url: `${sts}/v1/token`,
    ...(serviceAccount
      ? {
          service_account_impersonation_url: `${iam}/v1/projects/-/serviceAccounts/${encodeURIComponent(serviceAccount)}:generateAccessToken`,
        }
      : {}),
    // The audience google-github-actions/auth asks GitHub for.
    subject_token_supplier: {
      getSubjectToken: () =>
        githubToken(options, `https://iam.googleapis.com/${provider}`, "gcp_workload_identity_provider"),
    },
    scopes: [GOOGLE_SCOPE],
  });
  try {
    const { token } = await client.getAccessToken();
    if (!token) throw new Error("no access token in the answer");
    const as = serviceAccount ? ` as ${serviceAccount}` : "";
    options.log(`gcp_workload_identity_provider: exchanged the workflow's OIDC token at ${provider}${as}`);
    return { googleAccessToken: token, secrets: [token] };
  } catch (error) {
    if (error instanceof ActionInputError) throw error;
    throw new ActionInputError(
      `gcp_workload_identity_provider: Google refused the OIDC token exchange at ${provider}${serviceAccount ? ` for ${serviceAccount}` : ""}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
