// `agent-ci batch` under the ledger's spending caps: before each task, the ledger on refs/agent-ci/queue (a real
// git server over smart HTTP on loopback) is read again and its day's spend, with the batch's own spend and
// runs in flight, decides whether the task starts. The runs themselves are stand-ins here (the engine's batch
// is test/integration/fleet-batch.test.ts); what is real is the ledger, its trust check against the fake
// GitHub API, and the CLI's flags.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { GitHubApi, octokitRequest } from "../../../src/github/api.js";
import { runBatch, type BatchTask } from "../../../src/fleet/batch.js";
import { appendEntries, ledgerCapCheck, type SchedulerOptions } from "../../../src/fleet/scheduler.js";
import { main } from "../../../src/cli.js";
import type { GitRemote } from "../../support/git-remote.js";
import { startFleetFixture, type FleetFixture } from "../../support/fleet-fixture.js";
import type { FakeGitHub } from "../../support/fake-github.js";

const TOKEN = ["ghs", "batchCaps".padEnd(36, "0")].join("_");
const CAPS = { capName: "acme/widgets", maxDailyUsd: 5, perRunUsd: 1 };

let fleet: FleetFixture;
let remote: GitRemote;
let fake: FakeGitHub;
let work: string;

beforeEach(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-batch-caps-"));
  fleet = await startFleetFixture(
    { "README.md": "widgets\n" },
    {
      runs: [{ id: 1001, event: "schedule", head_branch: "main" }],
    },
    TOKEN,
  );
  ({ remote, github: fake } = fleet);
});

afterEach(async () => {
  await fleet.close();
  fs.rmSync(work, { recursive: true, force: true });
});

function scheduler(): SchedulerOptions {
  const api = new GitHubApi({ request: octokitRequest(TOKEN, fake.url) });
  return {
    api,
    context: { api, owner: "acme", repo: "widgets", defaultBranch: "main" },
    remote: { url: remote.repoUrl("acme", "widgets"), token: TOKEN },
    runId: "1001",
  };
}

/** Today's spend in the ledger, written by a trusted scheduled run. */
async function spent(usd: number): Promise<void> {
  await appendEntries(scheduler(), [
    { v: 1, kind: "cost", run_id: "1001", at: new Date().toISOString(), usd, cap: "acme/widgets" },
  ]);
}

const tasks = (n: number): BatchTask[] =>
  Array.from({ length: n }, (_, i) => ({ index: i, name: `t${i + 1}`, argv: [] }));

describe("agent-ci batch under the ledger's caps", { timeout: 180_000 }, () => {
  it("starts a task only while the ledger's spend, the batch's and $1 held per run stay within the day's cap", async () => {
    await spent(2);
    let ran = 0;
    const records = await runBatch(tasks(5), {
      parallel: 1,
      perRunUsd: 1,
      run: async () => {
        ran += 1;
        return { exitCode: 0, exitReason: "completed", costUsd: 1 };
      },
      mayStart: ledgerCapCheck(scheduler(), CAPS),
    });
    // $2 + $0 + $1, $2 + $1 + $1, $2 + $2 + $1: within $5; then $2 + $3 + $1 is not.
    expect(records.map((r) => r.status)).toEqual(["ran", "ran", "ran", "capped", "capped"]);
    expect(ran).toBe(3);
    expect(records[3]?.error).toContain("max_daily_usd $5.00");
  });

  it("holds $1 for each of its runs in flight: at most as many start at once as the cap has room for", async () => {
    await spent(2.5);
    const waiting: Array<() => void> = [];
    let started = 0;
    const done = runBatch(tasks(3), {
      parallel: 3,
      perRunUsd: 1,
      run: async () => {
        started += 1;
        await new Promise<void>((resolve) => waiting.push(resolve));
        return { exitCode: 0, exitReason: "completed", costUsd: 0 };
      },
      mayStart: ledgerCapCheck(scheduler(), CAPS),
    });
    // Room for two runs at $1 each ($5 − $2.50): the third is refused while the two are still running.
    await vi.waitFor(() => expect(started).toBe(2), { timeout: 120_000, interval: 50 });
    for (const release of waiting) release();
    const records = await done;
    expect(records.map((r) => r.status).sort()).toEqual(["capped", "ran", "ran"]);
    expect(started).toBe(2);
  });

  it("a ledger that cannot be read starts nothing", async () => {
    const unreachable = { ...scheduler(), remote: { url: remote.repoUrl("acme", "gone"), token: TOKEN } };
    const records = await runBatch(tasks(2), {
      parallel: 2,
      run: async () => ({ exitCode: 0 }),
      mayStart: ledgerCapCheck(unreachable, CAPS),
    });
    expect(records.map((r) => r.status)).toEqual(["capped", "capped"]);
    expect(records[0]?.error).toContain("the ledger could not be read");
  });

  it("the CLI's --ledger: a spent cap starts no task, says why and exits 1", async () => {
    await spent(4.5);
    vi.stubEnv("GITHUB_TOKEN", TOKEN);
    vi.stubEnv("GITHUB_API_URL", fake.url);
    vi.stubEnv("GITHUB_SERVER_URL", remote.url);
    const file = path.join(work, "tasks.jsonl");
    fs.writeFileSync(file, '{"id":"a","prompt":"one"}\n{"id":"b","prompt":"two"}\n');
    const out = path.join(work, "out");
    const lines: string[] = [];
    const write = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    const before = process.exitCode;
    try {
      await main([
        "node",
        "agent-ci",
        "batch",
        file,
        "--ledger",
        "acme/widgets",
        "--max-daily-usd",
        "5",
        "--max-budget-usd",
        "1",
        "--batch-out",
        out,
      ]);
      expect(process.exitCode).toBe(1);
    } finally {
      process.exitCode = before;
      write.mockRestore();
    }
    const said = lines.join("");
    expect(said).toContain(
      "agent-ci batch: a: not started (acme/widgets has spent $4.50 of its max_daily_usd $5.00",
    );
    expect(said).toContain("agent-ci batch: b: not started");
    expect(fs.existsSync(out)).toBe(false);
  });

  it("the CLI refuses the ledger's caps without --ledger", async () => {
    const file = path.join(work, "tasks.jsonl");
    fs.writeFileSync(file, '{"id":"a","prompt":"one"}\n');
    const lines: string[] = [];
    const write = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    const before = process.exitCode;
    try {
      await main(["node", "agent-ci", "batch", file, "--max-daily-usd", "5"]);
      expect(process.exitCode).not.toBe(0);
    } finally {
      process.exitCode = before;
      write.mockRestore();
    }
    expect(lines.join("")).toContain("name it with --ledger");
  });
});
