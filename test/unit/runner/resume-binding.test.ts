// A resume record bound to the commit publish pushed for its run, with host git only: the commit is found by
// its exact last line, the record's base and patch must give its tree, and what cannot be checked is refused
// when the record must be bound (the Action's artifacts).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors.js";
import { bindResumeRecord, type RecordBindingOptions } from "../../../src/runner/resume/resume-binding.js";
import { makeWorkspace } from "../../support/workspace.js";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    cwd,
    encoding: "utf8",
    stdio: "pipe",
  }).trim();

/** A repository at `base` with the change committed on top under `message`, and the change's patch. */
function published(message: string) {
  const repo = makeWorkspace({ "a.txt": "one\n" }, { git: true });
  const base = git(repo, "rev-parse", "HEAD");
  fs.writeFileSync(path.join(repo, "a.txt"), "two\n");
  const patch = Buffer.from(git(repo, "diff", "--binary") + "\n");
  git(repo, "commit", "-qam", message);
  return { repo, base, patch, head: git(repo, "rev-parse", "HEAD") };
}

function options(
  at: ReturnType<typeof published>,
  extra: Partial<RecordBindingOptions> = {},
): RecordBindingOptions {
  return {
    repo: at.repo,
    baseRepo: at.repo,
    runId: "20261127-abc",
    baseCommit: at.base,
    patch: at.patch,
    required: true,
    given: "earlier",
    redact: (text) => text,
    ...extra,
  };
}

describe("bindResumeRecord", () => {
  it("finds the run's published commit by its last line and accepts a record that gives its tree", async () => {
    const at = published("agent-ci: fix\n\nFixed it.\n\nagent-ci run 20261127-abc\n");
    const objects = () => git(at.repo, "count-objects", "-v");
    const before = objects();
    await expect(bindResumeRecord(options(at))).resolves.toBe(at.head);
    // Nothing was written into the repository: the tree was built in a scratch object directory.
    expect(objects()).toBe(before);
  });

  it("refuses a patch or a base that does not give the published tree", async () => {
    const at = published("agent-ci: fix\n\nagent-ci run 20261127-abc\n");
    const other = Buffer.from(at.patch.toString("utf8").replace("+two", "+three"));
    await expect(bindResumeRecord(options(at, { patch: other }))).rejects.toThrow(
      /the record does not match what agent-ci publish pushed for run 20261127-abc/,
    );
    await expect(bindResumeRecord(options(at, { patch: Buffer.alloc(0) }))).rejects.toThrow(/does not match/);
  });

  it("knows a commit only by an exact last line: another id, a longer id or a line elsewhere is not the run's", async () => {
    for (const message of [
      "fix\n\nagent-ci run 20261127-abcd\n",
      "fix\n\nagent-ci run 20261127-abc\n\nSigned-off-by: someone\n",
      "agent-ci run 20261127-abc is mentioned here\n",
    ]) {
      const at = published(message);
      await expect(bindResumeRecord(options(at)), message).rejects.toThrow(
        /no commit reachable from HEAD .* ends with "agent-ci run 20261127-abc"/,
      );
      // The CLI's own folder of a run never published is resumed unbound.
      await expect(bindResumeRecord(options(at, { required: false }))).resolves.toBeUndefined();
    }
  });

  it("refuses, as a config error, an id no publish commit could carry when a binding is required", async () => {
    const at = published("fix\n\nagent-ci run 20261127-abc\n");
    const error = await bindResumeRecord(options(at, { runId: "x\nagent-ci run 20261127-abc" })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
  });
});
