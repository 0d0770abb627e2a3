// The Action's inputs: read once as strings (the way the runner hands them over) and validated with zod
// into typed `ActionInputs`. Their names, defaults and descriptions are the option table's (options/table.ts),
// which action.yml is generated from; an input read empty takes its default, because `run()` may be called
// without a runner that fills them in (tests, local-action without an env entry). Messages name the input
// (`max_turns`), not a CLI flag.
import { z } from "zod";
import { EXIT_REASONS } from "../report/index.js";
import { DEFAULT_MODEL } from "../runner/model/pricing.js";
import { actionSide, INPUT_DEFAULTS, INPUT_NAMES, type InputName } from "../options/table.js";
import type { Provider } from "../runner/model/providers.js";
import { PERMISSION_MODES } from "../policy/schema.js";
import { crossFieldProblems, NETWORK_POLICIES, type ConfigFace } from "../runner/config.js";
import { ACTION_TASKS } from "../options/values.js";
import { normalizeIgnoredPattern } from "../sandbox/copy/archive.js";
import { parseAllowDomains } from "../sandbox/egress/allowlist.js";
import { NodeSpecError, parseNodeSpec } from "../sandbox/node/resolve.js";
import { booleanInput, splitList, unexpanded } from "../github/input-conventions.js";
import { readClaudeArgs } from "./claude-args.js";

/** Reasons `fail_on` accepts: every exit reason except `completed`, plus outcomes the report derives. */
export const FAIL_ON_REASONS = [
  ...EXIT_REASONS.filter((r) => r !== "completed"),
  "verify_failed",
  "no_changes",
  "secret_in_patch",
] as const;
export type FailOnReason = (typeof FAIL_ON_REASONS)[number];

/** Where the Action reads the project's memory from (empty: `base` on pull-request events, else `workspace`). */
export const PROJECT_MEMORY_SOURCES = ["base", "workspace", "none"] as const;

export { INPUT_DEFAULTS, INPUT_NAMES, type InputName };

/** The runner's cross-field rules, said in the inputs' names. */
const ACTION_FACE: ConfigFace = {
  names: {
    network: "network",
    setup: "setup",
    allowDomain: "allowed_domains",
    setupAllowDomain: "setup_allowed_domains",
    allowPrivateHost: "allow_private_hosts",
    injectSecret: "inject_secrets",
    task: "task",
    outputSchema: "output_schema",
    resume: "resume_from",
  } satisfies Record<string, InputName>,
  separator: ": ",
};

/** The runner's variables that carry the Action's credentials and inputs: never passed to the sandbox by `env`. */
const ACTION_CREDENTIALS =
  /^(GITHUB_TOKEN|GH_TOKEN|ANTHROPIC_API_KEY|ANTHROPIC_AUTH_TOKEN|CLAUDE_CODE_OAUTH_TOKEN|ACTIONS_[A-Z0-9_]+|INPUT_[A-Z0-9_-]+)$/i;

export class ActionInputError extends Error {
  override readonly name = "ActionInputError";
}

const text = z.string().transform((v) => (unexpanded(v) ? "" : v.trim()));
const optionalText = text.transform((v) => v || undefined);
const bool = (name: InputName) =>
  z.string().transform((v, ctx) => {
    const value = booleanInput(v);
    if (value !== undefined) return value;
    ctx.addIssue({ code: "custom", message: `${name}: use true or false (got "${v}")` });
    return z.NEVER;
  });
function checkPositive(name: InputName, v: string, integer: boolean, ctx: z.RefinementCtx): number {
  const trimmed = v.trim();
  const n = Number(trimmed);
  if (trimmed === "" || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    ctx.addIssue({
      code: "custom",
      message: `${name}: expected a positive ${integer ? "whole number" : "number"} (got "${v}")`,
    });
    return z.NEVER;
  }
  return n;
}
const positiveNumber = (name: InputName, integer: boolean) =>
  z.string().transform((v, ctx) => checkPositive(name, v, integer, ctx));
const optionalPositiveNumber = (name: InputName, integer: boolean) =>
  z.string().transform((v, ctx) => (v.trim() === "" ? undefined : checkPositive(name, v, integer, ctx)));
const oneOf = <T extends readonly [string, ...string[]]>(name: InputName, values: T) =>
  z.string().transform((v, ctx) => {
    const trimmed = v.trim();
    if ((values as readonly string[]).includes(trimmed)) return trimmed as T[number];
    ctx.addIssue({ code: "custom", message: `${name}: expected one of ${values.join(", ")} (got "${v}")` });
    return z.NEVER;
  });
const list = z.string().transform(splitList);
/** Dollars, zero included (a cap of 0 starts nothing); empty: no cap. */
const optionalUsd = (name: InputName) =>
  z.string().transform((v, ctx) => {
    const trimmed = v.trim();
    if (trimmed === "") return undefined;
    const n = Number(trimmed);
    if (Number.isFinite(n) && n >= 0) return n;
    ctx.addIssue({ code: "custom", message: `${name}: an amount in US dollars (got "${v}")` });
    return z.NEVER;
  });
/** The longest lease the ledger takes (its claim entries' bound). */
export const MAX_LEASE_SECONDS = 7 * 24 * 3600;

/** `false`/empty: none; `true`: every ignored file; otherwise path patterns (`node_modules`, `.venv`). */
const includeIgnored = z.string().transform((v, ctx): boolean | string[] => {
  const lower = v.trim().toLowerCase();
  if (lower === "true") return true;
  if (lower === "false" || lower === "") return false;
  try {
    return splitList(v).map(normalizeIgnoredPattern);
  } catch (e) {
    ctx.addIssue({ code: "custom", message: `include_ignored: ${(e as Error).message}` });
    return z.NEVER;
  }
});

const failOn = z.string().transform((v, ctx) => {
  const items = splitList(v).map((item) => item.toLowerCase());
  if (items.length === 1 && items[0] === "none") return [];
  const unknown = items.filter((item) => !(FAIL_ON_REASONS as readonly string[]).includes(item));
  if (unknown.length) {
    ctx.addIssue({
      code: "custom",
      message: `fail_on: unknown reason(s) ${unknown.join(", ")}; use none or any of ${FAIL_ON_REASONS.join(", ")}`,
    });
    return z.NEVER;
  }
  return items as FailOnReason[];
});

const artifactName = text.refine((v) => v.length > 0 && !/[":<>|*?\\/\r\n]/.test(v), {
  message: 'artifact_name: must be non-empty and must not contain " : < > | * ? \\ / or newlines',
});

/**
 * Each input's parser, from the runner's string to its typed value: the compiler asks for one per input of the
 * option table, so a new input cannot be read without one.
 */
const INPUT_PARSERS = {
  prompt: optionalText,
  prompt_file: optionalText,
  anthropic_api_key: optionalText,
  claude_code_oauth_token: optionalText,
  anthropic_federation_rule_id: optionalText,
  anthropic_organization_id: optionalText,
  anthropic_service_account_id: optionalText,
  anthropic_workspace_id: optionalText,
  anthropic_oidc_audience: text.transform((v) => v || INPUT_DEFAULTS.anthropic_oidc_audience),
  use_bedrock: bool("use_bedrock"),
  use_vertex: bool("use_vertex"),
  aws_role_to_assume: optionalText.refine(
    (v) => v === undefined || /^arn:aws[a-z-]*:iam::\d{12}:role\/\S+$/.test(v),
    {
      message: "aws_role_to_assume: an IAM role ARN, e.g. arn:aws:iam::123456789012:role/agent-ci",
    },
  ),
  aws_region: optionalText,
  gcp_workload_identity_provider: optionalText.refine(
    (v) =>
      v === undefined ||
      /^projects\/[^/\s]+\/locations\/global\/workloadIdentityPools\/[^/\s]+\/providers\/[^/\s]+$/.test(v),
    {
      message:
        "gcp_workload_identity_provider: projects/NUMBER/locations/global/workloadIdentityPools/POOL/providers/PROVIDER",
    },
  ),
  gcp_service_account: optionalText,
  model: text.transform((v) => v || DEFAULT_MODEL),
  permission_mode: oneOf("permission_mode", PERMISSION_MODES),
  allowed_tools: list,
  disallowed_tools: list,
  settings: optionalText,
  skills: optionalText,
  commands: optionalText,
  mcp_config: optionalText,
  // Merged into the inputs it names by parseActionInputs; kept for the record.
  claude_args: optionalText,
  append_system_prompt: optionalText,
  agents: optionalText,
  project_memory: z.string().transform((v, ctx) => {
    const source = PROJECT_MEMORY_SOURCES.find((s) => s === v.trim());
    if (source || v.trim() === "") return source;
    ctx.addIssue({
      code: "custom",
      message: `project_memory: expected one of ${PROJECT_MEMORY_SOURCES.join(", ")}, or empty (got "${v}")`,
    });
    return z.NEVER;
  }),
  memory: list,
  image: optionalText,
  image_registry: optionalText,
  runtime: optionalText,
  node_version: optionalText.transform((v, ctx) => {
    if (v === undefined) return v;
    try {
      parseNodeSpec(v);
    } catch (e) {
      if (!(e instanceof NodeSpecError)) throw e;
      ctx.addIssue({ code: "custom", message: `node_version: ${e.message}` });
      return z.NEVER;
    }
    return v;
  }),
  network: oneOf("network", NETWORK_POLICIES),
  allowed_domains: list.transform((entries, ctx) => {
    try {
      parseAllowDomains(entries);
    } catch (e) {
      ctx.addIssue({
        code: "custom",
        message: `allowed_domains: ${(e as Error).message.replace(/^--allow-domain /, "")}`,
      });
      return z.NEVER;
    }
    return entries;
  }),
  setup_allowed_domains: list,
  allow_private_hosts: list,
  inject_secrets: list,
  ca_cert: optionalText,
  setup: z.string().transform((v) =>
    v
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter(Boolean),
  ),
  setup_refresh: z.string().transform((v) =>
    v
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter(Boolean),
  ),
  setup_cache: bool("setup_cache"),
  setup_cache_key_files: list,
  setup_cache_max_age: positiveNumber("setup_cache_max_age", false),
  env: list.transform((names, ctx) => {
    const bad = names.filter((name) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name));
    if (bad.length) {
      ctx.addIssue({ code: "custom", message: `env: not a variable name: ${bad.join(", ")}` });
      return z.NEVER;
    }
    const held = names.filter((name) => ACTION_CREDENTIALS.test(name));
    if (held.length) {
      ctx.addIssue({
        code: "custom",
        message: `env: ${held.join(", ")} hold the Action's credentials or inputs, which stay out of the sandbox`,
      });
      return z.NEVER;
    }
    return names;
  }),
  memory_limit: optionalText,
  cpus: optionalPositiveNumber("cpus", false),
  max_turns: positiveNumber("max_turns", true),
  max_budget_usd: optionalPositiveNumber("max_budget_usd", false),
  attempts: positiveNumber("attempts", true),
  attempt: optionalPositiveNumber("attempt", true),
  timeout_minutes: positiveNumber("timeout_minutes", false),
  verify: optionalText,
  include_ignored: includeIgnored,
  github_token: optionalText,
  trigger_phrase: text,
  label_trigger: optionalText,
  assignee_trigger: optionalText,
  allowed_bots: list.transform((bots) => bots.map((b) => b.toLowerCase().replace(/\[bot\]$/, ""))),
  allow_fork_heads: bool("allow_fork_heads"),
  comment: bool("comment"),
  upload_artifact: bool("upload_artifact"),
  artifact_name: artifactName,
  retention_days: z.string().transform((v, ctx) => {
    const n = Number(v.trim() || "0");
    if (!Number.isInteger(n) || n < 0 || n > 400) {
      ctx.addIssue({
        code: "custom",
        message: `retention_days: a whole number of days, 0 for the repository's default (got "${v}")`,
      });
      return z.NEVER;
    }
    return n === 0 ? undefined : n;
  }),
  fail_on: failOn,
  workspace: text.transform((v) => v || "."),
  script: optionalText,
  task: oneOf("task", ACTION_TASKS),
  output_schema: optionalText,
  resume_from: optionalText,
  queue_label: optionalText,
  queue_milestone: optionalText,
  queue_assignee: optionalText,
  queue_tasks: optionalText,
  queue_max: positiveNumber("queue_max", true),
  queue_lease_seconds: positiveNumber("queue_lease_seconds", true).refine((n) => n <= MAX_LEASE_SECONDS, {
    message: `queue_lease_seconds: at most ${MAX_LEASE_SECONDS} (seven days)`,
  }),
  max_daily_usd: optionalUsd("max_daily_usd"),
  max_monthly_usd: optionalUsd("max_monthly_usd"),
  cap_name: optionalText,
} satisfies Record<InputName, z.ZodType<unknown, string>>;

export const ActionInputs = z.object(INPUT_PARSERS).superRefine((inputs, ctx) => {
  if (inputs.prompt && inputs.prompt_file)
    ctx.addIssue({ code: "custom", message: "prompt and prompt_file: give one of them, not both" });
  const fields = {
    network: inputs.network,
    setup: inputs.setup,
    allowDomain: inputs.allowed_domains,
    setupAllowDomain: inputs.setup_allowed_domains,
    allowPrivateHost: inputs.allow_private_hosts,
    injectSecret: inputs.inject_secrets,
    task: inputs.task === "queue" ? ("run" as const) : inputs.task,
    outputSchema: inputs.output_schema,
    resume: inputs.resume_from,
  };
  for (const message of crossFieldProblems(fields, ACTION_FACE)) ctx.addIssue({ code: "custom", message });
  for (const message of providerInputProblems(inputs)) ctx.addIssue({ code: "custom", message });
  for (const message of federationInputProblems(inputs)) ctx.addIssue({ code: "custom", message });
  for (const message of queueInputProblems(inputs)) ctx.addIssue({ code: "custom", message });
  if (inputs.script && inputs.anthropic_api_key) {
    ctx.addIssue({
      code: "custom",
      message: "script: a scripted run uses no model; remove anthropic_api_key or script",
    });
  }
});
export type ActionInputs = z.infer<typeof ActionInputs>;

/** The provider inputs that go together. */
function providerInputProblems(inputs: {
  use_bedrock: boolean;
  use_vertex: boolean;
  aws_role_to_assume?: string;
  aws_region?: string;
  gcp_workload_identity_provider?: string;
  gcp_service_account?: string;
}): string[] {
  const problems: string[] = [];
  if (inputs.use_bedrock && inputs.use_vertex)
    problems.push("use_bedrock and use_vertex: choose one provider");
  if (!inputs.use_bedrock)
    for (const name of ["aws_role_to_assume", "aws_region"] as const)
      if (inputs[name]) problems.push(`${name}: needs use_bedrock: true`);
  if (!inputs.use_vertex)
    for (const name of ["gcp_workload_identity_provider", "gcp_service_account"] as const)
      if (inputs[name]) problems.push(`${name}: needs use_vertex: true`);
  if (inputs.gcp_service_account && !inputs.gcp_workload_identity_provider)
    problems.push(
      "gcp_service_account: needs gcp_workload_identity_provider (the pool its OIDC token is exchanged at)",
    );
  return problems;
}

/** Workload identity federation's inputs that go together (claude-code-action's names and rules). */
function federationInputProblems(inputs: {
  use_bedrock: boolean;
  use_vertex: boolean;
  anthropic_federation_rule_id?: string;
  anthropic_organization_id?: string;
  anthropic_service_account_id?: string;
  anthropic_workspace_id?: string;
}): string[] {
  const rule = inputs.anthropic_federation_rule_id;
  const organization = inputs.anthropic_organization_id;
  if (!rule && !organization)
    return (["anthropic_service_account_id", "anthropic_workspace_id"] as const)
      .filter((name) => inputs[name])
      .map((name) => `${name}: needs anthropic_federation_rule_id and anthropic_organization_id`);
  if (!rule || !organization)
    return [
      "anthropic_federation_rule_id and anthropic_organization_id: workload identity federation needs both",
    ];
  if (inputs.use_bedrock || inputs.use_vertex)
    return [
      "anthropic_federation_rule_id: signs in to the Anthropic API; remove it or use_bedrock/use_vertex",
    ];
  return [];
}

/** The queue's query: the work `task: queue` claims. */
const QUERY_INPUTS = ["queue_label", "queue_milestone", "queue_assignee", "queue_tasks"] as const;
/**
 * Queue inputs given without task: queue (they would do nothing; the spending caps apply to every task); a cap
 * name without a cap outside the queue (it names nothing there); a queue with no query (it would claim every
 * issue).
 */
function queueInputProblems(
  inputs: { task: string; max_daily_usd?: number; max_monthly_usd?: number; cap_name?: string } & Record<
    (typeof QUERY_INPUTS)[number],
    unknown
  >,
): string[] {
  if (inputs.task !== "queue") {
    const problems = QUERY_INPUTS.filter((name) => inputs[name] !== undefined).map(
      (name) => `${name}: needs task: queue`,
    );
    if (inputs.cap_name && inputs.max_daily_usd === undefined && inputs.max_monthly_usd === undefined)
      problems.push("cap_name: needs max_daily_usd or max_monthly_usd (the cap whose spend it names)");
    return problems;
  }
  if (QUERY_INPUTS.every((name) => inputs[name] === undefined))
    return [`task: queue needs the work to claim: ${QUERY_INPUTS.join(", ")} (one or more)`];
  return [];
}

/** The provider the inputs choose. */
export function providerOf(inputs: Pick<ActionInputs, "use_bedrock" | "use_vertex">): Provider {
  if (inputs.use_bedrock) return "bedrock";
  if (inputs.use_vertex) return "vertex";
  return "anthropic";
}

/** A value in a message: its first 60 characters, on one line. */
const quoted = (value: string) => JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);

/**
 * `claude_args` sets the inputs its flags name: list flags add to the list input; a single value wins over an
 * input that holds its action.yml default (a runner sets every input, to the workflow's value or else the
 * default, so an input's being set says nothing), and is an error naming both when the workflow gave the
 * input another value.
 */
function mergeClaudeArgs(raw: Record<InputName, string>, getInput: (name: InputName) => string): void {
  const claudeArgs = getInput("claude_args");
  if (unexpanded(claudeArgs) || !claudeArgs.trim()) return;
  let set;
  try {
    set = readClaudeArgs(claudeArgs);
  } catch (e) {
    throw new ActionInputError((e as Error).message);
  }
  for (const [name, value] of Object.entries(set.values) as [InputName & keyof typeof set.values, string][]) {
    const given = getInput(name).trim();
    if (actionSide(name).list) {
      raw[name] = [given, value].filter((v) => v.trim()).join("\n");
    } else if (given === "" || given === INPUT_DEFAULTS[name].trim() || given === value.trim()) {
      raw[name] = value;
    } else {
      throw new ActionInputError(
        `claude_args ${set.flags[name]} ${quoted(value)} and ${name}: ${quoted(given)}: both set ${name}, to different values; give it once (an input left at its default gives way to claude_args)`,
      );
    }
  }
}

/**
 * Reads every input through `getInput` (empty string when not given) and validates them all at once;
 * every problem is listed in one error.
 */
export function parseActionInputs(getInput: (name: InputName) => string): ActionInputs {
  const raw: Record<InputName, string> = Object.fromEntries(
    INPUT_NAMES.map((name) => {
      const value = getInput(name);
      return [name, value === "" ? INPUT_DEFAULTS[name] : value];
    }),
  ) as Record<InputName, string>;
  mergeClaudeArgs(raw, getInput);
  const parsed = ActionInputs.safeParse(raw);
  if (!parsed.success) {
    throw new ActionInputError(
      parsed.error.issues
        .map((issue) =>
          issue.path.length && !issue.message.startsWith(`${String(issue.path[0])}:`)
            ? `${issue.path.join(".")}: ${issue.message}`
            : issue.message,
        )
        .join("\n"),
    );
  }
  return parsed.data;
}
