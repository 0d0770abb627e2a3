// The example workflows users copy: valid YAML, agent-ci used with inputs that exist, the model never in a
// job that can write to the repository (the two-job pattern), no `${{ }}` expression inside a shell script
// (untrusted text only through environment variables: RELIABILITY U5), explicit permissions everywhere, and
// every pull request opened by the publish action, never by a hand-written commit, push or `gh pr create`
// (which would skip its checks of the patch: base commit, protected paths, secret findings, size).
// Bypasses the harness: it reads the example workflows as files; examples-run.test.ts runs them.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { INPUT_NAMES } from "../../src/action/inputs.js";
import { parseRule, parseSettingsFile, type RuleSource } from "../../src/policy/index.js";
import { PUBLISH_INPUT_DEFAULTS } from "../../src/publish/action.js";

const dir = path.resolve(import.meta.dirname, "../../examples/workflows");
const files = fs.readdirSync(dir).filter((f) => f.endsWith(".yml"));

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Job {
  permissions?: Record<string, string>;
  steps: Step[];
}
interface Workflow {
  on: unknown;
  jobs: Record<string, Job>;
}

const AGENT_CI = "OWNER/agent-ci@v1";
const PUBLISH = "OWNER/agent-ci/publish@v1";

/** Shell that publishes by hand: a commit, a push, or a pull request opened or edited with gh / the API. */
const HAND_PUBLISHING: RegExp[] = [
  /\bgit\b[^\n;&|]*\s(push|commit)\b/,
  /\bgh\s+pr\s+(create|edit|merge)\b/,
  /\bgh\s+api\b[^\n;&|]*\/pulls\b/,
];
/** agent-ci as the queue's scheduler (task: queue): it claims and runs no model, so it takes no model key. */
const isQueueStep = (s: Step) => s.uses === AGENT_CI && s.with?.task === "queue";
/** agent-ci running the agent. */
const isAgentStep = (s: Step) => s.uses === AGENT_CI && !isQueueStep(s);

function handPublishing(script: string): string | undefined {
  return HAND_PUBLISHING.map((re) => re.exec(script)?.[0]).find((m) => m !== undefined);
}

describe("examples/workflows", () => {
  it("has the examples issues 7 and 39 ask for", () => {
    expect(files.sort()).toEqual([
      "answer-pr-comments.yml",
      "attempts-matrix.yml",
      "backlog.yml",
      "claude-code-action-equivalent.yml",
      "continue-agent-prs.yml",
      "fix-issue-when-labeled.yml",
      "matrix-fan-out.yml",
      "nightly-maintenance.yml",
      "review-pull-request.yml",
      "two-job-pattern.yml",
    ]);
  });

  describe.each(files)("%s", (file) => {
    const text = fs.readFileSync(path.join(dir, file), "utf8");
    const workflow = parse(text) as Workflow;
    const jobs = Object.entries(workflow.jobs);

    it("says to replace the placeholder and uses agent-ci with known inputs, the key from a secret", () => {
      expect(text).toContain(`replace ${AGENT_CI}`);
      const steps = jobs.flatMap(([, job]) => job.steps.filter((s) => s.uses === AGENT_CI));
      expect(steps.filter(isAgentStep).length).toBeGreaterThan(0);
      for (const step of steps) {
        for (const key of Object.keys(step.with ?? {}))
          expect(INPUT_NAMES, `unknown input ${key}`).toContain(key);
        if (isAgentStep(step)) expect(step.with?.anthropic_api_key).toBe("${{ secrets.ANTHROPIC_API_KEY }}");
        else expect(step.with?.anthropic_api_key, "the queue's scheduler runs no model").toBeUndefined();
      }
    });

    it("names the settings file it needs and the one under examples/settings/ to start from, which is valid", () => {
      const paths = jobs.flatMap(([, job]) =>
        job.steps.flatMap((s) => (s.uses === AGENT_CI ? [s.with?.settings] : [])),
      );
      for (const setting of paths) {
        if (typeof setting !== "string" || setting.trim().startsWith("{")) continue;
        const shipped = /examples\/settings\/[\w.-]+\.json/.exec(text)?.[0];
        expect(shipped, `${file} says which file to put at ${setting}`).toBeDefined();
        const source: RuleSource = { kind: "settings-file", label: shipped!, trusted: true };
        const settings = parseSettingsFile(
          fs.readFileSync(path.join(dir, "../..", shipped!), "utf8"),
          source,
        );
        expect(settings.unusedKeys ?? []).toEqual([]);
        for (const behavior of ["allow", "deny", "ask"] as const)
          for (const rule of settings[behavior] ?? []) parseRule(rule, behavior, source);
      }
    });

    it("sets permissions on every job, and never gives the agent's job write access to the code", () => {
      for (const [name, job] of jobs) {
        expect(job.permissions, `${name} permissions`).toBeDefined();
        if (job.steps.some(isAgentStep)) expect(job.permissions?.contents, name).toBe("read");
      }
    });

    it("keeps expressions out of shell scripts", () => {
      for (const [, job] of jobs)
        for (const step of job.steps) if (step.run) expect(step.run).not.toContain("${{");
    });

    it("opens pull requests only through the publish action, with inputs it has", () => {
      for (const [name, job] of jobs) {
        for (const step of job.steps) {
          if (step.run) expect(handPublishing(step.run), `${name}: publishes by hand`).toBeUndefined();
          if (step.uses === PUBLISH)
            for (const key of Object.keys(step.with ?? {}))
              expect(Object.keys(PUBLISH_INPUT_DEFAULTS), `unknown publish input ${key}`).toContain(key);
        }
        // A job that may write the code is there to publish: it does so with the publish action. The one
        // other is the queue's scheduler (agent-ci with task: queue, or `agent-ci queue claim`), which
        // pushes only its ledger ref and runs no model: nothing else in that job uses an action of ours.
        const scheduler =
          job.steps.every((s) => isQueueStep(s) || !s.uses?.startsWith("OWNER/")) &&
          job.steps.some((s) => isQueueStep(s) || /\bagent-ci queue claim\b/.test(s.run ?? ""));
        if (job.permissions?.contents === "write" && !scheduler)
          expect(
            job.steps.map((s) => s.uses),
            `${name} publishes with ${PUBLISH}`,
          ).toContain(PUBLISH);
      }
    });

    it("runs agent-ci without leaving credentials in the checkout it hands to the sandbox", () => {
      for (const [, job] of jobs) {
        if (!job.steps.some(isAgentStep)) continue;
        const checkout = job.steps.find((s) => s.uses?.startsWith("actions/checkout@"));
        expect(checkout?.with?.["persist-credentials"]).toBe(false);
      }
    });
  });
});

/** `uses:` lines of a workflow file, with their version comment. */
function usesLines(text: string): Array<{ action: string; ref: string; comment: string }> {
  return [...text.matchAll(/^\s*(?:-\s+)?uses:\s*([^@\s]+)@(\S+)[ \t]*(?:#[ \t]*(.*))?$/gm)].map((m) => ({
    action: m[1] ?? "",
    ref: m[2] ?? "",
    comment: (m[3] ?? "").trim(),
  }));
}

describe("actions used by the examples and the repository's own workflows", () => {
  const workflowsDir = path.resolve(import.meta.dirname, "../../.github/workflows");
  const all = [
    ...files.map((f) => path.join(dir, f)),
    ...fs
      .readdirSync(workflowsDir)
      .filter((f) => f.endsWith(".yml"))
      .map((f) => path.join(workflowsDir, f)),
  ];
  const uses = all.flatMap((file) =>
    usesLines(fs.readFileSync(file, "utf8"))
      .filter((u) => !u.action.startsWith("OWNER/"))
      .map((u) => ({ ...u, file: path.basename(file) })),
  );

  it("are pinned by full commit SHA with the release in a comment", () => {
    expect(uses.length).toBeGreaterThan(0);
    for (const u of uses) {
      expect(u.ref, `${u.file}: ${u.action}`).toMatch(/^[0-9a-f]{40}$/);
      expect(u.comment, `${u.file}: ${u.action} names no release`).toMatch(/^v\d+\.\d+\.\d+\b/);
    }
  });

  it("pin one release of each action everywhere", () => {
    const pins = new Map<string, Set<string>>();
    for (const u of uses)
      pins.set(u.action, (pins.get(u.action) ?? new Set()).add(`${u.ref} # ${u.comment.split(/\s/)[0]}`));
    for (const [action, refs] of pins) expect([...refs], action).toHaveLength(1);
  });

  it("set up the sandbox's Node.js major (the toolbelt's) wherever Node.js runs on the runner", () => {
    const sandboxNode = /^ARG NODE_VERSION=(\d+)\./m.exec(
      fs.readFileSync(path.resolve(import.meta.dirname, "../../toolbelt/Dockerfile"), "utf8"),
    )?.[1];
    expect(sandboxNode).toBeDefined();
    for (const file of all) {
      const workflow = parse(fs.readFileSync(file, "utf8")) as Workflow;
      for (const [name, job] of Object.entries(workflow.jobs)) {
        const npm = job.steps.some((s) => /\b(npm|npx|node)\b/.test(s.run ?? ""));
        const setupNode = job.steps.find((s) => s.uses?.startsWith("actions/setup-node@"));
        if (npm)
          expect(setupNode, `${path.basename(file)} ${name} runs Node.js without setup-node`).toBeDefined();
        if (setupNode) expect(String(setupNode.with?.["node-version"]), name).toBe(sandboxNode);
      }
    }
  });
});

describe("hand-written publishing", () => {
  it.each([
    'git push origin "$branch"',
    'git -c user.name=x commit -m "fix"',
    'gh pr create --head "$branch" --title t',
    "gh api repos/o/r/pulls -f head=b",
  ])("is recognised: %s", (script) => {
    expect(handPublishing(`set -e\n${script}\n`)).toBeDefined();
  });
  it.each([
    'git apply --directory="packages/$p" "$dir/patch.diff"',
    "git diff --cached --binary > out",
    "echo push",
  ])("leaves other shell alone: %s", (script) => {
    expect(handPublishing(script)).toBeUndefined();
  });
});

describe("the README's workflow", () => {
  it("is examples/workflows/fix-issue-when-labeled.yml as it is (without its opening comment), so the tests run it", () => {
    const readme = fs.readFileSync(path.resolve(dir, "../../README.md"), "utf8");
    const block = /```yaml\n(name: agent-ci fix issue\n[\s\S]*?)```\n/.exec(readme)?.[1];
    const example = fs
      .readFileSync(path.join(dir, "fix-issue-when-labeled.yml"), "utf8")
      .replace(/^(#[^\n]*\n)+/, "")
      .replace(/^\n+/, "");
    expect(block).toBe(example);
  });
});
