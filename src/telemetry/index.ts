// OpenTelemetry export of a run, as Claude Code exports a session (docs/telemetry.md). Loaded by the CLI and
// the Action only when CLAUDE_CODE_ENABLE_TELEMETRY=1 (a dynamic import: its own chunk), once the run's record
// is written: what is exported is read from report.json (redacted), in agent-ci's process on the host — the
// endpoint and its headers are never part of the sandbox's environment. Nothing here can fail or hold the run:
// any error becomes one warning line, and the collector gets SHUTDOWN_BUDGET_MS at most.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { createRedactor, parseReport, REPORT_FILE_NAMES, type RunReport } from "../report/index.js";
import { AGENT_CI_VERSION } from "../version.js";
import { shutdownProviders, startProviders, type GrpcExporters } from "./sdk-providers.js";
import { readTelemetrySettings, type TelemetrySettings } from "./settings.js";
import { type RunOrigin, RunSignals } from "./signals.js";

export { telemetryEnabled } from "./settings.js";
export type { RunOrigin } from "./signals.js";

export interface ExportRunOptions {
  /** The run's record as written (redacted). */
  report: RunReport;
  /** The run's output folder: with --attempts, each attempt's report.json is read from its folder. */
  outDir: string;
  origin: RunOrigin;
  /** The environment telemetry is configured from (the CLI's, the Action step's). */
  env: Readonly<Record<string, string | undefined>>;
  /** The run's known secrets: redacted from everything exported, as from everything written. */
  secrets: readonly string[];
  /** One warning line (the CLI's stderr, the Action's log). */
  warn: (line: string) => void;
  /** Where OTLP/gRPC's exporters come from: the CLI's bundle has them, the Action's does not (its size ceiling). */
  grpc?: GrpcExporters;
}

/**
 * Where a CLI run came from: the repository (the record's, else GITHUB_REPOSITORY), and in a workflow step its
 * event and pull request (GITHUB_EVENT_NAME, GITHUB_REF refs/pull/<n>/…); `cli` outside one.
 */
export function workflowOrigin(env: ExportRunOptions["env"], report: RunReport): RunOrigin {
  const pullRequest = /^refs\/pull\/(\d+)\//.exec(env.GITHUB_REF ?? "")?.[1];
  return {
    repository: report.workspace.repo ?? env.GITHUB_REPOSITORY,
    event: env.GITHUB_EVENT_NAME || "cli",
    ...(pullRequest ? { pullRequest: Number(pullRequest) } : {}),
  };
}

/** OpenTelemetry's name for the machine's architecture (semantic conventions' host.arch). */
function hostArch(): string {
  const arch = os.arch();
  return arch === "x64" ? "amd64" : arch === "ia32" ? "x86" : arch;
}

function resourceOf(settings: TelemetrySettings) {
  return resourceFromAttributes({
    ...settings.resourceAttributes,
    "host.arch": hostArch(),
    "os.type": os.platform() === "win32" ? "windows" : os.platform(),
    "os.version": os.release(),
    "service.name": "agent-ci",
    "service.version": AGENT_CI_VERSION,
  });
}

/** Each attempt's own record (attempt-k/report.json), when the run made several. */
function attemptReports(report: RunReport, outDir: string): RunReport[] {
  const reports: RunReport[] = [];
  for (const attempt of report.attempts ?? []) {
    if (!attempt.started || !attempt.dir) continue;
    const file = path.join(outDir, attempt.dir, REPORT_FILE_NAMES.json);
    try {
      reports.push(parseReport(fs.readFileSync(file, "utf8")));
    } catch {
      // an attempt whose record cannot be read is left out; the run's own record still goes
    }
  }
  return reports;
}

/** Exports the run's telemetry; resolves once it is sent, given up, or SHUTDOWN_BUDGET_MS passed. Never throws. */
export async function exportRunTelemetry(options: ExportRunOptions): Promise<void> {
  const { env, warn } = options;
  let settings: TelemetrySettings | undefined;
  try {
    settings = readTelemetrySettings(env);
  } catch (e) {
    warn(`telemetry: not exported: ${(e as Error).message}`);
    return;
  }
  if (!settings) return;
  const redactor = createRedactor({ secrets: [...options.secrets, ...settings.headerValues] });
  const problems = [...settings.problems];
  try {
    const providers = await startProviders(settings, resourceOf(settings), options.grpc);
    const origin = {
      ...options.origin,
      prompt: options.origin.prompt === undefined ? undefined : redactor.redact(options.origin.prompt),
    };
    new RunSignals(providers, settings, origin, redactor.redact).record({
      report: options.report,
      attempts: attemptReports(options.report, options.outDir),
    });
    const failure = await shutdownProviders(providers);
    if (failure) problems.push(`the export did not complete: ${failure}`);
  } catch (e) {
    problems.push(`not exported: ${(e as Error).message}`);
  }
  if (problems.length) warn(redactor.redact(`agent-ci: telemetry: ${problems.join("; ")}`));
}
