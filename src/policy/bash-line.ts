/**
 * One Bash tool call's command line, fully analysed: line-level caps, then every script it runs
 * (the line itself, and the strings of `sh -c`, `eval`, `trap` and heredocs fed to a shell, parsed
 * again up to MAX_SCRIPT_DEPTH), each simple command interpreted, and the directories relative paths
 * may resolve against once `cd` is taken into account.
 */
import type { Parser } from "web-tree-sitter";
import { parseScript } from "./bash-analyze.js";
import { lineRejection, type ScriptProblem } from "./bash-script.js";
import { interpretCommand, type CommandFacts } from "./bash-commands.js";
import { resolveContainerPath } from "./rule-paths.js";

export const MAX_SIMPLE_COMMANDS = 500;
export const MAX_SCRIPT_DEPTH = 8;

/** Where relative paths in the line resolve: every directory a `cd` in it may lead to. */
export type WorkingDirectories =
  | { readonly known: true; readonly candidates: readonly string[] }
  | { readonly known: false; readonly reason: string };

/** A problem of the line; one an allow rule may settle names the command whose assignment it is. */
export interface LineProblem extends ScriptProblem {
  readonly assignmentOf?: CommandFacts;
}

export interface LineAnalysis {
  readonly command: string;
  /** Set when the line is refused before or during parsing, in every mode. */
  readonly rejection: string | undefined;
  readonly facts: readonly CommandFacts[];
  readonly problems: readonly LineProblem[];
  readonly cwd: WorkingDirectories;
}

export interface AnalyzeLineOptions {
  readonly cwd: string;
  readonly homeDir: string;
}

interface PendingScript {
  readonly source: string;
  readonly depth: number;
  readonly repeated: boolean;
}

const snippet = (text: string): string => (text.length > 80 ? `${text.slice(0, 77)}...` : text);

export function analyzeCommandLine(
  parser: Parser,
  command: string,
  options: AnalyzeLineOptions,
): LineAnalysis {
  const rejected = (rejection: string): LineAnalysis => ({
    command,
    rejection,
    facts: [],
    problems: [],
    cwd: { known: false, reason: rejection },
  });
  const lineProblem = lineRejection(command);
  if (lineProblem !== undefined) return rejected(lineProblem);

  const facts: CommandFacts[] = [];
  const problems: LineProblem[] = [];
  const queue: PendingScript[] = [{ source: command, depth: 0, repeated: false }];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (next.depth > MAX_SCRIPT_DEPTH) {
      problems.push({
        reason: `shell code nested more than ${MAX_SCRIPT_DEPTH} levels deep (sh -c inside sh -c …)`,
        text: snippet(next.source),
      });
      continue;
    }
    const innerProblem = next.depth > 0 ? lineRejection(next.source) : undefined;
    if (innerProblem !== undefined) {
      problems.push({ reason: innerProblem, text: snippet(next.source) });
      continue;
    }
    const parsed = parseScript(parser, next.source, {
      homeDir: options.homeDir,
      maxCommands: MAX_SIMPLE_COMMANDS - facts.length,
    });
    if (parsed.truncated) {
      return rejected(
        `the command runs more than ${MAX_SIMPLE_COMMANDS} simple commands; agent-ci checks up to ${MAX_SIMPLE_COMMANDS}`,
      );
    }
    problems.push(...parsed.problems);
    for (const raw of parsed.commands) {
      const interpreted = interpretCommand(raw);
      const fact = next.repeated && !interpreted.repeated ? { ...interpreted, repeated: true } : interpreted;
      facts.push(fact);
      problems.push(...fact.problems.map((reason) => ({ reason, text: snippet(fact.text) })));
      problems.push(
        ...fact.assignmentProblems.map((reason) => ({
          reason,
          text: snippet(fact.text),
          assignmentOf: fact,
        })),
      );
      for (const script of fact.scripts)
        queue.push({ source: script, depth: next.depth + 1, repeated: fact.repeated });
    }
  }
  return { command, rejection: undefined, facts, problems, cwd: workingDirectories(facts, options) };
}

/**
 * Paths are checked after the whole line is read, against every directory a `cd` could have led to:
 * a function body or loop runs after commands written later, so source order is not run order. A
 * relative `cd` inside a loop or function could repeat any number of times, so then the directory is
 * unknown and relative paths cannot be proven safe.
 */
function workingDirectories(facts: readonly CommandFacts[], options: AnalyzeLineOptions): WorkingDirectories {
  const candidates = new Set<string>([options.cwd]);
  for (const fact of facts) {
    if (fact.cd === undefined) continue;
    const target = fact.cd.target;
    if (target === undefined) return { known: false, reason: "a cd to a directory only known at run time" };
    const absolute = target.startsWith("/") || target === "~" || target.startsWith("~/");
    if (fact.repeated && !absolute)
      return { known: false, reason: "a relative cd inside a loop or function" };
    for (const base of [...candidates]) {
      const resolved = resolveContainerPath(target, base, options.homeDir);
      if (resolved !== undefined) candidates.add(resolved);
    }
  }
  return { known: true, candidates: [...candidates] };
}
