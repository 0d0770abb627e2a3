// The fleet's ledger: an append-only chain of commits on one Git ref of the repository (`refs/agent-ci/queue`),
// each commit holding one or more entries (a claim, a release, a cost) as JSON lines in its message, over
// git's empty tree. It lives on GitHub's own objects, needs no service, and is updated with compare-and-swap:
// a push with `--force-with-lease=<ref>:<the tip we read>` that the server refuses when another scheduler moved
// the ref first; the loser reads again, decides again and retries. Reading and writing go through the one
// safe host git (src/host-git.ts) in a scratch bare repository, never the user's checkout, with the token as
// an Authorization header (publish's authConfig), never in argv.
//
// Which entries count is ledger-trust.ts's: this file only reads and appends the chain.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { git, GitError } from "../host-git.js";
import { authConfig } from "../publish/publish-repo.js";

export const LEDGER_REF = "refs/agent-ci/queue";

/** git's empty tree: every ledger commit has it, so a ledger commit can never carry files into a checkout. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** How many times an append reads again after losing the compare-and-swap before it gives up. */
export const MAX_APPEND_TRIES = 20;

/** An item of work: `issue:<n>` for an issue of the repository, `task:<id>` for a line of a tasks file. */
const Item = z.string().regex(/^(?:issue:\d{1,10}|task:[A-Za-z0-9._-]{1,100})$/);

const Common = {
  v: z.literal(1),
  /** The workflow run (GITHUB_RUN_ID) that wrote the entry: what ledger-trust.ts checks against GitHub. */
  run_id: z.string().regex(/^\d{1,20}$/),
  /** When it was written (ISO 8601). */
  at: z.string().datetime(),
};

export const LedgerEntry = z.discriminatedUnion("kind", [
  z.object({
    ...Common,
    kind: z.literal("claim"),
    item: Item,
    /** Seconds the claim holds without a release; after that another scheduler may take the item. */
    lease_s: z
      .number()
      .int()
      .positive()
      .max(7 * 24 * 3600),
  }),
  z.object({
    ...Common,
    kind: z.literal("release"),
    item: Item,
    outcome: z.enum(["published", "failed", "cancelled", "skipped"]),
  }),
  z.object({
    ...Common,
    kind: z.literal("cost"),
    item: Item.optional(),
    /** Never negative: an entry can only add spend, so a forged one can tighten a cap but never loosen it. */
    usd: z.number().nonnegative().max(1_000_000),
    /** The cap this spend counts against (`cap_name`; default the repository). */
    cap: z.string().min(1).max(200),
  }),
]);
export type LedgerEntry = z.infer<typeof LedgerEntry>;

/** One commit of the chain as read, before ledger-trust.ts judges it. */
export interface LedgerCommit {
  oid: string;
  parents: string[];
  tree: string;
  /** The entries its message holds; undefined when the message is not a ledger message (refused by ledger-trust.ts). */
  entries: LedgerEntry[] | undefined;
}

export interface LedgerSnapshot {
  /** The ref's tip as read ("" when the ref does not exist yet). */
  tip: string;
  /** Oldest first, following first parents from the tip. */
  commits: LedgerCommit[];
}

export interface LedgerRemote {
  /** The repository's git URL (https://github.com/o/r.git, or a test's loopback server). */
  url: string;
  token?: string;
  redact?: (text: string) => string;
}

const MESSAGE_HEAD = "agent-ci ledger";

/** What git says when a compare-and-swap push found the ref moved. */
const LOST_RACE =
  /stale info|cannot lock ref|reference already exists|is at [0-9a-f]+ but expected|fetch first|non-fast-forward|failed to update ref/i;

/** The commit message of an append: a first line, then one entry per line. */
export function ledgerMessage(entries: readonly LedgerEntry[]): string {
  return `${MESSAGE_HEAD}: ${entries.map((e) => `${e.kind} ${e.kind === "cost" ? `${e.usd} ${e.cap}` : e.item}`).join(", ")}\n\n${entries.map((e) => JSON.stringify(e)).join("\n")}\n`;
}

/** A message's entries, or undefined when it is not one ledgerMessage writes (any bad line refuses all). */
export function parseLedgerMessage(message: string): LedgerEntry[] | undefined {
  const [head, blank, ...lines] = message.replace(/\n+$/, "").split("\n");
  if (!head?.startsWith(`${MESSAGE_HEAD}:`) || blank !== "" || !lines.length) return undefined;
  const entries: LedgerEntry[] = [];
  for (const line of lines) {
    try {
      const parsed = LedgerEntry.safeParse(JSON.parse(line));
      if (!parsed.success) return undefined;
      entries.push(parsed.data);
    } catch {
      return undefined;
    }
  }
  return entries;
}

/** A scratch bare repository the ledger is fetched into and appended from; removed by `close`. */
export class LedgerRepo {
  private constructor(
    readonly dir: string,
    private readonly remote: LedgerRemote,
  ) {}

  static async open(remote: LedgerRemote): Promise<LedgerRepo> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-ledger-"));
    await git(["init", "-q", "--bare"], { cwd: dir });
    return new LedgerRepo(dir, remote);
  }

  close(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private options(env?: Record<string, string>) {
    return {
      cwd: this.dir,
      config: authConfig(this.remote.url, this.remote.token),
      redact: this.remote.redact,
      env,
    };
  }

  /** Fetches the ref and reads its chain. */
  async read(): Promise<LedgerSnapshot> {
    const listed = await git(["ls-remote", "--", this.remote.url, LEDGER_REF], this.options());
    const tip = listed.split("\t")[0]?.trim() ?? "";
    if (!tip) return { tip: "", commits: [] };
    await git(
      ["fetch", "-q", "--no-tags", "--", this.remote.url, `+${tip}:refs/ledger/read`],
      this.options(),
    );
    const out = await git(
      ["log", "--first-parent", "--reverse", "--format=%H%x1f%P%x1f%T%x1f%B%x1e", tip, "--"],
      this.options(),
    );
    const commits = out
      .split("\x1e")
      .map((record) => record.replace(/^\n/, ""))
      .filter((record) => record.includes("\x1f"))
      .map((record): LedgerCommit => {
        const [oid = "", parents = "", tree = "", message = ""] = record.split("\x1f");
        return {
          oid,
          parents: parents.split(" ").filter(Boolean),
          tree,
          entries: parseLedgerMessage(message),
        };
      });
    return { tip, commits };
  }

  /**
   * Appends a commit of `entries` on `expected` (the tip read; "" for a ledger not made yet) with
   * compare-and-swap. False when another writer moved the ref first: read again and decide again.
   */
  async append(expected: string, entries: readonly LedgerEntry[]): Promise<string | false> {
    const when = entries[0]?.at ?? new Date().toISOString();
    const identity = {
      GIT_AUTHOR_NAME: "agent-ci",
      GIT_AUTHOR_EMAIL: "agent-ci@users.noreply.github.com",
      GIT_COMMITTER_NAME: "agent-ci",
      GIT_COMMITTER_EMAIL: "agent-ci@users.noreply.github.com",
      GIT_AUTHOR_DATE: when,
      GIT_COMMITTER_DATE: when,
    };
    const oid = (
      await git(
        ["commit-tree", EMPTY_TREE, ...(expected ? ["-p", expected] : []), "-m", ledgerMessage(entries)],
        this.options(identity),
      )
    ).trim();
    try {
      await git(
        [
          "push",
          "-q",
          `--force-with-lease=${LEDGER_REF}:${expected}`,
          "--",
          this.remote.url,
          `${oid}:${LEDGER_REF}`,
        ],
        this.options(),
      );
      return oid;
    } catch (error) {
      // Lost the race: the lease saw another tip (stale info), or the server's own check under its ref lock did.
      if (error instanceof GitError && LOST_RACE.test(error.stderr)) return false;
      throw error;
    }
  }
}
