// The progress comment's throttle against the fake GitHub, on an injected clock (no waiting): the first
// progress after the interval edits at once, progress inside the interval waits for it, and closing drops
// what is pending so the final report is the last write.
// Bypasses the harness: the throttle is called as a function, on an injected clock.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commentMarker } from "../../src/action/comment.js";
import { ProgressComment } from "../../src/action/progress-comment.js";
import { readGitHubContext } from "../../src/github/context.js";
import { GitHubApi, octokitRequest } from "../../src/github/api.js";
import { createRedactor } from "../../src/report/index.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { githubEnv, runnerFiles } from "../support/github-env.js";

const TOKEN = ["ghs", "progressTestToken0123456789abcdefAB"].join("_");
const marker = commentMarker("agent-ci", "agent");
let fake: FakeGitHub;

beforeEach(async () => {
  fake = await startFakeGitHub({
    token: TOKEN,
    issues: [{ number: 12, title: "t", body: "b", user: { login: "octocat" } }],
  });
});
afterEach(async () => {
  await fake.close();
});

function progressComment(now: () => number, intervalMs = 15_000) {
  const ctx = readGitHubContext(
    githubEnv({ fixture: "issues-opened", apiUrl: fake.url, workspace: "/tmp", files: runnerFiles() }),
  );
  const warnings: string[] = [];
  const comment = new ProgressComment({
    api: new GitHubApi({ request: octokitRequest(TOKEN, fake.url), sleep: async () => undefined }),
    ctx,
    target: { number: 12, isPullRequest: false },
    marker,
    runUrl: "https://github.example/acme/widgets/actions/runs/7",
    redactor: createRedactor({ secrets: [TOKEN] }),
    intervalMs,
    warn: (line) => warnings.push(line),
    now,
  });
  return { comment, warnings };
}

const writes = (fake: FakeGitHub) =>
  fake
    .writes()
    .map(
      (r) =>
        `${r.method} ${(JSON.parse(r.body) as { body: string }).body.split("\n\n").slice(2).join(" | ")}`,
    );

describe("ProgressComment", () => {
  it("edits at most once per interval, in the order the run went, and stops when closed", async () => {
    let clock = 1_000_000;
    const { comment, warnings } = progressComment(() => clock);
    await comment.start();
    expect(comment.posted).toBe(true);
    // Inside the interval: nothing is sent yet (a timer would send it at the interval's end).
    clock += 5_000;
    comment.update({ kind: "sandbox_ready", runId: "run-a" });
    await comment.close();
    expect(writes(fake)).toEqual(["POST - starting the container"]);

    // A fresh comment object for the same marker (a re-run): the same comment, edited.
    const second = progressComment(() => clock);
    await second.comment.start();
    clock += 15_000;
    second.comment.update({ kind: "sandbox_ready", runId: "run-b" });
    clock += 1_000;
    second.comment.update({ kind: "tool_call", tool: "Read" });
    second.comment.update({ kind: "tool_call", tool: "Edit" });
    await second.comment.close();
    expect(writes(fake)).toEqual([
      "POST - starting the container",
      "PATCH - starting the container",
      // Rendered when sent: the calls made while the edit waited are in it.
      "PATCH - container ready (agent-ci run <code>run-b</code>)\n- 2 tool calls (last: <code>Edit</code>)",
    ]);
    expect(fake.comments).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  it("shows a model turn still under way, a subagent's beside it, and drops each when it ends; edits no more often for it", async () => {
    let clock = 1_000_000;
    const { comment } = progressComment(() => clock);
    await comment.start();
    clock += 15_000;
    comment.update({ kind: "sandbox_ready", runId: "r" });
    // Inside the interval: the turn's ticks wait as every progress does; the edit under way, rendered when
    // sent, shows the newest.
    clock += 1_000;
    comment.update({ kind: "turn_waiting", turn: 3, seconds: 30, outputTokens: 1_234 });
    comment.update({ kind: "turn_waiting", turn: 3, seconds: 60, outputTokens: 2_500 });
    await comment.close();
    const ready = "PATCH - container ready (agent-ci run <code>r</code>)\n- 0 tool calls";
    expect(writes(fake)).toEqual([
      "POST - starting the container",
      `${ready}\n- model turn 3 still under way after 60 s, ~2,500 output tokens so far`,
    ]);

    // The same comment again, each step after the interval.
    const { comment: again } = progressComment(() => clock);
    await again.start();
    const step = async (progress: Parameters<typeof again.update>[0], edited = true) => {
      const before = writes(fake).length;
      clock += 15_000;
      again.update(progress);
      await expect.poll(() => writes(fake).length).toBe(before + (edited ? 1 : 0));
    };
    const subagent = { agent: "Explore", parentToolUseId: "toolu_task_1" };
    await step({ kind: "sandbox_ready", runId: "r" });
    await step({ kind: "turn_waiting", turn: 3, seconds: 90, outputTokens: 2_500 });
    await step({ kind: "turn_waiting", turn: 0, seconds: 30, outputTokens: 12, ...subagent });
    await step({ kind: "turn_ended", turn: 0, ...subagent });
    // A turn that was not shown (an earlier one of the same conversation) changes nothing.
    await step({ kind: "turn_ended", turn: 2 }, false);
    await step({ kind: "verifying" });
    await again.close();
    const main = "- model turn 3 still under way after 90 s, ~2,500 output tokens so far";
    const sub =
      "- model turn 0 of the <code>Explore</code> subagent still under way after 30 s, ~12 output tokens so far";
    expect(writes(fake).slice(3)).toEqual([
      ready,
      `${ready}\n${main}`,
      `${ready}\n${main}\n${sub}`,
      `${ready}\n${main}`,
      `${ready}\n- verifying`,
    ]);
  });

  it("edits on every step when the interval is zero, and shows verify", async () => {
    const { comment } = progressComment(() => 0, 0);
    await comment.start();
    comment.update({ kind: "sandbox_ready", runId: "r" });
    comment.update({ kind: "tool_call", tool: "Bash" });
    comment.update({ kind: "verifying" });
    await comment.close();
    const all = writes(fake);
    expect(all[0]).toBe("POST - starting the container");
    expect(all.at(-1)).toBe(
      "PATCH - container ready (agent-ci run <code>r</code>)\n- 1 tool call (last: <code>Bash</code>)\n- verifying",
    );
  });
});
