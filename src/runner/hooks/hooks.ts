/**
 * PreToolUse / PostToolUse hooks in Claude Code's settings format. They come only from trusted configuration
 * (loadPolicy drops workspace hooks) and run where the tools run: inside the sandbox, as the hooks' own user,
 * with the sandbox's environment, in /workspace (src/sandbox/container/hook-host.ts). The repository scripts a hook
 * names are the ones the run started with (hook-scripts.ts), never the agent's edits. docs/hooks.md.
 *
 * As in Claude Code (test/fixtures/reference/claude-code-hooks/): each hook gets the event as JSON on
 * stdin and CLAUDE_PROJECT_DIR; exit code 2 blocks with stderr as the reason; exit 0 with JSON stdout
 * `{"decision":"block","reason":…}` or `hookSpecificOutput.permissionDecision: "deny"` blocks ("ask" also
 * blocks: nobody can answer); any other exit code, a crash or a timeout is an error that is reported and
 * does not block — unless `failClosed` is set. A PreToolUse block is the call's error result; a
 * PostToolUse block leaves the result and tells the model after it. Nothing here throws: a broken hook is a
 * result, never a crashed run.
 */
import fs from "node:fs";
import path from "node:path";
import { hookMatches } from "../../policy/hook-matcher.js";
import type { PolicyHook } from "../../policy/schema.js";
import type { HookExecResult, HookHost, HookRunner, HookScript } from "../../sandbox/container/hook-host.js";
import { WORKSPACE_ROOT } from "../../sandbox/sandbox.js";
import { rewriteScripts, type ScriptWord, scriptWords } from "./hook-scripts.js";
import type { HookOutcome, HookRunRecord, ToolHooks } from "../loop/pipeline.js";

export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;
export const MAX_HOOK_OUTPUT_CHARS = 64 * 1024;
/**
 * What the sandbox keeps of a hook's output before the cap above applies: the helper ends a command whose
 * output passes 16 times what it keeps, and a chatty formatter must run to its end, as it did on the host.
 */
const HOOK_CAPTURE_BYTES = 16 * MAX_HOOK_OUTPUT_CHARS;
/** A hook script larger than this is not copied (it is refused as missing). */
export const MAX_HOOK_SCRIPT_BYTES = 1 << 20;

export type HookEvent = "PreToolUse" | "PostToolUse";

/** A hook as it runs: the configured one, the command with its scripts pointed at their copies. */
export interface PreparedHook extends PolicyHook {
  readonly run: string;
  /** The workspace scripts it names, as the run started (relative to /workspace). */
  readonly scripts: readonly string[];
}

export interface HookEventInput {
  readonly event: HookEvent;
  readonly toolName: string;
  readonly toolInput: unknown;
  readonly toolUseId: string;
  /** PostToolUse: what the tool returned. */
  readonly toolResponse?: unknown;
  readonly sessionId: string;
  readonly permissionMode: string;
}

export type HookResultOutcome = "ok" | "block" | "error" | "timeout";

export interface HookResult {
  readonly command: string;
  /** The workspace scripts it names, run from their copies taken at the start. */
  readonly scripts?: readonly string[];
  readonly source: string;
  readonly outcome: HookResultOutcome;
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Block reason (for the model) or error description (for the report). */
  readonly reason: string | undefined;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
}

export interface HookRunSummary {
  readonly blocked: boolean;
  /** What the model is told of the blocking hooks, in Claude Code's words. */
  readonly message: string | undefined;
  readonly results: readonly HookResult[];
}

interface JsonVerdict {
  readonly block: boolean;
  readonly reason: string | undefined;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** Reads Claude Code's JSON hook output; plain text output is not a verdict. */
function jsonVerdict(stdout: string): JsonVerdict {
  const trimmed = stdout.trim();
  if (!trimmed.startsWith("{")) return { block: false, reason: undefined };
  let parsed: Record<string, unknown> | undefined;
  try {
    parsed = asRecord(JSON.parse(trimmed));
  } catch {
    return { block: false, reason: undefined };
  }
  if (parsed === undefined) return { block: false, reason: undefined };
  const text = (value: unknown): string | undefined =>
    typeof value === "string" && value !== "" ? value : undefined;
  if (parsed.decision === "block") return { block: true, reason: text(parsed.reason) };
  const specific = asRecord(parsed.hookSpecificOutput);
  const permission = specific?.permissionDecision;
  if (permission === "deny" || permission === "ask") {
    return { block: true, reason: text(specific?.permissionDecisionReason) };
  }
  if (parsed.continue === false) return { block: true, reason: text(parsed.stopReason) };
  return { block: false, reason: undefined };
}

/** The event's JSON on the hook's stdin, with Claude Code's fields (there is no transcript file in the sandbox). */
export function hookInput(input: HookEventInput): string {
  return JSON.stringify({
    session_id: input.sessionId,
    cwd: WORKSPACE_ROOT,
    permission_mode: input.permissionMode,
    hook_event_name: input.event,
    tool_name: input.toolName,
    tool_input: input.toolInput,
    tool_use_id: input.toolUseId,
    ...(input.event === "PostToolUse" ? { tool_response: input.toolResponse } : {}),
  });
}

/** What a hook's run means: a block, an error, a timeout, or nothing to say. */
export function hookVerdict(hook: PolicyHook, run: HookExecResult, timeoutMs: number): HookResult {
  const cap = (text: string) => text.slice(0, MAX_HOOK_OUTPUT_CHARS);
  const stdout = cap(run.stdout);
  const stderr = cap(run.stderr);
  const base = {
    command: hook.command,
    source: hook.source,
    exitCode: run.exitCode,
    signal: run.signal,
    stdout,
    stderr,
    durationMs: run.durationMs,
  };
  if (run.error !== undefined)
    return { ...base, outcome: "error", reason: `the hook could not be run: ${run.error}` };
  if (run.timedOut)
    return { ...base, outcome: "timeout", reason: `the hook timed out after ${timeoutMs / 1000}s` };
  if (run.exitCode === 2) return { ...base, outcome: "block", reason: stderr || "No stderr output" };
  if (run.exitCode === 0) {
    const verdict = jsonVerdict(stdout);
    return verdict.block
      ? { ...base, outcome: "block", reason: verdict.reason ?? `blocked by the hook ${hook.command}` }
      : { ...base, outcome: "ok", reason: undefined };
  }
  const how = run.signal === null ? `exited with code ${run.exitCode}` : `was killed by ${run.signal}`;
  const detail = stderr.trim() === "" ? "" : `: ${stderr.trim().slice(0, 500)}`;
  return { ...base, outcome: "error", reason: `the hook ${how}${detail}` };
}

/** What the model is told of one blocking hook: Claude Code's words for each event. */
function blockMessage(event: HookEvent, tool: string, result: HookResult): string {
  const reason = result.reason ?? "blocked by a hook";
  return event === "PreToolUse"
    ? `PreToolUse:${tool} hook error: [${result.command}]: ${reason}`
    : `PostToolUse:${tool} hook blocking error from command: "${result.command}": ${reason.trimEnd()}`;
}

/** Runs every hook of `event` whose matcher matches the tool, in parallel, in the sandbox. Never rejects. */
export async function runHooks(
  runner: HookRunner,
  hooks: readonly PreparedHook[],
  input: HookEventInput,
  options: { defaultTimeoutMs?: number; failClosed?: boolean } = {},
): Promise<HookRunSummary> {
  const matching = hooks.filter((hook) => hook.event === input.event && hookMatches(hook, input.toolName));
  if (matching.length === 0) return { blocked: false, message: undefined, results: [] };
  const stdin = hookInput(input);
  const results = await Promise.all(
    matching.map(async (hook) => {
      const timeoutMs =
        hook.timeoutSeconds === undefined
          ? (options.defaultTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS)
          : hook.timeoutSeconds * 1000;
      const run = await runner.run({
        script: hook.run,
        input: stdin,
        env: { CLAUDE_PROJECT_DIR: WORKSPACE_ROOT },
        timeoutMs,
        maxOutputBytes: HOOK_CAPTURE_BYTES,
      });
      const result = hookVerdict(hook, run, timeoutMs);
      return hook.scripts.length ? { ...result, scripts: hook.scripts } : result;
    }),
  );
  const blocking = results.filter(
    (result) =>
      result.outcome === "block" ||
      (options.failClosed === true && (result.outcome === "error" || result.outcome === "timeout")),
  );
  const message =
    blocking.length === 0
      ? undefined
      : blocking.map((result) => blockMessage(input.event, input.toolName, result)).join("\n");
  return { blocked: blocking.length > 0, message, results };
}

/** A configured hook and the scripts its command names. */
interface HookPlan {
  hook: PolicyHook;
  words: ScriptWord[];
}

/** The copy of each script the hooks name, read from the workspace as the run starts; a missing one is left out. */
export function readHookScripts(
  hooks: readonly PolicyHook[],
  workspace: string,
): { plans: HookPlan[]; scripts: HookScript[]; missing: string[] } {
  const root = fs.realpathSync(workspace);
  const scripts = new Map<string, HookScript>();
  const missing = new Set<string>();
  const read = (rel: string): void => {
    if (scripts.has(rel) || missing.has(rel)) return;
    try {
      // Only a regular file inside the workspace, symlinks resolved on the host: never a host file.
      const real = fs.realpathSync(path.join(root, rel));
      const stat = fs.statSync(real);
      if (!real.startsWith(root + path.sep) || !stat.isFile() || stat.size > MAX_HOOK_SCRIPT_BYTES)
        throw new Error("not a script");
      scripts.set(rel, { rel, content: fs.readFileSync(real) });
    } catch {
      missing.add(rel);
    }
  };
  const plans = hooks.map((hook): HookPlan => {
    const words = scriptWords(hook.command);
    for (const word of words) read(word.rel);
    return { hook, words };
  });
  return { plans, scripts: [...scripts.values()], missing: [...missing] };
}

function record(event: HookEvent, result: HookResult): HookRunRecord {
  return {
    event,
    command: result.command,
    source: result.source,
    outcome: result.outcome,
    exitCode: result.exitCode,
    signal: result.signal,
    durationMs: result.durationMs,
    ...(result.reason !== undefined ? { reason: result.reason } : {}),
    ...(result.scripts?.length ? { scripts: [...result.scripts] } : {}),
  };
}

function hookError(results: readonly HookResult[]): string | undefined {
  const failed = results.filter((r) => r.outcome === "error" || r.outcome === "timeout");
  return failed.length
    ? failed.map((r) => `hook "${r.command}" ${r.outcome}: ${r.reason ?? ""}`).join("; ")
    : undefined;
}

export interface RunHooksOptions {
  hooks: readonly PolicyHook[];
  /** The host's workspace, as the run started: where the hooks' scripts are copied from. */
  workspace: string;
  sessionId: string;
  permissionMode: string;
  log?: (line: string) => void;
}

/**
 * Starts the run's hooks in the sandbox: the scripts they name copied as the workspace is now (before the
 * agent's first call), the commands pointed at the copies. A script missing at the start stays missing.
 */
export async function startHooks(host: HookHost, options: RunHooksOptions): Promise<ToolHooks> {
  const { plans, scripts, missing } = readHookScripts(options.hooks, options.workspace);
  const runner = await host.startHooks(scripts);
  const hooks = plans.map(({ hook, words }): PreparedHook => ({
    ...hook,
    scripts: [...new Set(words.map((w) => w.rel))],
    run: rewriteScripts(hook.command, words, (rel) => `${runner.scriptsDir}/${rel}`),
  }));
  if (scripts.length)
    options.log?.(
      `hooks: ${scripts.map((s) => s.rel).join(", ")} taken from the workspace as the run started`,
    );
  if (missing.length)
    options.log?.(`hooks: ${missing.join(", ")} not in the workspace at the start: a hook naming it fails`);
  const common = { sessionId: options.sessionId, permissionMode: options.permissionMode };
  /** Runs the event's hooks on one call, and what they decided. */
  const fire = async (input: Omit<HookEventInput, keyof typeof common>): Promise<HookOutcome> => {
    const summary = await runHooks(runner, hooks, { ...common, ...input });
    return {
      blocked: summary.blocked,
      reason: summary.message,
      error: hookError(summary.results),
      runs: summary.results.map((result) => record(input.event, result)),
    };
  };
  return {
    pre: (tool, input, toolUseId) =>
      fire({ event: "PreToolUse", toolName: tool, toolInput: input, toolUseId }),
    post: (tool, input, toolUseId, result) =>
      fire({
        event: "PostToolUse",
        toolName: tool,
        toolInput: input,
        toolUseId,
        toolResponse: { output: result.output, is_error: Boolean(result.isError) },
      }),
  };
}
