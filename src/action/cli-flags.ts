// Each Action input's counterpart on the command line: the `agent-ci run` flags that set the same RunConfig
// field, or what the CLI uses instead (the environment, nothing: the Action's own GitHub work). The
// configuration reference (docs/configuration.md) is generated from this and the CLI's own option
// definitions (scripts/cli-docs.ts); a test fails when an input or a flag named here is missing.
import type { InputName } from "./inputs.js";

/** The flags that mean the same as the input, or (a sentence) what the CLI has instead. */
export type InputCounterpart = readonly `--${string}`[] | string;

const ACTION_ONLY = "the Action only (the CLI makes no GitHub writes and reads no event)";

export const INPUT_FLAGS: Record<InputName, InputCounterpart> = {
  prompt: ["--prompt"],
  prompt_file: ["--prompt-file"],
  anthropic_api_key: "`ANTHROPIC_API_KEY` in the environment",
  use_bedrock: ["--provider"],
  use_vertex: ["--provider"],
  aws_role_to_assume: "the AWS credential chain in the environment (`AWS_PROFILE`, `AWS_ACCESS_KEY_ID`, …)",
  aws_region: "`AWS_REGION` in the environment",
  gcp_workload_identity_provider: "Google's application default credentials in the environment",
  gcp_service_account: "Google's application default credentials in the environment",
  model: ["--model"],
  permission_mode: ["--mode"],
  allowed_tools: ["--allow"],
  disallowed_tools: ["--deny"],
  settings: ["--settings"],
  skills: ["--skills-dir"],
  commands: ["--commands-dir"],
  mcp_config: ["--mcp-config"],
  claude_args: "Claude Code's flags given as flags (`--allowedTools`, `--permission-mode`, …)",
  append_system_prompt: ["--system-prompt-append"],
  agents: ["--agents", "--agents-dir"],
  project_memory: ["--no-project-memory"],
  memory: ["--memory-file"],
  image: ["--image"],
  image_registry: ["--image-registry"],
  runtime: ["--runtime"],
  network: ["--network"],
  allowed_domains: ["--allow-domain"],
  setup_allowed_domains: ["--setup-allow-domain"],
  allow_private_hosts: ["--allow-private-host"],
  inject_secrets: ["--inject-secret"],
  ca_cert: ["--ca-cert"],
  setup: ["--setup"],
  env: ["--env"],
  memory_limit: ["--memory"],
  cpus: ["--cpus"],
  max_turns: ["--max-turns"],
  max_budget_usd: ["--max-budget-usd"],
  timeout_minutes: ["--timeout"],
  verify: ["--verify"],
  include_ignored: ["--include-ignored"],
  github_token: ACTION_ONLY,
  trigger_phrase: ACTION_ONLY,
  label_trigger: ACTION_ONLY,
  assignee_trigger: ACTION_ONLY,
  allowed_bots: ACTION_ONLY,
  allow_fork_heads: ACTION_ONLY,
  comment: ACTION_ONLY,
  upload_artifact: "the output folder (`--out`) holds what the artifact would",
  artifact_name: "the output folder (`--out`) holds what the artifact would",
  retention_days: ACTION_ONLY,
  fail_on: "the exit code says how the run ended",
  workspace: ["--workspace"],
  script: ["--script"],
  task: ["--task"],
  output_schema: ["--output-schema"],
  resume_from: ["--resume"],
};
