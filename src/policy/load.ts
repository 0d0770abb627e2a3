/**
 * Builds a Policy from its sources: CLI flags, action inputs, a config file, presets and Claude Code
 * settings files. Every rule is validated (a bad rule stops the run, naming it — R16). A source that
 * is not trusted (a file from the workspace, which a pull request can change — R18) may only add deny
 * and ask rules; its allows, mode, extra directories and hooks are dropped and listed in `ignored`.
 */
import { PolicyConfigError } from "./errors.js";
import { checkKeys } from "./config-keys.js";
import { compileHookMatcher } from "./hook-matcher.js";
import { PRESETS } from "./presets.js";
import { parseRule } from "./rules.js";
import { SETTINGS_KEY_RULES } from "./settings-keys.js";
import { workspaceGate } from "./workspace-trust.js";
import {
  PERMISSION_MODES,
  PermissionModeSchema,
  RuleSourceSchema,
  SettingsFileSchema,
  type IgnoredEntry,
  type ParsedRule,
  type PermissionMode,
  type Policy,
  type PolicyHook,
  type PolicySourceInput,
  type RuleSource,
  type SettingsFile,
} from "./schema.js";

export interface LoadPolicyInput {
  /** The mode chosen on the command line or in the action inputs; wins over every source. */
  readonly mode?: string | undefined;
  /** Lowest precedence first: a later source's defaultMode wins over an earlier one's. */
  readonly sources: readonly PolicySourceInput[];
  /** Treat workspace files as trusted (the user vouches for the branch). */
  readonly trustWorkspace?: boolean | undefined;
}

/** Validates a mode name. Claude Code's `dontAsk` is accepted as `default`: agent-ci never asks. */
export function parseMode(value: string, source: string): PermissionMode {
  if (value === "dontAsk") return "default";
  const parsed = PermissionModeSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new PolicyConfigError({
    subject: value,
    reason: `unknown permission mode; expected one of ${PERMISSION_MODES.join(", ")}`,
    source,
  });
}

function validateSource(source: RuleSource): RuleSource {
  const parsed = RuleSourceSchema.safeParse(source);
  if (parsed.success) return parsed.data;
  throw new PolicyConfigError({ subject: JSON.stringify(source), reason: "invalid rule source" });
}

function hooksOf(input: PolicySourceInput): PolicyHook[] {
  const hooks: PolicyHook[] = [];
  for (const event of ["PreToolUse", "PostToolUse"] as const) {
    for (const group of input.hooks?.[event] ?? []) {
      try {
        compileHookMatcher(group.matcher);
      } catch (error) {
        throw new PolicyConfigError({
          subject: group.matcher ?? "",
          reason: `invalid hook matcher: ${(error as Error).message}`,
          source: input.source.label,
        });
      }
      for (const hook of group.hooks) {
        hooks.push({
          event,
          matcher: group.matcher,
          command: hook.command,
          timeoutSeconds: hook.timeout,
          source: input.source.label,
        });
      }
    }
  }
  return hooks;
}

export function loadPolicy(input: LoadPolicyInput): Policy {
  const rules: ParsedRule[] = [];
  const ignored: IgnoredEntry[] = [];
  const additionalDirectories: string[] = [];
  const hooks: PolicyHook[] = [];
  let mode: PermissionMode = "default";
  let modeSource = "built-in default";

  for (const entry of input.sources) {
    const source = validateSource(entry.source);
    const admit = workspaceGate(source.trusted || input.trustWorkspace === true, ignored);
    const label = source.label;
    for (const behavior of ["deny", "ask", "allow"] as const) {
      for (const text of entry[behavior] ?? []) {
        const rule = parseRule(text, behavior, source);
        if (behavior === "allow" && !admit({ kind: "rule", text: rule.text, source: label }, "allow rule"))
          continue;
        rules.push(rule);
      }
    }
    if (entry.defaultMode !== undefined) {
      const sourceMode = parseMode(entry.defaultMode, label);
      if (admit({ kind: "mode", text: entry.defaultMode, source: label }, "mode")) {
        mode = sourceMode;
        modeSource = label;
      }
    }
    for (const dir of entry.additionalDirectories ?? []) {
      if (dir.trim() === "" || dir.includes("\u0000")) {
        throw new PolicyConfigError({ subject: dir, reason: "not a usable directory path", source: label });
      }
      if (admit({ kind: "directory", text: dir, source: label }, "additional directory"))
        additionalDirectories.push(dir);
    }
    for (const hook of hooksOf({ ...entry, source })) {
      const text = `${hook.event} ${hook.matcher ?? "*"}: ${hook.command}`;
      if (admit({ kind: "hooks", text, source: label }, "hook")) hooks.push(hook);
    }
    ignored.push(...(entry.unusedKeys ?? []));
  }
  if (input.mode !== undefined) {
    mode = parseMode(input.mode, "mode option");
    modeSource = "mode option";
  }
  return { mode, modeSource, rules, ignored, additionalDirectories, hooks };
}

/**
 * The keys of a settings file, its `permissions` and its `hooks`, by name: a misspelling of a key agent-ci
 * reads is a config error (the first one, naming the file); the other keys agent-ci does not use are listed.
 * A workspace file is checked as any other: its misspelt `deny` would silently drop a deny rule.
 */
function checkSettingsKeys(data: unknown, label: string): IgnoredEntry[] {
  const blocks = [
    [data, SETTINGS_KEY_RULES.top],
    [(data as SettingsFile | undefined)?.permissions, SETTINGS_KEY_RULES.permissions],
    [(data as SettingsFile | undefined)?.hooks, SETTINGS_KEY_RULES.hooks],
  ] as const;
  const unused: IgnoredEntry[] = [];
  for (const [value, rules] of blocks) {
    const { problems, ignored } = checkKeys(value, rules);
    const [first] = problems;
    if (first) {
      const key = rules.where ? `${rules.where}.${first.key}` : first.key;
      throw new PolicyConfigError({ subject: key, reason: first.reason, source: label });
    }
    unused.push(...ignored.map((i) => ({ ...i, kind: "key" as const, text: i.text ?? "", source: label })));
  }
  return unused;
}

/**
 * Reads Claude Code's `.claude/settings.json` (text or parsed JSON). A misspelt key or an invalid
 * `permissions` or `hooks` block is a config error; the keys agent-ci does not use are in `unusedKeys`.
 */
export function parseSettingsFile(json: unknown, source: RuleSource): PolicySourceInput {
  let data: unknown = json;
  if (typeof json === "string") {
    try {
      data = JSON.parse(json);
    } catch (error) {
      throw new PolicyConfigError({
        subject: source.label,
        reason: `not valid JSON: ${(error as Error).message}`,
        source: source.label,
      });
    }
  }
  const isObject = typeof data === "object" && data !== null && !Array.isArray(data);
  const unusedKeys = isObject ? checkSettingsKeys(data, source.label) : [];
  const parsed = SettingsFileSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined ? "" : ` at ${issue.path.join(".") || "the top level"}`;
    throw new PolicyConfigError({
      subject: source.label,
      reason: `invalid settings${where}: ${issue?.message ?? "unknown error"}`,
      source: source.label,
    });
  }
  const permissions = parsed.data.permissions;
  return {
    source,
    allow: permissions?.allow,
    deny: permissions?.deny,
    ask: permissions?.ask,
    defaultMode: permissions?.defaultMode,
    additionalDirectories: permissions?.additionalDirectories,
    hooks: parsed.data.hooks,
    unusedKeys,
  };
}

export const PRESET_NAMES: readonly string[] = Object.keys(PRESETS);

/** A built-in preset as a trusted source. */
export function presetSource(name: string): PolicySourceInput {
  const preset = PRESETS[name];
  if (preset === undefined) {
    throw new PolicyConfigError({
      subject: name,
      reason: `unknown preset; expected one of ${PRESET_NAMES.join(", ")}`,
    });
  }
  return {
    source: { kind: "preset", label: `preset:${name}`, trusted: true },
    allow: preset.allow,
    deny: preset.deny,
    defaultMode: preset.defaultMode,
  };
}
