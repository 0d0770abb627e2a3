// The workspace's own git index after the copy-in: its stat data describes the copied files (new inodes
// and ctimes), so the agent's first `git status` does not re-hash the whole tree. Read back from git's
// own record of each entry (`ls-files --debug`) against `stat` of the file in the container.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerSandbox, newRunId } from "../../src/sandbox/docker-sandbox.js";
import { makeWorkspace } from "../support/workspace.js";

const FILES = Object.fromEntries(
  Array.from({ length: 20 }, (_, i) => [`src/f${i}.js`, `module.exports = ${i};\n`]),
);

/** inode of each file in the index (`ls-files --debug`) and on disk, in the container. */
const PROBE =
  'for f in "$@"; do printf "%s %s %s\\n" "$f" "$(git ls-files --debug -- "$f" | sed -n "s/^  dev: [0-9]*\\tino: \\([0-9]*\\)$/\\1/p")" "$(stat -c %i -- "$f")"; done';

describe("the workspace's git index after copy-in", () => {
  let sandbox: DockerSandbox;
  beforeAll(async () => {
    sandbox = await DockerSandbox.start({
      runId: newRunId(),
      workspaceDir: makeWorkspace(FILES, { git: true }),
    });
  });
  afterAll(async () => {
    await sandbox?.dispose();
  });

  it("holds the copied files' stat data, and the tree is clean without a refresh", async () => {
    const files = Object.keys(FILES);
    const probe = await sandbox.exec({ argv: ["bash", "-c", PROBE, "probe", ...files] });
    expect(probe.exitCode, probe.stderr.toString()).toBe(0);
    const lines = probe.stdout.toString().trim().split("\n");
    expect(lines).toHaveLength(files.length);
    for (const line of lines) {
      const [file, indexed, onDisk] = line.split(" ");
      expect(indexed, `${file}: inode in the index`).toBe(onDisk);
    }
    // Nothing is stat-dirty: diff-files compares stat data only (no refresh), so it lists what would be re-hashed.
    const dirty = await sandbox.exec({ argv: ["git", "diff-files", "--name-only"] });
    expect(dirty.stdout.toString()).toBe("");
  });
});
