// When a run starts, through the Action's entry: an event that does not trigger makes no model request, the
// step succeeds and the log says why in one line; a pull_request_review whose body mentions the phrase runs,
// and the model gets the review's body and its inline comments (read through the API) as a comment's thread
// is given. The rules row by row are test/unit/action/triggers.test.ts. The real SDK against the fake Messages
// API, the fake GitHub, the real engine.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { actionRunner, calcWorkspace } from "../support/action-harness.js";
import { eventPayload } from "../support/github-env.js";
import {
  fake as turn,
  firstUserText,
  startFakeAnthropic,
  type FakeAnthropic,
} from "../support/fake-anthropic.js";
import { fixturePullRequest, startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";

const TOKEN = ["ghs", "triggersActionToken0123456789abcdefABCDE"].join("_");
const API_KEY = ["sk", "ant", "api03", "triggersAction0123456789abcdefABCDEFGH"].join("-");
const BASE = "2".repeat(40);
/** The review of the pull-request-review fixture: its id, and its body (which mentions @agent-ci). */
const REVIEW_ID = 77;

let github: FakeGitHub;
let api: FakeAnthropic;
let workspace: string;

beforeEach(async () => {
  const pr = fixturePullRequest({ base: BASE });
  github = await startFakeGitHub({
    token: TOKEN,
    permissions: { octocat: "write" },
    issues: [pr.issue, { number: 12, title: "add() is wrong", body: "b", user: { login: "octocat" } }],
    pulls: [pr.pull],
    comments: [
      { id: 601, issue_number: 34, body: "Earlier: the table starts at 0.", user: { login: "hubot" } },
    ],
    reviews: [
      {
        id: REVIEW_ID,
        pull_number: 34,
        body: "@agent-ci the table is wrong past 9, please fix it",
        event: "REQUEST_CHANGES",
        commit_id: pr.pull.head.sha,
        user: { login: "octocat", type: "User" },
        comments: [
          {
            id: 7001,
            review_id: REVIEW_ID,
            path: "src/calc.js",
            line: 3,
            side: "RIGHT",
            body: "This row should be 10, not 01.",
            diff_hunk: "@@ -1,3 +1,3 @@\n-const table = [0, 1];\n+const table = [0, 01];",
          },
          {
            id: 7002,
            review_id: REVIEW_ID,
            path: "src/calc.js",
            line: 5,
            side: "RIGHT",
            body: "And cover 11 with a test.",
          },
        ],
      },
    ],
  });
  api = await startFakeAnthropic({ apiKey: API_KEY, turns: [turn.text("Nothing to change.")] });
  workspace = calcWorkspace();
});
afterEach(async () => {
  await Promise.all([github.close(), api.close()]);
});

const inputs = {
  github_token: TOKEN,
  anthropic_api_key: API_KEY,
  comment: "false",
  upload_artifact: "false",
};
const action = actionRunner(() => ({
  apiUrl: github.url,
  workspace,
  inputs,
  env: { ANTHROPIC_BASE_URL: api.url },
}));

/** The lines of the step's log that say a run was skipped. */
const skipLines = (stdout: string) => stdout.split("\n").filter((line) => line.includes("agent-ci skipped:"));
const NO_PROMPT =
  "there is no prompt input (without one, a run starts only on a mention of the trigger phrase, label_trigger or assignee_trigger)";

describe("an event that does not trigger", () => {
  it("an issue opened without the phrase starts nothing: no model request, the step succeeds, one log line says why", async () => {
    const payload = eventPayload("issues-opened");
    const issue = { ...(payload.issue as object), title: "add() is wrong", body: "It subtracts." };
    const result = await action({ fixture: "issues-opened", payload: { ...payload, issue } });
    expect(result.failed).toBeUndefined();
    expect(api.requests).toEqual([]);
    expect(skipLines(result.stdout)).toEqual([
      `::notice title=agent-ci skipped::agent-ci skipped: issues opened: the issue's title and body do not mention @agent-ci, and ${NO_PROMPT}`,
    ]);
    expect(github.writes()).toEqual([]);
    expect(result.outputs.skipped).toBe("true");
  });

  it("a pull_request_review whose body does not mention the phrase starts nothing", async () => {
    const payload = eventPayload("pull-request-review");
    const review = { ...(payload.review as object), body: "Looks good, but the table is wrong past 9." };
    const result = await action({ fixture: "pull-request-review", payload: { ...payload, review } });
    expect(result.failed).toBeUndefined();
    expect(api.requests).toEqual([]);
    expect(skipLines(result.stdout)).toEqual([
      `::notice title=agent-ci skipped::agent-ci skipped: pull_request_review submitted: the review's body does not mention @agent-ci, and ${NO_PROMPT}`,
    ]);
    expect(github.writes()).toEqual([]);
  });
});

describe("a pull_request_review that mentions the phrase", () => {
  it(
    "runs, and gives the model the review's body and its inline comments with the conversation",
    { timeout: 180_000 },
    async () => {
      const result = await action({ fixture: "pull-request-review" });
      expect(result.failed, result.stdout).toBeUndefined();
      expect(result.stdout).toContain(
        "trigger: pull_request_review submitted: the review's body mentions @agent-ci, by octocat",
      );
      const requests = api.messagesRequests();
      expect(requests).toHaveLength(1);
      const prompt = firstUserText(requests[0]!.body);
      const order = [
        "Speed up multiply()",
        "Earlier: the table starts at 0.",
        "@agent-ci the table is wrong past 9, please fix it",
        "+const table = [0, 01];",
        "This row should be 10, not 01.",
        "And cover 11 with a test.",
      ].map((text) => {
        expect(prompt).toContain(text);
        return prompt.indexOf(text);
      });
      expect(order).toEqual([...order].sort((a, b) => a - b));
      expect(prompt).toMatch(/kind="triggering_review" author="octocat" id="77"/);
      expect(prompt).toMatch(/kind="review_comment" author="octocat" id="7001" path="src\/calc.js" line="3"/);
      const fetched = github.requests.map((r) => `${r.method} ${r.path}`);
      expect(fetched).toContain(`GET /repos/acme/widgets/pulls/34/reviews/${REVIEW_ID}/comments`);
    },
  );
});
