/**
 * `[[ … ]]` in the Bash walker (bash-analyze.ts): the substitutions and expansions inside are walked,
 * and the tests bash evaluates as arithmetic (`-eq` and the other comparisons, `-v name[…]`) take
 * number literals only.
 */
import type { Node as SyntaxNode } from "web-tree-sitter";
import { arithmetic } from "./bash-arithmetic.js";
import { expansion, substitution } from "./bash-expansions.js";
import { MAX_COMMAND_CHARS } from "./bash-script.js";
import { isRepeated, namedChildrenOf, problem, push, type Walker } from "./bash-walker.js";

const ARITHMETIC_TEST_OPERATORS: ReadonlySet<string> = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);

/** `[[ … ]]`: walk substitutions; arithmetic comparisons and `-v` take literals only. */
export function scanExpression(w: Walker, root: SyntaxNode): void {
  const pending: SyntaxNode[] = [...namedChildrenOf(root)];
  let visited = 0;
  while (pending.length > 0 && visited++ < MAX_COMMAND_CHARS) {
    const node = pending.pop() as SyntaxNode;
    switch (node.type) {
      case "command_substitution":
        substitution(w, node);
        continue;
      case "process_substitution":
        push(w, namedChildrenOf(node), isRepeated(w));
        continue;
      case "arithmetic_expansion":
        arithmetic(w, node);
        continue;
      case "expansion":
      case "simple_expansion":
        expansion(w, node);
        continue;
      case "binary_expression": {
        const operator = node.childForFieldName("operator")?.text ?? "";
        if (ARITHMETIC_TEST_OPERATORS.has(operator)) arithmeticOperands(w, node);
        break;
      }
      case "unary_expression": {
        const operator = node.childForFieldName("operator")?.text ?? "";
        if (operator === "-v" && node.text.includes("[")) {
          problem(
            w,
            "`[[ -v name[...] ]]` evaluates the subscript as arithmetic, which can run commands",
            node,
          );
        }
        break;
      }
      default:
        break;
    }
    pending.push(...namedChildrenOf(node));
  }
}

function arithmeticOperands(w: Walker, node: SyntaxNode): void {
  for (const field of ["left", "right"]) {
    const operand = node.childForFieldName(field);
    if (operand === null || /^-?\d+$/.test(operand.text)) continue;
    problem(
      w,
      "`[[ a -eq b ]]` evaluates its operands as arithmetic; only number literals are accepted",
      node,
    );
    return;
  }
}
