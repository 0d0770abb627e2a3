// Where the runner meets src/policy: the rule sources of a run (flags or action inputs, a settings file
// the user names, the workspace's own settings — which may only deny unless trusted), the engine the
// pipeline's permission stage asks, the container layer (files kept out, changes kept out of the patch),
// and the `policy check` / `policy test --replay` commands. Hooks start with the sandbox (hooks.ts).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  compileContainerRules,
  createPolicyEngine,
  createPolicyEngineNow,
  describeDecision,
  isMcpTool,
  loadBashParser,
  loadPolicy,
  MCP_PREFIX,
  MODES_NARROWEST_FIRST,
  modeWithin,
  narrowestAllowRule,
  parseSettingsFile,
  PolicyConfigError,
  replayDecisions,
  toolEntry,
  type Decision,
  type PermissionMode,
  type Policy,
  type PolicyEngine,
  type PolicySourceInput,
  type RecordedCall,
  type ContainerRules,
} from "../../policy/index.js";
import { parseReport, type EnforcedRule, type ReportPolicy, type RunReport } from "../../report/index.js";
import { BASE_ENV } from "../../sandbox/docker-sandbox.js";
import { OUTPUTS_DIR, WORKSPACE_ROOT } from "../../sandbox/sandbox.js";
import { ALL_TOOLS, toolByName } from "../../tools/index.js";
import type { RunConfig } from "../config.js";
import { warmUpPolicy } from "./policy-warm-up.js";
import type {
  PermissionDecision,
  PermissionGate,
  PermissionRequest,
  ToolCallRecord,
} from "../loop/pipeline.js";

/** Workspace files read for rules; a pull request can change them, so they are untrusted by default. */
const WORKSPACE_SETTINGS = [".claude/settings.json", ".agent-ci.json"];

export interface PolicyFlags {
  mode?: RunConfig["mode"];
  allow: string[];
  deny: string[];
  settings?: string;
  trustWorkspaceSettings?: boolean;
  ruleSource?: "cli" | "action";
}

export interface PreparedPolicy {
  policy: Policy;
  engine: PolicyEngine;
  gate: PermissionGate;
  /** Loads the Bash parser and warms the engine up, once; Bash calls are decided after it resolves. */
  loadParser(): Promise<void>;
  /**
   * The same rules held to a mode no wider than the run's: a subagent's (plan for Explore and Plan, else its
   * definition's `permissionMode`). A wider mode is a programming error (definitions are checked up front).
   */
  gateIn(mode: PermissionMode): PermissionGate;
  /** The rules the container enforces: what is not copied in, what is read-only, a read-only workspace. */
  container: ContainerRules;
  summary: ReportPolicy;
  enforcedAt: EnforcedRule[];
  /** Relative path → why it is not copied into the container (a Read deny rule). */
  excludeFromCopy(relPath: string): string | undefined;
  /** Relative path → why a change to it is kept out of the patch (an Edit deny rule or a protected path). */
  protectFromPatch(relPath: string): string | undefined;
  narrowestAllowRule(
    call: Pick<ToolCallRecord, "tool" | "input" | "paths" | "cwd" | "readOnly" | "decision">,
  ): string | null;
}

function readJson(file: string, label: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new PolicyConfigError({
      subject: label,
      reason: `cannot read it as JSON: ${(e as Error).message}`,
      source: label,
    });
  }
}

/** The rule sources, lowest precedence first: workspace files, a named settings file, then flags/inputs. */
export function policySources(flags: PolicyFlags, workspace?: string): PolicySourceInput[] {
  const sources: PolicySourceInput[] = [];
  for (const rel of workspace ? WORKSPACE_SETTINGS : []) {
    const file = path.join(workspace as string, rel);
    if (!fs.existsSync(file)) continue;
    const label = `workspace:${rel}`;
    sources.push(
      parseSettingsFile(readJson(file, label), { kind: "workspace-settings", label, trusted: false }),
    );
  }
  if (flags.settings) {
    const label = `settings:${path.basename(flags.settings)}`;
    sources.push(
      parseSettingsFile(readJson(flags.settings, label), { kind: "settings-file", label, trusted: true }),
    );
  }
  const kind = flags.ruleSource ?? "cli";
  sources.push({
    source: { kind, label: kind === "action" ? "action inputs" : "command line", trusted: true },
    allow: flags.allow,
    deny: flags.deny,
  });
  return sources;
}

/** The tree-sitter wasm files sit next to the bundle in dist/; from source they resolve in node_modules. */
function parserFiles() {
  const beside = (name: string) => {
    const file = fileURLToPath(new URL(`./${name}`, import.meta.url));
    return fs.existsSync(file) ? file : undefined;
  };
  return { treeSitterWasm: beside("web-tree-sitter.wasm"), bashWasm: beside("tree-sitter-bash.wasm") };
}

function loadFlagsPolicy(flags: PolicyFlags, workspace?: string): Policy {
  return loadPolicy({
    mode: flags.mode,
    sources: policySources(flags, workspace),
    trustWorkspace: flags.trustWorkspaceSettings,
  });
}

/** The options every engine of this module is made with: the container's home, the bundle's parser files. */
function engineOptions() {
  return { parser: parserFiles(), homeDir: BASE_ENV.HOME };
}

/** The tool's own read-only answer for an input (unknown tools are not read-only). */
function isReadOnly(tool: string, input: unknown): boolean {
  const known = toolByName(ALL_TOOLS, tool);
  const parsed = known?.inputSchema.safeParse(input);
  return Boolean(known && parsed?.success && known.isReadOnly(parsed.data));
}

function toPolicyCall(call: Pick<ToolCallRecord, "tool" | "input" | "paths" | "cwd" | "readOnly">) {
  return {
    tool: call.tool,
    input: (call.input ?? {}) as Record<string, unknown>,
    paths: call.paths,
    cwd: call.cwd,
    readOnly: call.readOnly ?? isReadOnly(call.tool, call.input),
  };
}

/**
 * A run's policy, made before its Bash parser is loaded: the rules, the mode and what the container layer
 * enforces are settled now (a bad rule is a config error before any container), and `loadParser` loads the
 * parser and warms the engine up, while the container starts (run-stages.ts). A Bash call is decided only
 * after that; one decided before would be denied (createPolicyEngineNow).
 */
export function preparePolicy(config: RunConfig): PreparedPolicy {
  const policy = loadFlagsPolicy(config, config.workspace);
  const options = engineOptions();
  const engine = createPolicyEngineNow(policy, options);
  const container = compileContainerRules(policy, WORKSPACE_ROOT, BASE_ENV.HOME);
  const byText = new Map(policy.rules.map((r) => [r.text, r] as const));
  const narrower = new Map<PermissionMode, PermissionGate>();
  for (const mode of MODES_NARROWEST_FIRST.filter((m) => m !== policy.mode && modeWithin(m, policy.mode))) {
    const held = createPolicyEngineNow(
      { ...policy, mode, modeSource: `${policy.modeSource}, held to ${mode} for a subagent` },
      options,
    );
    narrower.set(mode, { decide: (request) => allowSavedOutputs(request, held.decide(request)) });
  }
  const gate: PermissionGate = { decide: (request) => allowSavedOutputs(request, engine.decide(request)) };
  let parserLoaded: Promise<void> | undefined;
  return {
    policy,
    engine,
    gate,
    container,
    loadParser: () => (parserLoaded ??= loadBashParser(options.parser).then(() => warmUpPolicy(engine))),
    gateIn: (mode) => {
      const held = mode === policy.mode ? gate : narrower.get(mode);
      if (!held) throw new Error(`a subagent's ${mode} mode is wider than the run's ${policy.mode}`);
      return held;
    },
    summary: {
      mode: policy.mode,
      rules: policy.rules.map((r) => ({ text: r.text, behavior: r.behavior, source: r.source.label })),
      ignored: policy.ignored.map((i) => ({ text: i.text, source: i.source, reason: i.reason })),
    },
    enforcedAt: [
      ...container.enforced.map((e) => ({
        rule: e.text,
        source: e.source,
        where: "both" as const,
        how:
          e.layer === "copy-exclude"
            ? "not copied into the container"
            : "changes to it are kept out of the patch",
      })),
      ...policy.rules
        .filter((r) => !container.enforced.some((e) => e.text === r.text && e.source === r.source.label))
        .map((r) => ({
          rule: r.text,
          source: byText.get(r.text)?.source.label,
          where: "tool_gate" as const,
        })),
    ],
    excludeFromCopy: (rel) => {
      const hit = container.excludeFromCopy(rel);
      return hit ? `denied by ${hit.text} (${hit.source})` : undefined;
    },
    protectFromPatch: (rel) => {
      const hit = container.readOnly(rel);
      return hit ? `${hit.reason} (${hit.text}, ${hit.source})` : undefined;
    },
    narrowestAllowRule: (call) => {
      const decision = call.decision as Decision | undefined;
      return narrowestAllowRule(toPolicyCall(call), decision) ?? null;
    },
  };
}

/**
 * A cut tool result tells the model to Read or Grep the whole output saved under OUTPUTS_DIR. The policy
 * knows only the workspace, so it refuses that folder as outside it; a read-only tool on paths that are all
 * inside it (canonical, resolved in the container, writes refused by the pipeline) is allowed here. A deny
 * rule that matches still wins: only the outside-the-workspace refusal is lifted (RELIABILITY T18).
 */
function allowSavedOutputs(request: PermissionRequest, decision: PermissionDecision): PermissionDecision {
  if (decision.behavior !== "deny" || decision.decidedBy !== "outside-workspace") return decision;
  if (request.tool === "Bash" || !request.readOnly || !request.paths?.length) return decision;
  if (!request.paths.every((p) => p.startsWith(`${OUTPUTS_DIR}/`))) return decision;
  return {
    behavior: "allow",
    reason: "allowed: a read of an earlier call's full output, saved by agent-ci",
    decidedBy: "read-only-check",
  };
}

/** `Tool` or `Tool(argument)`; MCP tools' names may hold hyphens (mcp__everything__get-sum). */
const CALL_TEXT = new RegExp(`^([A-Za-z][A-Za-z0-9_]*|${MCP_PREFIX}[A-Za-z0-9_-]+)(?:\\(([\\s\\S]*)\\))?$`);

/** "Bash(git push origin main)" → a call the engine can decide. */
export function parseCallText(
  text: string,
  cwd = WORKSPACE_ROOT,
): { tool: string; input: Record<string, unknown>; paths?: string[] } {
  const match = CALL_TEXT.exec(text.trim());
  if (!match)
    throw new PolicyConfigError({
      subject: text,
      reason: "expected Tool or Tool(argument), e.g. 'Bash(npm test)' or 'Edit(src/a.ts)'",
    });
  const tool = match[1] as string;
  const arg = match[2];
  // An MCP tool's rules name the tool alone: its arguments are the server's business.
  if (arg === undefined || isMcpTool(tool)) return { tool, input: {} };
  if (tool === "Bash") return { tool, input: { command: arg } };
  const file = path.posix.resolve(cwd, arg);
  const key = toolEntry(tool)?.pathKey ?? "file_path";
  return {
    tool,
    input: {
      [key]: file,
      ...(tool === "Grep" ? { pattern: "." } : tool === "Glob" ? { pattern: "**" } : {}),
    },
    paths: [file],
  };
}

export async function policyCheck(
  callText: string,
  flags: PolicyFlags,
  print: (line: string) => void,
): Promise<number> {
  try {
    const engine = await createPolicyEngine(loadFlagsPolicy(flags), engineOptions());
    const call = parseCallText(callText);
    const decision = engine.decide({
      ...call,
      readOnly: isReadOnly(call.tool, call.input),
      cwd: WORKSPACE_ROOT,
    });
    print(`${decision.behavior.toUpperCase()}  ${callText}`);
    print(`  mode:   ${engine.policy.mode}`);
    print(
      `  by:     ${decision.rule ? `${decision.rule.text} (${decision.rule.source})` : decision.decidedBy}`,
    );
    if (decision.subcommand) print(`  command: ${decision.subcommand}`);
    print(`  why:    ${describeDecision(decision)}`);
    if (decision.behavior === "deny") {
      const rule = narrowestAllowRule(
        { ...call, readOnly: isReadOnly(call.tool, call.input), cwd: WORKSPACE_ROOT },
        decision,
      );
      print(`  narrowest allow rule: ${rule ?? "none (a deny rule or a protected path wins)"}`);
    }
    return decision.behavior === "allow" ? 0 : 1;
  } catch (e) {
    print(`agent-ci: ${(e as Error).message}`);
    return 2;
  }
}

/**
 * The rules a recorded run decided with, one source per recorded source (they were in force, so trusted),
 * then the flags' own sources on top: their rules add to the recorded ones.
 */
function recordedSources(recorded: RunReport["policy"], flags: PolicyFlags): PolicySourceInput[] {
  const bySource = new Map<string, { allow: string[]; deny: string[]; ask: string[] }>();
  for (const rule of recorded.rules) {
    const lists = bySource.get(rule.source) ?? { allow: [], deny: [], ask: [] };
    lists[rule.behavior].push(rule.text);
    bySource.set(rule.source, lists);
  }
  const recordedRules = [...bySource].map(([label, lists]): PolicySourceInput => ({
    source: { kind: "settings-file", label: `recorded: ${label}`, trusted: true },
    ...lists,
  }));
  return [...recordedRules, ...policySources(flags, undefined)];
}

/** Exit code of `policy test --replay`: 0 no decision flipped, 1 some did (a CI gate), 2 bad input. */
export async function policyReplay(
  reportPath: string,
  flags: PolicyFlags,
  print: (line: string) => void,
): Promise<number> {
  try {
    const report = parseReport(fs.readFileSync(reportPath, "utf8"));
    const policy = loadPolicy({
      mode: flags.mode ?? report.policy.mode,
      sources: recordedSources(report.policy, flags),
      trustWorkspace: flags.trustWorkspaceSettings,
    });
    const engine = await createPolicyEngine(policy, engineOptions());
    const calls: RecordedCall[] = report.toolCalls
      .filter((c) => c.decision)
      .map((c) => {
        const input = (c.input ?? {}) as Record<string, unknown>;
        const given =
          typeof input.file_path === "string"
            ? input.file_path
            : typeof input.path === "string"
              ? input.path
              : undefined;
        return {
          id: c.id,
          tool: c.tool,
          input,
          paths: given ? [path.posix.resolve(WORKSPACE_ROOT, given)] : undefined,
          readOnly: isReadOnly(c.tool, input),
          decision: { behavior: c.decision?.behavior ?? "allow" },
        };
      });
    const flips = replayDecisions(calls, engine);
    for (const flip of flips) {
      const what =
        flip.tool === "Bash"
          ? String(flip.input.command ?? "")
          : String(flip.input.file_path ?? flip.input.path ?? "");
      print(
        `${flip.id}  ${flip.tool}(${what.slice(0, 120)}): ${flip.before} → ${flip.after.behavior}  (${flip.after.rule ? flip.after.rule.text : flip.after.decidedBy})`,
      );
    }
    const added = flags.allow.length + flags.deny.length + (flags.settings ? 1 : 0);
    print(
      `${calls.length} recorded calls re-decided under mode ${engine.policy.mode} with the ${report.policy.rules.length} recorded rules` +
        `${added ? ` and the ones given here` : ""}: ${flips.length} flipped`,
    );
    return flips.length ? 1 : 0;
  } catch (e) {
    print(`agent-ci: ${(e as Error).message}`);
    return 2;
  }
}
