// The run's event stream in the shape of Claude Code's `--output-format stream-json`: a `system` init
// event, `assistant` messages carrying tool_use blocks, `user` messages carrying the tool_result blocks
// as sent to the model, and a final `result`. Written to events.jsonl always, and to stdout with
// --output-format stream-json. Every line passes the redactor first.
import fs from "node:fs";
import type Anthropic from "@anthropic-ai/sdk";
import type { TurnUsage } from "./driver.js";

export type StreamEvent =
  | {
      type: "system";
      subtype: "init";
      session_id: string;
      cwd: string;
      model: string;
      tools: string[];
      permissionMode: string;
      agent_ci_version: string;
    }
  | {
      /** Claude Code's event for a compaction; `post_tokens` and the rest are agent-ci's additions. */
      type: "system";
      subtype: "compact_boundary";
      session_id: string;
      compact_metadata: { trigger: "manual" | "auto"; pre_tokens: number; post_tokens: number; strategy: string; cleared_tool_results?: number };
    }
  | {
      type: "assistant";
      session_id: string;
      parent_tool_use_id: null;
      message: {
        id: string;
        type: "message";
        role: "assistant";
        model: string;
        content: Anthropic.ContentBlockParam[];
        stop_reason: string | null;
        usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };
      };
    }
  | {
      type: "user";
      session_id: string;
      parent_tool_use_id: null;
      message: { role: "user"; content: Anthropic.ToolResultBlockParam[] };
    }
  | {
      type: "result";
      subtype: "success" | "error_max_turns" | "error_during_execution";
      session_id: string;
      is_error: boolean;
      exit_reason: string;
      duration_ms: number;
      duration_api_ms: number;
      num_turns: number;
      result: string;
      total_cost_usd: number;
      usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };
      permission_denials: Array<{ tool_name: string; tool_use_id: string; tool_input: unknown }>;
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
  ) {
    this.fd = file ? fs.openSync(file, "a") : undefined;
  }

  emit(event: StreamEvent): void {
    const line = this.redact(JSON.stringify(event));
    if (this.fd !== undefined) {
      try {
        fs.writeSync(this.fd, line + "\n");
      } catch (e) {
        this.writeError = e as Error;
        this.close();
      }
    }
    this.stdout?.(line);
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
