/**
 * Explaining decisions to people: a one-line description for logs and the report, the narrowest
 * allow rule that would admit a denied call (the report lists it next to each denial), and the
 * simple commands of a Bash line as the engine sees them.
 */
import type { BashWord } from "./bash-script.js";
import type { CommandView } from "./bash-commands.js";
import { analyzeCommandLine } from "./bash-line.js";
import { loadBashParser, loadedBashParser } from "./bash-parser.js";
import {
  DEFAULT_HOME_DIR,
  normalizeAbsolute,
  relativeToRoot,
  resolveContainerPath,
  WORKSPACE_ROOT,
} from "./rule-paths.js";
import { isReadOnlyMode } from "./modes.js";
import { normalizeHost } from "./network.js";
import type { Decision, PolicyCall } from "./schema.js";
import { PATH_INPUT_KEYS, toolCategory, toolEntry } from "./tool-catalog.js";

export interface ExplainOptions {
  readonly workspaceRoot?: string | undefined;
  readonly homeDir?: string | undefined;
}

/** One line: `DENY Bash [rule Bash(rm:*) from cli] (default mode) rm -rf . — Permission denied …`. */
export function describeDecision(decision: Decision): string {
  const verdict = decision.behavior === "allow" ? "ALLOW" : "DENY";
  const by =
    decision.rule === undefined
      ? decision.decidedBy
      : `${decision.decidedBy} ${decision.rule.text} from ${decision.rule.source}`;
  const subcommand = decision.subcommand === undefined ? "" : ` "${decision.subcommand}"`;
  const reason = decision.reason.replace(/\s+/g, " ").trim();
  return `${verdict} [${by}] (${decision.mode} mode)${subcommand}: ${reason}`;
}

export interface BashSubcommand {
  /** The argv of the command that actually runs (wrappers such as `timeout 5` removed). */
  readonly argv: readonly string[];
  /** Its source text. */
  readonly text: string;
}

const wordText = (word: BashWord): string => word.value ?? word.text;

function innermostView(views: readonly CommandView[]): CommandView | undefined {
  const checks = views.filter((view) => view.role === "check");
  return checks[checks.length - 1] ?? views[views.length - 1];
}

/** The simple commands of a Bash line, including those inside `$( )`, `sh -c` strings and the like. */
export async function bashSubcommands(
  command: string,
  options: ExplainOptions = {},
): Promise<BashSubcommand[]> {
  const parser = await loadBashParser();
  const line = analyzeCommandLine(parser, command, {
    cwd: normalizeAbsolute(options.workspaceRoot ?? WORKSPACE_ROOT),
    homeDir: options.homeDir ?? DEFAULT_HOME_DIR,
  });
  return line.facts.map((fact) => ({
    argv: innermostView(fact.views)?.argv.map(wordText) ?? [],
    text: fact.text,
  }));
}

const SAFE_TOKEN = /^[A-Za-z0-9_@%+=:,./-]+$/;
const quoteToken = (token: string): string =>
  SAFE_TOKEN.test(token) ? token : `"${token.replace(/["\\$`]/g, "\\$&")}"`;
/** Package runners whose second word picks a script: `npm run test:unit` is one command name. */
const SCRIPT_RUNNERS: ReadonlySet<string> = new Set(["run", "run-script", "exec", "x", "dlx"]);

/** `npm test -- --watch` → `Bash(npm test:*)`; `rm -rf x` → `Bash(rm -rf x)`; `ls` → `Bash(ls)`. */
function bashRuleFor(view: CommandView): string | undefined {
  const known: string[] = [];
  for (const word of view.argv) {
    if (word.value === undefined) break;
    known.push(word.value);
  }
  const complete = known.length === view.argv.length && !view.openArgs;
  const [name, sub] = known;
  if (name === undefined) return undefined;
  if (sub === undefined || sub.startsWith("-")) {
    if (complete) return `Bash(${known.map(quoteToken).join(" ")})`;
    return `Bash(${quoteToken(name)}:*)`;
  }
  const third = known[2];
  const head = SCRIPT_RUNNERS.has(sub) && third !== undefined ? [name, sub, third] : [name, sub];
  if (complete && known.length === head.length) return `Bash(${head.map(quoteToken).join(" ")})`;
  return `Bash(${head.map(quoteToken).join(" ")}:*)`;
}

function pathSpecifier(path: string, workspaceRoot: string): string {
  const relative = relativeToRoot(path, workspaceRoot);
  if (relative === undefined) return `/${path}`;
  return relative.includes("/") ? relative : `/${relative}`;
}

/**
 * Allow rules that would admit the call, narrowest first; empty when none can (a deny or ask rule
 * decided, the path is outside the workspace, plan mode, or a Bash line that cannot be checked).
 * Bash needs the parser loaded (any `createPolicyEngine` or `loadBashParser` call does it).
 */
export function narrowestAllowRules(
  call: PolicyCall,
  decision?: Decision,
  options: ExplainOptions = {},
): string[] {
  const workspaceRoot = normalizeAbsolute(options.workspaceRoot ?? WORKSPACE_ROOT);
  const homeDir = options.homeDir ?? DEFAULT_HOME_DIR;
  if (decision !== undefined) {
    if (decision.behavior === "allow") return [];
    if (decision.decidedBy === "rule" || decision.decidedBy === "parse-failure") return [];
    if (isReadOnlyMode(decision.mode)) return [];
  }
  if (call.tool === "Bash") return bashRules(call, decision, workspaceRoot, homeDir);
  const cwd = call.cwd ?? workspaceRoot;
  const paths = [...(call.paths ?? [])];
  for (const key of PATH_INPUT_KEYS) {
    const value = call.input[key];
    if (typeof value === "string") paths.push(value);
  }
  const resolved = [...new Set(paths.flatMap((path) => resolveContainerPath(path, cwd, homeDir) ?? []))];
  if (resolved.some((path) => relativeToRoot(path, workspaceRoot) === undefined)) return [];
  const category = toolCategory(call.tool);
  if (category === "edit" || category === "read") {
    const tool = category === "edit" ? "Edit" : call.tool;
    if (resolved.length === 0) return [tool];
    return resolved.map((path) => `${tool}(${pathSpecifier(path, workspaceRoot)})`);
  }
  if (toolEntry(call.tool)?.specifier === "domain" && typeof call.input.url === "string") {
    const host = URL.canParse(call.input.url) ? normalizeHost(new URL(call.input.url).hostname) : undefined;
    return [host === undefined ? call.tool : `${call.tool}(domain:${host})`];
  }
  return [call.tool];
}

function bashRules(
  call: PolicyCall,
  decision: Decision | undefined,
  workspaceRoot: string,
  homeDir: string,
): string[] {
  const command = call.input.command;
  if (typeof command !== "string") return [];
  const cwd = call.cwd ?? workspaceRoot;
  const line = analyzeCommandLine(loadedBashParser(), command, { cwd, homeDir });
  if (line.rejection !== undefined || line.problems.length > 0) return [];
  const rules = new Set<string>();
  for (const fact of line.facts) {
    // A read-only command only needs a rule when it may read outside the workspace.
    const mayLeave =
      fact.readOnly.proven &&
      fact.readOnly.paths.some(
        (use) => (use.word.value ?? "").startsWith("/") || (use.word.value ?? "").includes(".."),
      );
    if (!fact.readOnly.proven || mayLeave) {
      for (const view of fact.views.filter((candidate) => candidate.role === "check")) {
        const rule = bashRuleFor(view);
        if (rule !== undefined) rules.add(rule);
      }
    }
    if (decision !== undefined && decision.mode !== "default") continue;
    for (const use of fact.writes) {
      if (use.via !== "redirect" || use.word.value === undefined || !line.cwd.known) continue;
      for (const base of line.cwd.candidates) {
        const path = resolveContainerPath(use.word.value, base, homeDir);
        if (path !== undefined && relativeToRoot(path, workspaceRoot) !== undefined) {
          rules.add(`Edit(${pathSpecifier(path, workspaceRoot)})`);
        }
      }
    }
  }
  return [...rules];
}

/** The rules of `narrowestAllowRules` joined, or undefined when no allow rule can admit the call. */
export function narrowestAllowRule(
  call: PolicyCall,
  decision?: Decision,
  options: ExplainOptions = {},
): string | undefined {
  const rules = narrowestAllowRules(call, decision, options);
  return rules.length === 0 ? undefined : rules.join(", ");
}
