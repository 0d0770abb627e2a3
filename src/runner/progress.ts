// The run's progress as a caller sees it: the sandbox is ready, a tool call was made, verify started. Derived
// from the event stream (the one record of what happened) plus the verify phase, which has no event of its own.
import type { StreamEvent } from "./events.js";

export type RunProgress =
  { kind: "sandbox_ready"; runId: string } | { kind: "tool_call"; tool: string } | { kind: "verifying" };

/** What one event says about progress (nothing for most). */
export function progressOf(event: StreamEvent): RunProgress[] {
  if (event.type === "system" && event.subtype === "init")
    return [{ kind: "sandbox_ready", runId: event.session_id }];
  if (event.type === "assistant")
    return event.message.content.flatMap((block) =>
      block.type === "tool_use" ? [{ kind: "tool_call" as const, tool: block.name }] : [],
    );
  return [];
}

/** The EventSink listener that tells `onProgress`, or undefined when nobody listens. */
export function progressListener(
  onProgress: ((progress: RunProgress) => void) | undefined,
): ((event: StreamEvent) => void) | undefined {
  if (!onProgress) return undefined;
  return (event) => {
    for (const progress of progressOf(event)) onProgress(progress);
  };
}
