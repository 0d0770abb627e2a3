// `agent-ci run --attempts N` as users run it (the bundle in dist/): four attempts at the buggy-calc example
// against the fake Messages API, each told apart by the hint --attempt-prompts appends to its prompt, each
// verified in its own fresh sandbox; the smaller passing patch is chosen; --stop-at-first-pass cancels the
// others with their records kept; one budget ends the run `budget` with the best attempt so far. An attempt
// that passes verify by rewriting the test script is not chosen over the fix, and publish names what it changed.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterEach, describe, expect, it } from "vitest";
import { parseReport, type RunReport } from "../../src/report/index.js";
import { publishPullRequest } from "../../src/publish/pull-request.js";
import { costUsd, DEFAULT_MODEL } from "../../src/runner/model/pricing.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { runCli as runAgentCi } from "../support/cli-process.js";
import { fake, startFakeAnthropic, type FakeAnthropic, type FakeTurn } from "../support/fake-anthropic.js";
import { startFakeGitHub } from "../support/fake-github.js";
import { addBareRepo, startGitRemote } from "../support/git-remote.js";
import { publishOptions } from "../support/publish-fixture.js";
import { gitIn } from "../support/workspace.js";

const EXAMPLE = path.resolve("examples/buggy-calc");
const CALC = "/workspace/src/calc.js";
const BUGGY_RETURN = "  return sum / (values.length - 1);";
const BUG = `  // BUG: divides by one less than the count\n${BUGGY_RETURN}`;

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Every turn of a scripted attempt costs the same: `TURN_USAGE`'s output tokens only. */
const TURN_USAGE = { input_tokens: 0, output_tokens: 100_000 };
const TURN_USD = costUsd(DEFAULT_MODEL, {
  inputTokens: 0,
  outputTokens: TURN_USAGE.output_tokens,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 0,
}).usd;
const turn = (t: FakeTurn): FakeTurn => ({ ...t, usage: TURN_USAGE }) as FakeTurn;

const read = () => turn(fake.toolUse("Read", { file_path: CALC }));
const edit = (old_string: string, new_string: string) =>
  turn(fake.toolUse("Edit", { file_path: CALC, old_string, new_string }));
const done = (text: string) => turn(fake.text(text));

const SCRIPTS = {
  /** Breaks add: the tests fail. */
  breaks: [read(), edit("  return a + b;", "  return a - b;"), done("Changed add.")],
  /** Tries a push the policy denies, and changes nothing. */
  denied: [turn(fake.toolUse("Bash", { command: "git push origin main" })), done("Could not push.")],
  /** Fixes it and explains at length: 5 changed lines. */
  bigFix: [
    read(),
    edit(
      BUGGY_RETURN,
      "  // The average divides the sum by the count of values:\n  // every value counts once, none is left out.\n  // (It used to divide by one less.)\n  return sum / values.length;",
    ),
    done("Fixed average, with comments."),
  ],
  /** Fixes it in place: 3 changed lines. */
  smallFix: [read(), edit(BUG, "  return sum / values.length;"), done("Fixed average.")],
  /** Makes `npm test` pass without running the tests: 2 changed lines. */
  rewritesTest: [
    turn(fake.toolUse("Read", { file_path: "/workspace/package.json" })),
    turn(
      fake.toolUse("Edit", {
        file_path: "/workspace/package.json",
        old_string: '"test": "node --test test/*.test.js"',
        new_string: '"test": "exit 0"',
      }),
    ),
    done("The tests pass now."),
  ],
  /** Reads until something stops it. */
  endless: Array.from({ length: 20 }, read),
  /** A command that runs until the attempt is cancelled. */
  sleeps: [turn(fake.toolUse("Bash", { command: "sleep 600", timeout: 600_000 })), done("Slept.")],
} satisfies Record<string, FakeTurn[]>;

/** A fake API serving script k to the attempt whose prompt carries marker k; the hints file naming them. */
async function scripted(scripts: FakeTurn[][]) {
  const tag = `attempt-marker-${Math.random().toString(36).slice(2)}`;
  const api = await startFakeAnthropic({
    conversations: scripts.map((turns, i) => ({ match: `${tag}-${i + 1}.`, turns: [...turns] })),
  });
  servers.push(api);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-attempts-"));
  const hints = path.join(dir, "hints.txt");
  fs.writeFileSync(hints, scripts.map((_, i) => `${tag}-${i + 1}.`).join("\n"));
  return { api, hints, out: path.join(dir, "out") };
}

const runArgs = (hints: string, out: string, extra: string[]) => [
  "run",
  "--workspace",
  EXAMPLE,
  "--prompt",
  "Fix the failing test.",
  "--mode",
  "acceptEdits",
  "--allow",
  "Bash(sleep:*)",
  "--deny",
  "Bash(git push:*)",
  "--verify",
  "npm test",
  "--attempt-prompts",
  hints,
  "--out",
  out,
  ...extra,
];

const readReport = (file: string): RunReport => parseReport(fs.readFileSync(file, "utf8"));

/** No container is left by any attempt (their sandboxes and verify's). */
async function expectNoContainers(out: string, report: RunReport) {
  const docker = new Docker();
  for (const attempt of report.attempts ?? []) {
    if (!attempt.runId) continue;
    expect(readReport(path.join(out, attempt.dir ?? "", "report.json")).runId).toBe(attempt.runId);
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_RUN}=${attempt.runId}`] },
    });
    expect(left, `attempt ${attempt.attempt}`).toEqual([]);
  }
}

/** The CLI with a (fake) API key, unless the test's `env` says otherwise. */
const runCli = (args: string[], env: NodeJS.ProcessEnv) =>
  runAgentCi(args, { ANTHROPIC_API_KEY: "test-key", ...env });

describe("agent-ci run --attempts", () => {
  it(
    "verifies four attempts and chooses the smaller passing patch; each keeps its record",
    { timeout: 180_000 },
    async () => {
      const { api, hints, out } = await scripted([
        SCRIPTS.breaks,
        SCRIPTS.denied,
        SCRIPTS.bigFix,
        SCRIPTS.smallFix,
      ]);
      const run = await runCli(runArgs(hints, out, ["--attempts", "4", "--parallel", "2"]), {
        ANTHROPIC_BASE_URL: api.url,
      });
      expect(run.code, run.stderr.slice(-3000)).toBe(0);
      expect(run.stderr.split("\n")[0]).toBe("agent-ci: 4 attempts, at most 2 at a time (--parallel)");

      const report = readReport(path.join(out, "report.json"));
      expect(report.chosen).toEqual({
        attempt: 4,
        reason: "attempt 4 passed verify: smallest patch (3 changed lines, attempt 3 had 5)",
        verified: true,
      });
      expect(
        report.attempts?.map((a) => [
          a.attempt,
          a.dir,
          a.exitReason,
          a.verify,
          a.deniedCalls,
          a.changedLines,
        ]),
      ).toEqual([
        [1, "attempt-1", "completed", "failed", 0, 2],
        [2, "attempt-2", "completed", "failed", 1, 0],
        [3, "attempt-3", "completed", "passed", 0, 5],
        [4, "attempt-4", "completed", "passed", 0, 3],
      ]);
      for (const a of report.attempts ?? []) expect(a.costUsd).toBeCloseTo(TURN_USD * (a.turns ?? 0), 6);
      // The output folder's patch and report are attempt 4's.
      const chosenPatch = fs.readFileSync(path.join(out, "attempt-4", "patch.diff"), "utf8");
      expect(fs.readFileSync(path.join(out, "patch.diff"), "utf8")).toBe(chosenPatch);
      expect(chosenPatch).toContain("+  return sum / values.length;");
      expect(report.runId).toBe(report.attempts?.[3]?.runId);
      expect(report.verify?.exitCode).toBe(0);
      const md = fs.readFileSync(path.join(out, "report.md"), "utf8");
      expect(md).toContain("Chosen from 4 attempts");
      expect(md).toMatch(/\| \*\*4\*\* .*passed/);
      await expectNoContainers(out, report);

      // `agent-ci choose` makes the same choice from the folders, as a matrix's choose step does from artifacts.
      const chosenDir = path.join(out, "..", "chosen");
      const folders = [4, 2, 3, 1].map((k) => path.join(out, `attempt-${k}`));
      const choose = await runCli(["choose", ...folders, "--out", chosenDir], {});
      expect(choose.code, choose.stderr).toBe(0);
      const chosen = readReport(path.join(chosenDir, "report.json"));
      expect(chosen.chosen).toEqual(report.chosen);
      expect(chosen.attempts?.map((a) => [a.attempt, a.dir, a.runId])).toEqual(
        report.attempts?.map((a) => [a.attempt, a.dir, a.runId]),
      );
      expect(fs.readFileSync(path.join(chosenDir, "patch.diff"), "utf8")).toBe(chosenPatch);
      expect(fs.existsSync(path.join(chosenDir, "events.jsonl"))).toBe(true);
    },
  );

  it(
    "B16 an attempt that rewrites the test script to exit 0 passes verify but is not chosen over the fix; report.json and the pull requests name what it changed",
    { timeout: 240_000 },
    async () => {
      // The example as a git checkout, so its runs can be published.
      const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-b16-"));
      fs.cpSync(EXAMPLE, workspace, { recursive: true });
      const git = gitIn(workspace);
      git("init", "-q", "-b", "main");
      git("add", "-A");
      git("commit", "-qm", "initial");
      const { api, hints, out } = await scripted([SCRIPTS.rewritesTest, SCRIPTS.smallFix]);
      const args = runArgs(hints, out, ["--attempts", "2", "--parallel", "1"]);
      args[args.indexOf(EXAMPLE)] = workspace;
      const run = await runCli(args, { ANTHROPIC_BASE_URL: api.url });
      expect(run.code, run.stderr.slice(-3000)).toBe(0);

      const report = readReport(path.join(out, "report.json"));
      expect(
        report.attempts?.map((a) => [a.attempt, a.verify, a.changedLines, a.verifyInputsChanged]),
      ).toEqual([
        [1, "passed", 2, ["package.json scripts.test"]],
        [2, "passed", 3, undefined],
      ]);
      expect(report.chosen).toEqual({
        attempt: 2,
        reason:
          "attempt 2 passed verify: attempt 1 passed only with a patch that changes what verify runs (package.json scripts.test)",
        verified: true,
      });
      expect(report.verify?.changedInputs).toBeUndefined();
      const tampered = readReport(path.join(out, "attempt-1", "report.json"));
      expect(tampered.verify).toMatchObject({ exitCode: 0, changedInputs: ["package.json scripts.test"] });
      expect(fs.readFileSync(path.join(out, "attempt-1", "report.md"), "utf8")).toMatch(
        /The patch changes what this command runs: <code>package.json scripts.test<\/code>/,
      );

      // Published: the chosen fix says what the other attempt did; the rewrite, published alone, is flagged.
      const token = ["ghs", "attemptsPublish0123456789abcdefABCDEF"].join("_");
      const remote = await startGitRemote({ token });
      const github = await startFakeGitHub({ token });
      try {
        addBareRepo(remote, "acme", "widgets", workspace);
        const target = { remote, githubUrl: github.url, token };
        const fix = await publishPullRequest(publishOptions(target, out, workspace));
        const fixBody = github.pulls.get(fix.pullNumber)?.body ?? "";
        expect(fixBody).toContain(
          "attempt 2 passed verify (attempt 1 passed only with a patch that changes what verify runs (package.json scripts.test))",
        );
        expect(fixBody).toContain("1 passed verify only with a patch that changes what verify runs");
        expect(fixBody).not.toContain("[!WARNING]");
        const rewrite = await publishPullRequest(
          publishOptions(target, path.join(out, "attempt-1"), workspace),
        );
        const rewriteBody = github.pulls.get(rewrite.pullNumber)?.body ?? "";
        expect(rewriteBody).toContain(
          "> [!WARNING]\n> The patch changes what verify runs (<code>npm test</code>): <code>package.json scripts.test</code>.",
        );
        expect(rewriteBody).toContain("Verify passed with those changes, so its result does not show");
      } finally {
        await Promise.all([remote.close(), github.close()]);
      }
    },
  );

  it(
    "--stop-at-first-pass cancels the others once one passes, their records kept",
    { timeout: 150_000 },
    async () => {
      const { api, hints, out } = await scripted([
        SCRIPTS.smallFix,
        SCRIPTS.sleeps,
        SCRIPTS.bigFix,
        SCRIPTS.bigFix,
      ]);
      const run = await runCli(
        runArgs(hints, out, ["--attempts", "4", "--parallel", "2", "--stop-at-first-pass"]),
        { ANTHROPIC_BASE_URL: api.url },
      );
      expect(run.code, run.stderr.slice(-3000)).toBe(0);
      const report = readReport(path.join(out, "report.json"));
      expect(report.chosen?.attempt).toBe(1);
      expect(report.attempts?.map((a) => [a.attempt, a.started, a.exitReason, a.verify])).toEqual([
        [1, true, "completed", "passed"],
        [2, true, "cancelled", "not_run"],
        [3, false, "cancelled", "not_run"],
        [4, false, "cancelled", "not_run"],
      ]);
      // The cancelled attempt's record is whole: its report, its events and its (empty) patch.
      const cancelled = readReport(path.join(out, "attempt-2", "report.json"));
      expect(cancelled.exitReason).toBe("cancelled");
      for (const file of ["patch.diff", "events.jsonl", "report.md", "report.html"])
        expect(fs.existsSync(path.join(out, "attempt-2", file)), file).toBe(true);
      expect(fs.existsSync(path.join(out, "attempt-3"))).toBe(false);
      expect(run.stderr).toContain("agent-ci: cancelling attempt 2: attempt 1 passed");
      await expectNoContainers(out, report);
    },
  );

  it(
    "one budget: spent by the third attempt, the run ends budget with the best attempt so far",
    { timeout: 180_000 },
    async () => {
      const { api, hints, out } = await scripted([
        SCRIPTS.breaks,
        SCRIPTS.smallFix,
        SCRIPTS.endless,
        SCRIPTS.smallFix,
      ]);
      // Three turns each for the first two, a turn and a half for the third, nothing for the fourth.
      const budget = TURN_USD * 7.5;
      const run = await runCli(
        runArgs(hints, out, ["--attempts", "4", "--parallel", "1", "--max-budget-usd", String(budget)]),
        { ANTHROPIC_BASE_URL: api.url },
      );
      expect(run.code, run.stderr.slice(-3000)).toBe(5);
      const report = readReport(path.join(out, "report.json"));
      expect(report.exitReason).toBe("budget");
      expect(report.error?.message).toMatch(/budget was spent; the result is the best attempt so far/);
      expect(report.chosen?.attempt, `${JSON.stringify(report.attempts)}\n${run.stderr.slice(-4000)}`).toBe(
        2,
      );
      const rows = report.attempts ?? [];
      expect(rows.map((a) => [a.attempt, a.started, a.exitReason, a.verify])).toEqual([
        [1, true, "completed", "failed"],
        [2, true, "completed", "passed"],
        [3, true, "budget", "failed"],
        [4, false, "budget", "not_run"],
      ]);
      // Each attempt's share was what was left when it started.
      expect(rows[0]?.budgetUsd).toBeCloseTo(budget, 6);
      expect(rows[1]?.budgetUsd).toBeCloseTo(budget - 3 * TURN_USD, 6);
      expect(rows[2]?.budgetUsd).toBeCloseTo(budget - 6 * TURN_USD, 6);
      expect(rows.reduce((sum, a) => sum + a.costUsd, 0)).toBeCloseTo(8 * TURN_USD, 6);
      expect(fs.readFileSync(path.join(out, "patch.diff"), "utf8")).toBe(
        fs.readFileSync(path.join(out, "attempt-2", "patch.diff"), "utf8"),
      );
      await expectNoContainers(out, report);
    },
  );
});

describe("agent-ci run --attempts --timeout", () => {
  it(
    "one clock: --timeout is the whole run's, so an attempt that runs it out leaves none for the next, and the run ends timeout",
    { timeout: 180_000 },
    async () => {
      const { api, hints, out } = await scripted([SCRIPTS.sleeps, SCRIPTS.smallFix]);
      const run = await runCli(
        runArgs(hints, out, ["--attempts", "2", "--parallel", "1", "--timeout", "30"]),
        { ANTHROPIC_BASE_URL: api.url },
      );
      expect(run.code, run.stderr.slice(-3000)).toBe(5);
      const report = readReport(path.join(out, "report.json"));
      expect(report.exitReason).toBe("timeout");
      expect(report.error?.message).toMatch(
        /wall-clock limit \(--timeout\) was reached; the result is the best attempt so far \(attempt 1\)/,
      );
      expect(report.attempts?.map((a) => [a.attempt, a.started, a.exitReason])).toEqual([
        [1, true, "timeout"],
        [2, false, "timeout"],
      ]);
      expect(run.stderr).toContain(
        "agent-ci: the run's time (--timeout) is up; attempt 2 and later do not start",
      );
      expect(fs.existsSync(path.join(out, "attempt-2"))).toBe(false);
      await expectNoContainers(out, report);
    },
  );
});
