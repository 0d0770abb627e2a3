// Each example workflow's agent step, run as a runner would run it: the step's `with:` inputs read from the
// example file and its `${{ }}` expressions evaluated with GitHub's own expression library, the job's `if:`
// evaluated against the event, and the `run:` steps before the agent step run on the "runner" (the host) —
// so a dependency install the example does there really happens. The repository is a fixture with a real
// package.json whose test needs a dev dependency (a tarball packed here, `file:` in package.json, so `npm ci`
// needs no registry); the model is the fake Messages API, scripted to read the bug, fix it and run the tests;
// GitHub is the fake REST API. The step must pass, and where the example verifies, verify must pass: the
// dependencies have to reach the fresh container verify runs in, not only the agent's sandbox.
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { recordingUploader, runAction, runStep } from "../support/action-harness.js";
import {
  fake as turn,
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeTurn,
} from "../support/fake-anthropic.js";
import {
  fixturePullRequest,
  startFakeGitHub,
  type FakeGitHub,
  type FakePull,
} from "../support/fake-github.js";
import { addBareRepo, startGitRemote } from "../support/git-remote.js";
import { eventPayload, FIXTURE_EVENTS, githubEnv, readOutputs, runnerFiles } from "../support/github-env.js";
import { makeWorkspace } from "../support/workspace.js";
import { actionRoot, REPO_ROOT } from "../support/action-dist.js";
import { GitHubApi, octokitRequest } from "../../src/github/api.js";
import { LedgerRepo } from "../../src/fleet/ledger.js";
import { CLAIM_LABEL, readQueue } from "../../src/fleet/scheduler.js";
import { condition, evaluate, namesStatus, template } from "../support/workflow-expressions.js";

const execFileAsync = promisify(execFile);
const EXAMPLES = path.resolve(import.meta.dirname, "../../examples/workflows");
const WORKFLOW_FIXTURES = path.resolve(import.meta.dirname, "../fixtures/workflows");
/** The settings file answer-pr-comments.yml asks for at .github/agent-ci-settings.json, as the repository ships it. */
const PR_SETTINGS = fs.readFileSync(
  path.resolve(import.meta.dirname, "../../examples/settings/answer-pr-comments.json"),
  "utf8",
);
const AGENT_CI = "OWNER/agent-ci@v1";
// Assembled at run time: no token-shaped literal in the repository.
const TOKEN = ["ghs", "examplesRun".padEnd(36, "0")].join("_");
const API_KEY = ["sk", "ant", "api03", "examples".padEnd(40, "x")].join("-");

interface Step {
  id?: string;
  if?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
  "continue-on-error"?: boolean;
}
interface Job {
  if?: string;
  needs?: string | string[];
  outputs?: Record<string, string>;
  strategy?: { matrix?: Record<string, unknown> };
  steps: Step[];
}

// ---- The fixture repository ------------------------------------------------------------------------------

const CALC = "// Tiny calculator.\nfunction add(a, b) {\n  return a - b;\n}\nmodule.exports = { add };\n";
const DEP = "sum-check";
let tarball: Buffer;
let tarballName: string;

/** A dev dependency the tests need: packed once with npm, put in each fixture as a `file:` tarball. */
beforeAll(() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-dep-"));
  fs.writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name: DEP, version: "1.0.0", main: "index.js", license: "MIT" }),
  );
  fs.writeFileSync(
    path.join(dir, "index.js"),
    "const assert = require('node:assert');\n" +
      "exports.checkSum = (add) => { assert.strictEqual(add(2, 2), 4); assert.strictEqual(add(-1, 3), 2); };\n",
  );
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--pack-destination", dir], { cwd: dir, encoding: "utf8" }),
  ) as Array<{ filename: string }>;
  tarballName = packed[0]?.filename ?? "";
  tarball = fs.readFileSync(path.join(dir, tarballName));
});

/** The files of one npm project with the bug, under `prefix` of the repository. */
function project(prefix: string): Record<string, string | Buffer> {
  const files: Record<string, string | Buffer> = {
    "package.json": `${JSON.stringify(
      {
        name: "calc",
        version: "1.0.0",
        private: true,
        scripts: { test: "node --test" },
        devDependencies: { [DEP]: `file:vendor/${tarballName}` },
      },
      null,
      2,
    )}\n`,
    // The fixture's one dependency is a local tarball: nothing to ask a registry, not even an audit.
    ".npmrc": "audit=false\nfund=false\n",
    [`vendor/${tarballName}`]: tarball,
    "src/calc.js": CALC,
    "test/calc.test.js":
      "const test = require('node:test');\nconst { checkSum } = require('sum-check');\n" +
      "const { add } = require('../src/calc.js');\ntest('add', () => checkSum(add));\n",
  };
  return Object.fromEntries(Object.entries(files).map(([f, c]) => [path.posix.join(prefix, f), c]));
}

function fixtureRepository(prefix: string): string {
  const workspace = makeWorkspace({ ".gitignore": "node_modules/\n", ...project(prefix) });
  // The lock file, made offline (the tarball is the only package), then everything committed.
  execFileSync("npm", ["install", "--package-lock-only", "--offline"], {
    cwd: path.join(workspace, prefix),
    stdio: "pipe",
  });
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
      cwd: workspace,
      encoding: "utf8",
    }).trim();
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-qm", "calc");
  return workspace;
}

// ---- A job's steps, as a runner runs them -------------------------------------------------------------------

type Outputs = Record<string, string>;
/** Runs a `uses:` step with its `with:` evaluated: its outputs, or undefined when there is no way to here. */
type UsesRunner = (step: Step, inputs: Record<string, string>) => Promise<Outputs | undefined>;

/** A step that ran and failed (a `uses:` step's action exited non-zero, an artifact was not there), with its outputs. */
class StepFailed extends Error {
  constructor(
    message: string,
    readonly outputs: Outputs = {},
  ) {
    super(message);
  }
}

/**
 * The steps in order, each when its `if:` holds (one naming no status function only while the job succeeds): a
 * `run:` step in bash in `cwd`, with the runner's variables (`runnerEnv`), its `env:` evaluated and GITHUB_OUTPUT
 * read back; a `uses:` step by `uses`. A step's outputs go into `context.steps` under its id. A `uses:` step that
 * throws StepFailed fails the job (`job.status`), unless it has `continue-on-error`; the job's status is returned.
 */
async function runSteps(
  steps: Step[],
  context: Record<string, unknown>,
  cwd: string,
  uses: UsesRunner,
  runnerEnv: Record<string, string> = {},
): Promise<string> {
  const runnerTemp = (context.runner as { temp: string }).temp;
  const done = context.steps as Record<string, { outputs: Outputs }>;
  const job = (context.job ??= { status: "success" }) as { status: string };
  for (const [i, step] of steps.entries()) {
    if (!namesStatus(step.if) && job.status !== "success") continue;
    if (!condition(step.if, context)) continue;
    let outputs: Outputs | undefined;
    if (step.run !== undefined) {
      const output = path.join(runnerTemp, `output-${step.id ?? i}`);
      fs.writeFileSync(output, "");
      const env = Object.fromEntries(
        Object.entries(step.env ?? {}).map(([k, v]) => [k, template(v, context)]),
      );
      // Not execFileSync: the fakes a step talks to (the GitHub API, the git server) answer in this process.
      await execFileAsync("bash", ["-eo", "pipefail", "-c", step.run], {
        cwd,
        env: { ...process.env, ...runnerEnv, ...env, GITHUB_OUTPUT: output, RUNNER_TEMP: runnerTemp },
      }).catch((error: Error & { stdout?: string; stderr?: string }) => {
        throw new Error(
          `step ${step.id ?? i} failed: ${error.message}\n${error.stdout ?? ""}${error.stderr ?? ""}`,
        );
      });
      outputs = readOutputs(output);
    } else {
      const inputs = Object.fromEntries(
        Object.entries(step.with ?? {}).map(([k, v]) => [k, template(v, context)]),
      );
      try {
        outputs = await uses(step, inputs);
      } catch (error) {
        if (!(error instanceof StepFailed)) throw error;
        outputs = error.outputs;
        if (!step["continue-on-error"]) job.status = "failure";
      }
      if (!outputs) throw new Error(`no way to run ${step.uses ?? "a step"} here`);
    }
    if (step.id) done[step.id] = { outputs };
  }
  return job.status;
}

/** A job's `outputs:`, evaluated once its steps ran. */
function jobOutputs(job: Job, context: Record<string, unknown>): Outputs {
  return Object.fromEntries(Object.entries(job.outputs ?? {}).map(([k, v]) => [k, template(v, context)]));
}

/** Artifacts by name, as the workflow run's artifact storage holds them between jobs. */
class ArtifactStore {
  readonly byName = new Map<string, string>();

  /** actions/upload-artifact: `path`'s files under `name`. */
  upload(name: string, dir: string): void {
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-stored-"));
    fs.cpSync(dir, copy, { recursive: true });
    this.byName.set(name, copy);
  }

  /** actions/download-artifact: one artifact's files into `path`, or each matching `pattern` in its own folder. */
  download(inputs: Record<string, string>): void {
    const dest = inputs.path ?? "";
    if (inputs.name) {
      const dir = this.byName.get(inputs.name);
      if (!dir)
        throw new StepFailed(`Unable to download artifact(s): Artifact not found for name: ${inputs.name}`);
      fs.cpSync(dir, dest, { recursive: true });
      return;
    }
    const escape = (part: string) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
    const glob = new RegExp(`^${(inputs.pattern ?? "*").split("*").map(escape).join(".*")}$`);
    for (const [name, dir] of this.byName)
      if (glob.test(name)) fs.cpSync(dir, path.join(dest, name), { recursive: true });
  }
}

/**
 * The agent-ci step of a job, as the runner runs it: the bundled Action with the step's inputs, the model at
 * `modelUrl`, and what it uploads kept in the run's artifact storage.
 */
async function agentCiStep(
  step: {
    event: string;
    payload: Record<string, unknown>;
    apiUrl: string;
    workspace: string;
    modelUrl: string;
  },
  inputs: Record<string, string>,
  artifacts: ArtifactStore,
): Promise<Awaited<ReturnType<typeof runAction>>> {
  const uploader = recordingUploader();
  const result = await runAction({
    fixture: step.event,
    payload: step.payload,
    apiUrl: step.apiUrl,
    workspace: step.workspace,
    inputs,
    token: TOKEN,
    env: { ANTHROPIC_BASE_URL: step.modelUrl },
    artifacts: uploader,
  });
  for (const upload of uploader.uploads) artifacts.upload(upload.name, uploader.dir);
  return result;
}

/** A job's expression contexts: the event, the secrets, its matrix combination, what its `needs` left. */
function jobContext(
  event: string,
  payload: Record<string, unknown>,
  job: { matrix?: Record<string, unknown>; needs?: Record<string, { result: string; outputs: Outputs }> },
): Record<string, unknown> {
  return {
    github: {
      event: payload,
      event_name: FIXTURE_EVENTS[event],
      repository: "acme/widgets",
      repository_owner: "acme",
      run_attempt: "1",
      token: TOKEN,
    },
    secrets: { ANTHROPIC_API_KEY: API_KEY },
    inputs: (payload.inputs as Record<string, unknown> | undefined) ?? {},
    matrix: job.matrix ?? {},
    needs: job.needs ?? {},
    runner: { temp: fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-runner-temp-")) },
    steps: {} as Record<string, { outputs: Outputs }>,
    env: {},
    vars: {},
  };
}

// ---- The examples and the events they run on -------------------------------------------------------------

interface Case {
  event: string;
  /** Changes the recorded payload to what this example's trigger expects. */
  payload?: (p: Record<string, unknown>) => void;
  /** A pull-request review answers with findings instead of a fix. */
  review?: boolean;
  /** The matrix combination and what earlier jobs left, for a job whose matrix an earlier job writes. */
  matrix?: Record<string, unknown>;
  needs?: Record<string, { result: string; outputs: Outputs }>;
  /** The job that claims the work (agent-ci with task: queue): run first, its outputs are `needs` and the matrix. */
  queueJob?: string;
}
const comment = (body: string) => (p: Record<string, unknown>) => {
  (p.comment as { body: string }).body = body;
};
const CASES: Record<string, Case> = {
  "answer-pr-comments.yml": { event: "issue-comment-pr", payload: comment("@agent-ci fix add(), please") },
  "claude-code-action-equivalent.yml": {
    event: "issues-opened",
    payload: (p) => {
      (p.issue as { body: string }).body = "@claude add(2, 2) is not 4 in src/calc.js";
    },
  },
  "continue-agent-prs.yml": { event: "issue-comment-pr", payload: comment("@agent-ci also fix add()") },
  "attempts-matrix.yml": { event: "issues-labeled" },
  "backlog.yml": { event: "schedule", queueJob: "queue" },
  "fix-issue-when-labeled.yml": { event: "issues-labeled" },
  "matrix-fan-out.yml": {
    event: "workflow-dispatch",
    payload: (p) => {
      p.inputs = { task: "add() subtracts: fix it and run the tests" };
    },
  },
  "nightly-maintenance.yml": { event: "schedule" },
  "review-pull-request.yml": { event: "pull-request-opened", review: true },
  "two-job-pattern.yml": {
    event: "workflow-dispatch",
    payload: (p) => {
      p.inputs = { task: "add() subtracts: fix it and run the tests" };
    },
  },
};

const files = fs
  .readdirSync(EXAMPLES)
  .filter((f) => f.endsWith(".yml"))
  .sort();

let github: FakeGitHub | undefined;
let anthropic: FakeAnthropic | undefined;
afterEach(async () => {
  await github?.close();
  await anthropic?.close();
  github = anthropic = undefined;
});

/** The first combination of a job's matrix. */
function firstCombination(job: Job): Record<string, unknown> {
  const matrix = job.strategy?.matrix ?? {};
  return Object.fromEntries(
    Object.entries(matrix).flatMap(([k, v]) => (Array.isArray(v) ? [[k, v[0] as unknown]] : [])),
  );
}

describe("each example's agent step against the fakes", () => {
  it("covers every example", () => {
    expect(Object.keys(CASES).sort()).toEqual(files);
  });

  it.each(files)(
    "%s: the step passes on a repository whose tests need a dev dependency",
    { timeout: 240_000 },
    async (file) => {
      const spec = CASES[file];
      if (!spec) throw new Error(`no case for ${file}`);
      const workflowFile = path.join(EXAMPLES, file);
      await runAgentStep(workflowFile, spec.queueJob ? await runQueueJob(workflowFile, spec) : spec);
    },
  );
});

/** agent-ci running the agent (not the queue's scheduler, task: queue). */
const isAgentStep = (s: Step) => s.uses === AGENT_CI && s.with?.task !== "queue";
const ISSUE_TITLE = "add() returns the wrong sum";

/**
 * The case's queue job, as a runner runs it on the case's event: agent-ci with task: queue against the fake
 * GitHub (issue 12, labelled as the example's query asks, and the workflow run the ledger's entries name) and
 * a git server holding the ledger. Its job outputs become the case's `needs`, and the first entry of the
 * agent job's matrix (evaluated from them, as a runner expands it) the case's matrix.
 */
async function runQueueJob(workflowFile: string, spec: Case): Promise<Case> {
  const workflow = parse(fs.readFileSync(workflowFile, "utf8")) as { jobs: Record<string, Job> };
  const name = spec.queueJob ?? "";
  const job = workflow.jobs[name];
  if (!job) throw new Error(`${workflowFile} has no job ${name}`);
  const checkout = fixtureRepository("");
  const remote = await startGitRemote({ token: TOKEN });
  addBareRepo(remote, "acme", "widgets", checkout);
  const payload = eventPayload(spec.event);
  spec.payload?.(payload);
  const labels = job.steps.flatMap((s) => (s.with?.queue_label ? [String(s.with.queue_label)] : []));
  const gh = await startFakeGitHub({
    token: TOKEN,
    issues: [{ number: 12, title: ISSUE_TITLE, body: "b", user: { login: "octocat" }, labels }],
    runs: [{ id: 4242, event: FIXTURE_EVENTS[spec.event] ?? "", head_branch: "main" }],
  });
  try {
    const context = jobContext(spec.event, payload, {});
    expect(condition(job.if, context), `${name}: the job's if: lets the event through`).toBe(true);
    await runSteps(job.steps, context, checkout, async (step, inputs) => {
      if (step.uses !== AGENT_CI) return undefined;
      const result = await runAction({
        fixture: spec.event,
        payload,
        apiUrl: gh.url,
        workspace: checkout,
        inputs,
        token: TOKEN,
        env: { GITHUB_SERVER_URL: remote.url },
      });
      expect(result.failed, result.log.slice(-3000)).toBeUndefined();
      expect(result.summary).toContain("### agent-ci queue");
      return result.outputs;
    });
    const outputs = jobOutputs(job, context);
    expect(outputs.count, `${name} claims the labelled issue`).toBe("1");
    const needs = { [name]: { result: "success", outputs } };
    const [, agentJob] = Object.entries(workflow.jobs).find(([, j]) => j.steps.some(isAgentStep)) ?? [];
    const expression = String(agentJob?.strategy?.matrix ?? "");
    const bare = /^\$\{\{([\s\S]*)\}\}$/.exec(expression.trim())?.[1] ?? "";
    const matrix = JSON.parse(
      evaluate(`toJSON(${bare.trim()})`, jobContext(spec.event, payload, { needs })).coerceString(),
    ) as { include: Array<Record<string, unknown>> };
    expect(matrix.include).toEqual([{ item: "issue:12", issue: 12, title: ISSUE_TITLE }]);
    return { ...spec, matrix: matrix.include[0], needs };
  } finally {
    await gh.close();
    await remote.close();
    fs.rmSync(remote.root, { recursive: true, force: true });
  }
}

/**
 * A workflow's agent step, run as a runner would on the case's event: the steps before it run, its `with:`
 * evaluated, the model scripted to fix the bug (or review), the step passing.
 */
async function runAgentStep(workflowFile: string, spec: Case): Promise<void> {
  const file = path.basename(workflowFile);
  const workflow = parse(fs.readFileSync(workflowFile, "utf8")) as {
    jobs: Record<string, Job>;
  };
  const [, job] = Object.entries(workflow.jobs).find(([, j]) => j.steps.some(isAgentStep)) ?? [];
  if (!job) throw new Error(`${file} has no agent-ci step`);
  const agentIndex = job.steps.findIndex(isAgentStep);
  const agentStep = job.steps[agentIndex] as Step;
  const matrix = { ...firstCombination(job), ...spec.matrix };
  const workspaceInput = String(agentStep.with?.workspace ?? "");
  // The matrix example works in packages/<name>: the project sits there.
  const prefix = workspaceInput ? template(workspaceInput, { matrix }) : "";
  const workspace = fixtureRepository(prefix);
  const gitOut = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
      cwd: workspace,
      encoding: "utf8",
    }).trim();
  const base = gitOut("rev-parse", "HEAD");
  if (spec.review) {
    // A pull request that adds a function next to the bug: the review reads the change.
    fs.appendFileSync(path.join(workspace, "src/calc.js"), "exports.twice = (a) => add(a, a);\n");
    gitOut("commit", "-qam", "twice");
  }
  const head = gitOut("rev-parse", "HEAD");

  const payload = eventPayload(spec.event);
  spec.payload?.(payload);
  const pull = payload.pull_request as { base: { sha: string }; head: { sha: string } } | undefined;
  if (pull) {
    pull.base.sha = base;
    pull.head.sha = head;
  }
  const pr = fixturePullRequest({ base, head, diff: gitOut("diff", `${base}...${head}`) });
  github = await startFakeGitHub({
    token: TOKEN,
    permissions: { octocat: "write" },
    issues: [{ number: 12, title: ISSUE_TITLE, body: "b", user: { login: "octocat" } }, pr.issue],
    pulls: [pr.pull],
    contents: {
      [base]: { ".github/agent-ci-settings.json": PR_SETTINGS },
    },
  });

  const context = jobContext(spec.event, payload, { matrix, needs: spec.needs });
  expect(condition(job.if, context), `${file}: the job's if: lets the event through`).toBe(true);

  // The steps before the agent's, as a runner runs them: checkout and setup-node are what the fixture and
  // this machine's Node.js already are; a `run:` step runs here, in the checkout.
  await runSteps(job.steps.slice(0, agentIndex), context, workspace, async (step) =>
    step.uses?.startsWith("actions/checkout@") || step.uses?.startsWith("actions/setup-node@")
      ? {}
      : undefined,
  );

  const inputs = Object.fromEntries(
    Object.entries(agentStep.with ?? {}).map(([k, v]) => [k, template(v, context)]),
  );

  const calc = `/workspace/src/calc.js`;
  anthropic = await startFakeAnthropic({
    apiKey: API_KEY,
    turns: spec.review
      ? [
          turn.toolUse("Read", { file_path: calc }),
          turn.toolUse("StructuredOutput", {
            summary: "twice() inherits add()'s bug.",
            findings: [{ path: "src/calc.js", line: 6, severity: "major", body: "add() subtracts." }],
          }),
          turn.text("Reviewed."),
        ]
      : [
          turn.toolUse("Read", { file_path: calc }),
          turn.toolUse("Edit", { file_path: calc, old_string: "a - b", new_string: "a + b" }),
          turn.toolUse("Bash", { command: "npm test" }),
          turn.text("Fixed add(): it subtracted."),
        ],
  });
  const result = await runAction({
    fixture: spec.event,
    payload,
    apiUrl: github.url,
    workspace,
    inputs,
    token: TOKEN,
    env: { ANTHROPIC_BASE_URL: anthropic.url },
  });
  const shown = result.stdout
    .split("\n")
    .filter((line) => !line.startsWith("::add-mask::"))
    .join("\n");
  expect(result.failed, shown.slice(-3000)).toBeUndefined();
  expect(result.outputs.skipped).toBe("false");
  expect(result.outputs.exit_reason).toBe("completed");
  if (spec.review) {
    expect(result.outputs.findings).toBe("1");
    return;
  }
  expect(result.outputs.outcome).toBe("changes");
  expect(fs.readFileSync(result.outputs.patch_path ?? "", "utf8")).toContain("+  return a + b;");

  // Where the example lets the agent run the tests, they ran, with the dev dependency there.
  const testsAllowed = /npm test/.test(`${inputs.allowed_tools ?? ""} ${inputs.claude_args ?? ""}`);
  const bashResult = JSON.stringify(anthropic.messagesRequests()[3]?.body.messages.at(-1));
  if (testsAllowed) expect(bashResult).toMatch(/pass 1\b/);
  // Where it verifies, the fresh container saw the dependency too.
  if (inputs.verify) expect(result.outputs.verify_exit_code).toBe("0");
}

describe("claude-code-action's README example, moved to agent-ci", () => {
  it(
    "the workflow with the action name changed and claude_args kept: an issue mentioning @claude is fixed",
    { timeout: 240_000 },
    async () => {
      await runAgentStep(path.join(WORKFLOW_FIXTURES, "claude-code-action-readme.yml"), {
        event: "issues-opened",
        payload: (p) => {
          (p.issue as { body: string }).body = "@claude add(2, 2) is not 4 in src/calc.js";
        },
      });
    },
  );
});

// ---- The attempts example, every job: four attempts on "four runners", the choice, the pull request -------

const CHOOSE = "OWNER/agent-ci/choose@v1";
const PUBLISH = "OWNER/agent-ci/publish@v1";

const CALC_PATH = "/workspace/src/calc.js";
const fixed = (text: string) => CALC.replace("  return a - b;", text);
/** Attempt k's turns: one breaks the tests, one is denied a push, two fix add() with patches of two sizes. */
const ATTEMPTS: Record<number, FakeTurn[]> = {
  1: [
    turn.toolUse("Read", { file_path: CALC_PATH }),
    turn.toolUse("Edit", { file_path: CALC_PATH, old_string: "a - b", new_string: "a * b" }),
    turn.text("Multiplied."),
  ],
  2: [
    turn.toolUse("Read", { file_path: CALC_PATH }),
    turn.toolUse("Edit", {
      file_path: CALC_PATH,
      old_string: "  return a - b;",
      new_string: "  // The sum: it used to subtract.\n  return a + b;",
    }),
    turn.text("Fixed add(), with a comment."),
  ],
  3: [
    turn.toolUse("Read", { file_path: CALC_PATH }),
    turn.toolUse("Edit", { file_path: CALC_PATH, old_string: "a - b", new_string: "a + b" }),
    turn.text("Fixed add()."),
  ],
  4: [
    turn.toolUse("Read", { file_path: CALC_PATH }),
    turn.toolUse("Bash", { command: "git push origin main" }),
    turn.toolUse("Edit", { file_path: CALC_PATH, old_string: "a - b", new_string: "b + a" }),
    turn.text("Fixed add(); the push was refused."),
  ],
};

describe("attempts-matrix.yml, every job against the fakes", () => {
  it(
    "four matrix attempts, the choose job on their artifacts, then publish opens the pull request from the chosen one",
    { timeout: 600_000 },
    async () => {
      const file = "attempts-matrix.yml";
      const workflow = parse(fs.readFileSync(path.join(EXAMPLES, file), "utf8")) as {
        jobs: Record<string, Job>;
      };
      const jobs = workflow.jobs;
      const workspace = fixtureRepository("");
      const base = execFileSync("git", ["rev-parse", "HEAD"], { cwd: workspace, encoding: "utf8" }).trim();
      const remote = await startGitRemote({ token: TOKEN });
      addBareRepo(remote, "acme", "widgets", workspace);
      github = await startFakeGitHub({
        token: TOKEN,
        permissions: { octocat: "write" },
        issues: [{ number: 12, title: "add() returns the wrong sum", body: "b", user: { login: "octocat" } }],
      });
      const gh = github;
      const event = CASES[file]?.event ?? "";
      const payload = eventPayload(event);
      const artifacts = new ArtifactStore();
      const needs: Record<string, { result: string; outputs: Outputs }> = {};
      /** The GITHUB_* variables of a step whose checkout is `dir`. */
      const runnerEnv = (dir: string, context: Record<string, unknown>) => ({
        ...githubEnv({ fixture: event, apiUrl: gh.url, workspace: dir, files: runnerFiles(), payload }),
        RUNNER_TEMP: (context.runner as { temp: string }).temp,
        GITHUB_SERVER_URL: remote.url,
      });
      /** The steps every job here runs the same way: checkout (the fixture is the checkout) and the artifacts. */
      const common = async (step: Step, inputs: Record<string, string>): Promise<Outputs | undefined> => {
        const action = step.uses?.split("@")[0];
        if (action === "actions/checkout") return {};
        if (action === "actions/download-artifact") return (artifacts.download(inputs), {});
        if (action === "actions/upload-artifact")
          return (artifacts.upload(inputs.name ?? "", inputs.path ?? ""), {});
        return undefined;
      };

      try {
        // The matrix jobs, one per attempt, each on its own "runner" with the model scripted for it.
        const attemptJob = jobs.attempt as Job;
        const combinations = (attemptJob.strategy?.matrix?.attempt ?? []) as number[];
        expect(combinations).toEqual([1, 2, 3, 4]);
        for (const attempt of combinations) {
          const context = jobContext(event, payload, { matrix: { attempt } });
          expect(condition(attemptJob.if, context)).toBe(true);
          anthropic = await startFakeAnthropic({ apiKey: API_KEY, turns: [...(ATTEMPTS[attempt] ?? [])] });
          const api = anthropic;
          await runSteps(attemptJob.steps, context, workspace, async (step, inputs) => {
            if (step.uses !== AGENT_CI) return common(step, inputs);
            const result = await agentCiStep(
              { event, payload, apiUrl: gh.url, workspace, modelUrl: api.url },
              inputs,
              artifacts,
            );
            expect(result.failed, `attempt ${attempt}: ${result.stdout.slice(-3000)}`).toBeUndefined();
            return result.outputs;
          });
          await api.close();
          anthropic = undefined;
        }
        expect([...artifacts.byName.keys()]).toEqual(
          combinations.map((k) => `agent-ci-issue-12-attempt-${k}`),
        );
        needs.attempt = { result: "success", outputs: {} };

        // The choose job: the attempts' artifacts downloaded, the choice made, the chosen folder uploaded.
        const chooseJob = jobs.choose as Job;
        const chooseContext = jobContext(event, payload, { needs: { attempt: needs.attempt } });
        expect(condition(chooseJob.if, chooseContext)).toBe(true);
        await runSteps(chooseJob.steps, chooseContext, workspace, async (step, inputs) => {
          if (step.uses !== CHOOSE) return common(step, inputs);
          const ran = await runStep({
            action: "choose",
            inputs,
            env: runnerEnv(workspace, chooseContext),
            token: TOKEN,
          });
          expect(ran.failed, ran.log).toBeUndefined();
          return ran.outputs;
        });
        const chosen = (chooseContext.steps as Record<string, { outputs: Outputs }>).choose?.outputs;
        expect(chosen).toMatchObject({
          attempt: "3",
          has_changes: "true",
          reason: expect.stringMatching(/^attempt 3 passed verify: /),
        });
        needs.choose = { result: "success", outputs: jobOutputs(chooseJob, chooseContext) };

        // The publish job, on a fresh checkout, with the chosen attempt's artifact.
        const publishJob = jobs.publish as Job;
        const publishContext = jobContext(event, payload, { needs: { choose: needs.choose } });
        expect(condition(publishJob.if, publishContext)).toBe(true);
        const checkout = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-checkout-"));
        execFileSync("git", ["clone", "-q", workspace, checkout]);
        await runSteps(publishJob.steps, publishContext, checkout, async (step, inputs) => {
          if (step.uses !== PUBLISH) return common(step, inputs);
          // The step's working directory is the checkout (GITHUB_WORKSPACE).
          const env = runnerEnv(checkout, publishContext);
          const ran = await runStep({ action: "publish", inputs, env, token: TOKEN });
          expect(ran.failed, ran.log).toBeUndefined();
          return ran.outputs;
        });

        // One pull request, its commit the chosen attempt's patch, its body saying what it was chosen from.
        const pulls = [...gh.pulls.values()];
        expect(pulls).toHaveLength(1);
        const pull = pulls[0] as FakePull;
        expect(pull.body).toContain(
          "**Chosen from 4 attempts**: attempt 3 passed verify (smallest patch (2 changed lines, attempt 2 had 3)); 2 others passed verify; 1 failed verify; 1 was denied a call.",
        );
        const git = (...args: string[]) =>
          execFileSync("git", args, { cwd: remote.repoDir("acme", "widgets"), encoding: "utf8" });
        expect(git("show", `${pull.head.ref}:src/calc.js`)).toBe(fixed("  return a + b;"));
        expect(git("rev-parse", `${pull.head.ref}~1`).trim()).toBe(base);
      } finally {
        await remote.close();
      }
    },
  );
});

// ---- The pull-request comment example, every job: the agent on a person's pull request, then the push -----

describe("answer-pr-comments.yml, every job against the fakes", () => {
  it(
    "@agent-ci on a person's pull request: the agent job answers, then the publish job pushes one commit onto the pull request's branch and comments",
    { timeout: 600_000 },
    async () => {
      const file = "answer-pr-comments.yml";
      const jobs = (
        parse(fs.readFileSync(path.join(EXAMPLES, file), "utf8")) as { jobs: Record<string, Job> }
      ).jobs;
      const workspace = fixtureRepository("");
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
          cwd: workspace,
          encoding: "utf8",
        }).trim();
      const base = git("rev-parse", "HEAD");
      // The person's pull request: their branch, one commit on main; the job's checkout is its head.
      git("checkout", "-q", "-b", "fast-multiply");
      fs.appendFileSync(path.join(workspace, "src/calc.js"), "exports.twice = (a) => a * 2;\n");
      git("commit", "-qam", "twice");
      const head = git("rev-parse", "HEAD");
      const remote = await startGitRemote({ token: TOKEN });
      const bare = addBareRepo(remote, "acme", "widgets", workspace);
      const pr = fixturePullRequest({ base, head, diff: git("diff", `${base}...${head}`) });
      github = await startFakeGitHub({
        token: TOKEN,
        permissions: { octocat: "write" },
        issues: [pr.issue],
        pulls: [pr.pull],
        contents: {
          [base]: { ".github/agent-ci-settings.json": PR_SETTINGS },
        },
        repositories: { "acme/widgets": bare },
      });
      const gh = github;
      const event = CASES[file]?.event ?? "";
      const payload = eventPayload(event);
      CASES[file]?.payload?.(payload);
      const artifacts = new ArtifactStore();
      const runnerEnv = (dir: string, context: Record<string, unknown>) => ({
        ...githubEnv({ fixture: event, apiUrl: gh.url, workspace: dir, files: runnerFiles(), payload }),
        RUNNER_TEMP: (context.runner as { temp: string }).temp,
        GITHUB_SERVER_URL: remote.url,
      });
      const common = async (step: Step, inputs: Record<string, string>): Promise<Outputs | undefined> => {
        const action = step.uses?.split("@")[0];
        if (action === "actions/checkout" || action === "actions/setup-node") return {};
        if (action === "actions/download-artifact") return (artifacts.download(inputs), {});
        return undefined;
      };
      try {
        // The agent's job: read the bug, fix it, run the tests; its artifact kept for the next job.
        const agentJob = jobs.agent as Job;
        const agentContext = jobContext(event, payload, {});
        expect(condition(agentJob.if, agentContext)).toBe(true);
        anthropic = await startFakeAnthropic({
          apiKey: API_KEY,
          turns: [
            turn.toolUse("Read", { file_path: CALC_PATH }),
            turn.toolUse("Edit", { file_path: CALC_PATH, old_string: "a - b", new_string: "a + b" }),
            turn.toolUse("Bash", { command: "npm test" }),
            turn.text("Fixed add(): it subtracted."),
          ],
        });
        const api = anthropic;
        await runSteps(agentJob.steps, agentContext, workspace, async (step, inputs) => {
          if (step.uses !== AGENT_CI) return common(step, inputs);
          const result = await agentCiStep(
            { event, payload, apiUrl: gh.url, workspace, modelUrl: api.url },
            inputs,
            artifacts,
          );
          expect(result.failed, result.stdout.slice(-3000)).toBeUndefined();
          return result.outputs;
        });
        const agentOutputs = jobOutputs(agentJob, agentContext);
        expect(agentOutputs.outcome).toBe("changes");

        // The publish job, on a fresh checkout of the default branch, with the agent's artifact.
        const publishJob = jobs.publish as Job;
        const publishContext = jobContext(event, payload, {
          needs: { agent: { result: "success", outputs: agentOutputs } },
        });
        expect(condition(publishJob.if, publishContext)).toBe(true);
        const checkout = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-checkout-"));
        execFileSync("git", ["clone", "-q", "--branch", "main", bare, checkout]);
        const pulls = gh.pulls.size;
        let published: Outputs = {};
        await runSteps(publishJob.steps, publishContext, checkout, async (step, inputs) => {
          if (step.uses !== PUBLISH) return common(step, inputs);
          const env = runnerEnv(checkout, publishContext);
          const ran = await runStep({ action: "publish", inputs, env, token: TOKEN });
          expect(ran.failed, ran.log).toBeUndefined();
          published = ran.outputs;
          return ran.outputs;
        });

        // One new commit on the person's branch, on the head the agent worked on; no new pull request.
        const onRemote = (...args: string[]) =>
          execFileSync("git", args, { cwd: bare, encoding: "utf8" }).trim();
        expect(published).toMatchObject({ action: "updated", pr_number: "34", branch: "fast-multiply" });
        expect(onRemote("rev-parse", "refs/heads/fast-multiply")).toBe(published.commit_sha);
        expect(onRemote("rev-list", "--parents", "-n", "1", "refs/heads/fast-multiply")).toBe(
          `${published.commit_sha} ${head}`,
        );
        expect(onRemote("show", "refs/heads/fast-multiply:src/calc.js")).toContain("return a + b;");
        expect(gh.pulls.size).toBe(pulls);
        const said = gh.comments.filter((c) => c.issue_number === 34).map((c) => c.body);
        expect(said.some((body) => body.startsWith("<!-- agent-ci-publish:"))).toBe(true);
        expect(said.find((body) => body.startsWith("<!-- agent-ci-publish:"))).toContain(
          "to <code>fast-multiply</code>**",
        );
      } finally {
        await remote.close();
      }
    },
  );
});

// ---- The backlog example, every job: the queue's claim, the agents, each item's own release ---------------

/**
 * agent-ci installed in a project, as `npx agent-ci` finds it there before asking a registry: its package in
 * node_modules with the bin and dist/ built from the working tree's src/ (what a release would ship).
 */
function installCli(dir: string): void {
  const pkg = path.join(dir, "node_modules", "agent-ci");
  fs.mkdirSync(path.join(pkg, "bin"), { recursive: true });
  fs.copyFileSync(path.join(REPO_ROOT, "bin", "agent-ci.js"), path.join(pkg, "bin", "agent-ci.js"));
  fs.chmodSync(path.join(pkg, "bin", "agent-ci.js"), 0o755);
  fs.symlinkSync(path.join(REPO_ROOT, "package.json"), path.join(pkg, "package.json"));
  fs.symlinkSync(path.join(actionRoot(), "dist"), path.join(pkg, "dist"));
  fs.mkdirSync(path.join(dir, "node_modules", ".bin"), { recursive: true });
  fs.symlinkSync("../agent-ci/bin/agent-ci.js", path.join(dir, "node_modules", ".bin", "agent-ci"));
}

describe("backlog.yml, every job against the fakes", () => {
  it(
    "workflow_dispatch: three issues claimed and labelled; one fixed and published, one whose agent fails, one never run; each released with its own outcome and cost, and the next claim retakes only the one never run",
    { timeout: 600_000 },
    async () => {
      const file = "backlog.yml";
      const jobs = (
        parse(fs.readFileSync(path.join(EXAMPLES, file), "utf8")) as { jobs: Record<string, Job> }
      ).jobs;
      const workspace = fixtureRepository("");
      const remote = await startGitRemote({ token: TOKEN });
      addBareRepo(remote, "acme", "widgets", workspace);
      const label = String(jobs.queue?.steps.find((s) => s.with?.queue_label)?.with?.queue_label);
      github = await startFakeGitHub({
        token: TOKEN,
        permissions: { octocat: "write" },
        issues: [12, 13, 14].map((number) => ({
          number,
          title: `${ISSUE_TITLE} (${number})`,
          body: "b",
          user: { login: "octocat" },
          labels: [label],
        })),
        // This run (the harness's GITHUB_RUN_ID) and the next, both dispatched on the default branch.
        runs: [4242, 4243].map((id) => ({ id, event: "workflow_dispatch", head_branch: "main" })),
      });
      const gh = github;
      const event = "workflow-dispatch";
      const payload = eventPayload(event);
      const artifacts = new ArtifactStore();
      const runnerEnv = (dir: string, context: Record<string, unknown>) => ({
        ...githubEnv({ fixture: event, apiUrl: gh.url, workspace: dir, files: runnerFiles(), payload }),
        RUNNER_TEMP: (context.runner as { temp: string }).temp,
        GITHUB_SERVER_URL: remote.url,
        // `npx agent-ci` must find the installed one: a registry it asked would not answer.
        npm_config_registry: "http://127.0.0.1:9/",
      });
      const common = async (step: Step, inputs: Record<string, string>): Promise<Outputs | undefined> => {
        const action = step.uses?.split("@")[0];
        if (action === "actions/checkout" || action === "actions/setup-node") return {};
        if (action === "actions/download-artifact") return (artifacts.download(inputs), {});
        if (action === "actions/upload-artifact")
          return (artifacts.upload(inputs.name ?? "", inputs.path ?? ""), {});
        return undefined;
      };
      /** The queue job, as run `runId`: agent-ci with task: queue; its job outputs. */
      const queueJob = async (runId: string): Promise<Outputs> => {
        const job = jobs.queue as Job;
        const context = jobContext(event, payload, {});
        expect(condition(job.if, context)).toBe(true);
        await runSteps(job.steps, context, workspace, async (step, inputs) => {
          if (step.uses !== AGENT_CI) return common(step, inputs);
          const result = await runAction({
            fixture: event,
            payload,
            apiUrl: gh.url,
            workspace,
            inputs,
            token: TOKEN,
            env: { GITHUB_SERVER_URL: remote.url, GITHUB_RUN_ID: runId },
          });
          expect(result.failed, result.log.slice(-3000)).toBeUndefined();
          return result.outputs;
        });
        return jobOutputs(job, context);
      };
      const ledger = async () => {
        const api = new GitHubApi({ request: octokitRequest(TOKEN, gh.url) });
        const options = {
          api,
          context: { api, owner: "acme", repo: "widgets", defaultBranch: "main" },
          remote: { url: remote.repoUrl("acme", "widgets"), token: TOKEN },
        };
        const repo = await LedgerRepo.open(options.remote);
        try {
          return (await readQueue(repo, options)).state;
        } finally {
          repo.close();
        }
      };
      const labelled = () => [12, 13, 14].filter((n) => gh.issues.get(n)?.labels?.includes(CLAIM_LABEL));

      try {
        // The queue job claims the three issues; each claim shows on its issue.
        const queue = { result: "success", outputs: await queueJob("4242") };
        expect(queue.outputs.count).toBe("3");
        expect(labelled()).toEqual([12, 13, 14]);
        const agentJob = jobs.agent as Job;
        const bare = /^\$\{\{([\s\S]*)\}\}$/.exec(String(agentJob.strategy?.matrix).trim())?.[1] ?? "";
        const entries = (
          JSON.parse(
            evaluate(
              `toJSON(${bare.trim()})`,
              jobContext(event, payload, { needs: { queue } }),
            ).coerceString(),
          ) as { include: Array<Record<string, unknown>> }
        ).include;
        expect(entries.map((e) => e.item)).toEqual(["issue:12", "issue:13", "issue:14"]);

        // The agent jobs: #12's agent fixes the bug; #13's loses its API key mid-run (api_error fails the step);
        // #14's never starts (the run was cancelled while it waited for a runner).
        const turns: Record<number, FakeTurn[]> = {
          12: [
            turn.toolUse("Read", { file_path: CALC_PATH }),
            turn.toolUse("Edit", { file_path: CALC_PATH, old_string: "a - b", new_string: "a + b" }),
            turn.text("Fixed add(): it subtracted."),
          ],
          13: [turn.toolUse("Read", { file_path: CALC_PATH }), turn.unauthorized("key revoked")],
        };
        const status: Record<number, string> = {};
        const spent: number[] = [];
        for (const entry of entries.filter((e) => e.issue !== 14)) {
          const issue = Number(entry.issue);
          const context = jobContext(event, payload, { matrix: entry, needs: { queue } });
          expect(condition(agentJob.if, context)).toBe(true);
          anthropic = await startFakeAnthropic({ apiKey: API_KEY, turns: [...(turns[issue] ?? [])] });
          const api = anthropic;
          status[issue] = await runSteps(agentJob.steps, context, workspace, async (step, inputs) => {
            if (step.uses !== AGENT_CI) return common(step, inputs);
            const result = await agentCiStep(
              { event, payload, apiUrl: gh.url, workspace, modelUrl: api.url },
              inputs,
              artifacts,
            );
            const report = JSON.parse(fs.readFileSync(result.outputs.report_path ?? "", "utf8")) as {
              costUsd: number;
            };
            spent.push(report.costUsd);
            if (result.failed) throw new StepFailed(result.failed, result.outputs);
            return result.outputs;
          });
          await api.close();
          anthropic = undefined;
        }
        expect(status).toEqual({ 12: "success", 13: "failure" });
        expect([...artifacts.byName.keys()].sort()).toEqual([
          "agent-ci-issue-12",
          "agent-ci-issue-12-status",
          "agent-ci-issue-13",
          "agent-ci-issue-13-status",
        ]);
        // The matrix's result is one for all three: each item's outcome has to come from its own job.
        const agent = { result: "failure", outputs: {} };

        // The publish jobs, one per item, each on a fresh checkout of the default branch.
        const publishJob = jobs.publish as Job;
        for (const entry of entries) {
          const context = jobContext(event, payload, { matrix: entry, needs: { queue, agent } });
          expect(condition(publishJob.if, context)).toBe(true);
          const checkout = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-checkout-"));
          execFileSync("git", ["clone", "-q", workspace, checkout]);
          installCli(checkout);
          const env = runnerEnv(checkout, context);
          const result = await runSteps(
            publishJob.steps,
            context,
            checkout,
            async (step, inputs) => {
              if (step.uses !== PUBLISH) return common(step, inputs);
              const ran = await runStep({ action: "publish", inputs, env, token: TOKEN });
              expect(ran.failed, ran.log).toBeUndefined();
              return ran.outputs;
            },
            env,
          );
          expect(result, `${String(entry.item)}'s publish job`).toBe("success");
        }

        // One pull request, #12's; each claim ended with its own outcome, the two runs' cost added, no label left.
        const pulls = [...gh.pulls.values()];
        expect(pulls).toHaveLength(1);
        expect(
          execFileSync("git", ["show", `${pulls[0]?.head.ref}:src/calc.js`], {
            cwd: remote.repoDir("acme", "widgets"),
            encoding: "utf8",
          }),
        ).toBe(fixed("  return a + b;"));
        const state = await ledger();
        expect(state.items.get("issue:12")).toMatchObject({ status: "published", runId: "4242" });
        expect(state.items.get("issue:13")).toMatchObject({ status: "failed", runId: "4242", failures: 1 });
        expect(state.items.get("issue:14")).toMatchObject({ status: "cancelled", runId: "4242" });
        expect(spent).toHaveLength(2);
        expect(state.spend.get("acme/widgets")?.day).toBeCloseTo((spent[0] ?? 0) + (spent[1] ?? 0), 6);
        expect(labelled()).toEqual([]);

        // The next run: #14 again (cancelled); #13 waits for its claim's lease to lapse; #12 is done.
        const next = await queueJob("4243");
        expect(next.count).toBe("1");
        expect((JSON.parse(next.matrix ?? "{}") as { include: Array<{ item: string }> }).include).toEqual([
          expect.objectContaining({ item: "issue:14" }),
        ]);
        expect(labelled()).toEqual([14]);
      } finally {
        await remote.close();
      }
    },
  );
});
