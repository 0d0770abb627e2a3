// Patches and both their sides for the publish gate's tests, made by git as publish makes them: the base files
// committed in a fresh repository, the change written and diffed by `git diff`, the patch applied to the base
// commit by publish's own treeWithPatch and read back by its gitPatchSides.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { git } from "../../src/host-git.js";
import { gitPatchSides, treeWithPatch, type GitRun, type PatchSides } from "../../src/publish/patch-sides.js";

export interface PatchCase {
  patch: string;
  sides: PatchSides;
  /** The repository: the base commit checked out, the change not applied. */
  dir: string;
}

/** `base` committed, then `after` written over it (null deletes a file) and diffed; the sides as publish reads them. */
export async function patchCase(
  base: Record<string, string>,
  after: Record<string, string | null>,
): Promise<PatchCase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-sides-"));
  const sh = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
      cwd: dir,
      encoding: "utf8",
    });
  sh("init", "-q");
  const write = (files: Record<string, string | null>) => {
    for (const [rel, text] of Object.entries(files)) {
      const file = path.join(dir, rel);
      if (text === null) fs.rmSync(file, { force: true });
      else {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, text);
      }
    }
  };
  write(base);
  sh("add", "-A");
  sh("commit", "-q", "--allow-empty", "-m", "base");
  const commit = sh("rev-parse", "HEAD").trim();
  write(after);
  sh("add", "-A");
  const patch = sh("diff", "--cached", "--binary", commit);
  sh("reset", "-q", "--hard", commit);
  const patchFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-patch-")), "patch.diff");
  fs.writeFileSync(patchFile, patch);
  const run: GitRun = (args, env) => git(args, { cwd: dir, env });
  const tree = await treeWithPatch(run, commit, patchFile);
  return { patch, sides: gitPatchSides(run, commit, tree), dir };
}

/** Sides for a hand-written patch git would not apply (megabytes on one line, a NUL): no base, `patched` after. */
export function textSides(patched: string): PatchSides {
  return { base: async () => undefined, patched: async () => patched };
}
