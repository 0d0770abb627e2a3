/**
 * Data shapes of the permission policy: modes, rule sources, the Claude Code settings format, the
 * call the pipeline asks about and the decision it gets back. What crosses a boundary (config files,
 * report.json) is a zod schema; the rest are plain types.
 */
import type { IgnoredConfig } from "./workspace-trust.js";
import { z } from "zod";
import { MODE_MEANINGS, PERMISSION_MODES } from "./modes.js";

export { PERMISSION_MODES };
export const PermissionModeSchema = z.enum(PERMISSION_MODES);
export type PermissionMode = z.infer<typeof PermissionModeSchema>;

/** The modes from the narrowest to the widest (ModeMeaning.width). */
export const MODES_NARROWEST_FIRST: readonly PermissionMode[] = [...PERMISSION_MODES].sort(
  (a, b) => MODE_MEANINGS[a].width - MODE_MEANINGS[b].width,
);

/** True when `mode` allows nothing that `ceiling` does not (the same mode or a narrower one). */
export function modeWithin(mode: PermissionMode, ceiling: PermissionMode): boolean {
  return MODE_MEANINGS[mode].width <= MODE_MEANINGS[ceiling].width;
}

export const RULE_BEHAVIORS = ["allow", "deny", "ask"] as const;
export const RuleBehaviorSchema = z.enum(RULE_BEHAVIORS);
export type RuleBehavior = z.infer<typeof RuleBehaviorSchema>;

/**
 * Where a rule came from. `trusted: false` marks configuration a pull request can change (a
 * `.claude/settings.json` or `.agent-ci.json` read from the workspace): it may add deny and ask
 * rules, never allows, a mode, extra directories or hooks (RELIABILITY R18).
 */
export const RuleSourceSchema = z.object({
  kind: z.enum(["cli", "action", "settings-file", "workspace-settings", "preset"]),
  label: z.string().min(1),
  trusted: z.boolean(),
});
export type RuleSource = z.infer<typeof RuleSourceSchema>;

/** One hook command, as in Claude Code settings. `timeout` is in seconds. */
export const HookCommandSchema = z.strictObject({
  type: z.literal("command"),
  command: z.string().min(1),
  timeout: z.number().positive().max(3600).optional(),
});
export type HookCommand = z.infer<typeof HookCommandSchema>;

export const HookMatcherSchema = z.strictObject({
  matcher: z.string().optional(),
  hooks: z.array(HookCommandSchema),
});
export type HookMatcher = z.infer<typeof HookMatcherSchema>;

/** Claude Code's other hook events (Stop, SessionStart, …) are noted and not run (settings-keys.ts). */
export const HooksConfigSchema = z.looseObject({
  PreToolUse: z.array(HookMatcherSchema).optional(),
  PostToolUse: z.array(HookMatcherSchema).optional(),
});
export type HooksConfig = z.infer<typeof HooksConfigSchema>;

/**
 * The `permissions` block of `.claude/settings.json`. Its other keys pass the schema and are checked by name
 * (settings-keys.ts): a misspelling of one of these is refused, any other key is noted and ignored.
 */
export const PermissionsBlockSchema = z.looseObject({
  allow: z.array(z.string()).optional(),
  deny: z.array(z.string()).optional(),
  ask: z.array(z.string()).optional(),
  defaultMode: z.string().optional(),
  additionalDirectories: z.array(z.string()).optional(),
});

/** A settings file: the keys agent-ci reads (the others are checked by name, as in `permissions`). */
export const SettingsFileSchema = z.looseObject({
  permissions: PermissionsBlockSchema.optional(),
  hooks: HooksConfigSchema.optional(),
});
export type SettingsFile = z.infer<typeof SettingsFileSchema>;

/** One layer of configuration handed to `loadPolicy`, in increasing precedence. */
export interface PolicySourceInput {
  readonly source: RuleSource;
  readonly allow?: readonly string[] | undefined;
  readonly deny?: readonly string[] | undefined;
  readonly ask?: readonly string[] | undefined;
  readonly defaultMode?: string | undefined;
  readonly additionalDirectories?: readonly string[] | undefined;
  readonly hooks?: HooksConfig | undefined;
  /** Keys of the source's file that agent-ci does not use, for the log and the report. */
  readonly unusedKeys?: readonly IgnoredEntry[] | undefined;
}

/** A validated rule in Claude Code syntax: `Tool` or `Tool(specifier)`. */
export interface ParsedRule {
  readonly text: string;
  readonly tool: string;
  readonly specifier?: string | undefined;
  readonly behavior: RuleBehavior;
  readonly source: RuleSource;
}

/**
 * Settings that were read and not used, kept so the log and the report can show them: what the workspace gate
 * held back (workspace-trust.ts), and keys agent-ci does not use (`key`, config-keys.ts).
 */
export interface IgnoredEntry extends IgnoredConfig {
  readonly kind: "rule" | "mode" | "directory" | "hooks" | "key";
  readonly text: string;
}

export interface PolicyHook {
  readonly event: "PreToolUse" | "PostToolUse";
  readonly matcher: string | undefined;
  readonly command: string;
  readonly timeoutSeconds: number | undefined;
  readonly source: string;
}

/** The merged, validated policy: plain data, safe to put in report.json. */
export interface Policy {
  readonly mode: PermissionMode;
  /** Which input set the mode: `mode option`, a source label, or `built-in default`. */
  readonly modeSource: string;
  readonly rules: readonly ParsedRule[];
  readonly ignored: readonly IgnoredEntry[];
  readonly additionalDirectories: readonly string[];
  readonly hooks: readonly PolicyHook[];
}

/** What the pipeline asks the policy about, after zod parsing and validateInput. */
export interface PolicyCall {
  readonly tool: string;
  readonly input: Readonly<Record<string, unknown>>;
  /** The tool's own `isReadOnly(input)`. Ignored for Bash: the policy proves that itself. */
  readonly readOnly: boolean;
  /** Canonical absolute container paths the call reads or writes (symlinks already resolved). */
  readonly paths?: readonly string[] | undefined;
  /** Bash: the working directory in the container. */
  readonly cwd?: string | undefined;
}

export const DECIDED_BY = [
  "rule",
  "mode",
  "protected-path",
  "outside-workspace",
  "invalid-path",
  "parse-failure",
  "read-only-check",
] as const;

export const RuleRefSchema = z.object({ text: z.string(), source: z.string() }).meta({ id: "RuleRef" });

export const DecisionSchema = z.object({
  behavior: z
    .enum(["allow", "deny"])
    .describe("Non-interactive: where Claude Code would ask, agent-ci denies."),
  reason: z
    .string()
    .describe(
      "Sentence sent to the model (for a deny: what stopped the call and what it may do instead) and shown in the report.",
    ),
  rule: RuleRefSchema.optional().describe("The rule that decided, when one did."),
  mode: PermissionModeSchema,
  decidedBy: z
    .enum(DECIDED_BY)
    .describe(
      "What decided: a rule, the mode's default, a protected path, a path outside the workspace, a path that is not usable, a command that could not be parsed, or the read-only proof of a Bash line.",
    ),
  subcommand: z.string().optional().describe("For compound Bash lines, the command the decision was about."),
});
export type Decision = z.infer<typeof DecisionSchema>;

/** A decision as the pipeline hands it on and the report records it: the mode is the run's, kept once. */
export const CallDecisionSchema = DecisionSchema.omit({ mode: true });
export type CallDecision = z.infer<typeof CallDecisionSchema>;
