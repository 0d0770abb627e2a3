/**
 * Arithmetic in the Bash walker (bash-analyze.ts): `(( ))`, `$(( ))` and C-style `for`. Only number
 * literals pass; the substitutions inside are still walked as statements.
 */
import type { Node as SyntaxNode } from "web-tree-sitter";
import { MAX_COMMAND_CHARS } from "./bash-script.js";
import { isRepeated, namedChildrenOf, problem, push, type Walker } from "./bash-walker.js";

const ARITHMETIC_SAFE_NODES: ReadonlySet<string> = new Set([
  "number",
  "binary_expression",
  "unary_expression",
  "parenthesized_expression",
  "ternary_expression",
]);

/**
 * `(( ))`, `$(( ))` and C-style `for`: only number literals pass. Bash evaluates a variable's value
 * as arithmetic again, so `x='a[$(rm -rf .)]'; echo $((x))` runs rm.
 */
export function arithmetic(w: Walker, node: SyntaxNode, skipFields: readonly string[] = []): void {
  let flagged = false;
  const pending: SyntaxNode[] = [];
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    const field = node.fieldNameForChild(i);
    if (child !== null && child.isNamed && (field === null || !skipFields.includes(field)))
      pending.push(child);
  }
  let visited = 0;
  while (pending.length > 0 && visited++ < MAX_COMMAND_CHARS) {
    const current = pending.pop() as SyntaxNode;
    if (current.type === "command_substitution" || current.type === "process_substitution") {
      push(w, namedChildrenOf(current), isRepeated(w));
    }
    if (!ARITHMETIC_SAFE_NODES.has(current.type) && !flagged) {
      flagged = true;
      problem(
        w,
        "arithmetic over variables or command output can run commands (bash evaluates array subscripts in it)",
        node,
      );
    }
    if (current.type !== "command_substitution" && current.type !== "process_substitution") {
      pending.push(...namedChildrenOf(current));
    }
  }
}
