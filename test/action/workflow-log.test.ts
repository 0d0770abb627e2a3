// The Action's log as the runner reads it (test/support/runner-log.ts, from actions/runner's own rules): a whole
// run through the real @actions/core and the real sandbox, signed in by federation (so a token refreshed in the
// middle of the run is masked then), where the model's text, its tool inputs and their outputs are full of
// workflow commands: `::stop-commands::x` first, then add-mask, error, set-output, indented and `\r`-separated
// ones, the older `##[…]` form, and megabytes without a line end. Every command the runner finds must be
// agent-ci's own, every secret given to the run masked before the model's first word shows, and no secret,
// given or obtained, shown in clear.
import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { actionRunner, calcWorkspace } from "../support/action-harness.js";
import { fake as turn, startFakeAnthropic, type FakeTurn } from "../support/fake-anthropic.js";
import { issuedFor, startFakeGitHubOidc, type FakeGitHubOidc } from "../support/fake-cloud-auth.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { fakeTokenExchange } from "../support/fake-token-exchange.js";
import {
  expectMasked,
  FORGED,
  foreignCommands,
  forgedLines,
  forgedText,
  readRunnerLog,
} from "../support/runner-log.js";
import { until } from "../support/until.js";

const AUDIENCE = "https://api.anthropic.com";
const MEGABYTES = 2 * 1024 * 1024;

let github: FakeGitHub;
let oidc: FakeGitHubOidc;
const closers: Array<{ close(): Promise<void> }> = [];

beforeEach(async () => {
  github = await startFakeGitHub({ permissions: { octocat: "write" } });
  oidc = await startFakeGitHubOidc();
  closers.push(github, oidc);
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c.close()));
});

const action = actionRunner(() => ({
  fixture: "workflow-dispatch",
  apiUrl: github.url,
  workspace: calcWorkspace(),
}));

describe("the Action's log, as the runner reads it", () => {
  it("B11 the model's workflow commands in its text, tool inputs and outputs are shown inert; every secret is masked first, a refreshed token too", async () => {
    const ruleId = `fdrl_${Date.now().toString(36)}`;
    const organizationId = "3f2c9a1e-5b7d-4c8e-9f01-23456789abcd";
    const exchange = fakeTokenExchange({
      ruleId,
      organizationId,
      accepts: (assertion) => issuedFor(oidc, assertion, AUDIENCE),
    });
    const text = forgedText();
    // The Bash tool refuses a command with zero-width characters (before its line shows): those lines are left out.
    const visible = forgedLines()
      .filter((line) => !/[\u00ad\u200b]/.test(line))
      .join("\n");
    const big = `##[warning]${FORGED} ${"x".repeat(MEGABYTES)} ::error::${FORGED}`;
    const turns: FakeTurn[] = [
      // The first call's line in the log stops commands (the model's token), as the runner reads it today.
      turn.toolUses(
        [
          { name: "Bash", input: { command: `cat <<'EOF'\n${visible}\nEOF`, description: text } },
          { name: "Glob", input: { pattern: text } },
          { name: "Read", input: { file_path: `/workspace/missing\r${forgedLines().join("\r")}` } },
        ],
        text,
      ),
      // Then the workflow's OIDC token is refreshed, and its mask goes out, before the model goes on.
      {
        ...turn.toolUses(
          [
            { name: "Bash", input: { command: `: '${big}'`, description: big } },
            {
              name: "Bash",
              input: { command: `printf '\\n::error::'; head -c ${MEGABYTES} /dev/zero | tr '\\0' x` },
            },
          ],
          big,
        ),
        chunkSize: 65_536,
      },
      turn.text(`${text}${big}`, { chunkSize: 65_536 }),
    ];
    let next = 0;
    const api = await startFakeAnthropic({
      tokenExchange: exchange,
      handler: async () => {
        const answer = turns[next++] ?? turn.text("done");
        if (next === 2) {
          const issued = oidc.issued.length;
          await until("the workflow's OIDC token refreshed", () => oidc.issued.length > issued);
        }
        return answer;
      },
    });
    closers.push(api);
    const githubToken = ["ghs", randomBytes(18).toString("hex")].join("_");
    const runtimeToken = randomBytes(24).toString("base64url");
    const ghToken = ["gho", randomBytes(18).toString("hex")].join("_");

    const result = await action({
      inputs: {
        prompt: "Fix add()",
        github_token: githubToken,
        permission_mode: "bypassPermissions",
        comment: "false",
        anthropic_federation_rule_id: ruleId,
        anthropic_organization_id: organizationId,
      },
      env: {
        ACTIONS_ID_TOKEN_REQUEST_URL: oidc.requestUrl,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: oidc.requestToken,
        ACTIONS_RUNTIME_TOKEN: runtimeToken,
        GH_TOKEN: ghToken,
        ANTHROPIC_BASE_URL: api.url,
      },
      hooks: { identityTokenRefreshMs: 1000 },
    });

    expect(result.outputs.exit_reason).toBe("completed");
    expect(oidc.issued.length).toBeGreaterThan(1);
    const given = [githubToken, oidc.requestToken, runtimeToken, ghToken];
    const obtained = [...oidc.issued.map((t) => t.token), ...exchange.issued];
    const log = readRunnerLog(result.stdout);
    expect(log.stops).toEqual([]);
    expect(foreignCommands(log, [...given, ...obtained])).toEqual([]);
    expectMasked(log, given, obtained);
    // What the model wrote is in the log to read, each line that would have been a command with a `\`.
    const shown = log.shown.map((line) => line.text);
    expect(shown).toContain("\\::stop-commands::x");
    expect(shown).toContain(`   \\::warning title=${FORGED}::${FORGED} indented`);
  }, 240_000);
});
