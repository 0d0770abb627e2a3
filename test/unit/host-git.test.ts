// The one host git: a repository whose own config would run code (hooks, fsmonitor) runs nothing through
// it, config given by the caller reaches git through the environment, and a failure is a GitError with
// the stderr redacted.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { git, GitError, gitSync } from "../../src/host-git.js";

let repo: string;
let marker: string;

beforeEach(() => {
  repo = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-host-git-"));
  marker = path.join(repo, "..", `${path.basename(repo)}-ran`);
  const plain = (args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "ignore" });
  plain(["init", "-q", "-b", "main"]);
  plain(["config", "user.name", "t"]);
  plain(["config", "user.email", "t@example.invalid"]);
  fs.writeFileSync(path.join(repo, "a.txt"), "a\n");
  plain(["add", "a.txt"]);
  plain(["commit", "-q", "-m", "a"]);
  fs.mkdirSync(path.join(repo, "hooks"));
  for (const hook of ["pre-commit", "post-index-change", "post-commit"]) {
    fs.writeFileSync(path.join(repo, "hooks", hook), `#!/bin/sh\ntouch '${marker}-${hook}'\n`, {
      mode: 0o755,
    });
  }
  fs.appendFileSync(
    path.join(repo, ".git/config"),
    ["[core]", `\tfsmonitor = touch '${marker}-fsmonitor'; echo`, "\thooksPath = hooks", ""].join("\n"),
  );
});

afterEach(() => {
  for (const name of fs.readdirSync(path.dirname(repo)))
    if (name.startsWith(`${path.basename(repo)}-ran`)) fs.rmSync(path.join(path.dirname(repo), name));
  fs.rmSync(repo, { recursive: true, force: true });
});

const ran = () =>
  fs.readdirSync(path.dirname(repo)).filter((n) => n.startsWith(`${path.basename(repo)}-ran`));

describe("host git", () => {
  it("runs none of the repository's hooks or its fsmonitor, async or sync", async () => {
    fs.writeFileSync(path.join(repo, "a.txt"), "b\n");
    expect(gitSync(["rev-parse", "HEAD"], { cwd: repo }).trim()).toMatch(/^[0-9a-f]{40}$/);
    expect(gitSync(["status", "--porcelain"], { cwd: repo })).toContain("a.txt");
    expect((await git(["ls-files", "-z", "--cached", "--others"], { cwd: repo })).split("\0")).toContain(
      "hooks/pre-commit",
    );
    await git(["add", "a.txt"], { cwd: repo });
    await git(["commit", "-q", "-m", "b"], { cwd: repo });
    expect(gitSync(["diff", "HEAD~1...HEAD"], { cwd: repo })).toContain("+b");
    expect(ran()).toEqual([]);
  });

  it("passes the caller's config through the environment, not argv", async () => {
    const config = [["agentci.probe", "from-env"]] as const;
    expect((await git(["config", "--get", "agentci.probe"], { cwd: repo, config })).trim()).toBe("from-env");
    expect(gitSync(["config", "--get", "agentci.probe"], { cwd: repo, config }).trim()).toBe("from-env");
  });

  it("fails with a GitError carrying the exit code and the redacted stderr", async () => {
    const secret = ["sec", "ret", "-value"].join("");
    const redact = (text: string) => text.replaceAll(secret, "***");
    const failing = ["rev-parse", `refs/heads/${secret}`];
    for (const attempt of [
      () => git(failing, { cwd: repo, redact }),
      async () => gitSync(failing, { cwd: repo, redact }),
    ]) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(GitError);
      expect((error as GitError).code).toBe(128);
      expect((error as GitError).message).not.toContain(secret);
      expect((error as GitError).stderr).toContain("***");
    }
  });
});
