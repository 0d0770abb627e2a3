// The run's artifact: patch.diff, report.json, report.md, report.html, conversation.jsonl (what a later run needs
// to continue this one) and trigger.json (the untrusted text as received) uploaded as one artifact with
// @actions/artifact. It fails soft: when the artifact service is
// unreachable (no ACTIONS_RUNTIME_TOKEN, a network error) the step logs a warning and goes on, the files stay
// on the runner and the outputs are still set. A patch holding a known secret value (the token or the API key)
// is withheld from the upload (RELIABILITY S5).
import fs from "node:fs";
import path from "node:path";
import { PATCH_FILE_NAME, REPORT_FILE_NAMES, type SecretFinding } from "../report/index.js";
import { CONVERSATION_FILE } from "../runner/resume/resume.js";

export const TRIGGER_FILE_NAME = "trigger.json";
export const WITHHELD_PATCH_FILE_NAME = "patch-withheld.txt";

/** What the Action needs from an artifact client (DefaultArtifactClient, or a fake in tests). */
export interface ArtifactUploader {
  uploadArtifact(
    name: string,
    files: string[],
    rootDirectory: string,
    options?: { retentionDays?: number },
  ): Promise<{ id?: number; size?: number }>;
}

export type ArtifactResult =
  | { kind: "uploaded"; id: number; files: string[] }
  | { kind: "failed"; message: string; files: string[] }
  | { kind: "disabled" };

/** What `{run_id}` in artifact_name stands for. */
export const RUN_ID_PLACEHOLDER = "{run_id}";

/**
 * The artifact's name: artifact_name with `{run_id}` replaced, so a later workflow can find a run's artifact by
 * its id; in a matrix of attempts (the `attempt` input), `-attempt-k` after it, as the choose action reads it.
 */
export function runArtifactName(name: string, runId: string, attempt?: number): string {
  return `${name.replaceAll(RUN_ID_PLACEHOLDER, runId)}${attempt ? `-attempt-${attempt}` : ""}`;
}

/** @actions/artifact's client, loaded when the upload starts: a run's start does not parse it. */
export function defaultArtifactUploader(): ArtifactUploader {
  return {
    async uploadArtifact(name, files, rootDirectory, options) {
      const { DefaultArtifactClient } = await import("@actions/artifact");
      return new DefaultArtifactClient().uploadArtifact(name, files, rootDirectory, options);
    },
  };
}

/** The files to upload, in a fixed order; the patch is replaced by a notice when it holds a known secret. */
export function artifactFiles(outDir: string, knownSecretFindings: readonly SecretFinding[]): string[] {
  const names: string[] = [
    PATCH_FILE_NAME,
    REPORT_FILE_NAMES.json,
    REPORT_FILE_NAMES.markdown,
    REPORT_FILE_NAMES.html,
    CONVERSATION_FILE,
    TRIGGER_FILE_NAME,
  ];
  if (knownSecretFindings.length) {
    const where = knownSecretFindings.map((f) => `${f.file}${f.line ? `:${f.line}` : ""}`).join(", ");
    fs.writeFileSync(
      path.join(outDir, WITHHELD_PATCH_FILE_NAME),
      `The patch was not uploaded: it contains a value agent-ci knows to be a secret (the GitHub token or the model API key) at ${where}.\n` +
        `It is on the runner at ${path.join(outDir, PATCH_FILE_NAME)} for as long as the job runs.\n`,
    );
    names[0] = WITHHELD_PATCH_FILE_NAME;
  }
  return names.map((name) => path.join(outDir, name)).filter((file) => fs.existsSync(file));
}

export async function uploadRunArtifact(
  uploader: ArtifactUploader,
  options: { name: string; files: string[]; rootDirectory: string; retentionDays?: number },
): Promise<ArtifactResult> {
  try {
    const response = await uploader.uploadArtifact(
      options.name,
      options.files,
      options.rootDirectory,
      options.retentionDays ? { retentionDays: options.retentionDays } : {},
    );
    if (typeof response.id !== "number")
      return {
        kind: "failed",
        message: "the artifact service returned no artifact id",
        files: options.files,
      };
    return { kind: "uploaded", id: response.id, files: options.files };
  } catch (error) {
    return { kind: "failed", message: (error as Error).message || String(error), files: options.files };
  }
}
