/**
 * Claude Code permission rule syntax: `Tool` or `Tool(specifier)`. Parses and validates rule text
 * (a malformed rule is a startup error naming the rule, never silently ignored — R16) and says which
 * tools a rule governs: `Edit(...)` rules cover every file-editing tool, `Read(...)` rules every tool
 * that reads files (Grep, Glob, LS), as in Claude Code. The tools and their categories: tool-catalog.ts.
 */
import { compileBashPattern } from "./bash-patterns.js";
import { PolicyConfigError } from "./errors.js";
import { type DomainRule, parseDomainRule } from "./network.js";
import { pathSpecifierProblem } from "./rule-paths.js";
import type { ParsedRule, RuleBehavior, RuleSource } from "./schema.js";
import {
  isMcpTool,
  KNOWN_TOOLS,
  MCP_PREFIX,
  mcpName,
  type SpecifierKind,
  toolCategory,
  toolEntry,
} from "./tool-catalog.js";

/** `mcp__server`, `mcp__server__tool`, `mcp__server__*`. */
const MCP_RULE = new RegExp(`^${MCP_PREFIX}[A-Za-z0-9_.-]+(?:__\\*)?$`);
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

const isEditTool = (tool: string): boolean => toolCategory(tool) === "edit";

function toolNameProblem(tool: string): string | undefined {
  if (toolEntry(tool) !== undefined && (!isMcpTool(tool) || MCP_RULE.test(tool))) return undefined;
  const hint = KNOWN_TOOLS.find((known) => known.toLowerCase() === tool.toLowerCase());
  if (hint !== undefined)
    return `unknown tool "${tool}" (tool names are case-sensitive: did you mean ${hint}?)`;
  if (isMcpTool(tool))
    return `malformed MCP tool name "${tool}" (expected ${mcpName("server")} or ${mcpName("server", "tool")})`;
  return `unknown tool "${tool}"; known tools: ${KNOWN_TOOLS.join(", ")}, or ${mcpName("<server>")}[__<tool>]`;
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
      const rule = domainSpecifier(spec);
      return typeof rule === "string" ? rule : undefined;
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
  const kind: SpecifierKind = toolEntry(tool)?.specifier ?? "none";
  const problem = specifierProblem(kind, tool, specifier);
  if (problem !== undefined) fail(problem);
  return { text: trimmed, tool, specifier: specifier.trim(), behavior, source };
}

const canonicalTool = (tool: string): string => toolEntry(tool)?.aliasOf ?? tool;

/**
 * A `WebFetch(domain:…)` specifier as the domain rule it is (`example.com`, `*.example.com`, no port),
 * matched by the same code as the egress allowlist; a string saying what is wrong otherwise.
 */
export function domainSpecifier(spec: string): DomainRule | string {
  const match = /^domain:(.+)$/.exec(spec.trim());
  if (match === null) return "WebFetch rules take `domain:<host>`, for example WebFetch(domain:example.com)";
  const rule = parseDomainRule(match[1] as string);
  if (typeof rule === "string") return `invalid domain "${match[1]}": ${rule}`;
  if (rule.port !== undefined)
    return `invalid domain "${match[1]}": WebFetch rules name a host, without a port`;
  return rule;
}

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
  if (ruleTool === "Read") return toolCategory(callTool) === "read";
  return false;
}

/**
 * Does this rule speak about a whole MCP server (`mcp__srv`, `mcp__srv__*`)? Such a rule governs the
 * calls that name the server as their subject (ListMcpResourcesTool, ReadMcpResourceTool with `server`).
 */
export function ruleGovernsServer(rule: ParsedRule, server: string): boolean {
  return rule.tool === mcpName(server) || rule.tool === mcpName(server, "*");
}
