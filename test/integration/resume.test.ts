// --resume end to end on the real engine, the real SDK against the fake Messages API: a run stopped by its turn
// limit is picked up with a new prompt and finishes; the model's first request on resume carries the earlier
// conversation; the resumed patch is the whole change against the original base. The records that cannot be
// resumed end before any container, as config errors that say why.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterEach, describe, expect, it } from "vitest";
import { publishPullRequest } from "../../src/publish/pull-request.js";
import { parseReport, summarizePatch, type RunReport } from "../../src/report/index.js";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { CONVERSATION_FILE } from "../../src/runner/resume/resume.js";
import { runAgent, type RunOutcome } from "../../src/runner/run.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import {
  fake,
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeAnthropicOptions,
} from "../support/fake-anthropic.js";
import { startFakeGitHub } from "../support/fake-github.js";
import { addBareRepo, startGitRemote } from "../support/git-remote.js";
import { publishOptions } from "../support/publish-fixture.js";
import { applyToCopy, makeWorkspace } from "../support/workspace.js";
import { quietIo, tempOut } from "../support/run-io.js";

const docker = new Docker();
const KEY = ["sk-ant-api03", "RESUMEfake".repeat(4), "xyzAA"].join("-");
const CALC =
  "export function add(a, b) {\n  return a - b;\n}\n\nexport function mul(a, b) {\n  return a / b;\n}\n";
const FILE = "/workspace/src/calc.js";

const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function api(turns: FakeAnthropicOptions["turns"]): Promise<FakeAnthropic> {
  const server = await startFakeAnthropic({ apiKey: KEY, turns });
  servers.push(server);
  return server;
}

async function run(
  input: Partial<RunConfigInput>,
  server: FakeAnthropic,
): Promise<{ outcome: RunOutcome; report: RunReport; log: string }> {
  const config = parseRunConfig({
    out: tempOut(),
    apiKey: KEY,
    baseURL: server.url,
    ...input,
  } as RunConfigInput);
  let log = "";
  const outcome = await runAgent(
    config,
    quietIo({
      stderr: (text) => {
        log += text;
      },
    }),
  );
  const left = await docker.listContainers({
    all: true,
    filters: { label: [`${LABEL_RUN}=${outcome.runId}`] },
  });
  expect(left).toEqual([]);
  const report = parseReport(fs.readFileSync(path.join(outcome.outDir, "report.json"), "utf8"));
  return { outcome, report, log };
}

/** The messages as the API received them, without the cache breakpoints the driver moves from request to request. */
function withoutCacheControl(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCacheControl);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== "cache_control")
      .map(([key, item]) => [key, withoutCacheControl(item)]),
  );
}

describe("agent-ci run --resume", () => {
  it("continues a run stopped at max_turns: the earlier conversation goes first, an Edit needs no new Read, and the patch is the whole change", async () => {
    const workspace = makeWorkspace({ "src/calc.js": CALC }, { git: true });
    const base = execFileSync("git", ["rev-parse", "HEAD"], { cwd: workspace, encoding: "utf8" }).trim();
    const first = await api([
      fake.toolUse("Read", { file_path: FILE }),
      fake.toolUse("Edit", { file_path: FILE, old_string: "a - b", new_string: "a + b" }),
    ]);
    const earlier = await run(
      { workspace, prompt: "Fix add and mul in src/calc.js.", mode: "acceptEdits", maxTurns: 2 },
      first,
    );
    expect(earlier.outcome.exitReason).toBe("max_turns");
    expect(earlier.report.patch.files.map((f) => f.path)).toEqual(["src/calc.js"]);
    expect(fs.existsSync(path.join(earlier.outcome.outDir, CONVERSATION_FILE))).toBe(true);

    const second = await api([
      // No Read first: the earlier run read the file and edited it, and it is unchanged since.
      fake.toolUse("Edit", { file_path: FILE, old_string: "a / b", new_string: "a * b" }),
      fake.text("Fixed add and mul."),
    ]);
    // The run's own mode: the earlier record's is never adopted (default mode would refuse the Edit).
    const resumed = await run(
      { workspace, resume: earlier.outcome.outDir, prompt: "Also fix mul, then stop.", mode: "acceptEdits" },
      second,
    );
    expect(resumed.outcome.exitReason).toBe("completed");
    const edit = resumed.report.toolCalls.find((c) => c.tool === "Edit");
    expect(edit?.isError).toBe(false);
    expect(resumed.report.policy.mode).toBe("acceptEdits");
    expect(resumed.report.resumedFrom).toMatchObject({
      runId: earlier.outcome.runId,
      exitReason: "max_turns",
      baseCommit: base,
      restoredReads: 1,
    });
    expect(resumed.report.resumedFrom?.earlierPolicy).toBeUndefined();
    // Never published: the CLI's own output folder is resumed unbound.
    expect(resumed.report.resumedFrom?.publishedCommit).toBeUndefined();
    expect(resumed.report.workspace).toMatchObject({ path: path.basename(workspace), baseCommit: base });
    expect(resumed.report.limits.maxTurns).toBe(50);

    // The first request on resume: the earlier run's last request, its answer and the tool results, then the prompt.
    const before = first.messagesRequests().at(-1)?.body.messages ?? [];
    const sent = second.messagesRequests()[0]?.body.messages ?? [];
    expect(withoutCacheControl(sent.slice(0, before.length))).toEqual(withoutCacheControl(before));
    expect(sent[before.length]).toMatchObject({
      role: "assistant",
      content: [expect.objectContaining({ type: "tool_use", name: "Edit" })],
    });
    const last = JSON.stringify(sent.at(-1));
    expect(sent.at(-1)?.role).toBe("user");
    expect(last).toContain('"type":"tool_result"');
    expect(last).toContain("Also fix mul, then stop.");
    expect(sent).toHaveLength(before.length + 2);

    // The whole change against the original base, both fixes in it.
    const patch = fs.readFileSync(resumed.outcome.patchPath);
    const fixed = fs.readFileSync(path.join(applyToCopy(workspace, patch), "src/calc.js"), "utf8");
    expect(fixed).toBe(CALC.replace("a - b", "a + b").replace("a / b", "a * b"));
    // The next resume would start from this run's whole conversation.
    const record = fs.readFileSync(path.join(resumed.outcome.outDir, CONVERSATION_FILE), "utf8");
    expect(record).toContain("Fixed add and mul.");
    expect(record).not.toContain(KEY);

    // A record that cannot be resumed: a config error before any container, saying why.
    const server = await api([]);
    const broken = (name: string, change: (dir: string) => void) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `agent-ci-${name}-`));
      fs.cpSync(earlier.outcome.outDir, dir, { recursive: true });
      change(dir);
      return dir;
    };
    const cases: Array<[string, Partial<RunConfigInput>, RegExp]> = [
      [
        "missing record",
        { workspace, resume: path.join(os.tmpdir(), "no-such-agent-ci-run") },
        /no report\.json there/,
      ],
      [
        "older schema",
        {
          workspace,
          resume: broken("old", (dir) => {
            const file = path.join(dir, "report.json");
            const json = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
            fs.writeFileSync(file, JSON.stringify({ ...json, schemaVersion: 0 }));
          }),
        },
        /schemaVersion 0; this agent-ci resumes records of schema version 1 only/,
      ],
      [
        "no conversation",
        { workspace, resume: broken("noconv", (dir) => fs.rmSync(path.join(dir, CONVERSATION_FILE))) },
        /left no conversation\.jsonl/,
      ],
      [
        "missing base",
        { workspace: makeWorkspace({ "other.txt": "x\n" }, { git: true }), resume: earlier.outcome.outDir },
        new RegExp(`base commit ${base} is not in the repository at .*: fetch it there`),
      ],
    ];
    for (const [name, input, message] of cases) {
      const { outcome, report } = await run({ prompt: "go on", ...input }, server);
      expect(outcome.exitReason, name).toBe("config_error");
      expect(report.error?.message, name).toMatch(message);
      expect(report.image, name).toBeUndefined();
    }
    expect(server.messagesRequests()).toEqual([]);
  });

  it("B1 a forged record (allow Bash(*), bypassPermissions) resumes under this run's own policy and the report and log show the difference; a record whose base and patch do not give the published commit is refused before any container", async () => {
    const workspace = makeWorkspace({ "src/calc.js": CALC }, { git: true });
    const first = await api([
      fake.toolUse("Read", { file_path: FILE }),
      fake.toolUse("Edit", { file_path: FILE, old_string: "a - b", new_string: "a + b" }),
      fake.text("Fixed add."),
    ]);
    const earlier = await run({ workspace, prompt: "Fix add.", mode: "acceptEdits" }, first);
    expect(earlier.report.outcome).toBe("changes");

    // Published as agent-ci publish does it: a commit ending "agent-ci run <id>" on agent-ci/run-<id>.
    const token = ["ghs", "resumeBindToken0123456789abcdefABCD"].join("_");
    const remote = await startGitRemote({ token });
    servers.push(remote);
    const github = await startFakeGitHub({ token });
    servers.push(github);
    const bare = addBareRepo(remote, "acme", "widgets", workspace);
    const clone = (ref: string) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-clone-"));
      execFileSync("git", ["clone", "-q", bare, dir], { stdio: "pipe" });
      execFileSync("git", ["checkout", "-q", ref], { cwd: dir, stdio: "pipe" });
      return dir;
    };
    const published = await publishPullRequest(
      publishOptions({ remote, githubUrl: github.url, token }, earlier.outcome.outDir, clone("HEAD")),
    );
    expect(published.pushed).toBe(true);
    const checkout = clone(published.branch);

    const forge = (name: string, change: (dir: string, report: Record<string, unknown>) => void) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `agent-ci-${name}-`));
      fs.cpSync(earlier.outcome.outDir, dir, { recursive: true });
      const file = path.join(dir, "report.json");
      const report = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
      change(dir, report);
      fs.writeFileSync(file, JSON.stringify(report));
      return dir;
    };

    // Widened rules and mode in the record: this run's policy is its own; the difference is reported.
    const widened = forge("widened", (_dir, report) => {
      report.policy = {
        mode: "bypassPermissions",
        rules: [{ text: "Bash(*)", behavior: "allow", source: "command line" }],
        ignored: [],
      };
    });
    const second = await api([
      fake.toolUse("Bash", { command: "touch /workspace/forged" }),
      fake.text("Tried."),
    ]);
    const resumed = await run(
      { workspace: checkout, resume: widened, prompt: "Go on.", mode: "acceptEdits" },
      second,
    );
    expect(resumed.outcome.exitReason).toBe("completed");
    expect(resumed.report.policy.mode).toBe("acceptEdits");
    expect(resumed.report.policy.rules.map((r) => r.text)).not.toContain("Bash(*)");
    const bash = resumed.report.toolCalls.find((c) => c.tool === "Bash");
    expect(bash?.decision?.behavior).toBe("deny");
    expect(resumed.report.patch.files.map((f) => f.path)).toEqual(["src/calc.js"]);
    expect(resumed.report.resumedFrom?.earlierPolicy?.mode).toBe("bypassPermissions");
    expect(resumed.report.resumedFrom?.publishedCommit).toBe(published.commitSha);
    const warning = resumed.report.warnings.find((w) => w.kind === "resume_policy_changed");
    expect(warning?.message).toContain("mode bypassPermissions → acceptEdits");
    expect(warning?.message).toContain("removed allow Bash(*)");
    expect(resumed.log).toContain("mode bypassPermissions → acceptEdits; removed allow Bash(*)");
    const markdown = fs.readFileSync(path.join(resumed.outcome.outDir, "report.md"), "utf8");
    expect(markdown).toContain("mode bypassPermissions → acceptEdits; removed allow Bash(\\*)");
    expect(markdown).toContain(
      `the record matches its published commit <code>${published.commitSha.slice(0, 12)}</code>; its record's policy was mode <code>bypassPermissions</code> with 1 rule, not adopted`,
    );

    // What the record claims about the workspace must give the published commit's tree.
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
        cwd: checkout,
        encoding: "utf8",
        stdio: "pipe",
      }).trim();
    // Another commit of the repository the patch applies to as well (a pull request's, say).
    git("checkout", "-q", "-b", "side", "HEAD~1");
    fs.writeFileSync(path.join(checkout, "extra.txt"), "x\n");
    git("add", "extra.txt");
    git("commit", "-q", "-m", "another base");
    const other = git("rev-parse", "HEAD");
    git("checkout", "-q", published.branch);
    const tampered = forge("tampered", (dir, report) => {
      const patch = fs
        .readFileSync(path.join(dir, "patch.diff"), "utf8")
        .replace("+  return a + b;", "+  return a + b + 1;");
      fs.writeFileSync(path.join(dir, "patch.diff"), patch);
      report.patch = { ...(report.patch as object), ...summarizePatch(patch) };
    });
    const rebased = forge("rebased", (_dir, report) => {
      report.workspace = { ...(report.workspace as object), baseCommit: other };
    });
    const server = await api([]);
    for (const [name, record] of [
      ["tampered patch", tampered],
      ["another base", rebased],
    ] as const) {
      const refused = await run({ workspace: checkout, resume: record, mode: "acceptEdits" }, server);
      expect(refused.outcome.exitReason, name).toBe("config_error");
      expect(refused.report.error?.message, name).toMatch(
        new RegExp(`the record does not match what agent-ci publish pushed for run ${earlier.outcome.runId}`),
      );
      expect(refused.report.image, name).toBeUndefined();
    }
    expect(server.messagesRequests()).toEqual([]);
  });
});
