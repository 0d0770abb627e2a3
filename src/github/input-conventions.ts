// Conventions of GitHub Actions inputs that both Actions (agent-ci and agent-ci/publish) read the same way:
// list inputs, and defaults the runner did not expand.

/**
 * Splits a list input on newlines, and on commas outside parentheses (so `Bash(git diff a,b)` stays one
 * rule). Blank entries and `#` comment lines are dropped.
 */
export function splitList(value: string): string[] {
  const items: string[] = [];
  for (const line of value.split(/\r?\n/)) {
    if (line.trim().startsWith("#")) continue;
    let depth = 0;
    let current = "";
    for (const char of line) {
      if (char === "(") depth += 1;
      if (char === ")") depth = Math.max(0, depth - 1);
      if (char === "," && depth === 0) {
        items.push(current);
        current = "";
        continue;
      }
      current += char;
    }
    items.push(current);
  }
  return items.map((item) => item.trim()).filter(Boolean);
}

/** An input left as an unexpanded expression (`${{ github.token }}` outside a runner) counts as empty. */
export function unexpanded(value: string): boolean {
  return /^\$\{\{.*\}\}$/s.test(value.trim());
}

/** A true/false input as both Actions read it: `true` or `false` in any case, empty as false; else undefined. */
export function booleanInput(value: string): boolean | undefined {
  const lower = value.trim().toLowerCase();
  if (lower === "true") return true;
  if (lower === "false" || lower === "") return false;
  return undefined;
}
