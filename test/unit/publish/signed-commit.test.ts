// use_commit_signing's reading of a change: git's own `diff-tree -z --raw` output, made here by git on a real
// repository, read back into the changes createCommitOnBranch can carry (whole regular files, deletions) and
// the ones it cannot (a mode, a symbolic link, a submodule, a path that is not text, too many bytes), each
// named with its reason; and the commit message split into the mutation's headline and body.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  commitMessageInput,
  fileChangesFor,
  inexpressibleChanges,
  parseRawTreeDiff,
  type BlobReader,
} from "../../../src/publish/signed-commit.js";

function repository(): {
  git: (...args: string[]) => string;
  bytes: (...args: string[]) => Buffer;
  dir: string;
} {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-signed-"));
  const bytes = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.fileMode=true", ...args], {
      cwd: dir,
    });
  const git = (...args: string[]) =>
    bytes(...args)
      .toString("utf8")
      .trim();
  git("init", "-q", "-b", "main");
  return { git, bytes, dir };
}

/** The raw diff from the first commit to the second, as publish asks git for it. */
function rawDiff(
  before: (dir: string) => void,
  after: (dir: string) => void,
  staged: (git: (...args: string[]) => string) => void = () => undefined,
): { raw: Buffer; git: (...args: string[]) => string } {
  const { git, bytes, dir } = repository();
  before(dir);
  git("add", "-A");
  git("commit", "-qm", "before");
  after(dir);
  git("add", "-A");
  staged(git);
  git("commit", "-qm", "after");
  return {
    raw: bytes("diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", "HEAD~1", "HEAD"),
    git,
  };
}

const write = (dir: string, rel: string, text: string | Buffer, mode = 0o644) => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
  fs.chmodSync(path.join(dir, rel), mode);
};

describe("parseRawTreeDiff and inexpressibleChanges, on git's own output", () => {
  it("carries added, changed and deleted regular files, and the deletion of an executable or a link", () => {
    const { raw } = rawDiff(
      (dir) => {
        write(dir, "a.txt", "a\n");
        write(dir, "gone.txt", "x\n");
        write(dir, "bin/old.sh", "#!/bin/sh\n", 0o755);
        fs.symlinkSync("a.txt", path.join(dir, "old-link"));
      },
      (dir) => {
        write(dir, "a.txt", "b\n");
        write(dir, "dir with space/ü.txt", "new\n");
        fs.rmSync(path.join(dir, "gone.txt"));
        fs.rmSync(path.join(dir, "bin/old.sh"));
        fs.rmSync(path.join(dir, "old-link"));
      },
    );
    const changes = parseRawTreeDiff(raw);
    expect(changes.map((c) => [c.status, c.srcMode, c.dstMode, c.path])).toEqual([
      ["M", "100644", "100644", "a.txt"],
      ["D", "100755", "000000", "bin/old.sh"],
      ["A", "000000", "100644", "dir with space/ü.txt"],
      ["D", "100644", "000000", "gone.txt"],
      ["D", "120000", "000000", "old-link"],
    ]);
    expect(inexpressibleChanges(changes)).toEqual([]);
  });

  it("names every change the mutation cannot make, with its reason", () => {
    const { raw } = rawDiff(
      (dir) => {
        write(dir, "run.sh", "#!/bin/sh\n", 0o755);
        write(dir, "plain.sh", "#!/bin/sh\n");
        write(dir, "was-file", "x\n");
      },
      (dir) => {
        write(dir, "run.sh", "#!/bin/sh\necho changed\n", 0o755);
        fs.chmodSync(path.join(dir, "plain.sh"), 0o755);
        write(dir, "new.sh", "#!/bin/sh\n", 0o755);
        fs.symlinkSync("run.sh", path.join(dir, "link"));
        fs.rmSync(path.join(dir, "was-file"));
        fs.symlinkSync("run.sh", path.join(dir, "was-file"));
      },
      (git) => git("update-index", "--add", "--cacheinfo", `160000,${"1".repeat(40)},vendor/lib`),
    );
    const reasons = inexpressibleChanges(parseRawTreeDiff(raw));
    expect(reasons).toEqual([
      '"link": a symbolic link: the API writes regular files only',
      '"new.sh": a new executable file (100755): the API sets no file mode',
      '"plain.sh": changes a regular file (100644) into an executable file (100755): the API sets no file mode',
      '"run.sh": an executable file (100755) the patch rewrites: the API has no file mode, and GitHub does not document that a file it rewrites keeps one',
      '"vendor/lib": a submodule: the API cannot add, move or remove one',
      '"was-file": changes a regular file (100644) into a symbolic link (120000): the API sets no file mode',
    ]);
  });

  it("refuses a path whose bytes are not UTF-8 (the API takes paths as text)", () => {
    const header = Buffer.from(`:000000 100644 ${"0".repeat(40)} ${"a".repeat(40)} A\0`, "latin1");
    const raw = Buffer.concat([
      header,
      Buffer.from([0x6e, 0xff, 0x2e, 0x74, 0]),
      Buffer.from(`:000000 100644 ${"0".repeat(40)} ${"b".repeat(40)} A\0ok.txt\0`),
    ]);
    const changes = parseRawTreeDiff(raw);
    expect(changes.map((c) => c.path)).toEqual([undefined, "ok.txt"]);
    expect(inexpressibleChanges(changes)).toEqual([
      '"n\uFFFD.t": its path is not UTF-8, and the API takes paths as text',
    ]);
  });

  it("reads megabytes of changes in one pass", () => {
    const entry = Buffer.from(`:100644 100644 ${"1".repeat(40)} ${"2".repeat(40)} M\0${"p".repeat(4096)}\0`);
    const raw = Buffer.concat(Array.from({ length: 1000 }, () => entry));
    expect(parseRawTreeDiff(raw)).toHaveLength(1000);
  });
});

describe("fileChangesFor", () => {
  const blobs = (
    contents: Record<string, Buffer>,
  ): BlobReader & { read: BlobReader["read"]; reads: string[] } => {
    const reads: string[] = [];
    return {
      reads,
      size: async (oid) => contents[oid]?.length ?? 0,
      read: async (oid) => {
        reads.push(oid);
        return contents[oid] ?? Buffer.alloc(0);
      },
    };
  };
  const change = (status: string, p: string, oid = "0".repeat(40)) => ({
    status,
    srcMode: status === "A" ? "000000" : "100644",
    dstMode: status === "D" ? "000000" : "100644",
    dstOid: oid,
    path: p,
    shown: p,
  });

  it("sends each added or changed file whole as RFC 4648 base64, and each deleted path", async () => {
    const binary = Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255]);
    const reader = blobs({ ["a".repeat(40)]: Buffer.from("héllo\n"), ["b".repeat(40)]: binary });
    const result = await fileChangesFor(
      [
        change("M", "text.txt", "a".repeat(40)),
        change("A", "img.bin", "b".repeat(40)),
        change("D", "old.txt"),
      ],
      reader,
    );
    expect(result).toEqual({
      kind: "ok",
      bytes: 7 + binary.length,
      fileChanges: {
        additions: [
          { path: "text.txt", contents: "aMOpbGxvCg==" },
          { path: "img.bin", contents: "AAEC+vv8/f7/" },
        ],
        deletions: [{ path: "old.txt" }],
      },
    });
  });

  it("refuses files over the limit by their sizes, before reading any", async () => {
    const reader = blobs({ ["a".repeat(40)]: Buffer.alloc(600), ["b".repeat(40)]: Buffer.alloc(500) });
    const result = await fileChangesFor(
      [change("A", "big.bin", "a".repeat(40)), change("M", "other.bin", "b".repeat(40))],
      reader,
      1000,
    );
    expect(result).toEqual({
      kind: "refused",
      reasons: [
        `the files the API must be sent whole come to 1100 bytes, over agent-ci's limit of 1000 for one commit through the API (largest: "big.bin" 600 bytes, "other.bin" 500 bytes)`,
      ],
    });
    expect(reader.reads).toEqual([]);
  });
});

describe("commitMessageInput", () => {
  it("splits a commit message into the mutation's headline and body", () => {
    expect(commitMessageInput("agent-ci: fix\n\nBody line.\n\nagent-ci run r1\n")).toEqual({
      headline: "agent-ci: fix",
      body: "Body line.\n\nagent-ci run r1",
    });
    expect(commitMessageInput("agent-ci: only a title\n")).toEqual({ headline: "agent-ci: only a title" });
  });
});
