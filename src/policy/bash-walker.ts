/**
 * The state of one walk over a tree-sitter-bash syntax tree (bash-analyze.ts owns the walk and its
 * contract): the explicit stack of statements still to visit, the simple commands found and the
 * problems met. The walker's parts — words (bash-expansions.ts), redirects (bash-redirects.ts),
 * arithmetic (bash-arithmetic.ts), `[[ ]]` (bash-conditional.ts) and the checks where tree-sitter and
 * bash read a line differently (bash-coverage.ts) — are functions that take this state.
 */
import type { Node as SyntaxNode } from "web-tree-sitter";
import { MAX_NESTING, type ParseScriptOptions, type RawCommand, type ScriptProblem } from "./bash-script.js";

export interface WalkItem {
  readonly node: SyntaxNode;
  readonly repeated: boolean;
  readonly depth: number;
}

export interface Walker {
  readonly source: string;
  readonly options: ParseScriptOptions;
  readonly commands: RawCommand[];
  readonly problems: ScriptProblem[];
  truncated: boolean;
  /** Statements still to visit: pushed, never recursed into, so a hostile line cannot deepen the JS stack. */
  readonly stack: WalkItem[];
  /** The statement being visited. */
  current: WalkItem | undefined;
}

export function newWalker(source: string, options: ParseScriptOptions): Walker {
  return { source, options, commands: [], problems: [], truncated: false, stack: [], current: undefined };
}

export const snippet = (text: string): string => (text.length > 80 ? `${text.slice(0, 77)}...` : text);

export function namedChildrenOf(node: SyntaxNode): SyntaxNode[] {
  const children: SyntaxNode[] = [];
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child !== null && child.isNamed) children.push(child);
  }
  return children;
}

export function problem(w: Walker, reason: string, node: SyntaxNode): void {
  w.problems.push({ reason, text: snippet(node.text) });
}

/**
 * Schedules statements. `nest` is false for siblings in a list or pipeline (`a && b && …` is a
 * deep left-leaning tree, not nesting the reader would cap).
 */
export function push(w: Walker, nodes: readonly SyntaxNode[], repeated: boolean, nest = true): void {
  const depth = (w.current?.depth ?? 0) + (nest ? 1 : 0);
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i] as SyntaxNode;
    if (depth > MAX_NESTING) {
      problem(w, `the command nests more than ${MAX_NESTING} levels deep`, node);
      return;
    }
    w.stack.push({ node, repeated, depth });
  }
}

/** Whether the statement being visited may run more than once (a loop or function body). */
export function isRepeated(w: Walker): boolean {
  return w.current?.repeated ?? false;
}

export function record(w: Walker, command: Omit<RawCommand, "repeated">): void {
  w.commands.push({ ...command, repeated: isRepeated(w) });
}
