// The API door against the fake GitHub, through the real Octokit of @actions/github: the base URL comes
// from GITHUB_API_URL (no api.github.com), faults are classified and explained, idempotent calls are retried
// as the policy says, with the wait injected (these tests never sleep).
// Bypasses the harness: the API client is called as a function, with its wait injected.
import fs from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitHubApi, GitHubApiError, GitHubGraphQLError, octokitRequest } from "../../src/github/api.js";
import { faults, startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { listenOnLoopback } from "../support/loopback.js";

const TOKEN = "ghs_fakeTokenForTests0123456789abcdefABCD";
let fake: FakeGitHub;
let waits: number[];
let logs: string[];
const route = "GET /repos/{owner}/{repo}/collaborators/{username}/permission";
const params = { owner: "acme", repo: "widgets", username: "octocat" };
const what = { what: "reading octocat's permission", permission: "contents: read" };

function api(now = () => Date.now()): GitHubApi {
  return new GitHubApi({
    request: octokitRequest(TOKEN, fake.url),
    sleep: async (ms) => void waits.push(ms),
    now,
    log: (l) => logs.push(l),
  });
}

beforeEach(async () => {
  fake = await startFakeGitHub({ token: TOKEN, permissions: { octocat: "write" } });
  waits = [];
  logs = [];
});
afterEach(async () => {
  await fake.close();
});

describe("GitHubApi", () => {
  it("talks to GITHUB_API_URL with the token in the Authorization header only", async () => {
    const response = await api().call(route, params, what);
    expect(response.data).toMatchObject({ permission: "write" });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.headers.authorization).toBe(`token ${TOKEN}`);
  });

  it("retries a 5xx, then succeeds", async () => {
    fake.inject({ path: /permission$/, response: faults.serverError(503), times: 2 });
    await expect(api().call(route, params, what)).resolves.toMatchObject({ status: 200 });
    expect(fake.requests).toHaveLength(3);
    expect(waits).toEqual([2_000, 4_000]);
  });

  it("waits for the primary rate limit's reset, then succeeds (G2)", async () => {
    const now = 1_700_000_000_000;
    fake.inject({ path: /permission$/, response: faults.primaryRateLimit(now / 1000 + 30) });
    await expect(api(() => now).call(route, params, what)).resolves.toMatchObject({ status: 200 });
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(30_000);
    expect(logs.join("\n")).toContain("rate limit exhausted");
  });

  it("honours retry-after on a secondary limit, and backs off ≥ 60 s without it", async () => {
    fake.inject({ path: /permission$/, response: faults.secondaryRateLimit(7) });
    fake.inject({ path: /permission$/, response: faults.secondaryRateLimit() });
    await expect(api().call(route, params, what)).resolves.toMatchObject({ status: 200 });
    expect(waits).toEqual([7_000, 120_000]);
  });

  it("gives up after a bounded number of attempts", async () => {
    fake.inject({ path: /permission$/, response: faults.serverError(500), times: 10 });
    await expect(api().call(route, params, what)).rejects.toThrow(/answered 500/);
    expect(fake.requests).toHaveLength(4);
  });

  it.each([
    ["401", faults.unauthorized(), "unauthorized", /github_token was rejected/],
    ["403 integration", faults.integration(), "integration", /permissions: contents: read/],
    ["404", faults.notFound(), "not_found", /not found/],
    ["422", faults.tooLong(), "unprocessable", /422/],
  ])("does not retry %s and explains it", async (_name, response, kind, message) => {
    fake.inject({ path: /permission$/, response });
    const error = await api()
      .call(route, params, what)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitHubApiError);
    expect((error as GitHubApiError).failure.kind).toBe(kind);
    expect((error as GitHubApiError).message).toMatch(message);
    expect(fake.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it("treats a refused connection as a network error and retries it", async () => {
    const url = fake.url;
    await fake.close();
    const client = new GitHubApi({
      request: octokitRequest(TOKEN, url),
      sleep: async (ms) => void waits.push(ms),
    });
    const error = await client.call(route, params, what).catch((e: unknown) => e);
    expect((error as GitHubApiError).failure.kind).toBe("network");
    expect(waits).toHaveLength(3);
    fake = await startFakeGitHub();
  });

  it("does not retry when asked not to (a POST is retried by its caller)", async () => {
    fake.inject({ path: /permission$/, response: faults.serverError(502) });
    await expect(api().call(route, params, { ...what, retry: false })).rejects.toThrow(GitHubApiError);
    expect(waits).toEqual([]);
  });
});

describe("GitHubApi.login: who the token acts as", () => {
  it("is github-actions[bot] for GITHUB_TOKEN, which GET /user refuses; asked once through GraphQL's viewer", async () => {
    const client = api();
    expect(await Promise.all([client.login(), client.login()])).toEqual([
      "github-actions[bot]",
      "github-actions[bot]",
    ]);
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /graphql"]);
    // The REST way GitHub refuses to an installation token, as the fake does.
    await expect(client.call("GET /user", {}, { what: "reading the user" })).rejects.toMatchObject({
      failure: { kind: "integration" },
    });
  });

  it("is the user for a personal access token", async () => {
    await fake.close();
    fake = await startFakeGitHub({ token: TOKEN, identity: { login: "release-bot", type: "User" } });
    expect(await api().login()).toBe("release-bot");
    expect(await api().call("GET /user", {}, { what: "reading the user" })).toMatchObject({
      data: { login: "release-bot" },
    });
  });

  it("is undefined, with a log line, when GraphQL answers errors or fails", async () => {
    fake.inject({ path: /^\/graphql$/, response: { status: 200, body: { errors: [{ message: "nope" }] } } });
    expect(await api().login()).toBeUndefined();
    fake.inject({ path: /^\/graphql$/, response: faults.unauthorized() });
    expect(await api().login()).toBeUndefined();
    expect(logs).toEqual([
      "reading the login this token acts as: GitHub's answer names no login",
      expect.stringContaining("401"),
    ]);
  });

  it("asks a GitHub Enterprise Server's /api/graphql when its REST API is under /api/v3", async () => {
    const paths: string[] = [];
    const server = createServer((req, res) => {
      paths.push(`${req.method} ${req.url}`);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ data: { viewer: { login: "ghes-bot[bot]" } } }));
    });
    const { url, close } = await listenOnLoopback(server);
    try {
      const client = new GitHubApi({ request: octokitRequest(TOKEN, `${url}/api/v3`) });
      expect(await client.login()).toBe("ghes-bot[bot]");
      expect(paths).toEqual(["POST /api/graphql"]);
    } finally {
      await close();
    }
  });
});

describe("GitHubApi.graphql", () => {
  it("turns GitHub's 200-with-errors answer into a GitHubGraphQLError with GitHub's types, sent once", async () => {
    fake.inject({
      method: "POST",
      path: /^\/graphql$/,
      response: {
        status: 200,
        body: {
          data: { createCommitOnBranch: null },
          errors: [
            {
              type: "FORBIDDEN",
              path: ["createCommitOnBranch"],
              message: "Resource not accessible by integration",
            },
          ],
        },
      },
    });
    const error = await api()
      .graphql(
        "mutation M($input: CreateCommitOnBranchInput!) { createCommitOnBranch(input: $input) { commit { oid } } }",
        { input: {} },
        {
          what: "making a commit",
          permission: "contents: write",
        },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitHubGraphQLError);
    expect((error as GitHubGraphQLError).entries).toEqual([
      {
        type: "FORBIDDEN",
        path: ["createCommitOnBranch"],
        message: "Resource not accessible by integration",
      },
    ]);
    expect((error as GitHubGraphQLError).failure.kind).toBe("integration");
    expect((error as Error).message).toBe(
      "making a commit: GitHub's GraphQL API answered with errors (FORBIDDEN: Resource not accessible by integration).",
    );
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /graphql"]);
    expect(JSON.parse(fake.requests[0]?.body ?? "{}")).toMatchObject({ variables: { input: {} } });
    expect(fake.requests[0]?.headers.authorization).toBe(`token ${TOKEN}`);
  });

  it("goes to a GitHub Enterprise Server's GraphQL endpoint (/api/graphql) beside its REST API (/api/v3)", async () => {
    const paths: string[] = [];
    const server = createServer((req, res) => {
      paths.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ data: { ok: true } }));
    });
    const ghes = await listenOnLoopback(server);
    try {
      const client = new GitHubApi({ request: octokitRequest(TOKEN, `${ghes.url}/api/v3`) });
      await expect(client.graphql("query { viewer { login } }", {}, { what: "asking" })).resolves.toEqual({
        ok: true,
      });
      await client.call("GET /repos/{owner}/{repo}", { owner: "acme", repo: "widgets" }, { what: "reading" });
      const dotcom = new GitHubApi({ request: octokitRequest(TOKEN, ghes.url) });
      await dotcom.graphql("query { viewer { login } }", {}, { what: "asking" });
      expect(paths).toEqual(["POST /api/graphql", "GET /api/v3/repos/acme/widgets", "POST /graphql"]);
    } finally {
      await ghes.close();
    }
  });
});

describe("no hard-coded GitHub host", () => {
  it("src/ never names api.github.com", () => {
    const root = path.resolve(import.meta.dirname, "../../src");
    const files = fs
      .readdirSync(root, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts"));
    for (const file of files)
      expect(fs.readFileSync(path.join(root, file), "utf8"), file).not.toContain("api.github.com");
  });
});
