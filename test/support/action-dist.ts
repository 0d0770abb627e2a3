// The Actions as a runner gets them: a folder laid out as this repository (action.yml, publish/, choose/, the
// files dist/ reads at run time) with dist/ built from the working tree's src/, so the tests run what a commit
// would ship, whether or not dist/ was rebuilt. Built once per test run by global-setup.ts, and only when its
// inputs changed: the folder is named by a hash of what the build reads, so a second run reuses it.
// The committed dist/ is checked against such a build by test/action/dist.test.ts.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { inject } from "vitest";

export const REPO_ROOT = path.resolve(import.meta.dirname, "../..");

/** What the Actions read beside dist/ at run time (action.yml files, the images' recipes), linked in. */
const ACTION_FILES = [
  "action.yml",
  "publish",
  "choose",
  "Dockerfile.sandbox",
  "images.json",
  "toolbelt",
  "schema",
  "package.json",
];

/** The build's inputs: the checkout, its sources, the build scripts, the locked dependencies. */
function buildInputsHash(): string {
  const listed = execFileSync(
    "git",
    ["ls-files", "-co", "--exclude-standard", "src", "scripts", "bench", "package.json", "package-lock.json"],
    { cwd: REPO_ROOT, encoding: "utf8" },
  )
    .split("\n")
    .filter(Boolean)
    .sort();
  // The checkout itself too: the folder links into it, and the bundles' source maps name its paths.
  const hash = crypto.createHash("sha256").update(REPO_ROOT).update("\0");
  for (const file of listed) {
    const full = path.join(REPO_ROOT, file);
    if (!fs.existsSync(full)) continue;
    hash.update(file).update("\0").update(fs.readFileSync(full)).update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

/** The action folder for the working tree's sources, built when missing; returns its path. */
export function ensureActionBuild(log: (line: string) => void = () => undefined): string {
  const root = path.join(os.tmpdir(), `agent-ci-action-${buildInputsHash()}`);
  if (fs.existsSync(path.join(root, "dist", "index.js"))) return root;
  const staging = fs.mkdtempSync(`${root}.staging-`);
  log(`building dist/ from src/ into ${root}`);
  execFileSync(
    process.execPath,
    [path.join(REPO_ROOT, "scripts/build.mjs"), "--outdir", path.join(staging, "dist")],
    {
      cwd: REPO_ROOT,
      stdio: "pipe",
    },
  );
  for (const name of ACTION_FILES) fs.symlinkSync(path.join(REPO_ROOT, name), path.join(staging, name));
  try {
    fs.renameSync(staging, root);
  } catch (error) {
    // Another test run built the same inputs first: theirs is the same build.
    if (!fs.existsSync(path.join(root, "dist", "index.js"))) throw error;
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return root;
}

declare module "vitest" {
  export interface ProvidedContext {
    /** The built action folder (ensureActionBuild), from global-setup.ts. */
    actionRoot: string;
  }
}

/** The built action folder: global-setup's, or built here when a test runs without it. */
export function actionRoot(): string {
  let provided: string | undefined;
  try {
    provided = inject("actionRoot");
  } catch {
    provided = undefined;
  }
  return provided && fs.existsSync(path.join(provided, "dist", "index.js")) ? provided : ensureActionBuild();
}
