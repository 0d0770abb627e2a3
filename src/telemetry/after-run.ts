// The one way the faces (the CLI, the Action) export a run's telemetry once its record is written: nothing when
// CLAUDE_CODE_ENABLE_TELEMETRY is off (the exporters' chunk is not even loaded), and a failure to load it one
// warning line, as exportRunTelemetry's own failures are.
import type { RunReport } from "../report/index.js";
import type { ExportRunOptions, RunOrigin } from "./index.js";
import { telemetryEnabled } from "./settings.js";

export interface AfterRun extends Omit<ExportRunOptions, "report" | "origin"> {
  /** The run's record as written; none (a run that ended before it): nothing is exported. */
  report: RunReport | undefined;
  /** The run's prompt (redacted before it is exported). */
  prompt: string | undefined;
  /** Where the run came from (the Action's event); without it, the workflow's environment says (the CLI). */
  origin?: Omit<RunOrigin, "prompt">;
}

/** Exports the run's telemetry when it is on; resolves once it is sent or given up. Never throws. */
export async function exportAfterRun(options: AfterRun): Promise<void> {
  const { report, prompt, origin, ...rest } = options;
  if (!report || !telemetryEnabled(options.env)) return;
  try {
    const telemetry = await import("./index.js");
    await telemetry.exportRunTelemetry({
      ...rest,
      report,
      origin: { prompt, ...(origin ?? telemetry.workflowOrigin(options.env, report)) },
    });
  } catch (e) {
    options.warn(`agent-ci: telemetry: not exported: ${(e as Error).message}`);
  }
}
