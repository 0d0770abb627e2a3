// RunConfig: the one validated shape that both the CLI flags and the Action inputs become. Parsed once at
// the start; a bad value is a config error before any container or model call.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { NETWORK_POLICIES } from "../policy/network.js";
import { isReadOnlyMode, READ_ONLY_MODE } from "../policy/modes.js";
import { PermissionModeSchema } from "../policy/schema.js";
import { normalizeIgnoredPattern } from "../sandbox/copy/archive.js";
import { CLOUD_CREDENTIAL_FILE_VARIABLES } from "../sandbox/copy/credential-files.js";
import { EGRESS_PRESET_NAMES, type EgressOptions, egressOptions } from "../sandbox/egress/allowlist.js";
import { NodeSpecError, parseNodeSpec } from "../sandbox/node/resolve.js";
import { DEFAULT_MODEL, DEFAULT_SMALL_FAST_MODEL, resolveModelAlias } from "./model/pricing.js";
import { modelProvider, PROVIDERS, providerProblems } from "./model/providers.js";
import { anthropicCredential, NO_ANTHROPIC_CREDENTIAL } from "./model/credentials.js";
import { ConfigError } from "../errors.js";
import { parseSize } from "../text.js";
import { OUTPUT_FORMATS, TASKS } from "./options.js";
import { DEFAULT_MAX_TURNS, DEFAULT_TIMEOUT_MINUTES } from "../options/table.js";
import { DEFAULT_SETUP_CACHE_MAX_AGE_DAYS } from "../options/values.js";

export { NETWORK_POLICIES };
export { OUTPUT_FORMATS, TASKS };

/**
 * The fields both faces of agent-ci set (the CLI's flags, the Action's inputs) whose values must agree with
 * each other. The rules between them are written once, in `crossFieldProblems`, and each face names the
 * fields in its own words, so a user reads `--allow-domain needs --network allowlist` or `allowed_domains:
 * needs network: allowlist` from the same rule.
 */
export interface CrossFields {
  network: (typeof NETWORK_POLICIES)[number];
  setup: readonly string[];
  allowDomain: readonly string[];
  setupAllowDomain: readonly string[];
  allowPrivateHost: readonly string[];
  injectSecret: readonly string[];
  task: (typeof TASKS)[number];
  outputSchema?: unknown;
  resume?: unknown;
}

/** How a face names the cross fields, and what stands between a name and what is said of it. */
export interface ConfigFace {
  names: Readonly<Record<keyof CrossFields, string>>;
  separator: string;
}

export const CLI_FACE: ConfigFace = {
  names: {
    network: "--network",
    setup: "--setup",
    allowDomain: "--allow-domain",
    setupAllowDomain: "--setup-allow-domain",
    allowPrivateHost: "--allow-private-host",
    injectSecret: "--inject-secret",
    task: "--task",
    outputSchema: "--output-schema",
    resume: "--resume",
  },
  separator: " ",
};

/** What is wrong between the cross fields, each problem said of one field in the face's words. */
export function crossFieldProblems(c: CrossFields, face: ConfigFace): string[] {
  const about = (field: keyof CrossFields, text: string) => `${face.names[field]}${face.separator}${text}`;
  const problems: string[] = [];
  if (c.task === "review" && c.outputSchema !== undefined)
    problems.push(about("task", `review returns its own findings: it takes no ${face.names.outputSchema}`));
  if (c.task === "review" && c.resume !== undefined)
    problems.push(about("resume", `continues a run's task; it does not go with ${about("task", "review")}`));
  if (c.setup.length && c.network === "none")
    problems.push(
      about(
        "setup",
        `commands need a network: ${about("network", "setup")} (the setup commands only, ended before the agent starts), allowlist or on`,
      ),
    );
  if (c.network === "allowlist" && !c.allowDomain.length)
    problems.push(
      about(
        "network",
        `allowlist needs at least one ${face.names.allowDomain} (a host, *.domain, or a preset such as npm)`,
      ),
    );
  if (c.network !== "allowlist" && c.allowDomain.length)
    problems.push(about("allowDomain", `needs ${about("network", "allowlist")}`));
  if (c.network !== "setup" && c.setupAllowDomain.length)
    problems.push(about("setupAllowDomain", `needs ${about("network", "setup")}`));
  if (c.network !== "allowlist" && c.network !== "setup" && c.allowPrivateHost.length)
    problems.push(about("allowPrivateHost", `needs ${about("network", "allowlist")} or setup`));
  if (c.network !== "allowlist" && c.network !== "setup" && c.injectSecret.length)
    problems.push(
      about("injectSecret", `needs ${about("network", "allowlist")} or setup (the egress proxy injects it)`),
    );
  return problems;
}

const Size = z.union([
  z.number().int().positive(),
  z.string().transform((v, ctx) => {
    try {
      return parseSize(v);
    } catch (e) {
      ctx.addIssue({ code: "custom", message: (e as Error).message });
      return z.NEVER;
    }
  }),
]);

/** Files git ignores to copy in: none (false), all (true), or those under paths matching the patterns. */
const IncludeIgnored = z.union([z.boolean(), z.array(z.string())]).transform((v, ctx): boolean | string[] => {
  if (typeof v === "boolean") return v;
  if (!v.length) {
    ctx.addIssue({
      code: "custom",
      message: "give at least one pattern (e.g. node_modules), or true for every ignored file",
    });
    return z.NEVER;
  }
  try {
    return v.map(normalizeIgnoredPattern);
  } catch (e) {
    ctx.addIssue({ code: "custom", message: (e as Error).message });
    return z.NEVER;
  }
});

/**
 * Variables that carry a cloud provider's credentials, or name a file that does: never passed through to
 * the sandbox (and the files they name are never copied in).
 */
export const CLOUD_CREDENTIAL_VARIABLES: readonly string[] = [
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AWS_BEARER_TOKEN_BEDROCK",
  "AWS_CONTAINER_AUTHORIZATION_TOKEN",
  "GOOGLE_OAUTH_ACCESS_TOKEN",
  "CLOUDSDK_AUTH_ACCESS_TOKEN",
  ...CLOUD_CREDENTIAL_FILE_VARIABLES,
];

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name");

/** An OCI runtime's name as an engine registers it (daemon.json's `runtimes` keys). */
export const OciRuntime = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "an OCI runtime's name, e.g. runsc");

export const RunConfig = z
  .object({
    workspace: z
      .string()
      .min(1)
      .transform((p) => path.resolve(p)),
    prompt: z.string().optional(),
    systemPromptAppend: z.string().optional(),
    script: z.string().optional().describe("A file of assistant turns, or a report.json to replay: no model"),
    model: z.string().min(1).default(DEFAULT_MODEL).transform(resolveModelAlias),
    smallFastModel: z
      .string()
      .min(1)
      .default(DEFAULT_SMALL_FAST_MODEL)
      .transform(resolveModelAlias)
      .describe("The small, fast model that reads WebFetch's pages"),
    maxTokens: z.number().int().positive().max(128_000).default(16_000),
    thinkingBudget: z.number().int().min(1024).optional(),
    apiKey: z.string().optional(),
    // The Anthropic API's other credentials (credentials.ts says which one a run uses).
    authToken: z.string().optional().describe("A bearer token (ANTHROPIC_AUTH_TOKEN), e.g. a gateway's"),
    oauthToken: z.string().optional().describe("A Claude OAuth token (CLAUDE_CODE_OAUTH_TOKEN)"),
    federation: z
      .object({
        ruleId: z.string().min(1),
        organizationId: z.string().min(1),
        serviceAccountId: z.string().min(1).optional(),
        workspaceId: z.string().min(1).optional(),
        identityTokenFile: z.string().min(1),
      })
      .optional()
      .describe("Workload identity federation: an identity token exchanged for a short-lived access token"),
    baseURL: z.string().url().optional(),
    // Where the model is served (providers.ts); baseURL is then the provider's endpoint.
    provider: z
      .enum(PROVIDERS)
      .default("anthropic")
      .describe("Where the model is served: the Anthropic API, Amazon Bedrock or Google Vertex AI"),
    region: z
      .string()
      .min(1)
      .optional()
      .describe("Bedrock: the AWS region (AWS_REGION); Vertex: the Google Cloud region (CLOUD_ML_REGION)"),
    projectId: z
      .string()
      .min(1)
      .optional()
      .describe("Vertex: the Google Cloud project (ANTHROPIC_VERTEX_PROJECT_ID)"),
    awsCredentials: z
      .object({
        accessKeyId: z.string().min(1),
        secretAccessKey: z.string().min(1),
        sessionToken: z.string().min(1).optional(),
      })
      .optional()
      .describe(
        "Bedrock: a short-lived credential (the Action's OIDC exchange) used instead of the AWS chain",
      ),
    googleAccessToken: z
      .string()
      .min(1)
      .optional()
      .describe("Vertex: a short-lived access token (the Action's OIDC exchange) used instead of ADC"),
    image: z.string().optional(),
    imageRegistry: z
      .string()
      .optional()
      .describe(
        "A mirror of agent-ci's prebuilt images (host[/path]); default AGENT_CI_REGISTRY, else the recorded one",
      ),
    runtime: OciRuntime.optional().describe(
      "The OCI runtime the run's container starts under (e.g. runsc for gVisor); default: the engine's",
    ),
    nodeVersion: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The Node.js the Bash tool's node, npm and npx are, on any image: a version, a range or an alias (20, v20.11.1, >=18, lts/*, lts/iron, node), or system for the image's own; default: on the default image, the project's pin (.nvmrc, .node-version, .tool-versions, package.json volta.node)",
      ),
    runnerNodeVersion: z
      .string()
      .regex(/^v\d+\.\d+\.\d+$/)
      .optional()
      .describe(
        "The Action: the version of the node on the step's PATH (what the job set up), used on the default image when the project pins none",
      ),
    network: z.enum(NETWORK_POLICIES).default("none"),
    setup: z.array(z.string().min(1)).default([]),
    setupAllowDomain: z
      .array(z.string())
      .default([])
      .describe("--network setup: what setup commands reach (default: every ecosystem preset)"),
    setupCache: z
      .boolean()
      .default(true)
      .describe(
        "Start from a snapshot of an earlier run's setup with the same key, and write one where the run may (docs/setup-cache.md)",
      ),
    setupRefresh: z
      .array(z.string().min(1))
      .default([])
      .describe("Commands run after a setup snapshot is restored, in place of the setup commands"),
    setupCacheKeyFiles: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "Files whose bytes are in the setup cache's key (default: lockfiles and manifests, per ecosystem)",
      ),
    setupCacheMaxAge: z
      .number()
      .positive()
      .default(DEFAULT_SETUP_CACHE_MAX_AGE_DAYS)
      .describe("Days a setup snapshot is used after it was made; an older one is not restored"),
    cacheOrigin: z
      .object({
        event: z.string(),
        ref: z.string(),
        defaultBranch: z.string().optional(),
        pullRequest: z.number().int().positive().optional(),
        commit: z.string(),
        runId: z.string(),
      })
      .optional()
      .describe(
        "The Action: the workflow event the run came from, which decides what it may write to the setup cache",
      ),
    allowDomain: z
      .array(z.string())
      .default([])
      .describe("Network allowlist: host names, *.wildcards, :ports and ecosystem presets"),
    caCert: z
      .string()
      .optional()
      .describe("A PEM file of CA certificates that commands in the sandbox trust besides the image's"),
    allowPrivateHost: z
      .array(z.string())
      .default([])
      .describe("Allowed hosts that may resolve to a private address (NAME or NAME=ADDRESS)"),
    injectSecret: z
      .array(z.string())
      .default([])
      .describe(
        "Secrets the egress proxy adds for one host (NAME=header:host, the value from the environment variable NAME); the sandbox holds a placeholder",
      ),
    memory: Size.optional(),
    cpus: z.number().positive().max(64).optional(),
    workspaceSize: Size.optional(),
    env: z.array(EnvName).default([]).describe("Variables passed through to commands, by name"),
    /** Unset: from a trusted settings file's defaultMode, else "default". */
    mode: PermissionModeSchema.optional(),
    /** Where --allow/--deny came from, for the report. */
    ruleSource: z.enum(["cli", "action"]).default("cli"),
    allow: z.array(z.string()).default([]),
    deny: z.array(z.string()).default([]),
    settings: z
      .string()
      .optional()
      .describe("A settings file with a permissions block (trusted: it comes from you)"),
    trustWorkspaceSettings: z.boolean().default(false),
    projectMemory: z
      .boolean()
      .default(true)
      .describe(
        "Tell the model the project's memory (CLAUDE.md, .claude/rules, nested ones as tools reach them)",
      ),
    projectMemoryDir: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A folder holding the project's memory files at a trusted revision, read instead of the workspace's",
      ),
    hookScriptsDir: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A folder holding the repository scripts hooks run, at a trusted revision, read instead of the workspace's",
      ),
    /** The revision projectMemoryDir holds (`base <sha>`), for the report. */
    projectMemoryRevision: z.string().min(1).optional(),
    memoryFile: z
      .array(z.string().min(1))
      .default([])
      .describe("Memory files of your own (trusted), told to the model as ~/.claude/CLAUDE.md is"),
    skillsDir: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "Folders of skills (<name>/SKILL.md) you trust; the workspace's own need trustWorkspaceSettings",
      ),
    commandsDir: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "Folders of slash commands (<name>.md) you trust; the workspace's own need trustWorkspaceSettings",
      ),
    /** Where skillsDir and commandsDir came from, for the report. */
    instructionsSource: z.enum(["flag", "action"]).default("flag"),
    agentsDir: z
      .array(z.string().min(1))
      .default([])
      .describe("Folders of subagent definitions (Markdown with YAML frontmatter), trusted"),
    agents: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Subagent definitions in Claude Code's --agents JSON shape: the JSON itself, or a file holding it",
      ),
    mcpConfig: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "MCP server configs in Claude Code's format: files or inline JSON (trusted: they come from you)",
      ),
    strictMcp: z
      .boolean()
      .default(false)
      .describe("An MCP server that fails to start ends the run as a config error instead of a warning"),
    maxTurns: z.number().int().positive().default(DEFAULT_MAX_TURNS),
    maxBudgetUsd: z.number().positive().optional(),
    timeoutMs: z
      .number()
      .int()
      .positive()
      .default(DEFAULT_TIMEOUT_MINUTES * 60_000),
    maxDenials: z.number().int().positive().default(25),
    attempts: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe("Attempts at the task, each a run of its own, and one chosen (capabilities/attempts/)"),
    parallel: z.number().int().positive().optional().describe("With attempts: at most this many at a time"),
    attemptPrompts: z
      .string()
      .optional()
      .describe("With attempts: a text file of hints, line k appended to attempt k's prompt"),
    stopAtFirstPass: z
      .boolean()
      .default(false)
      .describe("With attempts: the others are cancelled once one passes"),
    turnsPool: z
      .boolean()
      .default(false)
      .describe("With attempts: maxTurns was given, and the attempts share it as they share the budget"),
    /** Unset: the model's window (contextWindowOf). */
    contextWindow: z.number().int().min(1_000).optional(),
    /** Prompt tokens at which the conversation is made smaller. Unset: COMPACT_AT_FRACTION of the window. */
    compactAt: z.number().int().positive().optional(),
    compaction: z
      .boolean()
      .default(true)
      .describe("false: never clear or compact; an overflowing prompt ends the run"),
    out: z.string().optional(),
    outputFormat: z.enum(OUTPUT_FORMATS).default("text"),
    verify: z.string().optional(),
    includeIgnored: IncludeIgnored.default(false).describe(
      "Files git ignores to copy in: none, all (true), or those under paths matching these patterns",
    ),
    allowWeakHardening: z.boolean().default(false),
    /** Extra values to redact everywhere (e.g. the GitHub token in the Action). */
    secrets: z.array(z.string()).default([]),
    repo: z.string().optional(),
    /** A JSON Schema file, or the schema itself (the Action's inline output_schema): the run must end with an object valid against it. */
    outputSchema: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
    task: z.enum(TASKS).default("run"),
    /** Review mode: the pull request's base (a commit or ref in the workspace) and head (default HEAD). */
    reviewBase: z.string().min(1).optional(),
    reviewHead: z.string().min(1).optional(),
    resume: z
      .string()
      .min(1)
      .optional()
      .describe(
        "An earlier run's output folder or report.json: continue its workspace and conversation, under this run's own policy",
      ),
    /** The Action's resume_from (an artifact): the record must reproduce the commit publish pushed for its run. */
    resumeNeedsPublishedCommit: z.boolean().default(false),
    /**
     * The workspace's commits may be a pull request's (the Action on pull-request events): their messages are
     * its author's text, so the git snapshot gives the model their hashes only (the Action gives the subjects
     * as data, fenced with the pull request's other text).
     */
    untrustedHistory: z.boolean().default(false),
  })
  .superRefine((c, ctx) => {
    if (!c.script && !c.prompt && c.task !== "review" && !c.resume)
      ctx.addIssue({
        code: "custom",
        message:
          "give a task with --prompt or --prompt-file, a --script to replay, or --resume to continue a run",
      });
    if (c.task === "review") {
      if (!c.reviewBase)
        ctx.addIssue({
          code: "custom",
          message: "--task review needs --base: the commit or ref the change is reviewed against",
        });
      if (c.mode && !isReadOnlyMode(c.mode))
        ctx.addIssue({
          code: "custom",
          message: `--task review runs in plan mode (read-only, no patch), not ${c.mode}`,
        });
    } else if (c.reviewBase || c.reviewHead) {
      ctx.addIssue({ code: "custom", message: "--base and --head are for --task review" });
    }
    if (!c.script && modelProvider(c.provider).anthropicSignIn && !anthropicCredential(c))
      ctx.addIssue({ code: "custom", message: NO_ANTHROPIC_CREDENTIAL });
    if (!c.script) for (const message of providerProblems(c)) ctx.addIssue({ code: "custom", message });
    if (!modelProvider(c.provider).anthropicSignIn)
      for (const name of c.env.filter((n) => CLOUD_CREDENTIAL_VARIABLES.includes(n)))
        ctx.addIssue({
          code: "custom",
          message: `--env ${name}: the model's cloud credentials stay on the host, never in the sandbox`,
        });
    if (c.compactAt !== undefined && c.contextWindow !== undefined && c.compactAt >= c.contextWindow) {
      ctx.addIssue({ code: "custom", message: "--compact-at must be below --context-window" });
    }
    for (const message of crossFieldProblems(c, CLI_FACE)) ctx.addIssue({ code: "custom", message });
    if (c.nodeVersion !== undefined) {
      try {
        parseNodeSpec(c.nodeVersion);
      } catch (e) {
        if (!(e instanceof NodeSpecError)) throw e;
        ctx.addIssue({ code: "custom", message: `--node-version ${e.message}` });
      }
    }
    if (c.caCert !== undefined) {
      try {
        readCaCert(c.caCert);
      } catch (e) {
        ctx.addIssue({ code: "custom", message: (e as Error).message });
      }
    }
    for (const name of c.env.filter((n) => injectedNames(c).includes(n)))
      ctx.addIssue({
        code: "custom",
        message: `--env ${name}: it is injected by the proxy (--inject-secret); the sandbox holds its placeholder only`,
      });
    try {
      const egress = runEgressOptions(c, secretFromEnv);
      if (!egress) {
        egressOptions(c.allowDomain, c.allowPrivateHost);
        egressOptions(c.setupAllowDomain, []);
      }
    } catch (e) {
      ctx.addIssue({ code: "custom", message: (e as Error).message });
    }
  })
  .transform((c) => (c.task === "review" ? { ...c, mode: READ_ONLY_MODE } : c));
export type RunConfig = z.infer<typeof RunConfig>;
export type RunConfigInput = z.input<typeof RunConfig>;

/** The `--ca-cert` file's text: PEM certificates only (a private key or anything else is refused). */
export function readCaCert(file: string): string {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    throw new Error(`--ca-cert ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
      cause: e,
    });
  }
  if (!/-----BEGIN CERTIFICATE-----/.test(text) || /PRIVATE KEY-----/.test(text)) {
    throw new Error(
      `--ca-cert ${file}: not a PEM file of certificates (-----BEGIN CERTIFICATE-----, and no private key)`,
    );
  }
  return text;
}

/** `--inject-secret`'s values: the host's environment variables, never a command line. */
export const secretFromEnv = (name: string): string | undefined => process.env[name];

/** The variables `--inject-secret` names (whose values the sandbox never holds). */
export function injectedNames(config: Pick<RunConfig, "injectSecret">): string[] {
  return config.injectSecret.map((entry) => entry.split("=", 1)[0] ?? "");
}

/** What the run's egress proxy allows: the allowlist, or for `--network setup` the setup allowlist (default: every preset). */
export function runEgressOptions(
  config: Pick<
    RunConfig,
    "network" | "allowDomain" | "setupAllowDomain" | "allowPrivateHost" | "setup" | "injectSecret"
  >,
  secretOf: (name: string) => string | undefined = secretFromEnv,
): EgressOptions | undefined {
  const { injectSecret } = config;
  if (config.network === "allowlist")
    return egressOptions(config.allowDomain, config.allowPrivateHost, injectSecret, secretOf);
  if (config.network === "setup" && config.setup.length) {
    return egressOptions(
      config.setupAllowDomain.length ? config.setupAllowDomain : EGRESS_PRESET_NAMES,
      config.allowPrivateHost,
      injectSecret,
      secretOf,
    );
  }
  return undefined;
}

export function parseRunConfig(input: RunConfigInput): RunConfig {
  // Parsed once per run: zod's compiled fast path (jit) would cost more to build than it saves.
  const parsed = RunConfig.safeParse(input, { jitless: true });
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues
        .map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message))
        .join("\n"),
    );
  }
  return parsed.data;
}
