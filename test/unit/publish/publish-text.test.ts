// The text helpers of `agent-ci publish`: branch names from run ids, push failures explained, author and
// repository parsing, and protected-path refusals in the policy's rule syntax. Each takes MBs of one
// character without trouble (every text path is linear in its input).
import { describe, expect, it } from "vitest";
import { protectedChanges } from "../../../src/publish/checks.js";
import { parseAuthor, repoFromUrl } from "../../../src/publish/cli.js";
import { explainPushFailure, runBranch, safeRunId } from "../../../src/publish/pull-text.js";
import { parseNumstat, wholeChangeBody } from "../../../src/publish/pr-description.js";
import { parseRunCommit } from "../../../src/report/index.js";

const BIG = 4 * 1024 * 1024;
const workflowPatch = [
  "diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml",
  "new file mode 100644",
  "--- /dev/null",
  "+++ b/.github/workflows/ci.yml",
  "@@ -0,0 +1 @@",
  "+on: push",
  "",
].join("\n");

describe("runBranch", () => {
  it("names the branch from the run id, with anything git refuses in a ref replaced", () => {
    expect(runBranch("20261123-ab12")).toBe("agent-ci/run-20261123-ab12");
    expect(runBranch("../x y.lock~^:")).toBe("agent-ci/run-x-y-lock");
    expect(runBranch("")).toBe("agent-ci/run-unknown");
  });
  it.each(["-", ".", "a", "\0", "\r", "-a"])("takes MBs of %j", (char) => {
    expect(runBranch(char.repeat(BIG)).length).toBeLessThanOrEqual("agent-ci/run-".length + 100);
  });
});

describe("safeRunId", () => {
  it("B6 keeps a forged run id from ending agent-ci's marker or adding a line to the commit message", () => {
    expect(safeRunId("run-20261123-ab12")).toBe("run-20261123-ab12");
    const forged = safeRunId("x --> <img src=https://attacker.example/>\nFixes #12");
    expect(forged).toMatch(/^[A-Za-z0-9._-]+$/);
    expect(parseRunCommit(`t\n\nagent-ci run ${forged}\n`)?.runId).toBe(forged);
    expect(safeRunId("")).toBe("unknown");
  });
  it.each(["-", "<", "\n", "a"])("takes MBs of %j", (char) => {
    expect(safeRunId(char.repeat(BIG)).length).toBeLessThanOrEqual(200);
  });
});

describe("explainPushFailure", () => {
  it("says what to do for a 403, a 401, branch protection and a moved branch", () => {
    expect(
      explainPushFailure(
        "fatal: unable to access 'x': The requested URL returned error: 403",
        "a/b",
        "agent-ci/run-1",
      ),
    ).toMatch(/contents: write/);
    expect(
      explainPushFailure(
        "fatal: could not read Username for 'https://github.com': terminal prompts disabled",
        "a/b",
        "x",
      ),
    ).toMatch(/401/);
    expect(explainPushFailure("remote: error: GH006: Protected branch update failed", "a/b", "x")).toMatch(
      /branch protection/,
    );
    expect(explainPushFailure(" ! [rejected] x -> x (fetch first)", "a/b", "x")).toMatch(
      /never force-pushes/,
    );
  });
  it("points a rule that requires signed commits at use_commit_signing", () => {
    const stderr = [
      "remote: error: GH013: Repository rule violations found for refs/heads/feature.",
      "remote: - Commits must have verified signatures.",
      "remote:   Found 1 violation:",
      " ! [remote rejected] 0123abc -> feature (push declined due to repository rule violations)",
    ].join("\n");
    expect(explainPushFailure(stderr, "a/b", "feature")).toBe(
      "a rule of a/b requires signed commits on feature: publish with use_commit_signing (--use-commit-signing), so that GitHub makes and signs the commit.",
    );
  });
  it.each(["Permission to ", "a", "\n", "403"])("takes MBs of %j", (piece) => {
    expect(explainPushFailure(piece.repeat(BIG / piece.length), "a/b", "x")).toMatch(/a\/b|x/);
  });
});

describe("parseAuthor and repoFromUrl", () => {
  it("parse what users write and refuse the rest", () => {
    expect(parseAuthor("agent-ci <agent-ci@users.noreply.github.com>")).toEqual({
      name: "agent-ci",
      email: "agent-ci@users.noreply.github.com",
    });
    expect(() => parseAuthor("no email")).toThrow(/Name <email>/);
    expect(repoFromUrl("https://github.com/acme/widgets.git")).toEqual({ owner: "acme", repo: "widgets" });
    expect(repoFromUrl("git@github.com:acme/widgets.git")).toEqual({ owner: "acme", repo: "widgets" });
    expect(repoFromUrl("nonsense")).toBeUndefined();
  });
  it.each(["/", "a/", "<", "a"])("take MBs of %j", (piece) => {
    const big = piece.repeat(BIG / piece.length);
    expect(() => parseAuthor(big)).toThrow();
    repoFromUrl(big);
  });
});

describe("protectedChanges", () => {
  it("refuses workflow files unless an allow rule names them", () => {
    expect(protectedChanges(workflowPatch, [])).toEqual([
      expect.stringMatching(/^\.github\/workflows\/ci\.yml is a protected path/),
    ]);
    expect(protectedChanges(workflowPatch, ["Edit(**)", "Edit(.github/**)"])).toHaveLength(1);
    expect(protectedChanges(workflowPatch, ["Edit(.github/workflows/**)"])).toEqual([]);
    expect(protectedChanges(workflowPatch, ["Edit(/.github/workflows/ci.yml)"])).toEqual([]);
  });
  it("names a bad rule", () => {
    expect(() => protectedChanges(workflowPatch, ["Edit(src/**"])).toThrow(/Edit\(src\/\*\*/);
  });
});

describe("the runs on an agent-ci branch, read from its commits", () => {
  it("takes a run from agent-ci's trailer and leaves agent-ci's own issue line out of its summary", () => {
    const message =
      "agent-ci: Fixed add()\n\nFixed add().\nSecond line.\n\nFixes #42\nagent-ci run 20261126-abc\n";
    expect(parseRunCommit(message)).toEqual({ runId: "20261126-abc", summary: "Fixed add().\nSecond line." });
    expect(parseRunCommit("a person's commit\n\nagent-ci run is great\n")).toBeUndefined();
    expect(parseRunCommit("x\n\nagent-ci run `@acme/team`\n")).toBeUndefined();
    expect(parseRunCommit("fix\n")).toBeUndefined();
  });

  it("shows what a commit says as inert text: mentions, issue links and closing words act on nothing", () => {
    const body = wholeChangeBody(
      {
        start: "a".repeat(40),
        runs: [
          { runId: "r1", commit: "b".repeat(40), summary: "cc @acme/team, closes #1", files: [] },
          {
            runId: "r2",
            commit: "c".repeat(40),
            summary: "Fixes https://github.com/a/b/issues/2",
            files: [],
          },
        ],
        files: [{ path: "src/a.js", added: 1, removed: 2 }],
      },
      "<!-- agent-ci-run: r2 -->",
      "Opened from #9",
    );
    expect(body.replace("Opened from #9", "")).not.toMatch(/@acme|#1|#9|Fixes https/);
    expect(body).toContain(
      "**Changed files** (1, +1 −2), the whole change:\n- <code>src/a.js</code> (+1 −2)",
    );
  });

  it("parses numstat, binary files included", () => {
    expect(parseNumstat("1\t2\ta.js\0-\t-\timg.png\0\0")).toEqual([
      { path: "a.js", added: 1, removed: 2 },
      { path: "img.png", added: 0, removed: 0 },
    ]);
  });

  it.each([" ", "\n", "\t", "a", "\0", "\r"])("takes MBs of %j", (char) => {
    const text = char.repeat(BIG);
    expect(parseRunCommit(`${text}x`)).toBeUndefined();
    expect(parseRunCommit(`${text}\nagent-ci run r1`)?.runId).toBe("r1");
    expect(parseNumstat(text).length).toBeLessThanOrEqual(1);
  });
});
