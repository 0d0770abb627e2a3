// Size limits on src/: no function over 100 lines (a factory counts with its closures: its span includes
// them) and no file over 800 lines, except what the allowlist names. The allowlist is exact: an entry that
// no longer goes over fails too, so the list only shrinks. Measured with the TypeScript compiler's parser,
// and the checker is shown to fail on planted examples at the end.
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const MAX_FUNCTION_LINES = 100;
const MAX_FILE_LINES = 800;
/** A run's stages, and the record's assembly, are each short enough to read at once. */
const MAX_STAGE_LINES = 60;
/** The run's stage functions: `file` for every top-level function of the file, `file name` for one. */
const STAGES = [
  "src/runner/run.ts runAgent",
  "src/runner/run/run-stages.ts",
  "src/runner/record/index.ts buildReport",
];

/**
 * What may stay over the limits, with why: `file` for a file, `file name` for a function (named as
 * `measure` names it). "split pending" entries are to be split and removed from here.
 */
const ALLOWED = new Map<string, string>([]);

/** Lines as an editor counts them: a final newline ends the last line rather than starting one. */
function lineCount(text: string): number {
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.AccessorDeclaration
  | ts.ArrowFunction
  | ts.FunctionExpression;

function isFunction(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isAccessor(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node)
  );
}

/** A function's name: its own, else the variable or property it is assigned to, else `(anonymous)`. */
function nameOf(node: FunctionNode): string {
  if (ts.isConstructorDeclaration(node)) return "constructor";
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name)
    return parent.name.getText();
  return "(anonymous)";
}

/**
 * Every file over the file limit, and every function (nested ones too) over the function limit, keyed
 * `file` or `file name`, with its line count.
 */
function measure(file: string, text: string): Map<string, number> {
  const over = new Map<string, number>();
  const lines = lineCount(text);
  if (lines > MAX_FILE_LINES) over.set(file, lines);
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if (isFunction(node)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      const length = last - first + 1;
      if (length > MAX_FUNCTION_LINES) {
        const key = `${file} ${nameOf(node)}`;
        over.set(key, Math.max(length, over.get(key) ?? 0));
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return over;
}

/** What is over without leave, and what has leave but is no longer over. */
function check(files: Map<string, string>, allowed: ReadonlyMap<string, string>): string[] {
  const over = new Map<string, number>();
  for (const [file, text] of files) for (const [key, lines] of measure(file, text)) over.set(key, lines);
  const problems: string[] = [];
  for (const [key, lines] of over)
    if (!allowed.has(key))
      problems.push(
        `${key}: ${lines} lines (limit ${key.includes(" ") ? MAX_FUNCTION_LINES : MAX_FILE_LINES})`,
      );
  for (const key of allowed.keys())
    if (!over.has(key)) problems.push(`${key}: within the limit now; remove it from the allowlist`);
  return problems.sort();
}

/** Every stage function (STAGES) of `files` longer than MAX_STAGE_LINES, and every entry that names nothing. */
function checkStages(files: Map<string, string>, stages: readonly string[]): string[] {
  const problems: string[] = [];
  for (const stage of stages) {
    const [file, name] = stage.split(" ") as [string, string?];
    const text = files.get(file);
    const found =
      text === undefined ? [] : topLevelFunctions(file, text).filter((f) => !name || f.name === name);
    if (!found.length) problems.push(`${stage}: not found`);
    for (const f of found)
      if (f.lines > MAX_STAGE_LINES)
        problems.push(`${file} ${f.name}: ${f.lines} lines (stage limit ${MAX_STAGE_LINES})`);
  }
  return problems.sort();
}

/** A file's top-level function declarations with their line counts. */
function topLevelFunctions(file: string, text: string): Array<{ name: string; lines: number }> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  return source.statements.filter(ts.isFunctionDeclaration).map((node) => ({
    name: nameOf(node),
    lines:
      source.getLineAndCharacterOfPosition(node.end).line -
      source.getLineAndCharacterOfPosition(node.getStart()).line +
      1,
  }));
}

function sourceFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of fs.readdirSync(path.join(root, "src"), { recursive: true, encoding: "utf8" })) {
    if (!entry.endsWith(".ts")) continue;
    const file = path.posix.join("src", entry.split(path.sep).join("/"));
    files.set(file, fs.readFileSync(path.join(root, file), "utf8"));
  }
  return files;
}

describe("function and file size in src/", () => {
  it(`has no function over ${MAX_FUNCTION_LINES} lines and no file over ${MAX_FILE_LINES}, beyond the allowlist`, () => {
    expect(check(sourceFiles(), ALLOWED)).toEqual([]);
  });

  it(`has the run's stages and the record's assembly each within ${MAX_STAGE_LINES} lines`, () => {
    expect(checkStages(sourceFiles(), STAGES)).toEqual([]);
  });

  it("fails on a long stage, in a named function or any of a file's, and on a stage that names nothing", () => {
    const fn = (name: string, n: number) =>
      `export function ${name}(): void {\n${Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join("\n")}\n}\n`;
    const planted = new Map([
      ["src/run.ts", `${fn("runAgent", 59)}${fn("other", 80)}`],
      ["src/stages.ts", `${fn("prepare", 58)}${fn("converse", 59)}`],
    ]);
    expect(checkStages(planted, ["src/run.ts runAgent", "src/stages.ts", "src/gone.ts f"])).toEqual([
      "src/gone.ts f: not found",
      "src/run.ts runAgent: 61 lines (stage limit 60)",
      "src/stages.ts converse: 61 lines (stage limit 60)",
    ]);
  });

  it("fails on a long function, a factory long with its closures, a long file, and a stale allowlist entry", () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join("\n");
    const closure = (name: string, n: number) => `  const ${name} = () => {\n${body(n)}\n  };`;
    const planted = new Map([
      // 1 + 100 + 1 lines: over.
      ["src/long.ts", `export function long(): void {\n${body(100)}\n}\n`],
      // 1 + 98 + 1 lines: within.
      ["src/short.ts", `export function short(): void {\n${body(98)}\n}\n`],
      // Two closures of 52 lines each inside one factory: each is short, the factory is not.
      ["src/factory.ts", `export function factory(): void {\n${closure("a", 50)}\n${closure("b", 50)}\n}\n`],
      ["src/big.ts", `${body(801)}\n`],
    ]);
    expect(check(planted, new Map([["src/gone.ts f", "split pending"]]))).toEqual([
      "src/big.ts: 801 lines (limit 800)",
      "src/factory.ts factory: 106 lines (limit 100)",
      "src/gone.ts f: within the limit now; remove it from the allowlist",
      "src/long.ts long: 102 lines (limit 100)",
    ]);
  });
});
