// A real run's output folder for the publish tests: runAgent on the real engine with the scripted fix of
// calcWorkspace(), so report.json (with its base commit) and patch.diff are what a run writes.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { GitHubApi, octokitRequest } from "../../src/github/api.js";
import { DEFAULT_MAX_PATCH_BYTES } from "../../src/publish/checks.js";
import { DEFAULT_AUTHOR, type PublishPrOptions } from "../../src/publish/pull-request.js";
import { parseRunConfig } from "../../src/runner/config.js";
import { runAgent } from "../../src/runner/run.js";
import { calcWorkspace, FIX_SCRIPT, scriptFile } from "./action-harness.js";
import type { GitRemote } from "./git-remote.js";

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
    out: fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-out-")),
    script: scriptFile(FIX_SCRIPT, "Fixed add(): it subtracted.\n\nThe sum now adds its operands."),
    mode: "acceptEdits",
  });
  const outcome = await runAgent(config, {
    stdout: () => undefined,
    stderr: () => undefined,
    progress: false,
  });
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
