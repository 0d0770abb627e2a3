// The spending caps before a single triggered run, through the Action's entry as a runner runs it: an issue
// comment asks for a run while the ledger on refs/agent-ci/queue (a real git server over smart HTTP) holds the
// day's spend. Over the cap, the run starts nothing (the fake Messages API sees no request), is skipped without
// failing the step and says so once on the issue; under it, the run goes ahead and adds its cost to the ledger
// under the cap's name, unless a pull request started it (its code could write the ledger, so it may not).
// The real SDK against the fake Messages API, the fake GitHub, the real engine.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CALC_BEFORE, JOB_TOKEN, runAction } from "../support/action-harness.js";
import { fake as turn, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.js";
import { fixturePullRequest } from "../support/fake-github.js";
import { startFleetFixture, type FleetFixture } from "../support/fleet-fixture.js";
import { CAP_COMMENT_MARKER } from "../../src/fleet/caps.js";
import { appendEntries, costEntry } from "../../src/fleet/scheduler.js";

const API_KEY = ["sk", "ant", "api03", "runCapAction0123456789abcdefABCDEFGHIJ"].join("-");
/** The issue-comment fixture's run (GITHUB_RUN_ID), and an earlier scheduled run whose spend the ledger holds. */
const RUN = "4242";
const EARLIER = "4000";
/** A run a pull request started: its code could write the ledger, so its entries never count. */
const PULL_REQUEST_RUN = "5000";

let fleet: FleetFixture;
let model: FakeAnthropic;

beforeEach(async () => {
  const pr = fixturePullRequest({ base: "2".repeat(40) });
  fleet = await startFleetFixture(
    { "src/calc.js": CALC_BEFORE },
    {
      permissions: { octocat: "write" },
      issues: [{ number: 12, title: "add() is wrong", body: "b", user: { login: "octocat" } }, pr.issue],
      pulls: [pr.pull],
      runs: [
        { id: Number(RUN), event: "issue_comment", head_branch: "main" },
        { id: Number(EARLIER), event: "schedule", head_branch: "main" },
        { id: Number(PULL_REQUEST_RUN), event: "pull_request", head_branch: "agent-ci/issue-12" },
      ],
    },
  );
  model = await startFakeAnthropic({ apiKey: API_KEY, turns: [turn.text("Nothing to change.")] });
});
afterEach(async () => {
  await Promise.all([fleet.close(), model.close()]);
});

/** Spend a run (the earlier scheduled one by default) added today, under `cap`. */
function spent(usd: number, cap = "acme/widgets", runId = EARLIER) {
  return appendEntries(fleet.scheduler(), [costEntry(runId, new Date().toISOString(), usd, cap)]);
}

/** "@agent-ci please fix this" on issue 12, as run 4242; or another event's fixture as another run. */
function commentRun(inputs: Record<string, string>, fixture = "issue-comment-issue", runId = RUN) {
  return runAction({
    fixture,
    apiUrl: fleet.github.url,
    workspace: fleet.workspace,
    inputs: { github_token: JOB_TOKEN, anthropic_api_key: API_KEY, upload_artifact: "false", ...inputs },
    env: { ...fleet.env(runId), ANTHROPIC_BASE_URL: model.url },
  });
}

const capNotes = () => fleet.github.comments.filter((c) => c.body.startsWith(CAP_COMMENT_MARKER));

describe("the spending caps before a single triggered run", { timeout: 300_000 }, () => {
  it("over the cap: starts no model call, is skipped without failing, comments once, adds nothing", async () => {
    await spent(4.5);
    const before = (await fleet.ledgerState()).tip;
    const inputs = { max_daily_usd: "5", max_budget_usd: "1" };

    const first = await commentRun(inputs);
    expect(first.failed, first.log.slice(-3000)).toBeUndefined();
    expect(model.requests).toEqual([]);
    expect(first.outputs.skipped).toBe("true");
    expect(first.outputs.exit_reason).toBe("");
    expect(first.summary).toContain("has spent $4.50 of its max\\_daily\\_usd $5.00");
    expect(first.log).toContain("agent-ci skipped: the spending cap: acme/widgets has spent $4.50");
    // The one comment on the thread is the cap's: no progress comment, no run's comment.
    expect(fleet.github.comments).toHaveLength(1);
    expect(capNotes()[0]).toMatchObject({ issue_number: 12 });
    expect(capNotes()[0]?.body).toContain("a run may spend $1.00");

    // Asked again while still over: the note is edited, not repeated; still no model call.
    const again = await commentRun(inputs);
    expect(again.failed, again.log.slice(-3000)).toBeUndefined();
    expect(again.outputs.skipped).toBe("true");
    expect(model.requests).toEqual([]);
    expect(fleet.github.comments).toHaveLength(1);
    expect((await fleet.ledgerState()).tip).toBe(before);
  });

  it("under the cap: the run goes ahead and adds its cost to the ledger under the cap's name", async () => {
    // The repository's own spend is over the cap; the shared cap the workflow names is not, but for an entry
    // a pull request's run wrote, which does not count.
    await spent(4.5);
    await spent(1, "acme-shared");
    await spent(100, "acme-shared", PULL_REQUEST_RUN);
    const step = await commentRun({ max_monthly_usd: "5", max_budget_usd: "1", cap_name: "acme-shared" });
    expect(step.failed, step.log.slice(-3000)).toBeUndefined();
    expect(step.outputs).toMatchObject({ skipped: "false", exit_reason: "completed" });
    expect(model.messagesRequests().length).toBeGreaterThan(0);
    expect(capNotes()).toEqual([]);

    const cost = Number(step.outputs.cost_usd);
    expect(cost).toBeGreaterThan(0);
    const { state } = await fleet.ledgerState();
    expect(state.spend.get("acme-shared")?.month).toBeCloseTo(1 + cost, 5);
    expect(state.spend.get("acme/widgets")?.month).toBeCloseTo(4.5, 6);
  });

  it("a pull request's run reads the caps but does not write the ledger: its cost is not added", async () => {
    await spent(1);
    const before = (await fleet.ledgerState()).tip;
    const step = await commentRun(
      { prompt: "Review the change.", comment: "false", max_daily_usd: "5" },
      "pull-request-opened",
      PULL_REQUEST_RUN,
    );
    expect(step.failed, step.log.slice(-3000)).toBeUndefined();
    expect(step.outputs).toMatchObject({ skipped: "false", exit_reason: "completed" });
    expect(model.messagesRequests().length).toBeGreaterThan(0);
    expect(step.log).toContain(
      "is not added to the ledger: the queue's ledger is not written from a pull_request run",
    );
    expect((await fleet.ledgerState()).tip).toBe(before);
  });
});
