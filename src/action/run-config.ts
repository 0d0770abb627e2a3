// Action inputs (+ the built prompt and the trusted settings file) → the runner's RunConfig input: the same
// shape the CLI builds from its flags, validated by the same zod schema. The GitHub token goes into `secrets`
// (redacted everywhere) and nowhere else: RunConfig has no field that carries a value into the container,
// and the Action passes only the environment variables the `env` input names. Pure.
import path from "node:path";
import type { RunConfigInput } from "../runner/config.js";
import { credentialSecrets, type AnthropicCredentialFields } from "../runner/model/credentials.js";
import { providerOf, type ActionInputs } from "./inputs.js";
import { modelProvider } from "../runner/model/providers.js";
import type { ActionMemory } from "./trusted-memory.js";

export interface RunConfigParts {
  inputs: ActionInputs;
  workspace: string;
  outDir: string;
  prompt?: string;
  systemPromptAppend?: string;
  /** A temp file with the trusted settings (inline JSON or the file read at the trusted ref). */
  settingsPath?: string;
  /** A temp file with the output schema (inline JSON or the file read at the trusted ref). */
  outputSchemaPath?: string;
  /** Folders of skills and slash commands (read at the trusted ref). */
  skillsDir?: string;
  commandsDir?: string;
  /** A temp file with the MCP servers (inline JSON or the file read at the trusted ref). */
  mcpConfigPath?: string;
  /** Subagent definitions (read at the trusted ref): a temp file of --agents JSON, or a folder of agent files. */
  agentsJsonPath?: string;
  agentsDir?: string;
  /** Where the project's memory is read from (trusted-memory.ts), and the `memory` input's files. */
  memory?: ActionMemory;
  /** The base revision's hook scripts on pull-request events (trusted-hook-scripts.ts). */
  hookScriptsDir?: string;
  /** task: review: the pull request's base and head commits. */
  review?: { base: string; head: string };
  /** The key and tokens in the step's environment (credentialsFromEnv), used when the inputs are empty. */
  envCredentials?: AnthropicCredentialFields;
  /** Workload identity federation: the file the Action keeps the GitHub OIDC token in. */
  identityTokenFile?: string;
  /** ANTHROPIC_BASE_URL from the environment (a gateway or proxy). */
  envBaseUrl?: string;
  /** Bedrock or Vertex AI: the endpoint, region and project from the environment (providerEnv). */
  providerEnv?: Pick<RunConfigInput, "baseURL" | "region" | "projectId">;
  repo: string;
  /** resume_from, when it holds an earlier run's record. */
  resume?: string;
  /** The workspace may be a pull request's head (`pullRequestBase`): its commit messages are its author's. */
  pullRequestHead?: boolean;
  /** The version of the `node` on the step's PATH: the Node.js the job set up (sandbox/node/runner-node.ts). */
  runnerNodeVersion?: string;
  /** The workflow event the run came from: what it may write to the setup cache (setup-cache/trust.ts). */
  cacheOrigin?: RunConfigInput["cacheOrigin"];
}

/**
 * The Anthropic credentials the inputs give, else the step's environment; federation from its inputs only.
 * Which one a run uses is the runner's one rule (`anthropicCredential`).
 */
export function actionCredentialFields(
  parts: Pick<RunConfigParts, "inputs" | "envCredentials" | "identityTokenFile">,
): AnthropicCredentialFields {
  const { inputs } = parts;
  const env = parts.envCredentials ?? {};
  const ruleId = inputs.anthropic_federation_rule_id;
  const organizationId = inputs.anthropic_organization_id;
  return {
    apiKey: inputs.anthropic_api_key || env.apiKey,
    authToken: env.authToken,
    oauthToken: inputs.claude_code_oauth_token || env.oauthToken,
    federation:
      ruleId && organizationId && parts.identityTokenFile
        ? {
            ruleId,
            organizationId,
            serviceAccountId: inputs.anthropic_service_account_id,
            workspaceId: inputs.anthropic_workspace_id,
            identityTokenFile: parts.identityTokenFile,
          }
        : undefined,
  };
}

/** The provider, its endpoint, region and project, and the Anthropic credentials only where they are used. */
function providerFields(parts: RunConfigParts): Partial<RunConfigInput> {
  const { inputs } = parts;
  const provider = providerOf(inputs);
  if (modelProvider(provider).anthropicSignIn)
    return {
      provider,
      ...(inputs.script ? {} : actionCredentialFields(parts)),
      baseURL: parts.envBaseUrl || undefined,
    };
  const env = parts.providerEnv ?? {};
  return {
    provider,
    baseURL: env.baseURL,
    region: (provider === "bedrock" ? inputs.aws_region : undefined) ?? env.region,
    projectId: env.projectId,
  };
}

export function toRunConfigInput(parts: RunConfigParts): RunConfigInput {
  const { inputs } = parts;
  const script = inputs.script ? path.resolve(parts.workspace, inputs.script) : undefined;
  return {
    workspace: parts.workspace,
    // A scripted run takes the prompt too: a slash command in it is expanded (and recorded) the same way.
    prompt: parts.prompt,
    systemPromptAppend:
      [parts.systemPromptAppend, inputs.append_system_prompt].filter(Boolean).join("\n\n") || undefined,
    script,
    model: inputs.model,
    ...providerFields(parts),
    image: inputs.image,
    imageRegistry: inputs.image_registry,
    runtime: inputs.runtime,
    nodeVersion: inputs.node_version,
    runnerNodeVersion: parts.runnerNodeVersion,
    network: inputs.network,
    allowDomain: inputs.allowed_domains,
    setupAllowDomain: inputs.setup_allowed_domains,
    allowPrivateHost: inputs.allow_private_hosts,
    injectSecret: inputs.inject_secrets,
    caCert: inputs.ca_cert ? path.resolve(parts.workspace, inputs.ca_cert) : undefined,
    setup: inputs.setup,
    setupRefresh: inputs.setup_refresh,
    setupCache: inputs.setup_cache,
    setupCacheKeyFiles: inputs.setup_cache_key_files,
    setupCacheMaxAge: inputs.setup_cache_max_age,
    cacheOrigin: parts.cacheOrigin,
    env: inputs.env,
    memory: inputs.memory_limit,
    cpus: inputs.cpus,
    // Review runs are plan mode whatever permission_mode says (the runner sets it).
    mode: parts.review ? undefined : inputs.permission_mode,
    allow: inputs.allowed_tools,
    deny: inputs.disallowed_tools,
    settings: parts.settingsPath,
    skillsDir: parts.skillsDir ? [parts.skillsDir] : [],
    commandsDir: parts.commandsDir ? [parts.commandsDir] : [],
    instructionsSource: "action",
    // Workspace settings files may add denies only, its .mcp.json starts nothing and its .claude/agents is
    // not loaded: on pull requests the workspace is the PR head.
    trustWorkspaceSettings: false,
    mcpConfig: parts.mcpConfigPath ? [parts.mcpConfigPath] : [],
    agents: parts.agentsJsonPath,
    agentsDir: parts.agentsDir ? [parts.agentsDir] : [],
    ...parts.memory,
    hookScriptsDir: parts.hookScriptsDir,
    ruleSource: "action",
    maxTurns: inputs.max_turns,
    // max_turns always has a value here, so it bounds each attempt; max_budget_usd bounds them together.
    attempts: inputs.attempts,
    maxBudgetUsd: inputs.max_budget_usd,
    timeoutMs: Math.round(inputs.timeout_minutes * 60_000),
    out: parts.outDir,
    outputFormat: "text",
    verify: inputs.verify,
    includeIgnored: inputs.include_ignored,
    secrets: [inputs.github_token, ...credentialSecrets(actionCredentialFields(parts))].filter(
      (s): s is string => Boolean(s),
    ),
    repo: parts.repo,
    outputSchema: parts.outputSchemaPath,
    task: parts.review ? "review" : "run",
    reviewBase: parts.review?.base,
    reviewHead: parts.review?.head,
    resume: parts.resume,
    resumeNeedsPublishedCommit: true,
    untrustedHistory: parts.pullRequestHead ?? false,
  };
}
