// GitHub API failures, classified, and the pure retry decision (RELIABILITY G2): honour `retry-after`, else
// the rate limit's reset time, else back off for at least 60 s, exponentially; 5xx and network errors get a
// short exponential backoff; nothing else is retried. Every wait is bounded, and the caller sleeps through
// an injected function so tests never wait.

export type ApiFailureKind =
  | "unauthorized"
  | "integration"
  | "forbidden"
  | "rate_limited"
  | "not_found"
  | "unprocessable"
  | "server"
  | "network"
  | "other";

/** A failed request, reduced to what decisions need (no request object: it carries the token). */
export interface ApiFailure {
  kind: ApiFailureKind;
  status: number;
  message: string;
  headers: Record<string, string>;
}

export const MAX_ATTEMPTS = 4;
/** Longest single wait for a rate limit; a reset further away fails now with the time it resets. */
export const MAX_RATE_LIMIT_WAIT_MS = 5 * 60_000;
export const SECONDARY_LIMIT_MIN_WAIT_MS = 60_000;
export const SERVER_ERROR_BASE_WAIT_MS = 2_000;

function header(headers: Record<string, string>, name: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/** Classifies a status + message + headers (pure; used on Octokit errors and on fetch failures). */
export function classifyFailure(
  status: number,
  message: string,
  headers: Record<string, string> = {},
): ApiFailure {
  const lower = message.toLowerCase();
  const base = { status, message, headers };
  if (status === 0) return { ...base, kind: "network" };
  if (status === 401) return { ...base, kind: "unauthorized" };
  if (status === 403 || status === 429) {
    if (
      header(headers, "retry-after") !== undefined ||
      header(headers, "x-ratelimit-remaining") === "0" ||
      lower.includes("rate limit") ||
      status === 429
    ) {
      return { ...base, kind: "rate_limited" };
    }
    if (lower.includes("resource not accessible by integration")) return { ...base, kind: "integration" };
    return { ...base, kind: "forbidden" };
  }
  if (status === 404 || status === 410) return { ...base, kind: "not_found" };
  if (status === 422) return { ...base, kind: "unprocessable" };
  if (status >= 500) return { ...base, kind: "server" };
  return { ...base, kind: "other" };
}

export type RetryDecision = { retry: true; waitMs: number; why: string } | { retry: false; why: string };

/**
 * Whether to retry after `failure` on attempt `attempt` (0-based: the attempt that just failed), at time
 * `nowMs`. Pure.
 */
export function retryDecision(failure: ApiFailure, attempt: number, nowMs: number): RetryDecision {
  if (attempt + 1 >= MAX_ATTEMPTS) return { retry: false, why: `gave up after ${MAX_ATTEMPTS} attempts` };
  if (failure.kind === "rate_limited") {
    const retryAfter = Number(header(failure.headers, "retry-after"));
    if (
      header(failure.headers, "retry-after") !== undefined &&
      Number.isFinite(retryAfter) &&
      retryAfter >= 0
    ) {
      const waitMs = Math.max(1_000, retryAfter * 1_000);
      if (waitMs > MAX_RATE_LIMIT_WAIT_MS)
        return {
          retry: false,
          why: `rate limited; retry-after is ${retryAfter} s, longer than agent-ci waits`,
        };
      return {
        retry: true,
        waitMs,
        why: `rate limited; waiting ${Math.round(waitMs / 1000)} s as retry-after says`,
      };
    }
    const reset = Number(header(failure.headers, "x-ratelimit-reset"));
    if (header(failure.headers, "x-ratelimit-remaining") === "0" && Number.isFinite(reset) && reset > 0) {
      const waitMs = Math.max(1_000, reset * 1_000 - nowMs + 1_000);
      if (waitMs > MAX_RATE_LIMIT_WAIT_MS) {
        return {
          retry: false,
          why: `rate limit exhausted until ${new Date(reset * 1_000).toISOString()}, longer than agent-ci waits`,
        };
      }
      return {
        retry: true,
        waitMs,
        why: `rate limit exhausted; waiting ${Math.round(waitMs / 1000)} s for the reset`,
      };
    }
    const waitMs = Math.min(MAX_RATE_LIMIT_WAIT_MS, SECONDARY_LIMIT_MIN_WAIT_MS * 2 ** attempt);
    return { retry: true, waitMs, why: `secondary rate limit; backing off ${Math.round(waitMs / 1000)} s` };
  }
  if (failure.kind === "server" || failure.kind === "network") {
    const waitMs = SERVER_ERROR_BASE_WAIT_MS * 2 ** attempt;
    return {
      retry: true,
      waitMs,
      why: `${failure.kind === "server" ? `HTTP ${failure.status}` : "network error"}; retrying in ${Math.round(waitMs / 1000)} s`,
    };
  }
  return { retry: false, why: `HTTP ${failure.status} is not retried` };
}

/** A sentence for the log that says what to do, naming the missing `permissions:` on a 403 (G1). */
export function explainFailure(failure: ApiFailure, what: string, permission?: string): string {
  switch (failure.kind) {
    case "unauthorized":
      return `${what}: the github_token was rejected (401). Check the github_token input; the default is the workflow's GITHUB_TOKEN.`;
    case "integration":
      return `${what}: the token may not do this (403 Resource not accessible by integration).${permission ? ` Add \`permissions: ${permission}\` to the job` : " Check the job's permissions:"}; on pull requests from forks the token is read-only whatever the workflow asks.`;
    case "forbidden":
      return `${what}: forbidden (403: ${failure.message}).${permission ? ` The job may need \`permissions: ${permission}\`.` : ""}`;
    case "rate_limited":
      return `${what}: rate limited by the GitHub API (${failure.status}: ${failure.message}).`;
    case "not_found":
      return `${what}: not found (404). It may have been deleted, or the token cannot see it.`;
    case "unprocessable":
      return `${what}: GitHub rejected the request (422: ${failure.message}).`;
    case "server":
      return `${what}: GitHub answered ${failure.status} (${failure.message}).`;
    case "network":
      return `${what}: could not reach the GitHub API (${failure.message}).`;
    case "other":
      return `${what}: HTTP ${failure.status} (${failure.message}).`;
  }
}
