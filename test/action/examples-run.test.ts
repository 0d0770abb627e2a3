// Each example workflow's agent step, run as a runner would run it: the step's `with:` inputs read from the
// example file and its `${{ }}` expressions evaluated with GitHub's own expression library, the job's `if:`
// evaluated against the event, and the `run:` steps before the agent step run on the "runner" (the host) —
// so a dependency install the example does there really happens. The repository is a fixture with a real
// package.json whose test needs a dev dependency (a tarball packed here, `file:` in package.json, so `npm ci`
// needs no registry); the model is the fake Messages API, scripted to read the bug, fix it and run the tests;
// GitHub is the fake REST API. The step must pass, and where the example verifies, verify must pass: the
// dependencies have to reach the fresh container verify runs in, not only the agent's sandbox.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { data, Evaluator, Lexer, Parser } from "@actions/expressions";
import { truthy } from "@actions/expressions/result";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { recordingUploader, runAction } from "../support/action-harness.js";
import { fake as turn, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.js";
import { fixturePullRequest, startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { eventPayload, FIXTURE_EVENTS } from "../support/github-env.js";
import { makeWorkspace } from "../support/workspace.js";

const EXAMPLES = path.resolve(import.meta.dirname, "../../examples/workflows");
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
}
interface Job {
  if?: string;
  strategy?: { matrix?: Record<string, unknown> };
  steps: Step[];
}

// ---- GitHub's expression language, through its own implementation -------------------------------------

const CONTEXTS = ["github", "secrets", "inputs", "matrix", "steps", "runner", "env", "vars", "needs"];

function evaluate(expression: string, context: Record<string, unknown>): data.ExpressionData {
  const { tokens } = new Lexer(expression).lex();
  const expr = new Parser(tokens, CONTEXTS, []).parse();
  const values = JSON.parse(JSON.stringify(context), data.reviver) as data.Dictionary;
  return new Evaluator(expr, values).evaluate();
}

/** A `with:`/`env:` value: text with `${{ }}` expressions in it. */
function template(value: unknown, context: Record<string, unknown>): string {
  return String(value).replace(/\$\{\{([\s\S]*?)\}\}/g, (_, e: string) =>
    evaluate(e.trim(), context).coerceString(),
  );
}

/** An `if:`, with or without `${{ }}` around it; none means true. */
function condition(text: string | undefined, context: Record<string, unknown>): boolean {
  if (text === undefined) return true;
  const bare = /^\s*\$\{\{([\s\S]*)\}\}\s*$/.exec(text)?.[1] ?? text;
  return truthy(evaluate(bare.trim(), context));
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

// ---- The examples and the events they run on -------------------------------------------------------------

interface Case {
  event: string;
  /** Changes the recorded payload to what this example's trigger expects. */
  payload?: (p: Record<string, unknown>) => void;
  /** A pull-request review answers with findings instead of a fix. */
  review?: boolean;
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
      const workflow = parse(fs.readFileSync(path.join(EXAMPLES, file), "utf8")) as {
        jobs: Record<string, Job>;
      };
      const [, job] =
        Object.entries(workflow.jobs).find(([, j]) => j.steps.some((s) => s.uses === AGENT_CI)) ?? [];
      if (!job) throw new Error(`${file} has no agent-ci step`);
      const agentIndex = job.steps.findIndex((s) => s.uses === AGENT_CI);
      const agentStep = job.steps[agentIndex] as Step;
      const matrix = firstCombination(job);
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
        issues: [
          { number: 12, title: "add() returns the wrong sum", body: "b", user: { login: "octocat" } },
          pr.issue,
        ],
        pulls: [pr.pull],
        contents: {
          [base]: { ".github/agent-ci-settings.json": '{"permissions":{"deny":["Bash(curl:*)"]}}' },
        },
      });

      const runnerTemp = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-runner-temp-"));
      const context: Record<string, unknown> = {
        github: {
          event: payload,
          event_name: FIXTURE_EVENTS[spec.event],
          repository: "acme/widgets",
          repository_owner: "acme",
          run_attempt: "1",
          token: TOKEN,
        },
        secrets: { ANTHROPIC_API_KEY: API_KEY },
        inputs: (payload.inputs as Record<string, unknown> | undefined) ?? {},
        matrix,
        runner: { temp: runnerTemp },
        steps: {} as Record<string, { outputs: Record<string, string> }>,
        env: {},
        vars: {},
      };
      expect(condition(job.if, context), `${file}: the job's if: lets the event through`).toBe(true);

      // The steps before the agent's, as a runner runs them: checkout and setup-node are what the fixture and
      // this machine's Node.js already are; a `run:` step runs here, in the checkout.
      const steps = context.steps as Record<string, { outputs: Record<string, string> }>;
      for (const step of job.steps.slice(0, agentIndex)) {
        if (!condition(step.if, context)) continue;
        if (step.uses?.startsWith("actions/checkout@")) continue;
        if (step.uses?.startsWith("actions/setup-node@")) continue;
        if (step.run === undefined) throw new Error(`${file}: no way to run ${step.uses ?? "a step"} here`);
        const output = path.join(runnerTemp, `output-${step.id ?? "step"}`);
        fs.writeFileSync(output, "");
        const env = Object.fromEntries(
          Object.entries(step.env ?? {}).map(([k, v]) => [k, template(v, context)]),
        );
        execFileSync("bash", ["-eo", "pipefail", "-c", step.run], {
          cwd: workspace,
          stdio: "pipe",
          env: { ...process.env, ...env, GITHUB_OUTPUT: output, RUNNER_TEMP: runnerTemp },
        });
        if (step.id) {
          const outputs = Object.fromEntries(
            fs
              .readFileSync(output, "utf8")
              .split("\n")
              .filter((line) => line.includes("="))
              .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
          );
          steps[step.id] = { outputs };
        }
      }

      const inputs = Object.fromEntries(
        Object.entries(agentStep.with ?? {}).map(([k, v]) => [k, template(v, context)]),
      );
      // action.yml's default for the token: ${{ github.token }}.
      inputs.github_token ??= TOKEN;

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
        env: { ANTHROPIC_BASE_URL: anthropic.url },
        deps: { artifact: () => recordingUploader() },
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
    },
  );
});
