// A real run's output folder for the publish tests: runAgent on the real engine with the scripted fix of
// calcWorkspace(), so report.json (with its base commit) and patch.diff are what a run writes.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { GitHubApi, octokitRequest } from "../../src/github/api.js";
import { DEFAULT_MAX_PATCH_BYTES } from "../../src/publish/checks.js";
import { summarizePatch, type RunReport } from "../../src/report/index.js";
import { DEFAULT_AUTHOR, type PublishPrOptions } from "../../src/publish/pull-request.js";
import { parseRunConfig } from "../../src/runner/config.js";
import { runAgent } from "../../src/runner/run.js";
import { calcWorkspace, FIX_SCRIPT, scriptFile } from "./action-harness.js";
import type { GitRemote } from "./git-remote.js";
import { quietIo, tempOut } from "./run-io.js";

export interface RunFolder {
  workspace: string;
  base: string;
  outDir: string;
}

export async function realRunFolder(): Promise<RunFolder> {
  const workspace = calcWorkspace();
  const base = execFileSync("git", ["rev-parse", "HEAD"], { cwd: workspace, encoding: "utf8" }).trim();
  const config = parseRunConfig({
    workspace,
    out: tempOut(),
    script: scriptFile(FIX_SCRIPT, "Fixed add(): it subtracted.\n\nThe sum now adds its operands."),
    mode: "acceptEdits",
  });
  const outcome = await runAgent(config, quietIo());
  if (outcome.report?.outcome !== "changes")
    throw new Error(`the fixture run ended with ${outcome.report?.outcome ?? outcome.exitReason}`);
  return { workspace, base, outDir: outcome.outDir };
}

/** The publish options the tests use: acme/widgets on the local remote and the fake GitHub, with `token`. */
export function publishOptions(
  target: { remote: GitRemote; githubUrl: string; token: string },
  outDir: string,
  repoDir: string,
  extra: Partial<PublishPrOptions> = {},
): PublishPrOptions {
  const { remote, githubUrl, token } = target;
  return {
    outDir,
    repoDir,
    remote: remote.repoUrl("acme", "widgets"),
    token,
    api: new GitHubApi({ request: octokitRequest(token, githubUrl), sleep: async () => undefined }),
    owner: "acme",
    repo: "widgets",
    allow: [],
    maxPatchBytes: DEFAULT_MAX_PATCH_BYTES,
    secrets: [token],
    author: DEFAULT_AUTHOR,
    log: () => undefined,
    redact: (text) => text.split(token).join("***"),
    ...extra,
  };
}

export interface VariantChange {
  runId?: string;
  trigger?: unknown;
  patch?: string;
  findings?: RunReport["patch"]["secretFindings"];
  /** The agent's last words (the last turn's text). */
  finalText?: string;
  /** The commit the run started from (a follow-up starts from its PR branch's tip). */
  baseCommit?: string;
}

/** A copy of a run's folder with another run id, trigger, patch or findings; the report's patch summary is recomputed. */
export function runVariant(runOut: string, change: VariantChange): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-variant-"));
  fs.cpSync(runOut, dir, { recursive: true });
  const report = JSON.parse(fs.readFileSync(path.join(dir, "report.json"), "utf8")) as RunReport;
  if (change.runId) report.runId = change.runId;
  if (change.patch !== undefined) {
    fs.writeFileSync(path.join(dir, "patch.diff"), change.patch);
    report.patch = summarizePatch(change.patch);
  }
  if (change.findings) report.patch.secretFindings = change.findings;
  if (change.baseCommit) report.workspace.baseCommit = change.baseCommit;
  const last = report.turns.at(-1);
  if (change.finalText !== undefined && last) last.text = change.finalText;
  fs.writeFileSync(path.join(dir, "report.json"), JSON.stringify(report));
  if (change.trigger !== undefined)
    fs.writeFileSync(path.join(dir, "trigger.json"), JSON.stringify(change.trigger));
  return dir;
}

/**
 * A patch made with git in a copy of the workspace: the files written (a Buffer as bytes), the modes set,
 * symbolic links made and files removed, then `git diff --binary`.
 */
export function patchWriting(
  workspace: string,
  files: Record<string, string | Buffer>,
  modes: Record<string, number> = {},
  more: { links?: Record<string, string>; removed?: string[] } = {},
): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-edit-"));
  fs.cpSync(workspace, dir, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
  for (const [rel, mode] of Object.entries(modes)) fs.chmodSync(path.join(dir, rel), mode);
  for (const [rel, target] of Object.entries(more.links ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.symlinkSync(target, path.join(dir, rel));
  }
  for (const rel of more.removed ?? []) fs.rmSync(path.join(dir, rel));
  execFileSync("git", ["-c", "core.fileMode=true", "add", "-A"], { cwd: dir });
  return execFileSync("git", ["diff", "--cached", "--binary"], { cwd: dir, encoding: "utf8" });
}
