/**
 * The permission engine: one synchronous `decide(call)` per tool call, pure over the loaded policy.
 *
 * Precedence is Claude Code's — deny rules, then ask rules (non-interactive, so ask denies: Claude
 * Code's `dontAsk`), then allow rules, then the mode's default — with two checks that no mode or rule
 * lifts: paths outside the workspace, and writes to protected paths unless an allow rule names them
 * (rule-paths.ts). bypassPermissions skips only the rule and mode checks (RELIABILITY R17).
 *
 * Bash: a line is allowed only when every simple command in it is (bash-line.ts finds them all).
 * Deny and ask rules are tried against every argv view of every command; a command is admitted by
 * allow rules matching all of its `check` views, or by being proven read-only. A construct the
 * matcher cannot see through denies the line, except in bypassPermissions with no Bash deny or ask
 * rule (nothing could be missed there). Ask rules deny in bypassPermissions too: they are rules.
 *
 * Limits, stated plainly (the container layer, container-rules.ts, is the real fix for files):
 * - R14: Read deny rules are matched against the words a Bash command names (`cat .env`,
 *   `--file=.env`, `HEAD:.env`, `@.env`, `< .env`) and against directories searched recursively by
 *   grep/rg when the rule names a fixed file. Not caught: paths built at run time (`cat $F`), globs
 *   (`cat .en?`), files a program opens by itself (`npm test` reading .env, a script), copies made
 *   by tools not listed. Denied read paths are never copied into the container, so those still
 *   find nothing.
 * - Deny rules see through the wrappers bash-commands.ts knows (timeout, env, xargs, sudo, sh -c,
 *   eval, find -exec, …); another command runner (`parallel rm ::: x`, `make` recipes, git aliases)
 *   needs its own allow rule to run, but a deny rule for the inner command cannot see into it.
 * - Writes named by Bash arguments are checked for the programs in bash-commands.ts (rm, cp, mv,
 *   tee, touch, …) plus every redirect; other writers are stopped by the read-only mounts.
 */
import picomatch from "picomatch";
import type { Parser } from "web-tree-sitter";
import type { BashWord } from "./bash-script.js";
import type { CommandFacts, CommandView, PathUse } from "./bash-commands.js";
import { analyzeCommandLine, type LineAnalysis, type WorkingDirectories } from "./bash-line.js";
import { loadBashParser, loadedBashParser, type BashParserOptions } from "./bash-parser.js";
import {
  ARG_SEPARATOR,
  compileBashPattern,
  matchingString,
  patternMatches,
  patternMayMatch,
  type ArgValue,
  type BashPattern,
} from "./bash-patterns.js";
import {
  compilePathPattern,
  compileProtectedPaths,
  DEFAULT_HOME_DIR,
  HARMLESS_WRITE_TARGETS,
  isInside,
  normalizeAbsolute,
  relativeToRoot,
  resolveContainerPath,
  WORKSPACE_ROOT,
  type CompiledProtectedPath,
  type PathPattern,
} from "./rule-paths.js";
import { MODE_MEANINGS, type ModeMeaning } from "./modes.js";
import { type DomainRule, domainRuleMatches } from "./network.js";
import { domainSpecifier, ruleGovernsServer, ruleGovernsTool } from "./rules.js";
import {
  mcpServerOfCall,
  PATH_INPUT_KEYS,
  toolCategory,
  toolEntry,
  type ToolCategory,
} from "./tool-catalog.js";
import type { Decision, ParsedRule, PermissionMode, Policy, PolicyCall, RuleBehavior } from "./schema.js";

export interface PolicyEngineOptions {
  /** The container workspace; `/workspace` unless a test says otherwise. */
  readonly workspaceRoot?: string | undefined;
  /** The container user's home, for `~/` rules and `cd ~`. */
  readonly homeDir?: string | undefined;
  readonly parser?: BashParserOptions | undefined;
}

export interface PolicyEngine {
  readonly policy: Policy;
  readonly workspaceRoot: string;
  decide(call: PolicyCall): Decision;
  /** The analysed command line, as the engine sees it (used by the report and `policy check`). */
  analyzeBash(command: string, cwd?: string): LineAnalysis;
}

const MAX_LISTED_RULES = 8;

interface CompiledRule {
  readonly rule: ParsedRule;
  readonly bash: BashPattern | undefined;
  readonly path: PathPattern | undefined;
  /** `WebFetch(domain:…)`: the host rule, matched as the egress allowlist is. */
  readonly domain?: DomainRule | undefined;
}

type RuleBuckets = Readonly<Record<"allow" | "deny" | "ask", readonly CompiledRule[]>>;

const ruleRef = (rule: ParsedRule): { text: string; source: string } => ({
  text: rule.text,
  source: rule.source.label,
});

/** The tool whose rules take a command line: the policy proves or refuses each command itself. */
const isBash = (tool: string): boolean => toolEntry(tool)?.specifier === "bash";

function compileRule(rule: ParsedRule, workspaceRoot: string, homeDir: string): CompiledRule {
  const specifier = rule.specifier;
  if (specifier === undefined) return { rule, bash: undefined, path: undefined };
  const kind = toolEntry(rule.tool)?.specifier;
  if (kind === "bash") return { rule, bash: compileBashPattern(specifier), path: undefined };
  if (kind === "path") {
    return { rule, bash: undefined, path: compilePathPattern(specifier, { workspaceRoot, homeDir }) };
  }
  if (kind === "domain") {
    // parseRule validated it: a string here cannot happen, and would match nothing.
    const domain = domainSpecifier(specifier);
    return {
      rule,
      bash: undefined,
      path: undefined,
      domain: typeof domain === "string" ? undefined : domain,
    };
  }
  return { rule, bash: undefined, path: undefined };
}

const viewArgs = (view: CommandView): ArgValue[] => {
  const args: ArgValue[] = view.argv.map((word) => word.value);
  return view.openArgs ? [...args, undefined] : args;
};

/** The view, plus its basename form (`/bin/rm x` → `rm x`) for deny and ask rules. */
function denyForms(view: CommandView): ArgValue[][] {
  const args = viewArgs(view);
  const name = args[0];
  if (name === undefined || !name.includes("/")) return [args];
  return [args, [name.slice(name.lastIndexOf("/") + 1), ...args.slice(1)]];
}

/** Paths an argument may name: itself, `--file=X`, `HEAD:X` (git show), `@X` (curl -d @X). */
function namedPaths(value: string): string[] {
  const found: string[] = [];
  if (!value.startsWith("-")) found.push(value);
  const equals = value.indexOf("=");
  if (equals > 0) found.push(value.slice(equals + 1));
  const colon = value.lastIndexOf(":");
  if (colon >= 0) found.push(value.slice(colon + 1));
  if (value.startsWith("@")) found.push(value.slice(1));
  return found.filter((path) => path !== "");
}

class Evaluator implements PolicyEngine {
  readonly workspaceRoot: string;
  private readonly homeDir: string;
  private readonly mode: PermissionMode;
  /** What the mode lets through (modes.ts). */
  private readonly meaning: ModeMeaning;
  private readonly roots: readonly string[];
  private readonly buckets: RuleBuckets;
  private readonly protectedPaths: readonly CompiledProtectedPath[];

  constructor(
    readonly policy: Policy,
    private readonly parser: () => Parser,
    options: PolicyEngineOptions,
  ) {
    this.workspaceRoot = normalizeAbsolute(options.workspaceRoot ?? WORKSPACE_ROOT);
    this.homeDir = normalizeAbsolute(options.homeDir ?? DEFAULT_HOME_DIR);
    this.mode = policy.mode;
    this.meaning = MODE_MEANINGS[policy.mode];
    const extraRoots = policy.additionalDirectories.flatMap((dir) => {
      const resolved = resolveContainerPath(dir, this.workspaceRoot, this.homeDir);
      return resolved === undefined ? [] : [resolved];
    });
    this.roots = [this.workspaceRoot, ...extraRoots];
    const compiled = policy.rules.map((rule) => compileRule(rule, this.workspaceRoot, this.homeDir));
    this.buckets = {
      allow: compiled.filter((entry) => entry.rule.behavior === "allow"),
      deny: compiled.filter((entry) => entry.rule.behavior === "deny"),
      ask: compiled.filter((entry) => entry.rule.behavior === "ask"),
    };
    this.protectedPaths = compileProtectedPaths({ workspaceRoot: this.workspaceRoot, homeDir: this.homeDir });
  }

  analyzeBash(command: string, cwd?: string): LineAnalysis {
    return analyzeCommandLine(this.parser(), command, { cwd: this.containerCwd(cwd), homeDir: this.homeDir });
  }

  /** Never throws: an unexpected fault in the checker denies the call (fail closed). */
  decide(call: PolicyCall): Decision {
    try {
      return isBash(call.tool) ? this.decideBash(call) : this.decideTool(call);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return this.deny(
        "parse-failure",
        `agent-ci could not check this call (internal error: ${message}), so it is denied. Try a simpler form.`,
      );
    }
  }

  // -------------------------------------------------------------------------------------------
  // Shared helpers

  private containerCwd(cwd: string | undefined): string {
    if (cwd === undefined || cwd === "") return this.workspaceRoot;
    return resolveContainerPath(cwd, this.workspaceRoot, this.homeDir) ?? this.workspaceRoot;
  }

  private display(path: string): string {
    const relative = relativeToRoot(path, this.workspaceRoot);
    if (relative === undefined) return path;
    return relative === "" ? "." : relative;
  }

  private insideRoots(path: string): boolean {
    return this.roots.some((root) => isInside(path, root));
  }

  private deny(decidedBy: Decision["decidedBy"], reason: string, extra: Partial<Decision> = {}): Decision {
    return { behavior: "deny", reason, mode: this.mode, decidedBy, ...extra };
  }

  private allow(decidedBy: Decision["decidedBy"], reason: string, rule?: ParsedRule): Decision {
    return rule === undefined
      ? { behavior: "allow", reason, mode: this.mode, decidedBy }
      : { behavior: "allow", reason, mode: this.mode, decidedBy, rule: ruleRef(rule) };
  }

  private protectedEntry(path: string): CompiledProtectedPath | undefined {
    return this.protectedPaths.find((entry) => entry.tool.matches(path));
  }

  /** An allow rule for `tool` that matches the path and names the protected entry explicitly. */
  private explicitProtectedAllow(
    tool: string,
    path: string,
    entry: CompiledProtectedPath,
  ): ParsedRule | undefined {
    return this.buckets.allow.find(
      (compiled) =>
        compiled.path !== undefined &&
        ruleGovernsTool(compiled.rule, tool) &&
        compiled.path.matches(path) &&
        entry.entry.namedBy(compiled.rule.specifier ?? ""),
    )?.rule;
  }

  private pathRule(behavior: RuleBehavior, tool: string, path: string): ParsedRule | undefined {
    return this.buckets[behavior].find(
      (compiled) =>
        compiled.path !== undefined && ruleGovernsTool(compiled.rule, tool) && compiled.path.matches(path),
    )?.rule;
  }

  private protectedReason(subject: string, path: string, entry: CompiledProtectedPath): string {
    const shown = this.display(path);
    return (
      `${subject} ${shown}, which is a protected path (${entry.entry.description}). ` +
      `Protected paths stay unchanged in every mode unless an allow rule names them explicitly, such as Edit(/${shown}). ` +
      "Leave this file alone and say in your summary what change it needs."
    );
  }

  private outsideReason(subject: string, path: string): string {
    const extra =
      this.roots.length > 1 ? ` (or the additional directories ${this.roots.slice(1).join(", ")})` : "";
    return `${subject} ${path}, which is outside the workspace ${this.workspaceRoot}${extra}. Only files under the workspace can be used.`;
  }

  // -------------------------------------------------------------------------------------------
  // File and other tools

  /** Paths of a non-Bash call: the pipeline's canonical ones, plus what the input names (P1, P10). */
  private toolPaths(call: PolicyCall): { paths: string[]; invalid: string | undefined } {
    const cwd = this.containerCwd(call.cwd);
    const raw: string[] = [...(call.paths ?? [])];
    // An MCP tool's arguments are its server's to read: a `path` there may name anything (a file in a
    // remote repository), and a server in the sandbox checks its own (the container holds it besides).
    if (toolCategory(call.tool) === "mcp") return { paths: [], invalid: undefined };
    for (const key of PATH_INPUT_KEYS) {
      const value = call.input[key];
      if (typeof value === "string") raw.push(value);
    }
    const pattern = call.input.pattern;
    if (call.tool === "Glob" && typeof pattern === "string" && pattern !== "") {
      const base = picomatch.scan(pattern).base;
      const from = typeof call.input.path === "string" ? call.input.path : cwd;
      raw.push(base === "" ? from : base.startsWith("/") ? base : `${from}/${base}`);
    }
    // A tool searching a directory (Grep, Glob, LS) searches the working directory when given none.
    if (toolEntry(call.tool)?.pathKey === "path" && raw.length === 0) raw.push(cwd);
    const paths: string[] = [];
    for (const value of raw) {
      const resolved = resolveContainerPath(value, cwd, this.homeDir);
      if (resolved === undefined) return { paths, invalid: value };
      if (!paths.includes(resolved)) paths.push(resolved);
    }
    return { paths, invalid: undefined };
  }

  private toolRule(
    behavior: RuleBehavior,
    call: PolicyCall,
    paths: readonly string[],
  ): ParsedRule | undefined {
    const matchAll = behavior === "allow";
    // A call about one MCP server (its resources) is that server's: its rules decide the call as well.
    const server = mcpServerOfCall(call.tool, call.input);
    return this.buckets[behavior].find((compiled) => {
      if (server !== undefined && ruleGovernsServer(compiled.rule, server)) return true;
      if (!ruleGovernsTool(compiled.rule, call.tool)) return false;
      const specifier = compiled.rule.specifier;
      if (specifier === undefined || specifier === "*") return true;
      if (compiled.path !== undefined) {
        if (paths.length === 0) return false;
        return matchAll
          ? paths.every((path) => compiled.path?.matches(path))
          : paths.some((path) => compiled.path?.matches(path));
      }
      if (compiled.domain !== undefined) return domainMatches(compiled.domain, call.input.url);
      const nameKey = toolEntry(compiled.rule.tool)?.nameKey;
      const name = nameKey === undefined ? undefined : call.input[nameKey];
      // A skill may be named as its slash command (`/fix`).
      return typeof name === "string" && (nameKey === "skill" ? name.replace(/^\//, "") : name) === specifier;
    })?.rule;
  }

  private decideTool(call: PolicyCall): Decision {
    const tool = call.tool;
    const { paths, invalid } = this.toolPaths(call);
    const unusable = this.unusablePath(tool, paths, invalid);
    if (unusable !== undefined) return unusable;

    const server = mcpServerOfCall(tool, call.input);
    const shown =
      paths.length > 0
        ? ` on ${paths.map((path) => this.display(path)).join(", ")}`
        : server !== undefined
          ? ` on the MCP server ${server}`
          : "";
    const denyRule = this.toolRule("deny", call, paths);
    if (denyRule !== undefined) {
      return this.deny(
        "rule",
        `Permission to use ${tool}${shown} was denied by the deny rule ${denyRule.text} (from ${denyRule.source.label}). ` +
          "Deny rules always win; do not try to reach it another way.",
        { rule: ruleRef(denyRule) },
      );
    }
    const askRule = this.toolRule("ask", call, paths);
    if (askRule !== undefined) return this.askDenial(`${tool}${shown}`, askRule);

    const category = toolCategory(tool);
    if (category === "agent")
      return this.allow(
        "mode",
        `allowed: starting a subagent needs no permission; each of its calls is decided by the same policy in ${this.mode} mode`,
      );
    const edits = category === "edit";
    if (edits) {
      for (const path of paths) {
        const entry = this.protectedEntry(path);
        if (entry !== undefined && this.explicitProtectedAllow(tool, path, entry) === undefined) {
          return this.deny("protected-path", this.protectedReason(`${tool} cannot change`, path, entry));
        }
      }
    }
    const readOnlyTool = category === "read" || category === "housekeeping" || (call.readOnly && !edits);
    if (this.meaning.readOnly && !readOnlyTool) {
      return this.deny(
        "mode",
        `plan mode is read-only: ${tool} is not available. Read and analyse with Read, Grep, Glob and read-only Bash commands, and describe the change you would make.`,
      );
    }
    const allowRule = this.toolRule("allow", call, paths);
    if (allowRule !== undefined) {
      return this.allow(
        "rule",
        `allowed by the rule ${allowRule.text} (from ${allowRule.source.label})`,
        allowRule,
      );
    }
    return this.modeDefault(tool, shown, paths, category, readOnlyTool);
  }

  /** A path the call names that is not usable, or outside the workspace and its added directories: denied. */
  private unusablePath(tool: string, paths: string[], invalid: string | undefined): Decision | undefined {
    if (invalid !== undefined) {
      return this.deny(
        "invalid-path",
        `${tool} was given ${JSON.stringify(invalid)}, which is not a usable path.`,
      );
    }
    const outside = paths.find((path) => !this.insideRoots(path));
    if (outside !== undefined)
      return this.deny("outside-workspace", this.outsideReason(`${tool} cannot use`, outside));
    return undefined;
  }

  /** What the mode decides for a tool call no rule decided. */
  private modeDefault(
    tool: string,
    shown: string,
    paths: string[],
    category: ToolCategory | undefined,
    readOnlyTool: boolean,
  ): Decision {
    const edits = category === "edit";
    if (this.meaning.everythingWithoutRule)
      return this.allow("mode", "allowed: bypassPermissions mode skips rule checks");
    if (edits && this.meaning.editsWithoutRule) {
      return this.allow("mode", "allowed: acceptEdits mode accepts file changes inside the workspace");
    }
    // An MCP tool needs a rule even when its server marks it read-only: that hint is the server's own word.
    if (readOnlyTool && category !== "network" && category !== "mcp")
      return this.allow("mode", `allowed: ${tool} is read-only`);
    if (edits) {
      const example = paths[0] === undefined ? "Edit(src/**)" : `Edit(${this.ruleSpecifierFor(paths[0])})`;
      return this.deny(
        "mode",
        `${tool}${shown} needs permission: in ${this.mode} mode file changes need an allow rule such as ${example}, and none matches. ` +
          "Do not retry; describe the change you would make instead.",
      );
    }
    return this.deny(
      "mode",
      `${tool} is not allowed in ${this.mode} mode: no allow rule matches this call (it would need a rule such as ${tool}).`,
    );
  }

  private askDenial(subject: string, rule: ParsedRule, subcommand?: string): Decision {
    const reason =
      `${subject} matches the ask rule ${rule.text} (from ${rule.source.label}). ` +
      "agent-ci runs without a person to ask (dontAsk), so ask rules deny. Use another approach or leave this step to a human.";
    return this.deny(
      "rule",
      reason,
      subcommand === undefined ? { rule: ruleRef(rule) } : { rule: ruleRef(rule), subcommand },
    );
  }

  /** A rule specifier that names exactly this path, anchored at the project root. */
  private ruleSpecifierFor(path: string): string {
    const relative = relativeToRoot(path, this.workspaceRoot);
    if (relative === undefined) return `/${path}`;
    return relative.includes("/") ? relative : `/${relative}`;
  }

  // -------------------------------------------------------------------------------------------
  // Bash

  private bashRules(behavior: RuleBehavior): CompiledRule[] {
    return this.buckets[behavior].filter((compiled) => isBash(compiled.rule.tool));
  }

  private resolveWord(word: BashWord, cwd: WorkingDirectories): string[] | "unknown" {
    const value = word.value;
    if (value === undefined) return "unknown";
    if (value.startsWith("/")) return [normalizeAbsolute(value)];
    if (!cwd.known) return "unknown";
    return cwd.candidates.flatMap((base) => {
      const resolved = resolveContainerPath(value, base, this.homeDir);
      return resolved === undefined ? [] : [resolved];
    });
  }

  private decideBash(call: PolicyCall): Decision {
    const command = call.input.command;
    if (typeof command !== "string") {
      return this.deny(
        "parse-failure",
        "The Bash call has no command string; pass the command to run in `command`.",
      );
    }
    const line = this.analyzeBash(command, call.cwd);
    if (line.rejection !== undefined) {
      return this.deny(
        "parse-failure",
        `agent-ci refused to check this command: ${line.rejection}. Rewrite it as a shorter, plain command.`,
      );
    }
    return (
      this.bashRuleDenial(line, "deny") ??
      this.bashRuleDenial(line, "ask") ??
      this.bashProblemDenial(line) ??
      this.bashWriteDenial(line) ??
      this.bashAdmission(line)
    );
  }

  /** Deny or ask rules against every view of every command, then Read/Edit path rules (R14). */
  private bashRuleDenial(line: LineAnalysis, behavior: "deny" | "ask"): Decision | undefined {
    const rules = this.bashRules(behavior);
    for (const fact of line.facts) {
      for (const view of fact.views) {
        const rule = rules.find(
          (compiled) =>
            compiled.bash === undefined ||
            denyForms(view).some((form) => patternMayMatch(compiled.bash as BashPattern, form)),
        )?.rule;
        if (rule === undefined) continue;
        if (behavior === "ask") return this.askDenial(`The command "${fact.text}"`, rule, fact.text);
        return this.deny(
          "rule",
          `Permission denied by the deny rule ${rule.text} (from ${rule.source.label}): "${fact.text}" matches it. ` +
            "Deny rules always win; do not retry this command or a variant of it.",
          { rule: ruleRef(rule), subcommand: fact.text },
        );
      }
      const pathDenial = this.bashPathRuleDenial(line, fact, behavior);
      if (pathDenial !== undefined) return pathDenial;
    }
    return undefined;
  }

  private bashPathRuleDenial(
    line: LineAnalysis,
    fact: CommandFacts,
    behavior: "deny" | "ask",
  ): Decision | undefined {
    const denial = (rule: ParsedRule, verb: string, path: string): Decision => {
      const subject = `"${fact.text}" ${verb} ${this.display(path)}`;
      if (behavior === "ask") return this.askDenial(subject, rule, fact.text);
      return this.deny(
        "rule",
        `${subject}, which the deny rule ${rule.text} (from ${rule.source.label}) protects. Do not try to reach it another way.`,
        { rule: ruleRef(rule), subcommand: fact.text },
      );
    };
    for (const use of fact.reads) {
      if (use.word.value === undefined || use.word.glob) continue;
      for (const named of namedPaths(use.word.value)) {
        const paths = this.resolveWord({ ...use.word, value: named }, line.cwd);
        if (paths === "unknown") continue;
        for (const path of paths) {
          const rule = this.pathRule(behavior, "Read", path);
          if (rule !== undefined) return denial(rule, "reads", path);
        }
      }
    }
    // A recursive search reads whatever its directories hold. Only fixed names are checked (a glob
    // such as **/*.pem would block every search); the container layer covers the rest.
    for (const use of fact.recursiveReads) {
      const dirs = this.resolveWord(use.word, line.cwd);
      if (dirs === "unknown") continue;
      for (const dir of dirs) {
        const rule = this.buckets[behavior].find((compiled) => {
          const pattern = compiled.path;
          if (pattern === undefined || !ruleGovernsTool(compiled.rule, "Read")) return false;
          if (pattern.literal !== undefined) return isInside(pattern.literal, dir);
          return (
            pattern.literalName !== undefined &&
            (isInside(dir, this.workspaceRoot) || isInside(this.workspaceRoot, dir))
          );
        })?.rule;
        if (rule !== undefined) return denial(rule, "searches", dir);
      }
    }
    for (const use of fact.writes) {
      const paths = use.word.glob ? "unknown" : this.resolveWord(use.word, line.cwd);
      if (paths === "unknown") continue;
      for (const path of paths) {
        const rule = this.pathRule(behavior, "Write", path);
        if (rule !== undefined) return denial(rule, "writes", path);
      }
    }
    return undefined;
  }

  private bashProblemDenial(line: LineAnalysis): Decision | undefined {
    const problem = line.problems.find(
      (p) => p.assignmentOf === undefined || !this.namesAssignments(p.assignmentOf),
    );
    if (problem === undefined) return undefined;
    const nothingToMiss = this.bashRules("deny").length === 0 && this.bashRules("ask").length === 0;
    if (this.meaning.everythingWithoutRule && nothingToMiss) return undefined;
    const why = this.meaning.everythingWithoutRule
      ? "With Bash deny or ask rules in force, agent-ci only runs commands it can check against them."
      : "No allow rule can admit a command agent-ci cannot read fully.";
    return this.deny(
      "parse-failure",
      `agent-ci could not check "${problem.text}": ${problem.reason}. ${why} Rewrite it as plain commands with fixed names and arguments.`,
      { subcommand: problem.text },
    );
  }

  /**
   * Redirect targets and files named by writing commands: first containment and protected paths for
   * every write in the line (they hold in every mode), then the redirects' own permission.
   */
  private bashWriteDenial(line: LineAnalysis): Decision | undefined {
    for (const pass of ["paths", "permission"] as const) {
      for (const fact of line.facts) {
        for (const use of fact.writes) {
          const denial = this.bashWriteUseDenial(line, fact, use, pass);
          if (denial !== undefined) return denial;
        }
      }
    }
    return undefined;
  }

  private bashWriteUseDenial(
    line: LineAnalysis,
    fact: CommandFacts,
    use: PathUse,
    pass: "paths" | "permission",
  ): Decision | undefined {
    const subcommand = fact.text;
    const paths = use.word.glob ? "unknown" : this.resolveWord(use.word, line.cwd);
    if (paths === "unknown") {
      if (use.via === "argument" || pass === "permission") return undefined;
      return this.deny(
        "parse-failure",
        `The ${use.what} target ${use.word.text} in "${subcommand}" is only known at run time, so agent-ci cannot check where it writes. Use a fixed file name.`,
        { subcommand },
      );
    }
    for (const path of paths) {
      if (HARMLESS_WRITE_TARGETS.has(path)) continue;
      const subject = `The ${use.what} in "${subcommand}" writes`;
      if (pass === "paths") {
        if (!this.insideRoots(path))
          return this.deny("outside-workspace", this.outsideReason(subject, path), { subcommand });
        const entry = this.protectedEntry(path);
        if (entry !== undefined && this.explicitProtectedAllow("Write", path, entry) === undefined) {
          return this.deny("protected-path", this.protectedReason(subject, path, entry), { subcommand });
        }
        continue;
      }
      if (use.via !== "redirect") continue;
      if (this.meaning.readOnly) {
        return this.deny(
          "mode",
          `plan mode is read-only: ${subject.charAt(0).toLowerCase()}${subject.slice(1)} ${this.display(path)}. Print the output instead of writing it to a file.`,
          { subcommand },
        );
      }
      if (
        !this.meaning.editsWithoutRule &&
        this.toolRule("allow", { tool: "Write", input: {}, readOnly: false }, [path]) === undefined
      ) {
        return this.deny(
          "mode",
          `${subject} ${this.display(path)}; a redirect needs its own permission, and in default mode writing a file needs an allow rule such as Edit(${this.ruleSpecifierFor(path)}). Print the output instead, or redirect it to /dev/null.`,
          { subcommand },
        );
      }
    }
    return undefined;
  }

  private readOnlyProven(fact: CommandFacts, cwd: WorkingDirectories): string | undefined {
    if (!fact.readOnly.proven) return fact.readOnly.reason;
    if (fact.readOnly.usesCwd) {
      if (!cwd.known) return `it runs in a directory only known at run time (${cwd.reason})`;
      const outsideCwd = cwd.candidates.find((dir) => !this.insideRoots(dir));
      if (outsideCwd !== undefined) return `it may run in ${outsideCwd}, outside the workspace`;
    }
    for (const use of fact.readOnly.paths) {
      if (use.word.glob && /(?:^|\/)\.[*?[]/.test(use.word.value ?? ""))
        return `${use.word.text} may expand to ..`;
      const paths = this.resolveWord(use.word, cwd);
      if (paths === "unknown") return `${use.word.text} is a path only known at run time`;
      const outside = paths.find(
        (path) => !this.insideRoots(path) && !HARMLESS_WRITE_TARGETS.has(path) && path !== "/dev/stdin",
      );
      if (outside !== undefined) return `it reads ${outside}, outside the workspace`;
    }
    return undefined;
  }

  private bashAdmission(line: LineAnalysis): Decision {
    const allowRules = this.bashRules("allow");
    let usedRule: ParsedRule | undefined;
    for (const fact of line.facts) {
      if (this.meaning.everythingWithoutRule) break;
      if (!this.meaning.readOnly) {
        const rule = this.admittingRule(fact, allowRules);
        if (rule !== undefined) {
          usedRule ??= rule;
          continue;
        }
      }
      const notReadOnly = this.readOnlyProven(fact, line.cwd);
      if (notReadOnly === undefined) continue;
      if (this.meaning.readOnly) {
        return this.deny(
          "read-only-check",
          `plan mode is read-only and "${fact.text}" is not a proven read-only command (${notReadOnly}). ` +
            "Use read-only commands (ls, cat, grep, git status/log/diff, …) or the Read, Grep and Glob tools.",
          { subcommand: fact.text },
        );
      }
      return this.deny(
        "mode",
        `"${fact.text}" is not allowed: no allow rule matches it and it is not a proven read-only command (${notReadOnly}). ` +
          `In ${this.mode} mode agent-ci runs a Bash command only when an allow rule admits every command in it or it is read-only. ` +
          this.allowedCommandsHint(allowRules),
        { subcommand: fact.text },
      );
    }
    if (this.meaning.everythingWithoutRule)
      return this.allow("mode", "allowed: bypassPermissions mode skips rule checks");
    if (usedRule !== undefined) {
      return this.allow(
        "rule",
        `allowed by the rule ${usedRule.text} (from ${usedRule.source.label})`,
        usedRule,
      );
    }
    return this.allow("read-only-check", "allowed: every command in it is proven read-only");
  }

  /**
   * Does an allow rule spell out this command's assignments (`Bash(PYTHONPATH=src python3 -m unittest)`,
   * `Bash(PYTHONPATH=src python3:*)`)? Then the user has decided that this variable may be set for this
   * command. A rule that matches only through a wildcard over the assignment (`Bash(*)`) does not count.
   */
  private namesAssignments(fact: CommandFacts): boolean {
    const view = fact.views[0];
    if (this.meaning.readOnly || view === undefined || view.role !== "check" || fact.assignmentWords === 0)
      return false;
    const args = viewArgs(view);
    if (args.slice(0, fact.assignmentWords).includes(undefined)) return false;
    const named = matchingString(args.slice(0, fact.assignmentWords));
    return this.bashRules("allow").some(
      ({ bash }) =>
        bash !== undefined &&
        (bash.head === named || bash.head.startsWith(named + ARG_SEPARATOR)) &&
        patternMatches(bash, args),
    );
  }

  /** The allow rule admitting every `check` view, or undefined (also when there is none to check). */
  private admittingRule(fact: CommandFacts, allowRules: readonly CompiledRule[]): ParsedRule | undefined {
    const checks = fact.views.filter((view) => view.role === "check");
    if (checks.length === 0) return undefined;
    let first: ParsedRule | undefined;
    for (const view of checks) {
      const rule = allowRules.find(
        (compiled) => compiled.bash === undefined || patternMatches(compiled.bash, viewArgs(view)),
      )?.rule;
      if (rule === undefined) return undefined;
      first ??= rule;
    }
    return first;
  }

  private allowedCommandsHint(allowRules: readonly CompiledRule[]): string {
    if (allowRules.length === 0) return "No Bash commands are allowed by rule in this run.";
    const listed = allowRules.slice(0, MAX_LISTED_RULES).map((compiled) => compiled.rule.text);
    const more =
      allowRules.length > MAX_LISTED_RULES ? `, and ${allowRules.length - MAX_LISTED_RULES} more` : "";
    return `Commands allowed by rule here: ${listed.join(", ")}${more}.`;
  }
}

/** A `WebFetch(domain:…)` rule against the URL's host, with the egress allowlist's one matcher. */
function domainMatches(rule: DomainRule | undefined, url: unknown): boolean {
  if (rule === undefined || typeof url !== "string") return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return domainRuleMatches(rule, parsed.hostname, undefined);
}

/** Loads the Bash parser (once per process) and compiles the policy's rules. */
export async function createPolicyEngine(
  policy: Policy,
  options: PolicyEngineOptions = {},
): Promise<PolicyEngine> {
  const parser = await loadBashParser(options.parser ?? {});
  return new Evaluator(policy, () => parser, options);
}

/**
 * The engine made now, for a caller that loads the Bash parser (`loadBashParser`) while it waits on something
 * else: a run loads it while its container starts. Until the parser is loaded, a Bash call is denied (decide
 * fails closed on PolicyNotReadyError); every other decision is the same as `createPolicyEngine`'s.
 */
export function createPolicyEngineNow(policy: Policy, options: PolicyEngineOptions = {}): PolicyEngine {
  return new Evaluator(policy, loadedBashParser, options);
}
