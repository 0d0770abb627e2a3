// Locale-independent number, time and text formatting shared by the Markdown and HTML renderers
// (deterministic output: golden files must not depend on the machine's ICU data).
import { toolEntry } from "../policy/tool-catalog.js";
import type { ExitReason, Outcome, ToolCall } from "./schema.js";

export function formatInt(value: number): string {
  const sign = value < 0 ? "-" : "";
  return sign + String(Math.round(Math.abs(value))).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

export function formatUsd(value: number): string {
  if (value === 0) return "$0.00";
  if (value < 0.01) return `$${value.toFixed(4)}`;
  if (value < 1) return `$${value.toFixed(3)}`;
  return `$${formatInt(Math.floor(value))}.${value.toFixed(2).slice(-2)}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1_000).toFixed(2)} s`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const totalSeconds = Math.round(ms / 1_000);
  const hours = Math.floor(totalSeconds / 3_600);
  const minutes = Math.floor((totalSeconds % 3_600) / 60);
  const seconds = totalSeconds % 60;
  if (hours > 0) return `${hours}h ${String(minutes).padStart(2, "0")}m`;
  return `${minutes}m ${String(seconds).padStart(2, "0")}s`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1_024) return `${bytes} B`;
  if (bytes < 1_024 * 1_024) return `${(bytes / 1_024).toFixed(1)} KiB`;
  if (bytes < 1_024 * 1_024 * 1_024) return `${(bytes / 1_024 / 1_024).toFixed(1)} MiB`;
  return `${(bytes / 1_024 / 1_024 / 1_024).toFixed(1)} GiB`;
}

/** Cuts `text` to at most `max` characters (ending in "…"), never splitting a surrogate pair. */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return "…".slice(0, max);
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** Removes ANSI escape sequences and other control characters (keeps newlines and tabs) for display. */
export function stripControl(text: string): string {
  return text
    .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, "")
    .replace(/\u001b[@-_]/g, "")
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, "");
}

/** Whitespace runs (newlines included) become one space. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

export const OUTCOME_LABELS: Record<Outcome, string> = {
  changes: "Changes ready",
  no_changes: "No changes",
  verify_failed: "Verify failed",
  stopped: "Stopped early",
  error: "Run failed",
};

export const EXIT_REASON_LABELS: Record<ExitReason, string> = {
  completed: "the agent finished",
  max_turns: "the turn limit was reached",
  budget: "the budget limit was reached",
  timeout: "the run timed out",
  context_window: "the conversation outgrew the model's context window",
  max_denials: "too many tool calls were denied",
  cancelled: "the run was cancelled",
  api_error: "the model API failed",
  engine_error: "the container engine failed",
  config_error: "the configuration was invalid",
  schema_invalid: "the agent returned no object valid against the output schema",
};

/** Container paths the model sees (/workspace/x) shown relative to the workspace. */
export function workspaceRelative(path: string): string {
  if (path === "/workspace") return ".";
  return path.startsWith("/workspace/") ? path.slice("/workspace/".length) : path;
}

function field(input: unknown, name: string): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined;
  return (input as Record<string, unknown>)[name];
}

function text(input: unknown, name: string): string | undefined {
  const value = field(input, name);
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

function compactJson(input: unknown): string {
  try {
    return JSON.stringify(input) ?? "";
  } catch {
    return String(input);
  }
}

/** One line saying what a call did, from its input (Claude Code parameter names); JSON for unknown tools. */
export function summarizeCall(tool: string, input: unknown): string {
  const entry = toolEntry(tool);
  if (entry?.category === "read" || entry?.category === "edit") {
    const path = entry.pathKey === undefined ? undefined : text(input, entry.pathKey);
    const pattern = text(input, "pattern");
    if (pattern !== undefined) {
      const where = [
        path === undefined ? undefined : `in ${workspaceRelative(path)}`,
        text(input, "glob") === undefined ? undefined : `glob ${text(input, "glob")}`,
        text(input, "type") === undefined ? undefined : `type ${text(input, "type")}`,
      ].filter((part): part is string => part !== undefined);
      return [oneLine(pattern), ...where].join("  ");
    }
    if (path !== undefined) {
      const offset = text(input, "offset");
      const limit = text(input, "limit");
      const range = offset !== undefined || limit !== undefined ? ` [${offset ?? 1}+${limit ?? "…"}]` : "";
      return workspaceRelative(path) + range;
    }
  }
  switch (tool) {
    case "Bash": {
      const command = text(input, "command");
      if (command === undefined) break;
      return oneLine(command) + (field(input, "run_in_background") === true ? "  (background)" : "");
    }
    case "TodoWrite": {
      const todos = field(input, "todos");
      if (!Array.isArray(todos)) break;
      return `${todos.length} todo${todos.length === 1 ? "" : "s"}`;
    }
    case "TaskOutput":
    case "BashOutput":
      return text(input, "task_id") ?? text(input, "bash_id") ?? compactJson(input);
    case "KillShell":
    case "TaskStop":
      return text(input, "shell_id") ?? text(input, "task_id") ?? compactJson(input);
  }
  return oneLine(compactJson(input));
}

/** The call's own title when the tool gave one, else a summary of its input. */
export function describeCall(call: Pick<ToolCall, "tool" | "input" | "title">): string {
  return call.title !== undefined && call.title.trim() !== ""
    ? oneLine(call.title)
    : summarizeCall(call.tool, call.input);
}
