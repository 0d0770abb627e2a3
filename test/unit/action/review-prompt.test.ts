// A pull_request_review's prompt: the pull request, the conversation, then the review that triggered the run
// (its body) and its inline comments each with its diff hunk, every part fenced as untrusted data and capped;
// a megabyte body of one character, with no newline, is cut to the cap.
import { describe, expect, it } from "vitest";
import { buildPrompt, COMMENT_MAX_CHARS, DEFAULT_TASKS } from "../../../src/action/prompt.js";
import type { ActionEvent, ReviewCommentInfo } from "../../../src/action/event.js";

const user = { login: "octocat" };
const pr = {
  number: 34,
  title: "Speed up multiply()",
  body: "Uses a table.",
  user,
  head: { ref: "fast-multiply", sha: "1".repeat(40), repo: { full_name: "acme/widgets" } },
  base: { ref: "main", sha: "2".repeat(40), repo: { full_name: "acme/widgets" } },
};
const reviewEvent = (body: string): ActionEvent => ({
  kind: "review",
  action: "submitted",
  pr,
  review: { id: 77, body, user, state: "changes_requested" },
  sender: "octocat",
});
const inline: ReviewCommentInfo[] = [
  { id: 7001, body: "Should be 10.", user, path: "src/calc.js", line: 3, diff_hunk: "@@ -1 +1 @@\n+01" },
  { id: 7002, body: "Add a test.", user: { login: "hubot" }, path: "src/calc.js", line: 5 },
];

describe("buildPrompt on a pull_request_review", () => {
  it("gives the review's body and its inline comments after the conversation, with the default task", () => {
    const built = buildPrompt({
      event: reviewEvent("@agent-ci the table is wrong past 9"),
      content: { thread: [{ id: 601, body: "Earlier.", user: { login: "hubot" } }], reviewComments: inline },
      nonce: "n0",
    });
    expect(built.prompt.startsWith(`## Task\n\n${DEFAULT_TASKS.review}`)).toBe(true);
    const kinds = [...built.prompt.matchAll(/<untrusted-data-n0 kind="([a-z_]+)"/g)].map((m) => m[1]);
    expect(kinds).toEqual([
      "pull_request",
      "comment",
      "triggering_review",
      "review_comment",
      "review_comment",
    ]);
    expect(built.untrusted.map((u) => u.source)).toEqual([
      "PR #34 title",
      "PR #34 head branch",
      "PR #34 base branch",
      "PR #34 body",
      "PR #34 comment 601",
      "PR #34 review 77 (trigger)",
      "PR #34 review comment 7001 hunk",
      "PR #34 review comment 7001",
      "PR #34 review comment 7002",
    ]);
    expect(built.prompt).toContain(
      'kind="review_comment" author="hubot" id="7002" path="src/calc.js" line="5"',
    );
  });

  it("caps a megabyte review body of one character with no newline", () => {
    const built = buildPrompt({ event: reviewEvent("x".repeat(1_000_000)), nonce: "n1" });
    const review = built.untrusted.find((u) => u.source === "PR #34 review 77 (trigger)");
    expect(review?.truncated).toBe(true);
    expect(review?.text.length).toBeLessThanOrEqual(COMMENT_MAX_CHARS);
  });
});
