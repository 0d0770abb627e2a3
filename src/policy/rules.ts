/**
 * Claude Code permission rule syntax: `Tool` or `Tool(specifier)`. Parses and validates rule text
 * (a malformed rule is a startup error naming the rule, never silently ignored — R16) and says which
 * tools a rule governs: `Edit(...)` rules cover every file-editing tool, `Read(...)` rules also cover
 * Grep, Glob and LS, as in Claude Code.
 */
import { compileBashPattern } from "./bash-patterns.js";
import { PolicyConfigError } from "./errors.js";
import { pathSpecifierProblem } from "./paths.js";
import type { ParsedRule, RuleBehavior, RuleSource } from "./schema.js";

export const EDIT_TOOLS: readonly string[] = ["Edit", "MultiEdit", "Write", "NotebookEdit"];
export const READ_TOOLS: readonly string[] = ["Read", "Grep", "Glob", "LS", "NotebookRead"];

type SpecifierKind = "bash" | "path" | "domain" | "name" | "none";

const TOOL_SPECIFIERS: Readonly<Record<string, SpecifierKind>> = {
  Bash: "bash",
  Read: "path",
  Edit: "path",
  MultiEdit: "path",
  Write: "path",
  NotebookEdit: "path",
  NotebookRead: "path",
  Glob: "path",
  Grep: "path",
  LS: "path",
  WebFetch: "domain",
  WebSearch: "none",
  TodoWrite: "none",
  BashOutput: "none",
  KillShell: "none",
  KillBash: "none",
  Task: "name",
  Agent: "name",
  Skill: "name",
  ExitPlanMode: "none",
};

export const KNOWN_TOOLS: readonly string[] = Object.keys(TOOL_SPECIFIERS);

/** `mcp__server`, `mcp__server__tool`, `mcp__server__*`. */
const MCP_RULE = /^mcp__[A-Za-z0-9_.-]+(?:__\*)?$/;
const TOOL_ALIASES: Readonly<Record<string, string>> = { Agent: "Task", KillBash: "KillShell" };
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

export const isEditTool = (tool: string): boolean => EDIT_TOOLS.includes(tool);
export const isReadTool = (tool: string): boolean => READ_TOOLS.includes(tool);
export const isMcpTool = (tool: string): boolean => tool.startsWith("mcp__");

function toolNameProblem(tool: string): string | undefined {
  if (TOOL_SPECIFIERS[tool] !== undefined || MCP_RULE.test(tool)) return undefined;
  const hint = KNOWN_TOOLS.find((known) => known.toLowerCase() === tool.toLowerCase());
  if (hint !== undefined)
    return `unknown tool "${tool}" (tool names are case-sensitive: did you mean ${hint}?)`;
  if (tool.startsWith("mcp__"))
    return `malformed MCP tool name "${tool}" (expected mcp__server or mcp__server__tool)`;
  return `unknown tool "${tool}"; known tools: ${KNOWN_TOOLS.join(", ")}, or mcp__<server>[__<tool>]`;
}

/** Parentheses inside a specifier must balance outside quotes (`Bash(echo "(")` is fine). */
function parenthesesBalanced(spec: string): boolean {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < spec.length; i++) {
    const char = spec[i];
    if (char === "\\") {
      i++;
      continue;
    }
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      continue;
    }
    if (char === "'" || char === '"') quote = char;
    else if (char === "(") depth++;
    else if (char === ")") depth--;
    if (depth < 0) return false;
  }
  return depth === 0;
}

function specifierProblem(kind: SpecifierKind, tool: string, spec: string): string | undefined {
  if (spec.trim() === "") return `empty specifier; write "${tool}" without parentheses to mean every use`;
  if (!parenthesesBalanced(spec)) return "unbalanced parentheses inside the specifier";
  switch (kind) {
    case "none":
      return `${tool} takes no specifier; use "${tool}" alone`;
    case "bash":
      try {
        compileBashPattern(spec);
        return undefined;
      } catch (error) {
        return (error as Error).message;
      }
    case "path":
      return pathSpecifierProblem(spec);
    case "domain": {
      const match = /^domain:(.+)$/.exec(spec);
      if (match === null)
        return "WebFetch rules take `domain:<host>`, for example WebFetch(domain:example.com)";
      return /^(?:\*\.)?[A-Za-z0-9.-]+$/.test(match[1] as string)
        ? undefined
        : `invalid domain "${match[1]}"`;
    }
    case "name":
      return undefined;
  }
}

/** Parses one rule. Throws PolicyConfigError naming the rule and the reason. */
export function parseRule(text: string, behavior: RuleBehavior, source: RuleSource): ParsedRule {
  const fail = (reason: string): never => {
    throw new PolicyConfigError({ subject: text, reason, source: source.label });
  };
  const trimmed = text.trim();
  if (trimmed === "") fail("empty rule");
  if (CONTROL_CHARS.test(trimmed)) fail("control characters or line breaks in a rule");
  const open = trimmed.indexOf("(");
  if (open === -1) {
    if (trimmed.includes(")")) fail("unbalanced parentheses: a rule is Tool or Tool(specifier)");
    const problem = toolNameProblem(trimmed);
    if (problem !== undefined) fail(problem);
    return { text: trimmed, tool: trimmed, behavior, source };
  }
  if (!trimmed.endsWith(")")) fail("unbalanced parentheses: a rule is Tool or Tool(specifier)");
  const tool = trimmed.slice(0, open).trim();
  const specifier = trimmed.slice(open + 1, -1);
  const toolProblem = toolNameProblem(tool);
  if (toolProblem !== undefined) fail(toolProblem);
  const kind: SpecifierKind = TOOL_SPECIFIERS[tool] ?? "none";
  const problem = specifierProblem(kind, tool, specifier);
  if (problem !== undefined) fail(problem);
  return { text: trimmed, tool, specifier: specifier.trim(), behavior, source };
}

const canonicalTool = (tool: string): string => TOOL_ALIASES[tool] ?? tool;

/**
 * Does this rule speak about calls of `tool`? A path-specific Write/MultiEdit/NotebookEdit rule is
 * read as Edit(...): Claude Code accepts `Write(docs/**)` but never consults it, a trap this removes.
 */
export function ruleGovernsTool(rule: ParsedRule, tool: string): boolean {
  const ruleTool = canonicalTool(rule.tool);
  const callTool = canonicalTool(tool);
  if (ruleTool === callTool) return true;
  if (isMcpTool(ruleTool)) {
    if (ruleTool.endsWith("__*")) return callTool.startsWith(ruleTool.slice(0, -1));
    return callTool.startsWith(`${ruleTool}__`);
  }
  if (ruleTool === "Edit" || (rule.specifier !== undefined && isEditTool(ruleTool)))
    return isEditTool(callTool);
  if (ruleTool === "Read") return isReadTool(callTool);
  return false;
}
