// Where the model is served and how the run signs in: the Anthropic API's credentials, workload identity
// federation, Amazon Bedrock and Google Vertex AI. Credentials are Action inputs; the CLI takes them from the environment.
import { PROVIDERS } from "./values.js";
import { type OptionDef } from "./types.js";

export const SIGN_IN_OPTIONS = {
  anthropic_api_key: {
    action: {
      default: "",
      description:
        "Anthropic API key, from a secret. When empty, the ANTHROPIC_API_KEY environment variable is used. It stays on the host: the container never sees it. ANTHROPIC_BASE_URL in the environment points the client at a gateway or proxy; ANTHROPIC_AUTH_TOKEN there is a bearer token (a gateway's), used before the key, as Claude Code does.",
      cli: "`ANTHROPIC_API_KEY` in the environment",
    },
  },
  claude_code_oauth_token: {
    action: {
      default: "",
      description:
        "A Claude OAuth token (from claude setup-token), from a secret, instead of an API key; when empty, CLAUDE_CODE_OAUTH_TOKEN in the environment. Sent as a bearer token; it stays on the host.",
      cli: "`CLAUDE_CODE_OAUTH_TOKEN` (or `ANTHROPIC_AUTH_TOKEN`) in the environment",
    },
  },
  anthropic_federation_rule_id: {
    action: {
      default: "",
      description:
        "Keyless sign-in: a workload identity federation rule (fdrl_...). With anthropic_organization_id, the workflow's GitHub OIDC token is exchanged for a short-lived Anthropic access token, re-exchanged before it expires; the job needs permissions id-token: write. An API key or token given as well wins.",
      cli: "`ANTHROPIC_FEDERATION_RULE_ID` in the environment",
    },
  },
  anthropic_organization_id: {
    action: {
      default: "",
      description: "The Anthropic organization's UUID, for workload identity federation.",
      cli: "`ANTHROPIC_ORGANIZATION_ID` in the environment",
    },
  },
  anthropic_service_account_id: {
    action: {
      default: "",
      description:
        "With anthropic_federation_rule_id, the service account (svac_...) the access token acts as (optional).",
      cli: "`ANTHROPIC_SERVICE_ACCOUNT_ID` in the environment",
    },
  },
  anthropic_workspace_id: {
    action: {
      default: "",
      description:
        "With anthropic_federation_rule_id, the workspace (wrkspc_...) the access token is for; needed when the rule covers several workspaces.",
      cli: "`ANTHROPIC_WORKSPACE_ID` in the environment",
    },
  },
  anthropic_oidc_audience: {
    action: {
      default: "https://api.anthropic.com",
      description: "The audience of the GitHub OIDC token exchanged for workload identity federation.",
      cli: "`ANTHROPIC_IDENTITY_TOKEN_FILE` in the environment (a token for that audience)",
    },
  },
  use_bedrock: {
    action: {
      default: "false",
      description:
        "Call Claude on Amazon Bedrock instead of the Anthropic API (as CLAUDE_CODE_USE_BEDROCK=1 does). AWS credentials come from aws_role_to_assume, else from the AWS credential chain (e.g. a preceding aws-actions/configure-aws-credentials step); the region from aws_region, else AWS_REGION.",
      cli: ["--provider"],
    },
  },
  use_vertex: {
    action: {
      default: "false",
      description:
        "Call Claude on Google Vertex AI instead of the Anthropic API (as CLAUDE_CODE_USE_VERTEX=1 does). Google credentials come from gcp_workload_identity_provider, else from Application Default Credentials (e.g. a preceding google-github-actions/auth step); CLOUD_ML_REGION and ANTHROPIC_VERTEX_PROJECT_ID in the environment name the region and the project.",
      cli: ["--provider"],
    },
  },
  aws_role_to_assume: {
    action: {
      default: "",
      description:
        "With use_bedrock: the ARN of an IAM role to assume with the workflow's OIDC token (AWS STS AssumeRoleWithWebIdentity). The job needs permissions id-token: write. The short-lived credential stays on the host, is redacted everywhere, and lasts the role's session (an hour by default).",
      cli: "the AWS credential chain in the environment (`AWS_PROFILE`, `AWS_ACCESS_KEY_ID`, …)",
    },
  },
  aws_region: {
    action: {
      default: "",
      description:
        "With use_bedrock, the AWS region of Bedrock (and of STS). When empty, AWS_REGION is used.",
      cli: "`AWS_REGION` in the environment",
    },
  },
  gcp_workload_identity_provider: {
    action: {
      default: "",
      description:
        "With use_vertex: the workload identity provider to exchange the workflow's OIDC token at, as projects/NUMBER/locations/global/workloadIdentityPools/POOL/providers/PROVIDER (Google STS). The job needs permissions id-token: write. The access token stays on the host and is redacted everywhere.",
      cli: "Google's application default credentials in the environment",
    },
  },
  gcp_service_account: {
    action: {
      default: "",
      description:
        "With gcp_workload_identity_provider: the service account to impersonate (IAM credentials generateAccessToken), e.g. agent-ci@PROJECT.iam.gserviceaccount.com. When empty, the federated token is used directly.",
      cli: "Google's application default credentials in the environment",
    },
  },
  provider: {
    cli: {
      flags: "--provider <name>",
      description:
        "where the model is served: anthropic (ANTHROPIC_API_KEY), bedrock (AWS credentials, AWS_REGION) or vertex (Google credentials, CLOUD_ML_REGION, ANTHROPIC_VERTEX_PROJECT_ID); default: CLAUDE_CODE_USE_BEDROCK=1 / CLAUDE_CODE_USE_VERTEX=1, else anthropic",
      group: "Model",
      choices: PROVIDERS,
    },
  },
} as const satisfies Record<string, OptionDef>;
