// Both sides of a patch, from git's own objects: the tree `git apply --cached` makes of the base commit and
// the patch (in a throwaway index: the checkout's files and index stay untouched, no filter or hook runs), and
// each file as it is at the base commit and in that tree. The publish gate reads settings files on both sides
// (gate-findings.ts); the commit is made of the same tree, so what was checked is what is pushed.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { GitError } from "../host-git.js";
import { PublishRefusedError } from "./options.js";

/** `git <args>` in the repository (through host-git.ts), with extra environment. */
export type GitRun = (args: readonly string[], env?: Record<string, string>) => Promise<string>;

export interface PatchSides {
  /** The file at the run's base commit; undefined when no regular file is there. */
  base(file: string): Promise<string | undefined>;
  /** The file as the patch leaves it; undefined when no regular file is there. */
  patched(file: string): Promise<string | undefined>;
}

/** The tree of base + patch, built in a throwaway index; a patch that does not apply is refused. */
export async function treeWithPatch(run: GitRun, base: string, patchFile: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-publish-"));
  const env = { GIT_INDEX_FILE: path.join(dir, "index") };
  try {
    await run(["read-tree", base], env);
    try {
      await run(["apply", "--cached", "--whitespace=nowarn", "--", patchFile], env);
    } catch (error) {
      throw new PublishRefusedError(
        `the patch does not apply to the base commit ${base}: ${error instanceof GitError ? error.stderr : (error as Error).message}`,
      );
    }
    return (await run(["write-tree"], env)).trim();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A regular file (mode 100644 or 100755) of a commit or tree, by its path from the root; else undefined. */
async function readFile(run: GitRun, treeish: string, file: string): Promise<string | undefined> {
  // The path is a literal pathspec: `*` or `:(glob)` in a file's name is the name.
  const listed = await run(["ls-tree", "-z", "--full-tree", treeish, "--", file], {
    GIT_LITERAL_PATHSPECS: "1",
  });
  const entry = /^(\d+) (\w+) ([0-9a-f]+)\t([^\0]*)\0/.exec(listed);
  if (!entry || entry[4] !== file || entry[2] !== "blob" || !/^100(?:644|755)$/.test(entry[1] ?? ""))
    return undefined;
  return run(["cat-file", "blob", entry[3] as string]);
}

/** The sides of a patch whose base is the commit `base` and whose result is `tree` (treeWithPatch). */
export function gitPatchSides(run: GitRun, base: string, tree: string): PatchSides {
  return {
    base: (file) => readFile(run, base, file),
    patched: (file) => readFile(run, tree, file),
  };
}
