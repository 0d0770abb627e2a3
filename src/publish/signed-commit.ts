// use_commit_signing: the commit made by GitHub through its GraphQL API (createCommitOnBranch), which GitHub
// signs and shows as Verified, instead of a commit made here and pushed. The mutation appends one commit to an
// existing branch whose head must still be `expectedHeadOid`; it takes whole files (base64) to add or replace
// and paths to delete, and nothing else: no file mode, no symbolic link, no submodule, no author (GitHub writes
// the token's account). So publish reads the change it built (base + patch, a tree) as git sees it, refuses a
// change the mutation cannot carry exactly, naming each file and why, before anything is sent, and afterwards
// fetches the commit GitHub made and compares its tree with the one it built (pull-request.ts).
import { z } from "zod";
import { GitHubGraphQLError, type GitHubApi } from "../github/api.js";
import { SIGNED_COMMIT_MAX_BYTES } from "./options.js";

/** Regular file, executable, symbolic link, submodule: git's modes in a tree. */
const REGULAR = "100644";
const EXECUTABLE = "100755";
const SYMLINK = "120000";
const SUBMODULE = "160000";

/** One entry of `git diff-tree -r -z --raw --no-renames <parent> <tree>`. */
export interface TreeChange {
  /** A (added), M (modified), D (deleted), T (type changed). */
  status: string;
  srcMode: string;
  dstMode: string;
  dstOid: string;
  /** The path as text; undefined when its bytes are not UTF-8 (the mutation takes paths as strings). */
  path: string | undefined;
  /** The path for messages (invalid bytes replaced). */
  shown: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Reads `git diff-tree -r -z --raw --no-renames` output: `:<src mode> <dst mode> <src> <dst> <status>\0<path>\0`. */
export function parseRawTreeDiff(raw: Buffer): TreeChange[] {
  const changes: TreeChange[] = [];
  let at = 0;
  while (at < raw.length) {
    const headerEnd = raw.indexOf(0, at);
    if (headerEnd === -1) break;
    const header = raw.subarray(at, headerEnd).toString("latin1");
    const pathEnd = raw.indexOf(0, headerEnd + 1);
    const end = pathEnd === -1 ? raw.length : pathEnd;
    const pathBytes = raw.subarray(headerEnd + 1, end);
    at = end + 1;
    const match = /^:(\d{6}) (\d{6}) [0-9a-f]+ ([0-9a-f]+) ([A-Z])/.exec(header);
    if (!match) throw new Error(`unexpected git diff-tree output: ${JSON.stringify(header.slice(0, 120))}`);
    let text: string | undefined;
    try {
      text = utf8.decode(pathBytes);
    } catch {
      text = undefined;
    }
    changes.push({
      srcMode: match[1] ?? "",
      dstMode: match[2] ?? "",
      dstOid: match[3] ?? "",
      status: match[4] ?? "",
      path: text,
      shown: text ?? pathBytes.toString("utf8"),
    });
  }
  return changes;
}

const MODE_WORDS: Record<string, string> = {
  [REGULAR]: "a regular file",
  [EXECUTABLE]: "an executable file",
  [SYMLINK]: "a symbolic link",
  [SUBMODULE]: "a submodule",
};
const modeWord = (mode: string) => MODE_WORDS[mode] ?? `mode ${mode}`;

/**
 * Why createCommitOnBranch cannot make this change exactly, one reason per file (empty: it can). Deleting a
 * file, a link or an executable is a path to delete; anything that sets, keeps or changes a mode other than a
 * regular file's is refused: the mutation has no mode, and GitHub does not document which mode a file it writes
 * gets beyond a regular file's.
 */
export function inexpressibleChanges(changes: readonly TreeChange[]): string[] {
  const reasons: string[] = [];
  for (const change of changes) {
    const { status, srcMode, dstMode, shown } = change;
    const why = (text: string) => reasons.push(`${JSON.stringify(shown)}: ${text}`);
    if (change.path === undefined) why("its path is not UTF-8, and the API takes paths as text");
    else if (srcMode === SUBMODULE || dstMode === SUBMODULE)
      why("a submodule: the API cannot add, move or remove one");
    else if (status === "T" || (status === "M" && srcMode !== dstMode))
      why(
        `changes ${modeWord(srcMode)} (${srcMode}) into ${modeWord(dstMode)} (${dstMode}): the API sets no file mode`,
      );
    else if (status === "D") continue;
    else if (dstMode === SYMLINK) why("a symbolic link: the API writes regular files only");
    else if (dstMode !== REGULAR && status === "A")
      why(`a new ${modeWord(dstMode).replace(/^an? /, "")} (${dstMode}): the API sets no file mode`);
    else if (dstMode !== REGULAR)
      why(
        `${modeWord(dstMode)} (${dstMode}) the patch rewrites: the API has no file mode, and GitHub does not document that a file it rewrites keeps one`,
      );
  }
  return reasons;
}

/** The mutation's `fileChanges`, exactly as GitHub's schema names them (FileChanges, FileAddition, FileDeletion). */
export interface FileChanges {
  additions: Array<{ path: string; contents: string }>;
  deletions: Array<{ path: string }>;
}

/** What reading the change needs from git: a blob's size and its bytes. */
export interface BlobReader {
  size(oid: string): Promise<number>;
  read(oid: string): Promise<Buffer>;
}

export type FileChangesResult =
  { kind: "ok"; fileChanges: FileChanges; bytes: number } | { kind: "refused"; reasons: string[] };

/**
 * The FileChanges of `changes`, each added or changed file whole and base64 encoded (RFC 4648, padded, as the
 * Base64String scalar wants): or every reason the mutation cannot carry them, the size limit
 * (SIGNED_COMMIT_MAX_BYTES) included, checked before any file is read.
 */
export async function fileChangesFor(
  changes: readonly TreeChange[],
  blobs: BlobReader,
  maxBytes = SIGNED_COMMIT_MAX_BYTES,
): Promise<FileChangesResult> {
  const reasons = inexpressibleChanges(changes);
  const written = changes.filter((c) => c.status !== "D");
  const sizes: Array<{ change: TreeChange; bytes: number }> = [];
  for (const change of written) sizes.push({ change, bytes: await blobs.size(change.dstOid) });
  const total = sizes.reduce((sum, s) => sum + s.bytes, 0);
  if (total > maxBytes) {
    const largest = [...sizes]
      .sort((a, b) => b.bytes - a.bytes)
      .slice(0, 5)
      .map((s) => `${JSON.stringify(s.change.shown)} ${s.bytes} bytes`);
    reasons.push(
      `the files the API must be sent whole come to ${total} bytes, over agent-ci's limit of ${maxBytes} for one commit through the API (largest: ${largest.join(", ")})`,
    );
  }
  if (reasons.length) return { kind: "refused", reasons };
  const additions: FileChanges["additions"] = [];
  for (const { change } of sizes)
    additions.push({
      path: change.path ?? "",
      contents: (await blobs.read(change.dstOid)).toString("base64"),
    });
  const deletions = changes.filter((c) => c.status === "D").map((c) => ({ path: c.path ?? "" }));
  return { kind: "ok", fileChanges: { additions, deletions }, bytes: total };
}

/** The mutation publish sends: the commit's oid and its page on GitHub, nothing else. */
export const CREATE_COMMIT_ON_BRANCH = `mutation CreateCommitOnBranch($input: CreateCommitOnBranchInput!) {
  createCommitOnBranch(input: $input) {
    commit {
      oid
      url
    }
  }
}`;

/** CreateCommitOnBranchInput, as publish fills it: the branch by repository and name, never by node id. */
export interface CreateCommitOnBranchInput {
  branch: { repositoryNameWithOwner: string; branchName: string };
  expectedHeadOid: string;
  message: { headline: string; body?: string };
  fileChanges: FileChanges;
}

/** A commit message as the mutation takes it: the first line as the headline, the rest (if any) as the body. */
export function commitMessageInput(message: string): CreateCommitOnBranchInput["message"] {
  const newline = message.indexOf("\n");
  const headline = (newline === -1 ? message : message.slice(0, newline)).trim();
  const body = newline === -1 ? "" : message.slice(newline + 1).trim();
  return body ? { headline, body } : { headline };
}

const Created = z.object({
  createCommitOnBranch: z
    .object({
      commit: z.object({ oid: z.string().regex(/^[0-9a-f]{40,64}$/), url: z.string() }).nullable(),
    })
    .nullable(),
});

export interface CreatedCommit {
  oid: string;
  url: string;
}

/** The commit's errors that mean the branch moved: GitHub's STALE_DATA (its head is not expectedHeadOid). */
export function isStaleHead(error: unknown): boolean {
  return error instanceof GitHubGraphQLError && error.entries.some((e) => e.type === "STALE_DATA");
}

/** Sends the mutation once (never retried: a retry after a lost answer would fail on the head it moved). */
export async function createCommitOnBranch(
  api: GitHubApi,
  input: CreateCommitOnBranchInput,
): Promise<CreatedCommit> {
  const data = await api.graphql(
    CREATE_COMMIT_ON_BRANCH,
    { input },
    {
      what: `creating the commit on ${input.branch.branchName} through GitHub's API (createCommitOnBranch)`,
      permission: "contents: write",
      retry: false,
    },
  );
  const parsed = Created.safeParse(data);
  const commit = parsed.success ? parsed.data.createCommitOnBranch?.commit : undefined;
  if (!commit)
    throw new Error(
      `GitHub's answer to createCommitOnBranch names no commit: ${JSON.stringify(data).slice(0, 300)}`,
    );
  return commit;
}
