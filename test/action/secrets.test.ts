// The agent never holds the GitHub token, and no secret reaches an output (RELIABILITY S1, S3, S5, S8):
// a run on the real SDK against the fake Messages API, triggered by an issue whose body has the token and
// the API key pasted into it, then a scripted run whose patch carries the token. Neither value may appear
// in any request body (fake GitHub, fake Messages API), any artifact file, the job summary, the outputs or
// any log line; the container's environment has neither; a patch holding one is withheld from the artifact
// and from the comment.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { secretVariants } from "../../src/report/index.js";
import {
  actionRunner,
  calcWorkspace,
  recordingUploader,
  scriptFile,
  type ActionRun,
} from "../support/action-harness.js";
import { fake as turn, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { eventPayload } from "../support/github-env.js";

const TOKEN = "ghs_SecretGitHubToken0123456789abcdefXYZ";
const API_KEY = "sk-ant-api03-SecretModelKey0123456789abcdefghijklmnopqrstuvwxyz";
const FORMS = [...secretVariants(TOKEN), ...secretVariants(API_KEY)];

let github: FakeGitHub;
let anthropic: FakeAnthropic | undefined;
let workspace: string;

beforeEach(async () => {
  github = await startFakeGitHub({
    token: TOKEN,
    permissions: { octocat: "write" },
    issues: [{ number: 12, title: "t", body: "b", user: { login: "octocat" } }],
  });
  workspace = calcWorkspace();
});
afterEach(async () => {
  await github.close();
  await anthropic?.close();
  anthropic = undefined;
});

function leaks(text: string): string[] {
  return FORMS.filter((form) => text.includes(form));
}

/** Every log line the runner would show: `::add-mask::` lines are consumed by the runner, never shown. */
function shownLog(result: ActionRun): string {
  return result.stdout
    .split("\n")
    .filter((line) => !line.startsWith("::add-mask::"))
    .join("\n");
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => path.join(dir, f))
    .filter((f) => fs.statSync(f).isFile());
}

const action = actionRunner(() => ({ fixture: "issues-opened", apiUrl: github.url, workspace }));

describe("the GitHub token and the API key", () => {
  it("appear in no request body, artifact file, summary, output or log line of a model run", async () => {
    anthropic = await startFakeAnthropic({
      apiKey: API_KEY,
      turns: [
        turn.toolUse("Bash", { command: "env" }),
        turn.toolUse("Read", { file_path: "/workspace/src/calc.js" }),
        turn.toolUse("Edit", {
          file_path: "/workspace/src/calc.js",
          old_string: "a - b",
          new_string: "a + b",
        }),
        turn.text("Fixed add()."),
      ],
    });
    const payload = eventPayload("issues-opened");
    const issue = payload.issue as { body: string };
    issue.body = `@agent-ci add() is wrong. My token is ${TOKEN} and the key is ${API_KEY}, in case you need them.`;
    const uploader = recordingUploader();
    const result = await action({
      payload,
      inputs: {
        github_token: TOKEN,
        anthropic_api_key: API_KEY,
        permission_mode: "acceptEdits",
        allowed_tools: "Bash(env)",
      },
      env: { ANTHROPIC_BASE_URL: anthropic.url, GITHUB_TOKEN: TOKEN },
      artifacts: uploader,
    });
    expect(result.failed).toBeUndefined();
    expect(result.outputs).toMatchObject({ exit_reason: "completed", has_changes: "true" });

    // The model saw the issue with both values replaced, and `env` in the container showed neither.
    const messages = anthropic.messagesRequests();
    expect(messages.length).toBe(4);
    expect(messages[0]?.rawBody).toContain("My token is ***");
    const envResult = JSON.stringify(messages[1]?.body.messages.at(-1));
    expect(envResult).toContain("PATH=");
    for (const request of anthropic.requests) {
      expect(leaks(request.rawBody), `model request ${request.index} body`).toEqual([]);
      expect(leaks(request.path + request.query)).toEqual([]);
      expect(request.headers.authorization ?? request.headers["x-api-key"]).toMatch(
        new RegExp(`${API_KEY}$`),
      );
      expect(JSON.stringify(request.headers)).not.toContain(TOKEN);
    }
    for (const request of github.requests) {
      expect(leaks(request.body), `${request.method} ${request.path} body`).toEqual([]);
      expect(leaks(request.path + JSON.stringify(request.query))).toEqual([]);
      expect(request.headers.authorization).toBe(`token ${TOKEN}`);
    }
    expect(github.comments).toHaveLength(1);

    const artifactFiles = filesUnder(uploader.dir);
    expect(artifactFiles.map((f) => path.basename(f)).sort()).toEqual([
      "conversation.jsonl",
      "patch.diff",
      "report.html",
      "report.json",
      "report.md",
      "trigger.json",
    ]);
    for (const file of artifactFiles)
      expect(leaks(fs.readFileSync(file, "utf8")), path.basename(file)).toEqual([]);
    // trigger.json keeps the raw issue text for review, redacted like everything else.
    expect(fs.readFileSync(path.join(uploader.dir, "trigger.json"), "utf8")).toContain("My token is ***");
    for (const file of filesUnder(path.dirname(result.outputs.report_path ?? "")))
      expect(leaks(fs.readFileSync(file, "utf8")), file).toEqual([]);

    expect(leaks(result.summary)).toEqual([]);
    expect(leaks(fs.readFileSync(result.files.output, "utf8"))).toEqual([]);
    expect(leaks(shownLog(result))).toEqual([]);
    // The runner is told to mask both values in its own log.
    expect(result.stdout).toContain(`::add-mask::${TOKEN}`);
    expect(result.stdout).toContain(`::add-mask::${API_KEY}`);
  });

  it("a patch holding the token is withheld from the artifact and the comment, with warnings (S5)", async () => {
    const script = scriptFile([
      [
        {
          name: "Write",
          input: { file_path: "/workspace/src/config.js", content: `export const token = "${TOKEN}";\n` },
        },
      ],
    ]);
    const uploader = recordingUploader();
    const result = await action({
      inputs: { github_token: TOKEN, script, permission_mode: "acceptEdits" },
      artifacts: uploader,
    });
    expect(result.failed).toBeUndefined();
    expect(result.outputs.has_changes).toBe("true");
    // The raw patch stays on the runner only.
    expect(fs.readFileSync(result.outputs.patch_path ?? "", "utf8")).toContain(TOKEN);
    expect(fs.readdirSync(uploader.dir).sort()).toEqual([
      "conversation.jsonl",
      "patch-withheld.txt",
      "report.html",
      "report.json",
      "report.md",
      "trigger.json",
    ]);
    for (const file of filesUnder(uploader.dir))
      expect(leaks(fs.readFileSync(file, "utf8")), path.basename(file)).toEqual([]);
    const comment = github.comments[0]?.body ?? "";
    expect(comment).toContain("[!CAUTION]");
    expect(comment).not.toContain("```diff");
    for (const request of github.requests) expect(leaks(request.body)).toEqual([]);
    expect(result.stdout).toMatch(/::warning title=agent-ci%3A patch withheld::/);
    expect(result.stdout).toMatch(
      /::warning title=agent-ci%3A possible secret in the patch,file=src\/config.js,line=1::/,
    );
    expect(leaks(shownLog(result))).toEqual([]);
    expect(leaks(result.summary)).toEqual([]);
  });

  it("secret_in_patch in fail_on fails the step", async () => {
    const script = scriptFile([
      [
        {
          name: "Write",
          input: { file_path: "/workspace/src/config.js", content: `export const token = "${TOKEN}";\n` },
        },
      ],
    ]);
    const result = await action({
      fixture: "workflow-dispatch",
      inputs: {
        github_token: TOKEN,
        script,
        prompt: "Add the config.",
        permission_mode: "acceptEdits",
        fail_on: "secret_in_patch",
      },
    });
    expect(result.failed).toMatch(/secret_in_patch/);
    expect(leaks(result.failed ?? "")).toEqual([]);
  });
});
