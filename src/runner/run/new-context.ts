// A run's context before any stage: where it writes, its secrets and redactor (those its capabilities'
// configuration holds among them: an MCP server's env and headers), its event stream and the records its stages
// fill.
import path from "node:path";
import { createRedactor, MIN_SECRET_LENGTH } from "../../report/index.js";
import { RunState } from "../../tools/state.js";
import type { RunConfig } from "../config.js";
import { newLoopResult } from "../loop/agent-loop.js";
import { EventSink } from "../loop/events.js";
import { progressListener } from "../progress.js";
import type { RunContext, RunIO } from "./run-context.js";

/** Where the run writes and the secrets it knows from its configuration. */
export interface RunIdentity {
  runId: string;
  outDir: string;
  /** Every secret the run knows: its own (knownSecrets) and its capabilities' (an MCP server's values). */
  secrets: readonly string[];
}

/** The context every stage of the run shares. */
export function newRunContext(
  config: RunConfig,
  io: RunIO,
  { runId, outDir, secrets }: RunIdentity,
): RunContext {
  const allSecrets = [...secrets];
  // Masked before the run prints its first line (a runner's log masks only what it was told); a value too short to
  // redact (an MCP server's `DEBUG=1`) would mask every such string in the job's log.
  for (const secret of allSecrets) if (secret.trim().length >= MIN_SECRET_LENGTH) io.onSecret?.(secret);
  const redactor = createRedactor({ secrets: allSecrets });
  return {
    config,
    io,
    runId,
    outDir,
    patchPath: path.join(outDir, "patch.diff"),
    startedAt: new Date(),
    runStart: performance.now(),
    redactor,
    log: (line: string) => io.stderr(redactor.redact(line)),
    events: new EventSink(
      path.join(outDir, "events.jsonl"),
      redactor.redact,
      config.outputFormat === "stream-json" ? io.stdout : undefined,
      progressListener(io.onProgress),
    ),
    state: new RunState(),
    loop: newLoopResult(),
    secrets: allSecrets,
    phases: [],
  };
}
