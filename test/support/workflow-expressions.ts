// GitHub's expression language (`${{ }}`), through its own implementation (@actions/expressions), as the runner
// evaluates a workflow's `if:`, `with:` and `env:` and an action's input defaults: contexts by name (github,
// secrets, inputs, matrix, steps, runner, env, vars, needs, job), and the job status functions.
import { data, Evaluator, Lexer, Parser } from "@actions/expressions";
import type { FunctionDefinition } from "@actions/expressions/funcs/info";
import { truthy } from "@actions/expressions/result";

const CONTEXTS = ["github", "secrets", "inputs", "matrix", "steps", "runner", "env", "vars", "needs", "job"];

/**
 * The status functions, as a runner answers them: in a step (the context has `job.status`), by the job's status
 * so far; in a job's `if:`, by how its `needs` ended as recorded (none cancelled).
 */
function statusFunctions(context: Record<string, unknown>): FunctionDefinition[] {
  const results = Object.values((context.needs ?? {}) as Record<string, { result: string }>).map(
    (n) => n.result,
  );
  const job = (context.job as { status?: string } | undefined)?.status;
  const status = (name: string, value: boolean): FunctionDefinition => ({
    name,
    minArgs: 0,
    maxArgs: 0,
    call: () => new data.BooleanData(value),
  });
  return [
    status("always", true),
    status("cancelled", job === "cancelled"),
    status("success", job === undefined ? results.every((r) => r === "success") : job === "success"),
    status("failure", job === undefined ? results.some((r) => r === "failure") : job === "failure"),
  ];
}

/** Whether an `if:` names a status function: one that does not is `success() && (…)`, as the runner reads it. */
export function namesStatus(text: string | undefined): boolean {
  return /\b(?:always|success|failure|cancelled)\s*\(/.test(text ?? "");
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
