// Temporary host workspaces for tests: made from a map of files, optionally as a git repository.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export type FileSpec = string | Buffer | { content: string | Buffer; mode?: number } | { symlink: string };

/** Runs git in `dir` with a committer of its own (none is configured where tests run). */
export function gitIn(dir: string): (...args: string[]) => Buffer {
  return (...args) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, stdio: "pipe" });
}

export function makeWorkspace(files: Record<string, FileSpec>, options: { git?: boolean } = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-ws-"));
  writeFiles(dir, files);
  if (options.git) {
    const git = gitIn(dir);
    git("init", "-q", "-b", "main");
    git("add", "-A");
    git("commit", "-qm", "initial");
  }
  return dir;
}

export function writeFiles(dir: string, files: Record<string, FileSpec>): void {
  for (const [rel, spec] of Object.entries(files)) {
    const abs = path.join(dir, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    if (typeof spec === "object" && !Buffer.isBuffer(spec) && "symlink" in spec) {
      fs.symlinkSync(spec.symlink, abs);
      continue;
    }
    const content = typeof spec === "string" || Buffer.isBuffer(spec) ? spec : spec.content;
    fs.writeFileSync(abs, content);
    if (typeof spec === "object" && !Buffer.isBuffer(spec) && "mode" in spec && spec.mode)
      fs.chmodSync(abs, spec.mode);
  }
}

/** Applies a patch to a pristine copy with `git apply`, returning the copy's directory. */
export function applyToCopy(source: string, patch: Buffer): string {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-apply-"));
  fs.cpSync(source, copy, { recursive: true, verbatimSymlinks: true });
  if (patch.length) {
    const file = path.join(copy, "..", `${path.basename(copy)}.patch`);
    fs.writeFileSync(file, patch);
    execFileSync("git", ["apply", "--binary", file], { cwd: copy, stdio: "pipe" });
    fs.rmSync(file);
  }
  return copy;
}
