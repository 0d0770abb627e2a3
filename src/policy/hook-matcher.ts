// Which tools a PreToolUse / PostToolUse hook is for: Claude Code's matcher syntax. Pure; the hooks
// themselves run in the sandbox (src/runner/hooks/hooks.ts, src/sandbox/container/hook-host.ts).
import type { PolicyHook } from "./schema.js";

/**
 * Claude Code matchers: empty or `*` matches every tool, `Bash|Edit` lists names, anything else is a
 * regular expression over the whole tool name. Throws on an invalid expression (a config error).
 */
export function compileHookMatcher(matcher: string | undefined): (toolName: string) => boolean {
  if (matcher === undefined || matcher === "" || matcher === "*") return () => true;
  if (/^[A-Za-z0-9_|]+$/.test(matcher)) {
    const names = new Set(matcher.split("|"));
    return (toolName) => names.has(toolName);
  }
  const expression = new RegExp(`^(?:${matcher})$`);
  return (toolName) => expression.test(toolName);
}

/** A hook whose matcher does not compile matches nothing (loadPolicy has refused it already). */
export function hookMatches(hook: PolicyHook, toolName: string): boolean {
  try {
    return compileHookMatcher(hook.matcher)(toolName);
  } catch {
    return false;
  }
}
