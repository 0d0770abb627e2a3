// A long model turn in the Action, through the harness and the fake GitHub: the run's progress ticker (made
// small here through the runner's own option, turnTickMs, set in the Action's process by the harness's
// hooks, where the product ticks every 30 s) puts a line in
// the job's log and the turn into the "working" comment; the fake Messages API holds the answer's stream open
// until the test has seen the comment say so, then lets it finish. The comment is edited through the same
// rate-limited path as every other progress, and the line is gone from it once the turn has ended.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { actionRunner, calcWorkspace } from "../support/action-harness.js";
import { startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { until } from "../support/until.js";

const TOKEN = ["ghs", "longTurnsActionToken0123456789abcdefAB"].join("_");
const API_KEY = ["sk", "ant", "api03", "longTurnsAction0123456789abcdefABCDEFghij"].join("-");
const TICK_MS = 1_000;

let github: FakeGitHub;
let api: FakeAnthropic;
let release: () => void;

beforeEach(async () => {
  github = await startFakeGitHub({
    token: TOKEN,
    permissions: { octocat: "write" },
    issues: [{ number: 12, title: "add() returns the wrong sum", body: "b", user: { login: "octocat" } }],
  });
  const held = new Promise<void>((resolve) => (release = resolve));
  // 400 characters streamed before the hold: about 100 output tokens so far.
  api = await startFakeAnthropic({
    apiKey: API_KEY,
    turns: [
      {
        content: [{ type: "text", text: "y".repeat(800) }],
        chunkSize: 100,
        hold: { afterDeltas: 4, until: held },
      },
    ],
  });
});
afterEach(async () => {
  release();
  await Promise.all([github.close(), api.close()]);
});

const action = actionRunner(() => ({
  fixture: "issues-opened",
  apiUrl: github.url,
  workspace: calcWorkspace(),
  env: { ANTHROPIC_BASE_URL: api.url },
  inputs: {
    github_token: TOKEN,
    anthropic_api_key: API_KEY,
    permission_mode: "acceptEdits",
    upload_artifact: "false",
  },
  hooks: { commentIntervalMs: 0, turnTickMs: TICK_MS },
}));

const edits = () =>
  github.requests
    .filter((r) => r.path.includes("/comments") && (r.method === "POST" || r.method === "PATCH"))
    .map((r) => (JSON.parse(r.body) as { body: string }).body);

describe("a long model turn in the Action", () => {
  it("shows in the log and in the working comment while it lasts, and leaves the comment when it ends", async () => {
    const running = action();
    const waiting = /- model turn 0 still under way after (\d+) s, ~100 output tokens so far/;
    try {
      await until(
        "the working comment to show the long turn",
        () => edits().some((body) => waiting.test(body)),
        30_000,
      );
    } finally {
      release();
    }
    const result = await running;
    expect(result.failed).toBeUndefined();
    expect(result.outputs.exit_reason).toBe("completed");
    expect(result.stdout).toMatch(/^model: turn 0 still under way after \d+ s, ~100 output tokens so far$/m);
    const all = edits();
    const shown = all.findIndex((body) => waiting.test(body));
    expect(all[shown]).toContain("agent-ci is working");
    // Once the turn ended, the working comment no longer shows it, and the final report replaced it.
    const working = all.filter((body) => body.includes("agent-ci is working"));
    expect(working.at(-1)).toContain("- publishing the results");
    expect(working.at(-1)).not.toContain("still under way");
    expect(github.comments).toHaveLength(1);
    expect(github.comments[0]?.body).not.toContain("still under way");
  });
});
