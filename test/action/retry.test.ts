// The retry policy for GitHub API calls (RELIABILITY G2): retry-after first, then the reset time, then at
// least 60 s of exponential backoff for secondary limits; short backoff for 5xx and network errors; nothing
// else retried; every wait bounded. Pure, so a table.
// Bypasses the harness: pure functions.
import { describe, expect, it } from "vitest";
import {
  classifyFailure,
  explainFailure,
  MAX_ATTEMPTS,
  MAX_RATE_LIMIT_WAIT_MS,
  retryDecision,
} from "../../src/github/retry.js";

const NOW = 1_700_000_000_000;

describe("classifyFailure", () => {
  it.each([
    [401, "Bad credentials", {}, "unauthorized"],
    [403, "Resource not accessible by integration", {}, "integration"],
    [
      403,
      "API rate limit exceeded",
      { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1" },
      "rate_limited",
    ],
    [403, "You have exceeded a secondary rate limit", {}, "rate_limited"],
    [403, "whatever", { "Retry-After": "5" }, "rate_limited"],
    [429, "Too many requests", {}, "rate_limited"],
    [403, "Must have admin rights", {}, "forbidden"],
    [404, "Not Found", {}, "not_found"],
    [422, "Validation Failed", {}, "unprocessable"],
    [502, "Bad Gateway", {}, "server"],
    [0, "connect ECONNREFUSED", {}, "network"],
  ] as const)("%i %s → %s", (status, message, headers, kind) => {
    expect(classifyFailure(status, message, headers).kind).toBe(kind);
  });
});

describe("retryDecision", () => {
  const failure = (status: number, message: string, headers: Record<string, string> = {}) =>
    classifyFailure(status, message, headers);

  it("honours retry-after", () => {
    expect(
      retryDecision(failure(403, "secondary rate limit", { "retry-after": "30" }), 0, NOW),
    ).toMatchObject({ retry: true, waitMs: 30_000 });
    expect(retryDecision(failure(429, "slow down", { "retry-after": "0" }), 0, NOW)).toMatchObject({
      retry: true,
      waitMs: 1_000,
    });
  });

  it("else waits for the primary limit's reset", () => {
    const reset = String(Math.floor(NOW / 1000) + 90);
    const decision = retryDecision(
      failure(403, "API rate limit exceeded", { "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset }),
      0,
      NOW,
    );
    expect(decision.retry).toBe(true);
    expect(decision.retry && decision.waitMs).toBeGreaterThanOrEqual(90_000);
    expect(decision.retry && decision.waitMs).toBeLessThanOrEqual(92_000);
  });

  it("else backs off at least 60 s, exponentially", () => {
    const f = failure(403, "You have exceeded a secondary rate limit");
    expect(retryDecision(f, 0, NOW)).toMatchObject({ retry: true, waitMs: 60_000 });
    expect(retryDecision(f, 1, NOW)).toMatchObject({ retry: true, waitMs: 120_000 });
    expect(retryDecision(f, 2, NOW)).toMatchObject({ retry: true, waitMs: 240_000 });
  });

  it("is bounded: attempts, and waits longer than agent-ci will wait fail at once", () => {
    expect(retryDecision(failure(502, "Bad Gateway"), MAX_ATTEMPTS - 1, NOW)).toMatchObject({ retry: false });
    expect(
      retryDecision(failure(429, "x", { "retry-after": String(MAX_RATE_LIMIT_WAIT_MS / 1000 + 1) }), 0, NOW),
    ).toMatchObject({ retry: false });
    const farReset = String(Math.floor(NOW / 1000) + 3600);
    const decision = retryDecision(
      failure(403, "rate", { "x-ratelimit-remaining": "0", "x-ratelimit-reset": farReset }),
      0,
      NOW,
    );
    expect(decision).toMatchObject({ retry: false, why: expect.stringContaining("until") });
  });

  it("retries 5xx and network errors with a short backoff", () => {
    expect(retryDecision(failure(500, "x"), 0, NOW)).toMatchObject({ retry: true, waitMs: 2_000 });
    expect(retryDecision(failure(0, "ECONNRESET"), 1, NOW)).toMatchObject({ retry: true, waitMs: 4_000 });
  });

  it.each([401, 404, 422])("does not retry %i", (status) => {
    expect(retryDecision(failure(status, "x"), 0, NOW)).toMatchObject({ retry: false });
  });

  it("does not retry a 403 that is not a rate limit", () => {
    expect(retryDecision(failure(403, "Resource not accessible by integration"), 0, NOW)).toMatchObject({
      retry: false,
    });
  });
});

describe("explainFailure", () => {
  it("names the missing permissions: entry on a 403 from the integration (G1)", () => {
    const text = explainFailure(
      classifyFailure(403, "Resource not accessible by integration"),
      "posting the comment on #12",
      "issues: write",
    );
    expect(text).toContain("`permissions: issues: write`");
    expect(text).toContain("forks");
  });

  it("says what to check on a 401", () => {
    expect(explainFailure(classifyFailure(401, "Bad credentials"), "reading")).toContain("github_token");
  });
});
