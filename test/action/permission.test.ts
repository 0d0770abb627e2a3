// Who may start a run (RELIABILITY G8): write, maintain and admin through the REST API; read, triage and
// non-collaborators refused; bots only when listed; a failing check refuses (fail closed).
// Bypasses the harness: the actor check is called as a function, against the fake API.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readGitHubContext } from "../../src/github/context.js";
import { classifyEvent } from "../../src/action/event.js";
import { GitHubApi, octokitRequest } from "../../src/github/api.js";
import { botDecision, checkActor, permissionDecision } from "../../src/action/permission.js";
import { faults, startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { githubEnv, runnerFiles } from "../support/github-env.js";

describe("pure decisions", () => {
  it.each([
    ["admin", undefined, true],
    ["write", "maintain", true],
    ["write", undefined, true],
    ["read", "triage", false],
    ["read", undefined, false],
    ["none", undefined, false],
  ])("permission %s / role %s → allowed %s", (permission, role, allowed) => {
    expect(permissionDecision("someone", permission, role).allowed).toBe(allowed);
  });

  it("allows only listed bots", () => {
    expect(botDecision("dependabot[bot]", "Bot", [])).toMatchObject({
      allowed: false,
      reason: expect.stringContaining("allowed_bots"),
    });
    expect(botDecision("dependabot[bot]", "Bot", ["dependabot"])).toMatchObject({ allowed: true });
    expect(botDecision("renovate[bot]", undefined, ["*"])).toMatchObject({ allowed: true });
    expect(botDecision("octocat", "User", [])).toBeUndefined();
  });
});

describe("checkActor against the fake GitHub", () => {
  let fake: FakeGitHub;
  beforeEach(async () => {
    fake = await startFakeGitHub({
      permissions: { octocat: "write", maria: "maintain", mallory: "read", tri: "triage" },
    });
  });
  afterEach(async () => {
    await fake.close();
  });

  const check = (actor: string, fixture = "issue-comment-issue", allowedBots: string[] = []) => {
    const ctx = readGitHubContext(
      githubEnv({ fixture, apiUrl: fake.url, workspace: "/tmp", files: runnerFiles(), actor }),
    );
    const api = new GitHubApi({
      request: octokitRequest("t0ken-for-tests", fake.url),
      sleep: async () => undefined,
    });
    return checkActor(api, ctx, classifyEvent(ctx), allowedBots);
  };

  it("allows write and maintain, refuses read, triage and strangers, with the reason", async () => {
    expect(await check("octocat")).toMatchObject({ allowed: true, why: "octocat has write access" });
    expect(await check("maria")).toMatchObject({ allowed: true, why: "maria has maintain access" });
    expect(await check("mallory")).toMatchObject({
      allowed: false,
      reason: expect.stringContaining("mallory has read access"),
    });
    expect(await check("tri")).toMatchObject({ allowed: false });
    expect(await check("stranger")).toMatchObject({
      allowed: false,
      reason: expect.stringContaining("not a collaborator"),
    });
  });

  it("checks bots without calling the API", async () => {
    expect(await check("github-actions[bot]")).toMatchObject({ allowed: false });
    expect(await check("github-actions[bot]", "issue-comment-issue", ["github-actions"])).toMatchObject({
      allowed: true,
    });
    expect(fake.requests).toHaveLength(0);
  });

  it("does not check workflow_dispatch and schedule", async () => {
    expect(await check("anyone", "schedule")).toMatchObject({ allowed: true });
    expect(fake.requests).toHaveLength(0);
  });

  it("throws when the check itself cannot run (fail closed, and the step fails)", async () => {
    fake.inject({ path: /permission$/, response: faults.integration() });
    await expect(check("octocat")).rejects.toThrow(/Resource not accessible by integration/);
  });
});
