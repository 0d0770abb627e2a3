// The run report's contract: the zod schema of report.json, its version, and `parseReport` for readers.
// Published as JSON Schema in schema/report.schema.json (kept in sync by test/unit/report/json-schema.test.ts).
import { z } from "zod";
import { SetupCache } from "./schema-setup-cache.js";
import {
  CallDecisionSchema,
  PermissionModeSchema,
  RuleBehaviorSchema,
  RuleRefSchema,
} from "../policy/schema.js";
import { IsoDateTime, Milliseconds, NonNegativeInt, TokenUsage } from "./schema-base.js";
import { Egress, Hardening, Image, Workspace } from "./schema-sandbox.js";
import { Instructions, Mcp, SideCall, WebFacts } from "./schema-agent-tools.js";
import { ModelContextRecord } from "./schema-context.js";
import { attemptsSchemas } from "./schema-attempts.js";

/** Bump on any change a v1 reader could misread (renamed, removed or re-typed fields). Added optional fields do not bump it. */
export const REPORT_SCHEMA_VERSION = 1;

/** Cap on ToolCall.resultPreview (use `capText`). */
export const RESULT_PREVIEW_MAX_CHARS = 2_000;
/** Cap on Turn.text (use `capText`). */
export const TURN_TEXT_MAX_CHARS = 8_000;

export { TokenUsage } from "./schema-base.js";
export {
  Egress,
  EgressConnection,
  EnforcedRule,
  Hardening,
  Image,
  NODE_SOURCES,
  NodeRecord,
  Workspace,
} from "./schema-sandbox.js";
export { Instructions, Mcp, McpServer, SideCall, WebFacts } from "./schema-agent-tools.js";
export { MemoryFileRecord, ModelContextRecord } from "./schema-context.js";

export const EXIT_REASONS = [
  "completed",
  "max_turns",
  "budget",
  "timeout",
  "context_window",
  "max_denials",
  "cancelled",
  "api_error",
  "engine_error",
  "config_error",
  "schema_invalid",
] as const;
export const ExitReason = z
  .enum(EXIT_REASONS)
  .describe(
    "Why the agent loop stopped. Set by the runner; the patch and this record are written whatever it is.",
  );
export type ExitReason = z.infer<typeof ExitReason>;

export const OUTCOMES = ["changes", "no_changes", "verify_failed", "stopped", "error"] as const;
export const Outcome = z
  .enum(OUTCOMES)
  .describe(
    "What a reviewer needs first, derived from exitReason, the patch and verify (see deriveOutcome): " +
      "changes = completed with a non-empty patch (verify passed or not run); no_changes = completed with an empty patch; " +
      "verify_failed = the patch did not apply or the verify command failed; stopped = a limit, a cancel or a missing structured output (schema_invalid) ended the run " +
      "(the patch may be partial); error = the run failed (api_error, engine_error, config_error).",
  );
export type Outcome = z.infer<typeof Outcome>;

export const RunError = z
  .object({
    kind: z.string().describe("Error class, e.g. ModelApiError/auth, DockerUnavailable, InvalidRule."),
    message: z.string().describe("Redacted, human-readable message."),
  })
  .meta({ id: "RunError" });

export const PolicyRule = z
  .object({
    text: z.string().describe("Claude Code rule syntax, e.g. Bash(npm test:*)."),
    behavior: RuleBehaviorSchema,
    source: z
      .string()
      .describe("Where the rule came from, e.g. cli, action_input, settings:.claude/settings.json."),
  })
  .meta({ id: "PolicyRule" });
export type PolicyRule = z.infer<typeof PolicyRule>;

export const Policy = z
  .object({
    mode: PermissionModeSchema,
    rules: z.array(PolicyRule),
    ignored: z
      .array(z.object({ text: z.string(), source: z.string(), reason: z.string() }))
      .describe(
        "Rules that were read but not used (e.g. an allow from an untrusted workspace file), and settings keys agent-ci does not use, and why.",
      ),
  })
  .meta({ id: "Policy" });
export type ReportPolicy = z.infer<typeof Policy>;

export const Model = z
  .object({
    driver: z.enum(["anthropic", "script"]),
    name: z.string(),
    provider: z
      .string()
      .optional()
      .describe(
        "Where the model was served (the anthropic driver): anthropic (the Anthropic API), bedrock (Amazon Bedrock) or vertex (Google Vertex AI).",
      ),
    maxTokens: NonNegativeInt.optional(),
    thinkingBudget: NonNegativeInt.optional(),
  })
  .meta({ id: "Model" });

export const Limits = z
  .object({
    maxTurns: NonNegativeInt.optional(),
    maxBudgetUsd: z.number().nonnegative().optional(),
    timeoutMs: Milliseconds.optional(),
  })
  .meta({ id: "Limits" });

export const RuleRef = RuleRefSchema;

export const Decision = CallDecisionSchema.meta({ id: "Decision" });
export type Decision = z.infer<typeof Decision>;

export const PatchHunk = z
  .object({
    oldStart: NonNegativeInt,
    oldLines: NonNegativeInt,
    newStart: NonNegativeInt,
    newLines: NonNegativeInt,
    lines: z
      .array(z.string())
      .describe("Lines prefixed with ' ', '+', '-' or '\\', as diff.structuredPatch gives them."),
  })
  .meta({ id: "PatchHunk" });
export type PatchHunk = z.infer<typeof PatchHunk>;

export const CallPatch = z
  .object({ file: z.string(), hunks: z.array(PatchHunk) })
  .meta({ id: "CallPatch" })
  .describe("What one Edit/Write call changed.");
export type CallPatch = z.infer<typeof CallPatch>;

export const HookRun = z
  .object({
    event: z.enum(["PreToolUse", "PostToolUse"]),
    command: z.string().describe("The hook's command as configured, redacted."),
    source: z.string().describe("The settings it came from."),
    outcome: z.enum(["ok", "block", "error", "timeout"]),
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable(),
    durationMs: Milliseconds,
    reason: z.string().optional().describe("Why it blocked or failed, redacted."),
    scripts: z
      .array(z.string())
      .optional()
      .describe("Workspace scripts it names, run from their copies taken when the run started."),
  })
  .meta({ id: "HookRun" })
  .describe("One hook's run, inside the sandbox as the hooks' own user (docs/hooks.md).");
export type HookRun = z.infer<typeof HookRun>;

export const ToolCall = z
  .object({
    id: z.string().describe("tool_use id."),
    turn: NonNegativeInt.describe("Index of the assistant turn that asked for it."),
    index: NonNegativeInt.describe("Position in the run, 0-based, in request order."),
    tool: z.string(),
    title: z.string().optional().describe("One-line description from the tool (its report line)."),
    input: z.unknown().describe("The input as the model sent it, redacted."),
    decision: Decision.optional().describe(
      "Absent when the call stopped before the permission stage (unknown tool, bad input, failed validation).",
    ),
    startOffsetMs: Milliseconds.describe("Start, relative to startedAt."),
    durationMs: Milliseconds,
    exitCode: z.number().int().optional(),
    resultChars: NonNegativeInt.describe("Size of the whole result, before truncation."),
    truncated: z.boolean(),
    fullOutputPath: z
      .string()
      .optional()
      .describe("Relative to the output folder, when the whole result was saved."),
    isError: z.boolean(),
    errorKind: z
      .string()
      .optional()
      .describe("Tool error type, e.g. invalid_arguments, file_not_found, permission_denied."),
    resultPreview: z.string().max(RESULT_PREVIEW_MAX_CHARS).describe("Start of the result, redacted."),
    patch: CallPatch.optional(),
    web: WebFacts.optional().describe("WebFetch and WebSearch: what was fetched or searched, redacted."),
    parentToolUseId: z
      .string()
      .optional()
      .describe(
        "A subagent's call: the id of the Task call that started the subagent. Absent for the main loop.",
      ),
    agent: z.string().optional().describe("A subagent's call: the subagent's type (subagent_type)."),
    hooks: z
      .array(HookRun)
      .optional()
      .describe("The PreToolUse and PostToolUse hooks that ran around the call."),
    mcp: z
      .object({ server: z.string(), tool: z.string().describe("The tool's name on its server.") })
      .optional()
      .describe("An MCP server's tool (mcp__<server>__<tool>): which server and tool it called."),
  })
  .meta({ id: "ToolCall" });
export type ToolCall = z.infer<typeof ToolCall>;

export const Turn = z
  .object({
    index: NonNegativeInt,
    stopReason: z.string().nullable(),
    usage: TokenUsage,
    attempts: z.number().int().positive(),
    startOffsetMs: Milliseconds,
    durationMs: Milliseconds,
    text: z
      .string()
      .max(TURN_TEXT_MAX_CHARS)
      .optional()
      .describe("Assistant text of the turn, redacted and capped."),
  })
  .meta({ id: "Turn" });
export type Turn = z.infer<typeof Turn>;

/**
 * The run's phases, in the order they run: the sandbox's assembly (the engine, the images, the container
 * created and started, the workspace copied in with the checks and the baseline after it, the setup
 * commands), then the run's own (the tool calls and turns, the patch's export, verify, the teardown).
 */
export const RUN_PHASES = [
  "engine",
  "images",
  "container",
  "start",
  "copy-in",
  "checks",
  "baseline",
  "setup",
  "calls",
  "patch",
  "verify",
  "teardown",
] as const;
export type RunPhaseName = (typeof RUN_PHASES)[number];
export const Phase = z
  .object({
    name: z.enum(RUN_PHASES),
    startOffsetMs: Milliseconds.describe("Start, relative to startedAt."),
    durationMs: Milliseconds,
  })
  .meta({ id: "Phase" });
export type Phase = z.infer<typeof Phase>;

/** How the conversation was made smaller: by agent-ci, or by the API's own context_management edits. */
export const COMPACTION_STRATEGIES = ["clear_tool_results", "api_clear_tool_uses", "api_compaction"] as const;
export const Compaction = z
  .object({
    turn: NonNegativeInt.describe("The turn whose request was the first to carry the smaller context."),
    offsetMs: Milliseconds.describe("When, from the run's start."),
    trigger: z
      .enum(["auto", "overflow"])
      .describe(
        "auto: the prompt neared --compact-at; overflow: the API refused a prompt too long, and the turn was retried.",
      ),
    strategy: z
      .enum(COMPACTION_STRATEGIES)
      .describe(
        "clear_tool_results: agent-ci replaced old tool results with a placeholder; api_clear_tool_uses: the API cleared old tool results (clear_tool_uses_20250919); api_compaction: the API summarised the conversation (compact_20260112).",
      ),
    tokensBefore: NonNegativeInt.describe("Prompt tokens before (agent-ci's estimate, or the API's count)."),
    tokensAfter: NonNegativeInt.describe("Prompt tokens after."),
    clearedToolResults: NonNegativeInt.optional().describe(
      "Tool results replaced by a placeholder (their full output stays in toolCalls and tool-outputs/).",
    ),
  })
  .meta({ id: "Compaction" });
export type Compaction = z.infer<typeof Compaction>;

export const PATCH_FILE_STATUSES = ["added", "modified", "deleted", "renamed", "copied"] as const;

export const SecretFinding = z
  .object({
    file: z.string(),
    line: z.number().int().positive().optional().describe("Line in the new file."),
    kind: z.string().describe("e.g. github_token, anthropic_key, private_key, known_secret."),
  })
  .meta({ id: "SecretFinding" });
export type SecretFinding = z.infer<typeof SecretFinding>;

export const PatchFile = z
  .object({
    path: z.string(),
    oldPath: z.string().optional().describe("For renames and copies."),
    added: NonNegativeInt,
    removed: NonNegativeInt,
    binary: z.boolean(),
    status: z.enum(PATCH_FILE_STATUSES),
  })
  .meta({ id: "PatchFile" });
export type PatchFile = z.infer<typeof PatchFile>;

export const PatchSummary = z
  .object({
    files: z.array(PatchFile),
    added: NonNegativeInt,
    removed: NonNegativeInt,
    bytes: NonNegativeInt,
    sha256: z.string().describe("Of the patch file's bytes."),
    empty: z.boolean(),
    secretFindings: z
      .array(SecretFinding)
      .describe("Secrets found in added lines. Reported, never removed from the patch."),
  })
  .meta({ id: "PatchSummary" });
export type PatchSummary = z.infer<typeof PatchSummary>;

export const Verify = z
  .object({
    command: z.string(),
    applied: z.boolean().describe("Whether the patch applied to a pristine copy."),
    exitCode: z
      .number()
      .int()
      .nullable()
      .describe("null when the command did not run (patch did not apply, timeout)."),
    outputTail: z.string(),
    durationMs: Milliseconds,
    changedInputs: z
      .array(z.string())
      .optional()
      .describe(
        "What the command runs that the patch changed, so that its pass may not show the change works: a package.json script it runs (`package.json scripts.test`), its test runner's or build tool's configuration, a file it names. Absent when the patch changed none of it.",
      ),
  })
  .meta({ id: "Verify" });
export type Verify = z.infer<typeof Verify>;

export const Denial = z
  .object({
    callId: z.string(),
    tool: z.string(),
    summary: z.string().describe("One-line description of the call, redacted."),
    reason: z.string(),
    rule: RuleRef.optional(),
    agent: z
      .string()
      .optional()
      .describe("The subagent type whose call was denied; absent for the main loop."),
    narrowestAllowRule: z
      .string()
      .nullable()
      .describe(
        "The narrowest allow rule that would have admitted the call; null when none can (a deny rule wins).",
      ),
  })
  .meta({ id: "Denial" });
export type Denial = z.infer<typeof Denial>;

export const SUBAGENT_STATUSES = [...EXIT_REASONS, "running", "failed", "stopped"] as const;
export const Subagent = z
  .object({
    agentId: z.string(),
    toolUseId: z.string().describe("The Task call that started it; its calls carry it as parentToolUseId."),
    type: z.string().describe("subagent_type."),
    description: z.string().describe("The Task call's description, redacted."),
    model: z.string().describe("The model its requests used."),
    permissionMode: PermissionModeSchema.optional().describe(
      "The mode its calls were decided in: the run's, or a narrower one (plan for Explore and Plan, an agent definition's permissionMode).",
    ),
    background: z.boolean().describe("Started with run_in_background."),
    status: z
      .enum(SUBAGENT_STATUSES)
      .describe(
        "How its loop ended (an exit reason), failed (its loop threw), or stopped (the run or TaskStop stopped it in the background).",
      ),
    detail: z.string().optional().describe("Why it stopped before finishing, redacted."),
    tools: z
      .array(z.string())
      .describe("The tool set it was given (its declared tools that the parent had)."),
    turns: NonNegativeInt,
    toolUses: NonNegativeInt,
    usage: TokenUsage,
    costUsd: z.number().nonnegative().describe("What its own turns cost (included in the run's costUsd)."),
    startOffsetMs: Milliseconds,
    durationMs: Milliseconds.optional(),
  })
  .meta({ id: "Subagent" })
  .describe("One subagent a Task call ran: who it was and what it spent.");
export type Subagent = z.infer<typeof Subagent>;

export const Todo = z
  .object({
    content: z.string(),
    status: z.enum(["pending", "in_progress", "completed"]),
    activeForm: z.string().optional(),
  })
  .meta({ id: "Todo" });

export const Warning = z
  .object({
    kind: z.string().describe("e.g. bypass_permissions, network_on, engine_ignored_limit."),
    severity: z.enum(["info", "warning", "critical"]),
    message: z.string(),
  })
  .meta({ id: "Warning" });
export type Warning = z.infer<typeof Warning>;

export const StructuredOutput = z
  .object({
    schema: z
      .string()
      .describe(
        "Where the schema came from: its file name, inline (the Action's output_schema), or review (the built-in findings schema).",
      ),
    valid: z
      .boolean()
      .describe("The agent returned an object valid against the schema; it is in output.json."),
    attempts: NonNegativeInt.describe("StructuredOutput calls the agent made."),
    errors: z
      .array(z.string())
      .describe(
        "Why the last object was refused (the validator's messages), or that none was returned; empty when valid.",
      ),
    path: z
      .string()
      .optional()
      .describe("output.json, relative to the run's output folder, when it was written."),
  })
  .meta({ id: "StructuredOutput" });
export type StructuredOutput = z.infer<typeof StructuredOutput>;

export const ResumedFrom = z
  .object({
    runId: z.string().describe("The run this one continues."),
    record: z
      .string()
      .describe(
        "Where its record was read from: the output folder or report.json as given to --resume / resume_from.",
      ),
    exitReason: ExitReason.describe("How the earlier run ended."),
    baseCommit: z
      .string()
      .describe(
        "The earlier run's base commit, which is this run's too: this run's patch is the whole change against it, the earlier run's included.",
      ),
    restoredMessages: NonNegativeInt.describe(
      "Messages of the earlier conversation sent again, as the model was last sent them, ahead of the new prompt.",
    ),
    restoredReads: NonNegativeInt.describe(
      "Files the earlier run had read that this run may edit without reading them again, while they are unchanged.",
    ),
    earlierPolicy: Policy.optional().describe(
      "The earlier run's policy as its record states it, present only when this run's (`policy`) differs from it. It is never adopted: a resumed run's policy is its own configuration.",
    ),
    publishedCommit: z
      .string()
      .optional()
      .describe(
        "The commit agent-ci publish pushed for the earlier run, whose tree the record's base and patch reproduce; absent when that run was never published (the CLI's own output folder).",
      ),
  })
  .meta({ id: "ResumedFrom" });
export type ResumedFrom = z.infer<typeof ResumedFrom>;

export const { Attempt, ChosenAttempt } = attemptsSchemas(ExitReason, Outcome);
export type Attempt = z.infer<typeof Attempt>;

export const RunReport = z
  .object({
    schemaVersion: z.literal(REPORT_SCHEMA_VERSION),
    runId: z.string(),
    agentCiVersion: z.string(),
    startedAt: IsoDateTime,
    endedAt: IsoDateTime,
    durationMs: Milliseconds,
    exitReason: ExitReason,
    outcome: Outcome,
    error: RunError.optional(),
    workspace: Workspace,
    image: Image.optional().describe("Absent when the run ended before a container existed."),
    hardening: Hardening.optional(),
    policy: Policy,
    model: Model,
    limits: Limits,
    phases: z
      .array(Phase)
      .optional()
      .describe(
        "Where the run's time went, phase by phase in the order they began (images built on a first run, the container's start, the copy-in, the calls, verify…); a run that ended early has the phases it reached.",
      ),
    setupCache: SetupCache.optional().describe(
      "What the setup cache did (docs/setup-cache.md); absent when it was off or there was no setup.",
    ),
    firstTurn: z
      .object({ overlapped: z.boolean(), reason: z.string().optional() })
      .optional()
      .describe(
        "Whether the first model turn was asked while the sandbox opened (docs/first-turn.md), and why not when it was not.",
      ),
    toolCalls: z.array(ToolCall),
    turns: z.array(Turn),
    compactions: z
      .array(Compaction)
      .optional()
      .describe(
        "Each time the conversation was made smaller to stay in the model's context window, in order.",
      ),
    usage: TokenUsage.describe("Totals over all turns and side calls, subagents' included."),
    costUsd: z
      .number()
      .nonnegative()
      .describe("Estimate from the price table in effect for the run, subagents' and side calls' included."),
    subagents: z
      .array(Subagent)
      .optional()
      .describe(
        "The subagents Task calls ran, in the order they started; `turns` lists the main loop's only.",
      ),
    patch: PatchSummary,
    verify: Verify.optional(),
    denials: z.array(Denial),
    todos: z.array(Todo).optional().describe("The last TodoWrite list."),
    warnings: z.array(Warning),
    structuredOutput: StructuredOutput.optional().describe(
      "With --output-schema (or in review mode): the agent's structured result.",
    ),
    egress: Egress.optional().describe(
      "--network allowlist: what the egress proxy allowed, refused and carried; with WebFetch, every fetch too.",
    ),
    sideCalls: z
      .array(SideCall)
      .optional()
      .describe(
        "Model calls made for tools (WebFetch's reading model, WebSearch); counted in usage and costUsd.",
      ),
    instructions: Instructions.optional().describe(
      "Skills and slash commands the run had, where they came from, and what was ignored.",
    ),
    mcp: Mcp.optional().describe("MCP servers: configured, started, lost, ignored."),
    context: ModelContextRecord.optional().describe(
      "What the model was told: the system prompt's hash and length, the environment facts, the memory files and the git snapshot.",
    ),
    resumedFrom: ResumedFrom.optional().describe(
      "With --resume / resume_from: the run this one continues, whose workspace, conversation and policy it started from.",
    ),
    attempts: z
      .array(Attempt)
      .optional()
      .describe("With --attempts N: every attempt; the rest of this report is the chosen one's."),
    chosen: ChosenAttempt.optional().describe("With --attempts N: the attempt this report is, and why."),
  })
  .meta({
    title: "agent-ci run report",
    description:
      "report.json written by agent-ci for every run: what ran, what was decided, what it cost, what changed.",
  });
export type RunReport = z.infer<typeof RunReport>;
/** What callers build before validation (same as RunReport: the schema has no defaults or transforms). */
export type RunReportInput = z.input<typeof RunReport>;

/** Thrown by `parseReport` with every mismatch listed. */
export class ReportSchemaError extends Error {
  override readonly name = "ReportSchemaError";
  constructor(
    message: string,
    readonly issues: readonly string[],
  ) {
    super(message);
  }
}

/** Outcome from the parts that decide it; the runner stores the result in `outcome`. */
export function deriveOutcome(parts: {
  exitReason: ExitReason;
  patch: Pick<PatchSummary, "empty">;
  verify?: Pick<Verify, "applied" | "exitCode"> | undefined;
}): Outcome {
  if (
    parts.exitReason === "api_error" ||
    parts.exitReason === "engine_error" ||
    parts.exitReason === "config_error"
  ) {
    return "error";
  }
  if (parts.verify && (!parts.verify.applied || parts.verify.exitCode !== 0)) return "verify_failed";
  if (parts.exitReason !== "completed") return "stopped";
  return parts.patch.empty ? "no_changes" : "changes";
}

function formatIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const where = issue.path.length === 0 ? "(root)" : issue.path.map(String).join(".");
    return `${where}: ${issue.message}`;
  });
}

/**
 * Validates a report given as JSON text or as an already-parsed value. Throws ReportSchemaError naming the
 * fields that do not match, or saying plainly when the file is not a report or comes from a newer agent-ci.
 */
export function parseReport(json: string | unknown): RunReport {
  const value = typeof json === "string" ? parseJsonText(json) : json;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ReportSchemaError("not an agent-ci report: expected a JSON object", []);
  }
  const version = (value as Record<string, unknown>).schemaVersion;
  if (typeof version !== "number") {
    throw new ReportSchemaError("not an agent-ci report: schemaVersion is missing", []);
  }
  if (version > REPORT_SCHEMA_VERSION) {
    throw new ReportSchemaError(
      `report schemaVersion ${version} was written by a newer agent-ci; this one reads version ${REPORT_SCHEMA_VERSION}`,
      [],
    );
  }
  // One report is parsed once: zod's compiled fast path (jit) would cost more to build than it saves.
  const result = RunReport.safeParse(value, { jitless: true });
  if (result.success) return result.data;
  const issues = formatIssues(result.error);
  const shown = issues.slice(0, 20).join("\n  ");
  const more = issues.length > 20 ? `\n  … and ${issues.length - 20} more` : "";
  throw new ReportSchemaError(
    `report does not match schema version ${REPORT_SCHEMA_VERSION}:\n  ${shown}${more}`,
    issues,
  );
}

function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ReportSchemaError(`report is not valid JSON: ${(error as Error).message}`, []);
  }
}

/** The JSON Schema published as schema/report.schema.json (draft 2020-12, input side: unknown keys allowed). */
export function reportJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(RunReport, { target: "draft-2020-12", io: "input" }) as Record<
    string,
    unknown
  >;
  return schema;
}
