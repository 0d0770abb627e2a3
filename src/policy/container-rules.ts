/**
 * The second enforcement layer (issue 4, "one policy, two layers"): the same rules compiled into
 * what the sandbox does at copy-in. A path a Read deny rule matches is never copied into the
 * container, so `cat .env` in Bash finds nothing to print (the tool-level check of Bash arguments is
 * best effort — R14); a path an Edit deny rule or the protected list matches is made read-only.
 * Paths are relative to the workspace root, with `/` separators.
 */
import {
  compilePathPattern,
  compileProtectedPaths,
  DEFAULT_HOME_DIR,
  isInside,
  normalizeAbsolute,
  WORKSPACE_ROOT,
} from "./rule-paths.js";
import type { PathPattern } from "./rule-paths.js";
import { isReadOnlyMode } from "./modes.js";
import { ruleGovernsTool } from "./rules.js";
import { toolCategory } from "./tool-catalog.js";
import type { ParsedRule, Policy } from "./schema.js";

export interface ContainerRuleRef {
  readonly text: string;
  readonly source: string;
  readonly reason: string;
}

export interface EnforcedRule {
  readonly text: string;
  readonly source: string;
  readonly layer: "copy-exclude" | "read-only";
}

export interface ContainerRules {
  /** The rule that keeps this file out of the container, if any. */
  excludeFromCopy(relPath: string): ContainerRuleRef | undefined;
  /** The rule or protected path that makes this file read-only in the container, if any. */
  readOnly(relPath: string): ContainerRuleRef | undefined;
  /** plan mode: nothing in the workspace may change, so the sandbox mounts it read-only. */
  readonly workspaceReadOnly: boolean;
  /** For the report: which rules were compiled into the container, and how. */
  readonly enforced: readonly EnforcedRule[];
}

interface PathRule {
  readonly rule: ParsedRule;
  readonly pattern: PathPattern;
}

export function compileContainerRules(
  policy: Policy,
  workspaceRoot: string = WORKSPACE_ROOT,
  homeDir: string = DEFAULT_HOME_DIR,
): ContainerRules {
  const root = normalizeAbsolute(workspaceRoot);
  const context = { workspaceRoot: root, homeDir };
  const pathRules = (behaviors: readonly string[], tool: string): PathRule[] =>
    policy.rules
      .filter(
        (rule) =>
          behaviors.includes(rule.behavior) && rule.specifier !== undefined && ruleGovernsTool(rule, tool),
      )
      .map((rule) => ({ rule, pattern: compilePathPattern(rule.specifier as string, context) }));
  // Ask rules deny too (nobody to ask), so they are enforced the same way.
  const readDenials = pathRules(["deny", "ask"], "Read").filter((entry) => entry.rule.tool === "Read");
  const editDenials = pathRules(["deny", "ask"], "Write").filter(
    (entry) => toolCategory(entry.rule.tool) === "edit",
  );
  const editAllows = pathRules(["allow"], "Write");
  const protectedPaths = compileProtectedPaths(context);

  const absolute = (relPath: string): string | undefined => {
    const path = normalizeAbsolute(`${root}/${relPath}`);
    return isInside(path, root) ? path : undefined;
  };
  const ref = (rule: ParsedRule, reason: string): ContainerRuleRef => ({
    text: rule.text,
    source: rule.source.label,
    reason,
  });

  return {
    workspaceReadOnly: isReadOnlyMode(policy.mode),
    enforced: [
      ...readDenials.map((entry): EnforcedRule => ({
        text: entry.rule.text,
        source: entry.rule.source.label,
        layer: "copy-exclude",
      })),
      ...editDenials.map((entry): EnforcedRule => ({
        text: entry.rule.text,
        source: entry.rule.source.label,
        layer: "read-only",
      })),
      ...protectedPaths.map((entry): EnforcedRule => ({
        text: `protected:${entry.entry.id}`,
        source: "agent-ci",
        layer: "read-only",
      })),
    ],
    excludeFromCopy(relPath) {
      const path = absolute(relPath);
      if (path === undefined) return undefined;
      const match = readDenials.find((entry) => entry.pattern.matches(path));
      return match === undefined
        ? undefined
        : ref(match.rule, "a Read deny rule: the file is not copied into the container");
    },
    readOnly(relPath) {
      const path = absolute(relPath);
      if (path === undefined) return undefined;
      const match = editDenials.find((entry) => entry.pattern.matches(path));
      if (match !== undefined)
        return ref(match.rule, "an Edit deny rule: the file is read-only in the container");
      for (const entry of protectedPaths) {
        if (!entry.container.some((pattern) => pattern.matches(path))) continue;
        const named = editAllows.some(
          (allow) => allow.pattern.matches(path) && entry.entry.namedBy(allow.rule.specifier ?? ""),
        );
        if (!named)
          return {
            text: `protected:${entry.entry.id}`,
            source: "agent-ci",
            reason: `protected path: ${entry.entry.description}`,
          };
      }
      return undefined;
    },
  };
}
