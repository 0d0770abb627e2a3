/**
 * Loads web-tree-sitter with the tree-sitter-bash grammar once per process (~30-70 ms) and hands out
 * the parser synchronously afterwards, so `engine.decide()` stays synchronous.
 *
 * The two .wasm files are found through Node's resolver next to this module. A bundled build (the
 * Action's dist/) can ship them elsewhere and point at them with `BashParserOptions` or the
 * AGENT_CI_TREE_SITTER_WASM / AGENT_CI_BASH_WASM environment variables.
 *
 * web-tree-sitter itself is imported by the first load, not with this module: a command that decides no
 * Bash call (`--help`, a config error) does not load it.
 */
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import type { Parser } from "web-tree-sitter";
import { PolicyNotReadyError } from "./errors.js";

export interface BashParserOptions {
  /** Path of web-tree-sitter.wasm. */
  readonly treeSitterWasm?: string | undefined;
  /** Path of tree-sitter-bash.wasm. */
  readonly bashWasm?: string | undefined;
}

let loading: Promise<Parser> | undefined;
let loaded: Parser | undefined;

function resolvePackageFile(specifier: string): string | undefined {
  try {
    return createRequire(import.meta.url).resolve(specifier);
  } catch {
    return undefined;
  }
}

async function load(options: BashParserOptions): Promise<Parser> {
  const treeSitterWasm =
    options.treeSitterWasm ??
    process.env.AGENT_CI_TREE_SITTER_WASM ??
    resolvePackageFile("web-tree-sitter/web-tree-sitter.wasm");
  const bashWasm =
    options.bashWasm ??
    process.env.AGENT_CI_BASH_WASM ??
    resolvePackageFile("tree-sitter-bash/tree-sitter-bash.wasm");
  if (bashWasm === undefined) throw new Error("cannot find tree-sitter-bash.wasm (set AGENT_CI_BASH_WASM)");
  // The grammar is compiled by V8's baseline compiler (Liftoff) alone. Left to tier up, V8 recompiles the
  // grammar's hot functions with TurboFan on a background thread: tree-sitter's lexer is one function of
  // thousands of branches, whose optimised compile took a core for 150-500 ms while the run started, held
  // the process's exit until it was done and, on Node.js 24, about 500 MiB of memory; the decisions it would
  // speed up take 0.2-0.4 ms either way. Node.js 20's V8 honours `--liftoff-only` set at run time; Node.js
  // 24's does not, and never tiers up a function whose tiering budget is never spent. The flags are read
  // when a module is compiled, so they are set before the first one.
  setFlagsFromString("--liftoff-only --wasm-tiering-budget=2147483647");
  const { Language, Parser } = await import("web-tree-sitter");
  await Parser.init(treeSitterWasm === undefined ? undefined : { locateFile: () => treeSitterWasm });
  const language = await Language.load(bashWasm);
  const parser = new Parser();
  parser.setLanguage(language);
  loaded = parser;
  return parser;
}

/** Loads the parser once; later calls return the same promise. A failed load can be retried. */
export function loadBashParser(options: BashParserOptions = {}): Promise<Parser> {
  if (loading === undefined) {
    loading = load(options).catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
  }
  return loading;
}

/** The loaded parser; throws PolicyNotReadyError before `loadBashParser()` has resolved. */
export function loadedBashParser(): Parser {
  if (loaded === undefined) throw new PolicyNotReadyError();
  return loaded;
}
