// task: queue, the Action as the fleet's scheduler, run as a runner runs it (the bundled dist/ in a child
// process, action-harness.ts) against the fake GitHub REST API and a real git server over smart HTTP holding
// the ledger ref (git http-backend on loopback; GITHUB_SERVER_URL points there, so the Action finds the ledger
// where it would find github.com's). No model and no engine are given: the mode must need neither.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runAction, type RunActionOptions } from "../support/action-harness.js";
import { startFleetFixture, type FleetFixture } from "../support/fleet-fixture.js";
import { CAP_COMMENT_MARKER } from "../../src/fleet/caps.js";
import { appendEntries, CLAIM_LABEL } from "../../src/fleet/scheduler.js";

let fleet: FleetFixture;

beforeEach(async () => {
  fleet = await startFleetFixture(
    {
      "README.md": "widgets\n",
      "tasks.jsonl": '{"id":"docs","prompt":"write the docs"}\n{"id":"lint","prompt":"fix the lint"}\n',
    },
    {
      issues: [1, 2, 3].map((n) => ({
        number: n,
        title: `issue ${n}`,
        body: "",
        user: { login: "octocat" },
        labels: ["agent-ready"],
      })),
      // The runs the Action writes as (GITHUB_RUN_ID): scheduled runs of the default branch.
      runs: [4242, 4243].map((id) => ({ id, event: "schedule", head_branch: "main" })),
    },
  );
});

afterEach(() => fleet.close());

/** The queue step on a schedule, as run `runId`. */
function queueStep(inputs: Record<string, string>, runId = "4242", extra: Partial<RunActionOptions> = {}) {
  return runAction({
    fixture: "schedule",
    apiUrl: fleet.github.url,
    workspace: fleet.workspace,
    inputs: { task: "queue", ...inputs },
    env: fleet.env(runId),
    ...extra,
  });
}

const scheduler = () => fleet.scheduler();
const ledgerState = () => fleet.ledgerState();

const matrixItems = (matrix: string | undefined) =>
  (JSON.parse(matrix ?? "{}") as { include: Array<{ item: string; issue?: number; task?: string }> }).include;

// Each step builds nothing (dist/ is built once) but runs git against the in-process server: generous.
describe("task: queue", { timeout: 240_000 }, () => {
  it("claims up to queue_max issues, sets the matrix and count, shows the queue in the summary, runs no model", async () => {
    const first = await queueStep({ queue_label: "agent-ready", queue_max: "2" });
    expect(first.failed, first.log.slice(-3000)).toBeUndefined();
    expect(first.outputs.count).toBe("2");
    expect(matrixItems(first.outputs.matrix)).toEqual([
      { item: "issue:1", issue: 1, title: "issue 1" },
      { item: "issue:2", issue: 2, title: "issue 2" },
    ]);
    expect(first.summary).toContain("### agent-ci queue");
    expect(first.summary).toMatch(/^\| 2 \| 0 \| 0 \| 0 \| 0 \| \$0\.00 \| \$0\.00 \|$/m);
    expect(first.summary).toContain("`issue:1` issue 1");
    // No run: no run outputs, no record.
    expect(first.outputs.exit_reason).toBeUndefined();
    expect(first.outputs.report_path).toBeUndefined();

    const { state } = await ledgerState();
    expect(state.items.get("issue:1")).toMatchObject({ status: "claimed", runId: "4242" });
    expect(state.items.get("issue:2")).toMatchObject({ status: "claimed", runId: "4242" });
    // Each claim shows on its issue.
    const labelled = [1, 2, 3].filter((n) => fleet.github.issues.get(n)?.labels?.includes(CLAIM_LABEL));
    expect(labelled).toEqual([1, 2]);

    // The next scheduled run finds only what is still free.
    const second = await queueStep({ queue_label: "agent-ready", queue_max: "2" }, "4243");
    expect(second.failed, second.log.slice(-3000)).toBeUndefined();
    expect(second.outputs.count).toBe("1");
    expect(matrixItems(second.outputs.matrix).map((m) => m.item)).toEqual(["issue:3"]);
  });

  it("claims a tasks file's lines, each task's options as JSON in the matrix", async () => {
    const step = await queueStep({ queue_tasks: "tasks.jsonl" });
    expect(step.failed, step.log.slice(-3000)).toBeUndefined();
    const items = matrixItems(step.outputs.matrix);
    expect(items.map((m) => m.item)).toEqual(["task:docs", "task:lint"]);
    expect(JSON.parse(items[0]?.task ?? "")).toEqual({ id: "docs", prompt: "write the docs" });
  });

  it("a cap refuses a start with a comment, claims nothing and leaves the ledger as it was", async () => {
    const at = new Date().toISOString();
    await appendEntries(scheduler(), [
      { v: 1, kind: "cost", run_id: "4242", at, usd: 4.5, cap: "acme/widgets" },
    ]);
    const before = (await ledgerState()).tip;
    const step = await queueStep(
      { queue_label: "agent-ready", queue_max: "2", max_daily_usd: "5", max_budget_usd: "1" },
      "4243",
    );
    expect(step.failed, step.log.slice(-3000)).toBeUndefined();
    expect(step.outputs.count).toBe("0");
    expect(matrixItems(step.outputs.matrix)).toEqual([]);
    expect(step.summary).toContain("$4.50");
    expect(step.summary).toContain("has spent $4.50 of its max\\_daily\\_usd $5.00");
    expect((await ledgerState()).tip).toBe(before);
    const notes = fleet.github.comments.filter((c) => c.body.startsWith(CAP_COMMENT_MARKER));
    expect(notes.map((c) => c.issue_number).sort()).toEqual([1, 2]);
  });

  it("refuses to write the ledger from a pull request's run", async () => {
    const step = await queueStep({ queue_label: "agent-ready" }, "4242", { fixture: "pull-request-opened" });
    expect(step.failed).toContain("is not written from a pull_request run");
    expect(step.outputs.count).toBeUndefined();
    expect((await ledgerState()).tip).toBe("");
  });

  it("refuses a queue with no query, its query without task: queue, and a cap name without a cap", async () => {
    const none = await queueStep({});
    expect(none.failed).toContain("task: queue needs the work to claim");
    const stray = await runAction({
      fixture: "schedule",
      apiUrl: fleet.github.url,
      workspace: fleet.workspace,
      inputs: { prompt: "fix it", queue_label: "agent-ready", cap_name: "acme" },
    });
    expect(stray.failed).toContain("queue_label: needs task: queue");
    expect(stray.log).toContain("cap_name: needs max_daily_usd or max_monthly_usd");
  });
});
