/**
 * The permission policy of agent-ci: pure decisions for every tool call (no Docker here), the
 * container rules the sandbox applies at copy-in, explanations for the report, and hooks.
 */
export { PolicyConfigError, PolicyNotReadyError } from "./errors.js";
export {
  DECIDED_BY,
  DecisionSchema,
  HooksConfigSchema,
  PERMISSION_MODES,
  PermissionModeSchema,
  MODES_NARROWEST_FIRST,
  modeWithin,
  RuleSourceSchema,
  SettingsFileSchema,
  type Decision,
  type HooksConfig,
  type IgnoredEntry,
  type ParsedRule,
  type PermissionMode,
  type Policy,
  type PolicyCall,
  type PolicyHook,
  type PolicySourceInput,
  type RuleBehavior,
  type RuleSource,
} from "./schema.js";
export { parseRule, ruleGovernsTool } from "./rules.js";
export {
  isMcpTool,
  KNOWN_TOOLS,
  MCP_PREFIX,
  mcpName,
  TOOL_CATALOG,
  toolCategory,
  toolEntry,
  toolsOfCategory,
  type ToolCategory,
  type ToolEntry,
} from "./tool-catalog.js";
export {
  loadPolicy,
  parseMode,
  parseSettingsFile,
  presetSource,
  PRESET_NAMES,
  type LoadPolicyInput,
} from "./load.js";
export { PRESETS, type PresetDefinition } from "./presets.js";
export {
  createPolicyEngine,
  createPolicyEngineNow,
  type PolicyEngine,
  type PolicyEngineOptions,
} from "./evaluate.js";
export { loadBashParser, type BashParserOptions } from "./bash-parser.js";
export {
  bashSubcommands,
  describeDecision,
  narrowestAllowRule,
  narrowestAllowRules,
  type BashSubcommand,
  type ExplainOptions,
} from "./explain.js";
export {
  compileContainerRules,
  type ContainerRuleRef,
  type ContainerRules,
  type EnforcedRule,
} from "./container-rules.js";
export { replayDecisions, type DecisionFlip, type RecordedCall } from "./replay.js";
export { compileHookMatcher } from "./hook-matcher.js";
export { PROTECTED_PATHS, WORKSPACE_ROOT, type ProtectedPath } from "./rule-paths.js";
export { MAX_COMMAND_CHARS, MAX_NESTING } from "./bash-script.js";
export {
  MAX_SIMPLE_COMMANDS,
  MAX_SCRIPT_DEPTH,
  type LineAnalysis,
  type WorkingDirectories,
} from "./bash-line.js";
export type { CommandFacts, CommandView, PathUse, ReadOnlyProof } from "./bash-commands.js";
export type { BashWord } from "./bash-script.js";
export {
  checkKeys,
  keyDistance,
  misspeltKeyReason,
  resembles,
  RESEMBLANCE_EDITS,
  type KeyCheck,
  type KeyProblem,
  type KeyRules,
} from "./config-keys.js";
export {
  CLAUDE_HOOK_EVENTS,
  CLAUDE_PERMISSIONS_KEYS,
  CLAUDE_SETTINGS_KEYS,
  SETTINGS_KEY_RULES,
} from "./settings-keys.js";
export {
  describeIgnored,
  TRUST_WORKSPACE_FLAG,
  workspaceGate,
  type IgnoredConfig,
} from "./workspace-trust.js";
