// The Action's sign-in inputs (claude-code-action's names): the OAuth token and the environment's tokens go the
// one way the runner chooses a credential; the federation inputs come together or are refused by name.
import { describe, expect, it } from "vitest";
import { ActionInputError, parseActionInputs, type InputName } from "../../../src/action/inputs.js";
import { actionCredentialFields, toRunConfigInput } from "../../../src/action/run-config.js";
import { anthropicCredential } from "../../../src/runner/model/credentials.js";

const inputs = (given: Partial<Record<InputName, string>> = {}) =>
  parseActionInputs((name) => given[name] ?? "");

describe("the Action's sign-in inputs", () => {
  it("uses claude_code_oauth_token, and the environment's tokens when the inputs are empty", () => {
    const oauth = inputs({ claude_code_oauth_token: "o" });
    expect(anthropicCredential(actionCredentialFields({ inputs: oauth }))).toEqual({
      kind: "oauth_token",
      token: "o",
    });
    expect(
      anthropicCredential(actionCredentialFields({ inputs: inputs(), envCredentials: { authToken: "t" } })),
    ).toEqual({ kind: "auth_token", token: "t" });
    // The key from the input wins over federation, as in claude-code-action.
    const both = inputs({
      anthropic_api_key: "k",
      anthropic_federation_rule_id: "fdrl_1",
      anthropic_organization_id: "org",
    });
    expect(anthropicCredential(actionCredentialFields({ inputs: both, identityTokenFile: "/t" }))?.kind).toBe(
      "api_key",
    );
  });

  it("passes the federation inputs to the run, and the tokens to the redaction list", () => {
    const config = toRunConfigInput({
      inputs: inputs({
        claude_code_oauth_token: "oauth-secret",
        anthropic_federation_rule_id: "fdrl_1",
        anthropic_organization_id: "org",
        anthropic_service_account_id: "svac_1",
        anthropic_workspace_id: "wrkspc_1",
      }),
      workspace: "/w",
      outDir: "/o",
      prompt: "p",
      repo: "a/b",
      identityTokenFile: "/tmp/id",
    });
    expect(config.federation).toEqual({
      ruleId: "fdrl_1",
      organizationId: "org",
      serviceAccountId: "svac_1",
      workspaceId: "wrkspc_1",
      identityTokenFile: "/tmp/id",
    });
    expect(config.secrets).toContain("oauth-secret");
    expect(inputs().anthropic_oidc_audience).toBe("https://api.anthropic.com");
  });

  it("refuses half a federation, or its settings without a rule, by name", () => {
    expect(() => inputs({ anthropic_federation_rule_id: "fdrl_1" })).toThrow(
      /anthropic_federation_rule_id and anthropic_organization_id: .*needs both/,
    );
    expect(() => inputs({ anthropic_workspace_id: "wrkspc_1" })).toThrow(
      /anthropic_workspace_id: needs anthropic_federation_rule_id/,
    );
    expect(() =>
      inputs({ anthropic_federation_rule_id: "f", anthropic_organization_id: "o", use_bedrock: "true" }),
    ).toThrow(ActionInputError);
  });
});
