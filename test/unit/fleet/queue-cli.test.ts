// `agent-ci queue` as a workflow's `run:` step runs it: the CLI's entry (main) with the step's environment
// (GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_RUN_ID on a trusted event, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY),
// against a real git server (git http-backend over smart HTTP on loopback) holding the ledger ref and the fake
// GitHub REST API. In this process, since both servers answer here: git is the ledger's async git.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../../src/cli.js";
import { CAP_COMMENT_MARKER } from "../../../src/fleet/caps.js";
import { LedgerRepo } from "../../../src/fleet/ledger.js";
import { CLAIM_LABEL, readQueue } from "../../../src/fleet/scheduler.js";
import { GitHubApi, octokitRequest } from "../../../src/github/api.js";
import { faults, type FakeGitHub } from "../../support/fake-github.js";
import type { GitRemote } from "../../support/git-remote.js";
import { startFleetFixture, type FleetFixture } from "../../support/fleet-fixture.js";
import { readOutputs } from "../../support/github-env.js";

const TOKEN = ["ghs", "queueCli".padEnd(36, "0")].join("_");

let fleet: FleetFixture;
let remote: GitRemote;
let fake: FakeGitHub;
let work: string;

beforeEach(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-queue-cli-"));
  fleet = await startFleetFixture(
    { "README.md": "widgets\n" },
    {
      issues: [1, 2].map((n) => ({
        number: n,
        title: `issue ${n}`,
        body: "",
        user: { login: "octocat" },
        labels: ["agent-ready"],
      })),
      runs: [
        { id: 1001, event: "schedule", head_branch: "main" },
        { id: 1002, event: "workflow_dispatch", head_branch: "main" },
      ],
    },
    TOKEN,
  );
  ({ remote, github: fake } = fleet);
});

afterEach(async () => {
  await fleet.close();
  fs.rmSync(work, { recursive: true, force: true });
});

interface Step {
  code: number;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
}

/** One `run:` step of a workflow run (`runId`, on `event`): `agent-ci queue <args>` with the runner's files. */
async function step(runId: string, event: string, args: string[]): Promise<Step> {
  const dir = fs.mkdtempSync(path.join(work, "step-"));
  const output = path.join(dir, "output");
  const summary = path.join(dir, "summary");
  fs.writeFileSync(output, "");
  fs.writeFileSync(summary, "");
  const env: Record<string, string> = {
    GITHUB_TOKEN: TOKEN,
    GITHUB_API_URL: fake.url,
    GITHUB_SERVER_URL: remote.url,
    GITHUB_REPOSITORY: "acme/widgets",
    GITHUB_RUN_ID: runId,
    GITHUB_EVENT_NAME: event,
    GITHUB_OUTPUT: output,
    GITHUB_STEP_SUMMARY: summary,
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  for (const name of ["AGENT_CI_QUEUE_TOKEN", "GH_TOKEN"]) vi.stubEnv(name, undefined);
  let stdout = "";
  let stderr = "";
  const out = vi
    .spyOn(process.stdout, "write")
    .mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi
    .spyOn(process.stderr, "write")
    .mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    await main(["node", "agent-ci", "queue", ...args]);
    return {
      code: Number(process.exitCode ?? 0),
      stdout,
      stderr,
      outputs: readOutputs(output),
      summary: fs.readFileSync(summary, "utf8"),
    };
  } finally {
    process.exitCode = before;
    out.mockRestore();
    err.mockRestore();
    vi.unstubAllEnvs();
  }
}

/** The ledger's trusted state, as any scheduler reads it. */
async function ledgerState() {
  const api = new GitHubApi({ request: octokitRequest(TOKEN, fake.url) });
  const options = {
    api,
    context: { api, owner: "acme", repo: "widgets", defaultBranch: "main" },
    remote: { url: remote.repoUrl("acme", "widgets"), token: TOKEN },
  };
  const ledger = await LedgerRepo.open(options.remote);
  try {
    return (await readQueue(ledger, options)).state;
  } finally {
    ledger.close();
  }
}

const labels = (issue: number) => fake.issues.get(issue)?.labels ?? [];
const CLAIM = ["claim", "--label", "agent-ready", "--max", "1", "--lease", "3600"];

// Each step runs several git processes against the in-process server: a busy machine needs more than a minute.
describe("agent-ci queue's commands, as a workflow's steps run them", { timeout: 240_000 }, () => {
  it("claim → release cancelled with the report → status → claim retakes the item → check over the cap exits 5 and comments once", async () => {
    // The scheduled run claims one item: the matrix on stdout and as the step's outputs, the label on the issue.
    const claimed = await step("1001", "schedule", CLAIM);
    expect(claimed.code, claimed.stderr).toBe(0);
    const matrix = { include: [{ item: "issue:1", title: "issue 1", issue: 1 }] };
    expect(JSON.parse(claimed.outputs.matrix ?? "")).toEqual(matrix);
    expect(claimed.outputs.count).toBe("1");
    expect(JSON.parse(claimed.stdout)).toEqual(matrix);
    expect(labels(1)).toEqual(["agent-ready", CLAIM_LABEL]);
    expect(labels(2)).toEqual(["agent-ready"]);

    // Its publish job: the run was cancelled; its report says what it cost.
    const report = path.join(work, "report.json");
    fs.writeFileSync(report, JSON.stringify({ runId: "r1", costUsd: 0.75, exitReason: "cancelled" }));
    const released = await step("1001", "schedule", [
      "release",
      "--item",
      "issue:1",
      "--outcome",
      "cancelled",
      "--report",
      report,
    ]);
    expect(released.code, released.stderr).toBe(0);
    expect((await ledgerState()).items.get("issue:1")).toMatchObject({ status: "cancelled", runId: "1001" });
    expect(labels(1)).toEqual(["agent-ready"]);

    // Status: in the log and in the job summary.
    const status = await step("1002", "workflow_dispatch", ["status"]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain("claimed (running): 0\n");
    expect(status.stdout).toContain("cancelled: 1\n");
    expect(status.stdout).toContain("spent today (acme/widgets): $0.75; this month: $0.75");
    expect(status.summary).toContain("### agent-ci queue");
    expect(status.summary).toContain("| 0 | 0 | 0 | 1 | 0 | $0.75 | $0.75 |");

    // The next run takes the cancelled item again, before the one never claimed.
    const again = await step("1002", "workflow_dispatch", CLAIM);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.outputs.matrix ?? "")).toEqual(matrix);
    expect((await ledgerState()).items.get("issue:1")).toMatchObject({ status: "claimed", runId: "1002" });
    expect(labels(1)).toEqual(["agent-ready", CLAIM_LABEL]);

    // A single triggered run on #2: $0.75 spent and $0.50 held for the run in flight leave no room under $1.
    const cap = ["check", "--issue", "2", "--max-daily-usd", "1", "--max-budget-usd", "0.5"];
    const checked = await step("1002", "workflow_dispatch", cap);
    expect(checked.code).toBe(5);
    expect(checked.stderr).toContain(
      "agent-ci queue: not starting: acme/widgets has spent $0.75 of its max_daily_usd $1.00",
    );
    const notes = () => fake.comments.filter((c) => c.body.startsWith(CAP_COMMENT_MARKER));
    expect(notes().map((c) => c.issue_number)).toEqual([2]);
    // Refused again: the note is edited, not repeated.
    expect((await step("1002", "workflow_dispatch", cap)).code).toBe(5);
    expect(notes()).toHaveLength(1);
    // Within the cap, check lets the run start and says nothing.
    const room = await step("1002", "workflow_dispatch", ["check", "--issue", "2", "--max-daily-usd", "5"]);
    expect(room.code).toBe(0);
    expect(notes()).toHaveLength(1);
  });

  it("a label GitHub refuses is a warning: the claim stands in the ledger and the matrix", async () => {
    fake.inject({ method: "POST", path: /\/issues\/1\/labels$/, response: faults.integration() });
    const claimed = await step("1001", "schedule", CLAIM);
    expect(claimed.code, claimed.stderr).toBe(0);
    expect(claimed.outputs.count).toBe("1");
    expect(claimed.stderr).toMatch(
      /agent-ci queue: warning: labelling #1 agent-ci:claimed: .*issues: write.*\(the claim stands: the ledger holds it\)/,
    );
    expect((await ledgerState()).items.get("issue:1")).toMatchObject({ status: "claimed", runId: "1001" });
    // Its release finds no label to take off: nothing to warn about.
    const released = await step("1001", "schedule", ["release", "--item", "issue:1", "--outcome", "failed"]);
    expect(released.code, released.stderr).toBe(0);
    expect(released.stderr).not.toContain("warning");
    expect(labels(1)).toEqual(["agent-ready"]);
  });

  it("a late release of a claim another run has retaken leaves that run's label on", async () => {
    expect((await step("1001", "schedule", [...CLAIM.slice(0, -1), "1"])).code).toBe(0);
    // Run 1001's one-second lease lapses; run 1002 takes the item.
    await vi.waitFor(
      async () => {
        const state = await ledgerState();
        expect(state.items.get("issue:1")?.status).toBe("expired");
      },
      { timeout: 60_000, interval: 500 },
    );
    expect((await step("1002", "workflow_dispatch", CLAIM)).code).toBe(0);
    const late = await step("1001", "schedule", ["release", "--item", "issue:1", "--outcome", "failed"]);
    expect(late.code, late.stderr).toBe(0);
    expect((await ledgerState()).items.get("issue:1")).toMatchObject({ status: "claimed", runId: "1002" });
    expect(labels(1)).toContain(CLAIM_LABEL);
  });
});
