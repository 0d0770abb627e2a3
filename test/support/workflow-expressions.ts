// GitHub's expression language (`${{ }}`), through its own implementation (@actions/expressions), as the runner
// evaluates a workflow's `if:`, `with:` and `env:` and an action's input defaults: contexts by name (github,
// secrets, inputs, matrix, steps, runner, env, vars, needs), and the job status functions.
import { data, Evaluator, Lexer, Parser } from "@actions/expressions";
import type { FunctionDefinition } from "@actions/expressions/funcs/info";
import { truthy } from "@actions/expressions/result";

const CONTEXTS = ["github", "secrets", "inputs", "matrix", "steps", "runner", "env", "vars", "needs"];

/** The job status functions, as a runner answers them for a job whose `needs` ended as recorded (none cancelled). */
function statusFunctions(context: Record<string, unknown>): FunctionDefinition[] {
  const results = Object.values((context.needs ?? {}) as Record<string, { result: string }>).map(
    (n) => n.result,
  );
  const status = (name: string, value: boolean): FunctionDefinition => ({
    name,
    minArgs: 0,
    maxArgs: 0,
    call: () => new data.BooleanData(value),
  });
  return [
    status("always", true),
    status("cancelled", false),
    status(
      "success",
      results.every((r) => r === "success"),
    ),
    status(
      "failure",
      results.some((r) => r === "failure"),
    ),
  ];
}

export function evaluate(expression: string, context: Record<string, unknown>): data.ExpressionData {
  const { tokens } = new Lexer(expression).lex();
  const functions = statusFunctions(context);
  const expr = new Parser(tokens, CONTEXTS, functions).parse();
  const values = JSON.parse(JSON.stringify(context), data.reviver) as data.Dictionary;
  return new Evaluator(expr, values, new Map(functions.map((f) => [f.name, f]))).evaluate();
}

/** A `with:`/`env:` value or an input's default: text with `${{ }}` expressions in it. */
export function template(value: unknown, context: Record<string, unknown>): string {
  return String(value).replace(/\$\{\{([\s\S]*?)\}\}/g, (_, e: string) =>
    evaluate(e.trim(), context).coerceString(),
  );
}

/** An `if:`, with or without `${{ }}` around it; none means true. */
export function condition(text: string | undefined, context: Record<string, unknown>): boolean {
  if (text === undefined) return true;
  const bare = /^\s*\$\{\{([\s\S]*)\}\}\s*$/.exec(text)?.[1] ?? text;
  return truthy(evaluate(bare.trim(), context));
}
