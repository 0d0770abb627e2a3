/**
 * PreToolUse / PostToolUse hooks in Claude Code's settings format, run on the host (they come only
 * from trusted configuration — loadPolicy drops workspace hooks). Each hook command gets the event
 * as JSON on stdin: `{ session_id, hook_event_name, tool_name, tool_input, tool_response?, cwd }`.
 *
 * As in Claude Code: exit code 2 blocks with stderr as the reason; exit 0 with JSON stdout
 * `{"decision":"block","reason":…}` or `hookSpecificOutput.permissionDecision: "deny"` blocks ("ask"
 * also blocks: nobody can answer); any other exit code, a crash or a timeout is an error that is
 * reported and does not block — unless `failClosed` is set, which a security hook may want. Nothing
 * here throws: a broken hook is a result, never a crashed run.
 */
import { spawn } from "node:child_process";
import { hookMatches } from "../policy/hook-matcher.js";
import type { PolicyHook } from "../policy/schema.js";

export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;
export const MAX_HOOK_OUTPUT_CHARS = 64 * 1024;
const KILL_GRACE_MS = 2_000;

export type HookEvent = "PreToolUse" | "PostToolUse";

export interface HookRunInput {
  readonly event: HookEvent;
  readonly toolName: string;
  readonly toolInput: unknown;
  /** PostToolUse: what the tool returned. */
  readonly toolResponse?: unknown;
  readonly sessionId: string;
  /** The cwd reported to the hook (the container working directory). */
  readonly cwd: string;
  readonly hooks: readonly PolicyHook[];
  /** Where the hook process runs on the host; defaults to process.cwd(). */
  readonly hostCwd?: string | undefined;
  readonly env?: NodeJS.ProcessEnv | undefined;
  readonly defaultTimeoutMs?: number | undefined;
  /** Treat a failing or timed-out hook as a block. */
  readonly failClosed?: boolean | undefined;
  readonly signal?: AbortSignal | undefined;
}

export type HookOutcome = "ok" | "block" | "error" | "timeout";

export interface HookResult {
  readonly command: string;
  readonly source: string;
  readonly outcome: HookOutcome;
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
  /** The reasons of the blocking hooks, joined; sent to the model. */
  readonly reason: string | undefined;
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

function appendCapped(current: string, chunk: Buffer): string {
  if (current.length >= MAX_HOOK_OUTPUT_CHARS) return current;
  return (current + chunk.toString("utf8")).slice(0, MAX_HOOK_OUTPUT_CHARS);
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** Runs one hook command. Never rejects. */
export function runHookCommand(hook: PolicyHook, payload: string, input: HookRunInput): Promise<HookResult> {
  const timeoutMs =
    hook.timeoutSeconds === undefined
      ? (input.defaultTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS)
      : hook.timeoutSeconds * 1000;
  const started = performance.now();
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    let settled = false;
    const finish = (
      result: Omit<HookResult, "command" | "source" | "stdout" | "stderr" | "durationMs">,
    ): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      input.signal?.removeEventListener("abort", onAbort);
      resolve({
        command: hook.command,
        source: hook.source,
        stdout,
        stderr,
        durationMs: Math.round(performance.now() - started),
        ...result,
      });
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn("/bin/sh", ["-c", hook.command], {
        cwd: input.hostCwd ?? process.cwd(),
        env: input.env ?? process.env,
        stdio: ["pipe", "pipe", "pipe"],
        // Its own process group, so a timeout kills whatever the hook started too.
        detached: true,
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      resolve({
        command: hook.command,
        source: hook.source,
        outcome: "error",
        exitCode: null,
        signal: null,
        reason: `the hook could not be started: ${message}`,
        stdout: "",
        stderr: "",
        durationMs: 0,
      });
      return;
    }
    let graceTimer: NodeJS.Timeout | undefined;
    const stop = (): void => {
      killGroup(child.pid, "SIGTERM");
      graceTimer = setTimeout(() => killGroup(child.pid, "SIGKILL"), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    const onAbort = (): void => stop();
    input.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout?.on("data", (chunk: Buffer) => (stdout = appendCapped(stdout, chunk)));
    child.stderr?.on("data", (chunk: Buffer) => (stderr = appendCapped(stderr, chunk)));
    // A hook that exits without reading stdin closes the pipe: EPIPE is not the hook's failure.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(payload);
    child.on("error", (error) =>
      finish({
        outcome: "error",
        exitCode: null,
        signal: null,
        reason: `the hook could not be run: ${error.message}`,
      }),
    );
    child.on("close", (code, signal) => {
      if (timedOut) {
        finish({
          outcome: "timeout",
          exitCode: code,
          signal,
          reason: `the hook timed out after ${timeoutMs / 1000}s`,
        });
        return;
      }
      if (code === 2) {
        finish({
          outcome: "block",
          exitCode: code,
          signal,
          reason: stderr.trim() || `blocked by the hook ${hook.command}`,
        });
        return;
      }
      if (code === 0) {
        const verdict = jsonVerdict(stdout);
        finish(
          verdict.block
            ? {
                outcome: "block",
                exitCode: code,
                signal,
                reason: verdict.reason ?? `blocked by the hook ${hook.command}`,
              }
            : { outcome: "ok", exitCode: code, signal, reason: undefined },
        );
        return;
      }
      const how = signal === null ? `exited with code ${code}` : `was killed by ${signal}`;
      const detail = stderr.trim() === "" ? "" : `: ${stderr.trim().slice(0, 500)}`;
      finish({ outcome: "error", exitCode: code, signal, reason: `the hook ${how}${detail}` });
    });
  });
}

/** Runs every hook of `event` whose matcher matches the tool, in parallel. Never rejects. */
export async function runHooks(input: HookRunInput): Promise<HookRunSummary> {
  const matching = input.hooks.filter(
    (hook) => hook.event === input.event && hookMatches(hook, input.toolName),
  );
  if (matching.length === 0) return { blocked: false, reason: undefined, results: [] };
  const payload = JSON.stringify({
    session_id: input.sessionId,
    hook_event_name: input.event,
    tool_name: input.toolName,
    tool_input: input.toolInput,
    ...(input.event === "PostToolUse" ? { tool_response: input.toolResponse } : {}),
    cwd: input.cwd,
  });
  const results = await Promise.all(matching.map((hook) => runHookCommand(hook, payload, input)));
  const blocking = results.filter(
    (result) =>
      result.outcome === "block" ||
      (input.failClosed === true && (result.outcome === "error" || result.outcome === "timeout")),
  );
  const reason =
    blocking.length === 0
      ? undefined
      : blocking.map((result) => result.reason ?? "blocked by a hook").join("\n");
  return { blocked: blocking.length > 0, reason, results };
}
