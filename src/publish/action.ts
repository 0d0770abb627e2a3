// The publish Action (publish/action.yml, `uses: OWNER/agent-ci/publish@v1`): the second job of the
// two-job pattern. It reads inputs, publishes with pull-request.ts, sets pr_number / pr_url / branch /
// commit_sha / commit_url, and fails the step with what to do when anything did not happen. It never runs a model and
// needs no model key; the token is masked and redacted from everything it prints.
import * as core from "@actions/core";
import { z } from "zod";
import { booleanInput, splitList, unexpanded } from "../github/input-conventions.js";
import { readGitHubContext, runUrl, serverHost } from "../github/context.js";
import { actionLog } from "../github/workflow-log.js";
import { GitHubApi, octokitRequest } from "../github/api.js";
import { createRedactor } from "../report/index.js";
import {
  DEFAULT_AUTHOR,
  DEFAULT_LINK_ISSUE,
  LINK_ISSUE_MODES,
  type LinkIssue,
  publishPullRequest,
} from "./pull-request.js";
import { DEFAULT_MAX_BINARY_BYTES, parseFindingKinds } from "./gate-findings.js";

/** Every input with its default, in publish/action.yml order (a test keeps them equal). */
export const PUBLISH_INPUT_DEFAULTS = {
  artifact_path: "",
  token: "${{ github.token }}",
  repository_path: ".",
  base_branch: "",
  pull_request: "",
  push_to_pr_branch: "false",
  allow: "",
  max_patch_bytes: "5242880",
  allow_findings: "",
  max_binary_bytes: String(DEFAULT_MAX_BINARY_BYTES),
  author_name: DEFAULT_AUTHOR.name,
  author_email: DEFAULT_AUTHOR.email,
  link_issue: DEFAULT_LINK_ISSUE,
  use_commit_signing: "false",
} as const;
export type PublishInputName = keyof typeof PUBLISH_INPUT_DEFAULTS;

export const PUBLISH_OUTPUT_NAMES = [
  "pr_number",
  "pr_url",
  "branch",
  "commit_sha",
  "commit_url",
  "action",
] as const;

const text = z.string().transform((v) => (unexpanded(v) ? "" : v.trim()));
const bool = (name: PublishInputName) =>
  z.string().transform((v, ctx) => {
    const value = booleanInput(v);
    if (value !== undefined) return value;
    ctx.addIssue({ code: "custom", message: `${name}: use true or false (got "${v}")` });
    return z.NEVER;
  });
const PublishInputs = z.object({
  artifact_path: text.refine(
    (v) => v !== "",
    "artifact_path: the folder with report.json and patch.diff is required",
  ),
  token: text.refine(
    (v) => v !== "",
    "token: a token with contents: write and pull-requests: write is required",
  ),
  repository_path: text.transform((v) => v || "."),
  base_branch: text.transform((v) => v || undefined),
  pull_request: text.transform((v, ctx) => {
    if (v === "") return undefined;
    const n = Number(v);
    if (Number.isInteger(n) && n > 0) return n;
    ctx.addIssue({ code: "custom", message: `pull_request: a pull request number (got "${v}")` });
    return z.NEVER;
  }),
  push_to_pr_branch: bool("push_to_pr_branch"),
  allow: z.string().transform(splitList),
  max_patch_bytes: text.transform((v, ctx) => {
    const n = Number(v || PUBLISH_INPUT_DEFAULTS.max_patch_bytes);
    if (Number.isInteger(n) && n > 0) return n;
    ctx.addIssue({ code: "custom", message: `max_patch_bytes: a positive whole number (got "${v}")` });
    return z.NEVER;
  }),
  allow_findings: z.string().transform((v, ctx) => {
    try {
      return parseFindingKinds(splitList(v));
    } catch (error) {
      ctx.addIssue({ code: "custom", message: `allow_findings: ${(error as Error).message}` });
      return z.NEVER;
    }
  }),
  max_binary_bytes: text.transform((v, ctx) => {
    const n = Number(v || PUBLISH_INPUT_DEFAULTS.max_binary_bytes);
    if (Number.isInteger(n) && n > 0) return n;
    ctx.addIssue({ code: "custom", message: `max_binary_bytes: a positive whole number (got "${v}")` });
    return z.NEVER;
  }),
  author_name: text.transform((v) => v || PUBLISH_INPUT_DEFAULTS.author_name),
  author_email: text.transform((v) => v || PUBLISH_INPUT_DEFAULTS.author_email),
  link_issue: text.transform((v, ctx) => {
    const mode = (v || PUBLISH_INPUT_DEFAULTS.link_issue) as LinkIssue;
    if (LINK_ISSUE_MODES.includes(mode)) return mode;
    ctx.addIssue({
      code: "custom",
      message: `link_issue: one of ${LINK_ISSUE_MODES.join(", ")} (got "${v}")`,
    });
    return z.NEVER;
  }),
  use_commit_signing: bool("use_commit_signing"),
});
export type PublishInputs = z.infer<typeof PublishInputs>;

export function parsePublishInputs(getInput: (name: PublishInputName) => string): PublishInputs {
  const raw = Object.fromEntries(
    (Object.keys(PUBLISH_INPUT_DEFAULTS) as PublishInputName[]).map((name) => [
      name,
      getInput(name) || PUBLISH_INPUT_DEFAULTS[name],
    ]),
  );
  const parsed = PublishInputs.safeParse(raw);
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => i.message).join("\n"));
  return parsed.data;
}

export async function run(env: Record<string, string | undefined> = process.env): Promise<void> {
  const output = actionLog();
  const token = core.getInput("token");
  if (token && !unexpanded(token)) output.mask(token);
  const redactor = createRedactor({ secrets: token && !unexpanded(token) ? [token] : [] });
  const log = (line: string) => output.text(redactor.redact(line));
  try {
    const inputs = parsePublishInputs((name) => core.getInput(name));
    const ctx = readGitHubContext(env);
    const result = await publishPullRequest({
      outDir: inputs.artifact_path,
      repoDir: inputs.repository_path,
      remote: `${ctx.serverUrl}/${ctx.owner}/${ctx.repo}.git`,
      token: inputs.token,
      api: new GitHubApi({ request: octokitRequest(inputs.token, ctx.apiUrl), log, redact: redactor.redact }),
      owner: ctx.owner,
      repo: ctx.repo,
      baseBranch: inputs.base_branch,
      pullNumber: inputs.pull_request,
      allow: inputs.allow,
      maxPatchBytes: inputs.max_patch_bytes,
      allowFindings: inputs.allow_findings,
      maxBinaryBytes: inputs.max_binary_bytes,
      githubHost: serverHost(ctx.serverUrl),
      secrets: [inputs.token],
      author: { name: inputs.author_name, email: inputs.author_email },
      linkIssue: inputs.link_issue,
      pushToPrBranch: inputs.push_to_pr_branch,
      useCommitSigning: inputs.use_commit_signing,
      serverUrl: ctx.serverUrl,
      runUrl: runUrl(ctx),
      log,
      redact: redactor.redact,
    });
    core.setOutput("pr_number", String(result.pullNumber));
    core.setOutput("pr_url", result.pullUrl);
    core.setOutput("branch", result.branch);
    core.setOutput("commit_sha", result.commitSha);
    core.setOutput("commit_url", result.commitUrl);
    core.setOutput("action", result.action);
    output.command({
      name: "notice",
      message:
        result.action === "commented"
          ? `pull request #${result.pullNumber} comes from a fork: nothing pushed, commented with the patch: ${result.pullUrl}`
          : `${result.action} pull request #${result.pullNumber}: ${result.pullUrl}${result.signed ? ` (commit ${result.commitSha}, signed by GitHub)` : ""}`,
      properties: { title: "agent-ci publish" },
    });
  } catch (error) {
    output.fail(redactor.redact(`agent-ci publish: ${(error as Error).message}`));
  }
}
