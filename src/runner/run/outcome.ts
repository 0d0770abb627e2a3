// What one run hands its entry (RunOutcome), and what the run and the runs around it (attempts) both need
// before any stage: the secrets the configuration knows, the default output folder, and whether a config error
// ended the run before any container.
import fs from "node:fs";
import path from "node:path";
import type { ExitReason, RunReport } from "../../report/index.js";
import type { ReviewPlacement } from "../../review/review-task.js";
import { credentialSecrets } from "../model/credentials.js";
import { CLOUD_CREDENTIAL_VARIABLES, injectedNames, type RunConfig, secretFromEnv } from "../config.js";
import { DEFAULT_OUT_PARENT } from "../options.js";

export interface RunOutcome {
  runId: string;
  exitReason: ExitReason;
  exitCode: number;
  outDir: string;
  patchPath: string;
  reportPath?: string;
  report?: RunReport;
  error?: string;
  /** The valid structured result, redacted (as in output.json). */
  structuredOutput?: Record<string, unknown>;
  /** Review mode: the findings placed on the diff (inline) or for the summary. */
  review?: ReviewPlacement;
  /** The agent's own final answer, redacted ("" when it gave none). */
  finalMessage?: string;
}

/** A config error that ended the run before any container was made: it leaves no output folder (the CLI). */
export function endedBeforeAnyContainer(outcome: Pick<RunOutcome, "exitReason" | "report">): boolean {
  return (
    outcome.exitReason === "config_error" && !outcome.report?.phases?.some((p) => p.name === "container")
  );
}

/** Known secret values: never in the container, and `***` in everything written or printed. */
export function knownSecrets(config: RunConfig): string[] {
  const fromEnv = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    ...CLOUD_CREDENTIAL_VARIABLES,
  ]
    .map((name) => process.env[name])
    .filter((v): v is string => Boolean(v));
  const aws = config.awsCredentials;
  const cloud = [aws?.accessKeyId, aws?.secretAccessKey, aws?.sessionToken, config.googleAccessToken];
  const injected = injectedNames(config).map((name) => secretFromEnv(name));
  return [...credentialSecrets(config), ...config.secrets, ...fromEnv, ...cloud, ...injected].filter(
    (v): v is string => Boolean(v),
  );
}

/**
 * The run's output folder, made: --out, or ./agent-ci-out/<run-id> in a folder that ignores itself (as pytest's
 * cache does): it sits inside the user's repository, and a later `git add -A` must not pick up reports.
 */
export function makeOutDir(config: Pick<RunConfig, "out">, runId: string): string {
  const outDir = config.out ? path.resolve(config.out) : path.resolve(DEFAULT_OUT_PARENT, runId);
  if (!config.out) {
    const parent = path.dirname(outDir);
    fs.mkdirSync(parent, { recursive: true });
    const ignore = path.join(parent, ".gitignore");
    if (!fs.existsSync(ignore))
      fs.writeFileSync(ignore, "# Written by agent-ci: its run outputs are not part of the repository.\n*\n");
  }
  fs.mkdirSync(outDir, { recursive: true });
  return outDir;
}
