// The run's event stream in the shape of Claude Code's `--output-format stream-json`: a `system` init
// event, `assistant` messages carrying tool_use blocks, `user` messages carrying the tool_result blocks
// as sent to the model, and a final `result`. Written to events.jsonl always, and to stdout with
// --output-format stream-json. Every line passes the redactor first. Fields follow the Claude Agent SDK's
// message types (SDKSystemMessage, SDKAssistantMessage, SDKUserMessage, SDKResultMessage): every message
// has a `uuid`; agent-ci's own additions (exit_reason, patch_path, …) come beside them.
import crypto from "node:crypto";
import fs from "node:fs";
import type Anthropic from "@anthropic-ai/sdk";
import type { ExitReason } from "../../report/index.js";
import type { ContentBlockParam, TurnUsage } from "../model/driver.js";

/** The result subtype Claude Code uses for each way a run ends. */
export const RESULT_SUBTYPES = {
  completed: "success",
  max_turns: "error_max_turns",
  budget: "error_max_budget_usd",
  context_window: "error_during_execution",
  max_denials: "error_during_execution",
  timeout: "error_during_execution",
  cancelled: "error_during_execution",
  api_error: "error_during_execution",
  engine_error: "error_during_execution",
  config_error: "error_during_execution",
  schema_invalid: "error_max_structured_output_retries",
} as const satisfies Record<ExitReason, string>;
export type ResultSubtype = (typeof RESULT_SUBTYPES)[ExitReason];

export type StreamEvent =
  | {
      type: "system";
      subtype: "init";
      session_id: string;
      /** Where the API key came from: "ANTHROPIC_API_KEY" (the environment or the Action's input), or "none". */
      apiKeySource: "ANTHROPIC_API_KEY" | "none";
      cwd: string;
      model: string;
      tools: string[];
      /** agent-ci connects no MCP servers. */
      mcp_servers: Array<{ name: string; status: string }>;
      permissionMode: string;
      agent_ci_version: string;
    }
  | {
      /** Claude Code's event for a compaction; `post_tokens` and the rest are agent-ci's additions. */
      type: "system";
      subtype: "compact_boundary";
      session_id: string;
      compact_metadata: {
        trigger: "manual" | "auto";
        pre_tokens: number;
        post_tokens: number;
        strategy: string;
        cleared_tool_results?: number;
      };
    }
  | {
      /** agent-ci's own: the API refused the context-management beta, so agent-ci clears old results itself. */
      type: "system";
      subtype: "context_management_fallback";
      session_id: string;
      refused_edit: string;
      reason: string;
    }
  | {
      type: "assistant";
      session_id: string;
      /** The Task call whose subagent this conversation is; null for the main loop (as Claude Code's). */
      parent_tool_use_id: string | null;
      message: {
        id: string;
        type: "message";
        role: "assistant";
        model: string;
        content: ContentBlockParam[];
        stop_reason: string | null;
        usage: {
          input_tokens: number;
          output_tokens: number;
          cache_creation_input_tokens: number;
          cache_read_input_tokens: number;
        };
      };
    }
  | {
      type: "user";
      session_id: string;
      parent_tool_use_id: string | null;
      message: { role: "user"; content: Array<Anthropic.ToolResultBlockParam | Anthropic.TextBlockParam> };
    }
  | {
      type: "result";
      subtype: ResultSubtype;
      session_id: string;
      is_error: boolean;
      /** For an error subtype: what ended the run (Claude Code's SDKResultError.errors). */
      errors?: string[];
      exit_reason: string;
      duration_ms: number;
      duration_api_ms: number;
      num_turns: number;
      result: string;
      total_cost_usd: number;
      usage: {
        input_tokens: number;
        output_tokens: number;
        cache_creation_input_tokens: number;
        cache_read_input_tokens: number;
      };
      permission_denials: Array<{ tool_name: string; tool_use_id: string; tool_input: unknown }>;
      /** The valid StructuredOutput object (Claude Code's SDKResultSuccess.structured_output). */
      structured_output?: Record<string, unknown>;
      patch_path?: string;
      report_path?: string;
    };

export function apiUsage(usage: TurnUsage) {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: usage.cacheCreationInputTokens,
    cache_read_input_tokens: usage.cacheReadInputTokens,
  };
}

/** How a run ended, as its `result` event tells it. */
export interface RunEnd {
  sessionId: string;
  exitReason: ExitReason;
  isError: boolean;
  /** What ended the run, when it did not complete. */
  errors?: string[];
  /** When the run started (performance.now()). */
  runStart: number;
  loop: { apiMs: number; turns: readonly unknown[] };
  result: string;
  costUsd: number;
  usage: TurnUsage;
  denials: Array<{ tool_name: string; tool_use_id: string; tool_input: unknown }>;
  structured?: Record<string, unknown>;
  patchPath?: string;
  reportPath?: string;
}

/** The stream's last event, Claude Code's `result`, built in this one place for every way a run ends. */
export function resultEvent(end: RunEnd): StreamEvent {
  return {
    type: "result",
    subtype: RESULT_SUBTYPES[end.exitReason],
    session_id: end.sessionId,
    is_error: end.isError,
    ...(end.errors ? { errors: end.errors } : {}),
    exit_reason: end.exitReason,
    duration_ms: Math.round(performance.now() - end.runStart),
    duration_api_ms: Math.round(end.loop.apiMs),
    num_turns: end.loop.turns.length,
    result: end.result,
    total_cost_usd: end.costUsd,
    usage: apiUsage(end.usage),
    permission_denials: end.denials,
    ...(end.structured ? { structured_output: end.structured } : {}),
    patch_path: end.patchPath,
    report_path: end.reportPath,
  };
}

/**
 * Writes each event as one JSON line to events.jsonl and, when asked, to stdout. A failed write (a full
 * disk) never ends the run: the file is given up, the error kept in `writeError` for the report (D10).
 */
export class EventSink {
  private fd: number | undefined;
  writeError: Error | undefined;

  constructor(
    file: string | undefined,
    private readonly redact: (text: string) => string,
    private readonly stdout?: (line: string) => void,
    /** Told of each event as emitted (progress for the Action's comment); its errors never stop the run. */
    private readonly listener?: (event: StreamEvent) => void,
  ) {
    this.fd = file ? fs.openSync(file, "a") : undefined;
  }

  emit(event: StreamEvent): void {
    const line = this.redact(JSON.stringify({ ...event, uuid: crypto.randomUUID() }));
    if (this.fd !== undefined) {
      try {
        fs.writeSync(this.fd, line + "\n");
      } catch (e) {
        this.writeError = e as Error;
        this.close();
      }
    }
    this.stdout?.(line);
    try {
      this.listener?.(event);
    } catch {
      // a progress listener's failure is not the run's
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      fs.closeSync(fd);
    } catch {
      // already reported through writeError, or nothing more can be done
    }
  }
}
