// Telemetry as a capability of the run (docs/ARCHITECTURE.md, Capabilities): the entries (the CLI, the
// Action) give it to each run (runner/run.ts's RunIO), as the runner may not import this room; its part of a
// run exports the record once it is written (`recorded`: after-run.ts, which loads the OpenTelemetry SDK only
// when CLAUDE_CODE_ENABLE_TELEMETRY is on). It reads no option of the table: the OTEL_* environment sets it.
import type { Capability, RecordedGiven } from "../runner/capabilities/capability.js";
import { type AfterRun, exportAfterRun } from "./after-run.js";

export interface TelemetryGiven extends Pick<AfterRun, "env" | "warn" | "grpc" | "origin"> {
  /** Secret values the entry knows beside the run's (the Action's inputs, its cloud credentials). */
  secrets?: readonly string[];
  /** Runs whose record is not exported (the CLI: a config error before any container leaves no output). */
  skip?: (ended: Pick<RecordedGiven, "exitReason" | "report">) => boolean;
}

/** The capability that exports each run's telemetry once its record is written. */
export function telemetry(given: TelemetryGiven): Capability {
  const { secrets = [], skip, ...rest } = given;
  return {
    name: "telemetry",
    options: [],
    forRun: (config) => ({
      recorded: async (ended) => {
        if (skip?.(ended)) return;
        await exportAfterRun({
          ...rest,
          report: ended.report,
          outDir: ended.outDir,
          prompt: config.prompt,
          secrets: [...secrets, ...ended.secrets],
        });
      },
    }),
  };
}
