// The git baseline and the patch, over the narrow `Sandbox` interface: a private repository under /tmp
// inside the container (never the user's branches or index) records the tree as copied in, and the
// patch is `git diff-tree` from that tree to the tree as it is at the end. git is the toolbelt's, run
// with a config nothing the agent wrote can change (U4).
import type { ExecResult, Sandbox } from "../sandbox.js";
import { EngineError, WORKSPACE_ROOT } from "../sandbox.js";
import { toolbeltProgram } from "../image/toolbelt.js";

export const STATE_DIR = "/tmp/.agent-ci";
const BASELINE_GIT_DIR = `${STATE_DIR}/baseline.git`;
/**
 * A changed file larger than this is left out of the patch, and the report says so (C11): a patch of huge
 * blobs could not be held in memory as one string, posted or reviewed, and it would cost the whole patch.
 */
export const MAX_PATCH_FILE_BYTES = 50 * 1024 * 1024;

export interface PatchFileStat {
  path: string;
  added: number;
  removed: number;
  binary: boolean;
}

export interface ExportedPatch {
  patch: Buffer;
  files: PatchFileStat[];
  baseTree: string;
  tree: string;
  /** Changed paths left out of the patch by `exclude`, with the reason. */
  excluded: Array<{ path: string; reason: string }>;
}

/** git as agent-ci runs it on the agent's tree: nothing from the agent's config can change the output (U4). */
const GIT_ENV: Record<string, string> = {
  GIT_DIR: BASELINE_GIT_DIR,
  GIT_WORK_TREE: WORKSPACE_ROOT,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_ATTR_NOSYSTEM: "1",
  GIT_OPTIONAL_LOCKS: "0",
};
const GIT_CONFIG = [
  "core.autocrlf=false",
  "core.safecrlf=false",
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "core.excludesFile=/dev/null",
  "core.attributesFile=/dev/null",
  "core.quotePath=false",
  "diff.noprefix=false",
  "diff.mnemonicPrefix=false",
  "diff.relative=false",
  "diff.external=",
  "user.name=agent-ci",
  "user.email=agent-ci@localhost",
].flatMap((kv) => ["-c", kv]);
/** Written over the private repository's config before every use, in case the agent edited it. */
const BASELINE_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfilemode = true\n";
const GIT_TIMEOUT_MS = 300_000;

export class Baseline {
  private tree = "";

  constructor(
    private readonly sandbox: Sandbox,
    private readonly isGitRepo: boolean,
  ) {}

  /** The baseline tree id, held on the host. */
  get baseTree(): string {
    return this.tree;
  }

  private git(args: string[], index = `${STATE_DIR}/baseline.index`, stdin?: string): Promise<ExecResult> {
    const env: Record<string, string> = { ...GIT_ENV, GIT_INDEX_FILE: index };
    if (args.includes("core.bare=true")) {
      // No work tree and an index that does not exist: git then reads no in-tree .gitattributes at all.
      delete env.GIT_WORK_TREE;
      env.GIT_INDEX_FILE = `${STATE_DIR}/no.index`;
    }
    const cwd = env.GIT_WORK_TREE ? WORKSPACE_ROOT : BASELINE_GIT_DIR;
    return this.sandbox.exec({
      argv: [toolbeltProgram("git"), ...GIT_CONFIG, ...args],
      env,
      cwd,
      stdin,
      timeoutMs: GIT_TIMEOUT_MS,
    });
  }

  private async gitOk(args: string[], index?: string): Promise<string> {
    const res = await this.git(args, index);
    if (res.exitCode !== 0) {
      throw new EngineError(
        `git ${args[0]} failed in the sandbox (exit ${res.exitCode}): ${res.stderr.toString("utf8").trim().slice(-800)}`,
      );
    }
    return res.stdout.toString("utf8").trim();
  }

  private async removeFile(p: string): Promise<void> {
    await this.sandbox.exec({ argv: [toolbeltProgram("rm"), "-f", "--", p] });
  }

  /** Resets agent-ci's private repository to a known config; the agent could have written to it. */
  private async resetPrivateRepo(): Promise<void> {
    const write = (p: string, text: string) =>
      this.sandbox.writeFile(`${BASELINE_GIT_DIR}/${p}`, text, { confine: false });
    // Four files of their own: written at once, one helper round trip instead of four in a row.
    await Promise.all([
      write("config", BASELINE_CONFIG),
      write("info/attributes", ""),
      write("info/exclude", ""),
      write("objects/info/alternates", this.isGitRepo ? `${WORKSPACE_ROOT}/.git/objects\n` : ""),
    ]);
  }

  /**
   * Records the tree as copied in. A git workspace's own index is reused as a stat cache so only changed
   * files are hashed.
   */
  async record(): Promise<string> {
    // The workspace's index is read while agent-ci's private repository is made.
    const reading = this.isGitRepo
      ? this.sandbox.readFile(`${WORKSPACE_ROOT}/.git/index`, { confine: false }).catch(() => null)
      : null;
    await this.gitOk(["init", "-q"]);
    const [index] = await Promise.all([reading, this.resetPrivateRepo()]);
    if (index) await this.sandbox.writeFile(`${STATE_DIR}/baseline.index`, index.data, { confine: false });
    const fast = ["-c", "core.checkStat=minimal", "-c", "core.trustctime=false"];
    let added = await this.git([...fast, "add", "-A"]);
    if (added.exitCode !== 0 && this.isGitRepo) {
      // The repository's index could not be reused (split index, newer format): start from none.
      await this.removeFile(`${STATE_DIR}/baseline.index`);
      added = await this.git(["add", "-A"]);
    }
    if (added.exitCode !== 0) {
      throw new EngineError(
        `recording the baseline failed: ${added.stderr.toString("utf8").trim().slice(-800)}`,
      );
    }
    this.tree = await this.gitOk(["write-tree"]);
    return this.tree;
  }

  /**
   * The patch from the baseline to the tree as it is now, made by git inside the container with external
   * diff drivers and textconv off. Every file is re-hashed from a fresh index built from the baseline tree
   * id held here on the host, so nothing the agent did to git's files can hide a change (U4).
   */
  async exportPatch(exclude?: (relPath: string) => string | undefined): Promise<ExportedPatch> {
    const index = `${STATE_DIR}/export.index`;
    const base = this.tree;
    await this.resetPrivateRepo();
    await this.removeFile(index);
    await this.gitOk(["read-tree", base], index);
    await this.gitOk(["add", "-A"], index);
    const tree = await this.gitOk(["write-tree"], index);
    const numstat = await this.gitOk(
      ["diff-tree", "-r", "-z", "--no-renames", "--numstat", base, tree],
      index,
    );
    const sizes = await this.changedFileSizes(tree, index);
    const files: PatchFileStat[] = [];
    const excluded: ExportedPatch["excluded"] = [];
    // -z --numstat without renames: "added<TAB>removed<TAB>path" records, NUL-terminated.
    for (const record of numstat.split("\0")) {
      const [added = "0", removed = "0", ...rest] = record.split("\t");
      const file = rest.join("\t");
      if (!file) continue;
      const size = sizes.get(file) ?? 0;
      const reason =
        exclude?.(file) ??
        (size > MAX_PATCH_FILE_BYTES
          ? `it is ${Math.round(size / 2 ** 20)} MiB, over the ${MAX_PATCH_FILE_BYTES / 2 ** 20} MiB limit for one file in the patch`
          : undefined);
      if (reason) {
        excluded.push({ path: file, reason });
        continue;
      }
      const binary = added === "-";
      files.push({
        path: file,
        added: binary ? 0 : Number(added),
        removed: binary ? 0 : Number(removed),
        binary,
      });
    }
    if (!files.length) return { patch: Buffer.alloc(0), files, baseTree: base, tree, excluded };
    const out = `${STATE_DIR}/patch.diff`;
    const pathspecs = excluded.length ? ["--", ...files.map((f) => f.path)] : [];
    // Two trees need neither a work tree nor an index: run bare, so that a .gitattributes the agent wrote
    // (`* -diff`) cannot turn readable text changes into opaque binary patches.
    await this.gitOk(
      [
        "-c",
        "core.bare=true",
        "--literal-pathspecs",
        "diff-tree",
        "-r",
        "-p",
        "--binary",
        "--full-index",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        `--output=${out}`,
        base,
        tree,
        ...pathspecs,
      ],
      index,
    );
    const patch = await this.sandbox.readFile(out, { confine: false });
    return { patch: patch?.data ?? Buffer.alloc(0), files, baseTree: base, tree, excluded };
  }

  /** Sizes of the changed files' new blobs (deleted files are absent), from git's own objects. */
  private async changedFileSizes(tree: string, index: string): Promise<Map<string, number>> {
    const raw = await this.gitOk(["diff-tree", "-r", "-z", "--no-renames", "--raw", this.tree, tree], index);
    // -z --raw: ":oldmode newmode oldsha newsha status" NUL path NUL, per file.
    const parts = raw.split("\0");
    const blobs = new Map<string, string[]>();
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const sha = parts[i]?.split(" ")[3];
      const file = parts[i + 1];
      if (!sha || !file || /^0+$/.test(sha)) continue;
      blobs.set(sha, [...(blobs.get(sha) ?? []), file]);
    }
    const sizes = new Map<string, number>();
    if (!blobs.size) return sizes;
    const res = await this.git(["cat-file", "--batch-check"], index, [...blobs.keys()].join("\n") + "\n");
    for (const line of res.stdout.toString("utf8").split("\n")) {
      const [sha, , size] = line.split(" ");
      for (const file of blobs.get(sha ?? "") ?? []) sizes.set(file, Number(size));
    }
    return sizes;
  }
}
