// The one door to the GitHub REST API: Octokit from @actions/github (base URL from GITHUB_API_URL, proxy
// settings honoured), every failure classified, idempotent calls retried with the policy in retry.ts, and
// every message redacted before anyone logs it. The wait is injected so tests never sleep. GraphQL requests
// (publish's createCommitOnBranch, the token's login) go through the same door: GitHub answers their errors
// with HTTP 200 and an `errors` list, which becomes a GitHubGraphQLError here.
//
// It also knows who the token acts as (`login()`): the login its comments and reviews carry as `user.login`.
// GitHub answers that for every kind of token through GraphQL's `viewer` (a personal access token: the user;
// GITHUB_TOKEN: `github-actions[bot]`; a GitHub App's installation token: `<app-slug>[bot]`), where REST's
// `GET /user` refuses installation tokens ("Resource not accessible by integration") and `GET /app` wants the
// app's own JWT.
import * as github from "@actions/github";
import { z } from "zod";
import { classifyFailure, explainFailure, retryDecision, type ApiFailure } from "./retry.js";

export const REQUEST_TIMEOUT_MS = 30_000;

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  data: unknown;
}

/** `octokit.request` reduced to what agent-ci uses: a route (`GET /repos/{owner}/{repo}`) and parameters. */
export type RequestFn = (route: string, params: Record<string, unknown>) => Promise<ApiResponse>;

export type Sleep = (ms: number) => Promise<void>;

export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class GitHubApiError extends Error {
  override readonly name = "GitHubApiError";
  constructor(
    message: string,
    readonly failure: ApiFailure,
  ) {
    super(message);
  }
}

function stringHeaders(headers: unknown): Record<string, string> {
  if (typeof headers !== "object" || headers === null) return {};
  return Object.fromEntries(
    Object.entries(headers as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => [k.toLowerCase(), String(v)]),
  );
}

/** One entry of a GraphQL answer's `errors` list, as GitHub writes it (`type` is GitHub's own, e.g. STALE_DATA). */
export interface GraphQLErrorEntry {
  type?: string;
  message: string;
  path?: Array<string | number>;
}

/** A GraphQL request GitHub answered with errors (HTTP 200, `errors: [...]`); `entries` keeps GitHub's types. */
export class GitHubGraphQLError extends GitHubApiError {
  constructor(
    message: string,
    failure: ApiFailure,
    readonly entries: readonly GraphQLErrorEntry[],
  ) {
    super(message, failure);
  }
}

/** GitHub's GraphQL error types, as the REST status that means the same to a caller (classifyFailure). */
const GRAPHQL_ERROR_STATUS: Record<string, number> = {
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  UNPROCESSABLE: 422,
  RATE_LIMITED: 429,
};

/** Octokit's RequestError, a fetch failure or a timeout → ApiFailure. Never keeps the request (it has the token). */
export function toFailure(error: unknown): ApiFailure {
  const e = error as
    | {
        status?: unknown;
        message?: unknown;
        name?: unknown;
        response?: { headers?: unknown; data?: unknown };
      }
    | undefined;
  const data = e?.response?.data as { message?: unknown; errors?: unknown } | undefined;
  // 422 details ("Body is too long (maximum is 65536 characters)") are in `errors`, not in `message`.
  const details = Array.isArray(data?.errors)
    ? data.errors
        .map((d: unknown) =>
          typeof d === "string"
            ? d
            : typeof (d as { message?: unknown })?.message === "string"
              ? (d as { message: string }).message
              : "",
        )
        .filter(Boolean)
    : [];
  const base =
    typeof data?.message === "string"
      ? data.message
      : typeof e?.message === "string"
        ? e.message
        : String(error);
  const message = details.length ? `${base}: ${details.join("; ")}` : base;
  const status = typeof e?.status === "number" ? e.status : 0;
  // Octokit reports a failed fetch (connection refused, DNS, timeout) as status 500 with no response.
  if (
    status === 0 ||
    (status === 500 && !e?.response) ||
    e?.name === "AbortError" ||
    e?.name === "TimeoutError"
  ) {
    return classifyFailure(0, message);
  }
  return classifyFailure(status, message, stringHeaders(e?.response?.headers));
}

export interface GitHubApiOptions {
  request: RequestFn;
  sleep?: Sleep;
  now?: () => number;
  /** Where retry notes go (already redacted by the caller's logger). */
  log?: (line: string) => void;
  redact?: (text: string) => string;
}

export interface CallOptions {
  /** What the call is for, in words: "reading the actor's permission". */
  what: string;
  /** The `permissions:` entry it needs, for the 403 message: "issues: write". */
  permission?: string;
  /** Retry on rate limits, 5xx and network errors (idempotent calls only). Default true. */
  retry?: boolean;
}

/** What GraphQL's `viewer` query answers (HTTP 200 with `errors` and no data when it fails). */
const Viewer = z.object({ data: z.object({ viewer: z.object({ login: z.string().min(1) }) }) });
const VIEWER_QUERY = "query { viewer { login } }";

export class GitHubApi {
  private readonly requestFn: RequestFn;
  private viewer: Promise<string | undefined> | undefined;
  private readonly sleepFn: Sleep;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly redact: (text: string) => string;

  constructor(options: GitHubApiOptions) {
    this.requestFn = options.request;
    this.sleepFn = options.sleep ?? realSleep;
    this.now = options.now ?? Date.now;
    this.log = options.log ?? (() => undefined);
    this.redact = options.redact ?? ((text) => text);
  }

  /** Waits as a retry decision says (exposed for callers that retry non-idempotent calls themselves). */
  sleep(ms: number): Promise<void> {
    return this.sleepFn(ms);
  }

  /** Time source of the retry decisions. */
  clock(): number {
    return this.now();
  }

  /** One request; a failure becomes a GitHubApiError whose message says what to do. */
  async once(route: string, params: Record<string, unknown>, options: CallOptions): Promise<ApiResponse> {
    try {
      return await this.requestFn(route, params);
    } catch (error) {
      const failure = toFailure(error);
      const redacted = { ...failure, message: this.redact(failure.message) };
      throw new GitHubApiError(
        this.redact(explainFailure(redacted, options.what, options.permission)),
        redacted,
      );
    }
  }

  /**
   * The login this token acts as: the `user.login` of the comments and reviews it writes. Asked once (GraphQL
   * `viewer`, a query: retried as reads are); undefined, with a log line saying why, when GitHub does not say.
   */
  login(): Promise<string | undefined> {
    const what = "reading the login this token acts as";
    this.viewer ??= this.call("POST /graphql", { query: VIEWER_QUERY }, { what }).then(
      (response) => {
        const parsed = Viewer.safeParse(response.data);
        if (!parsed.success) this.log(`${what}: GitHub's answer names no login`);
        return parsed.success ? parsed.data.data.viewer.login : undefined;
      },
      (error: unknown) => {
        if (!(error instanceof GitHubApiError)) throw error;
        this.log(error.message);
        return undefined;
      },
    );
    return this.viewer;
  }

  /**
   * One GraphQL request (`query` with its `variables`), never retried here: a mutation is not idempotent. Its
   * `data` on success; an answer with `errors` is a GitHubGraphQLError naming GitHub's error types.
   */
  async graphql(query: string, variables: Record<string, unknown>, options: CallOptions): Promise<unknown> {
    const response = await this.once("POST /graphql", { query, variables }, options);
    const body = (response.data ?? {}) as { data?: unknown; errors?: unknown };
    if (!Array.isArray(body.errors) || body.errors.length === 0) return body.data;
    const entries: GraphQLErrorEntry[] = body.errors.map((e: unknown) => {
      const entry = (e ?? {}) as { type?: unknown; message?: unknown; path?: unknown };
      return {
        type: typeof entry.type === "string" ? entry.type : undefined,
        message: this.redact(typeof entry.message === "string" ? entry.message : JSON.stringify(e)),
        path: Array.isArray(entry.path) ? (entry.path as Array<string | number>) : undefined,
      };
    });
    const first = entries[0] as GraphQLErrorEntry;
    const message = entries.map((e) => (e.type ? `${e.type}: ${e.message}` : e.message)).join("; ");
    const status = GRAPHQL_ERROR_STATUS[first.type ?? ""];
    const failure = status ? classifyFailure(status, first.message) : classifyFailure(200, message);
    throw new GitHubGraphQLError(
      this.redact(`${options.what}: GitHub's GraphQL API answered with errors (${message}).`),
      { ...failure, message },
      entries,
    );
  }

  /** A request with the retry policy (rate limits, 5xx, network), bounded. */
  async call(route: string, params: Record<string, unknown>, options: CallOptions): Promise<ApiResponse> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.once(route, params, options);
      } catch (error) {
        if (!(error instanceof GitHubApiError) || options.retry === false) throw error;
        const decision = retryDecision(error.failure, attempt, this.now());
        if (!decision.retry) throw error;
        this.log(`${options.what}: ${decision.why}`);
        await this.sleepFn(decision.waitMs);
      }
    }
  }
}

/**
 * Where GraphQL requests go for a REST base URL: a GitHub Enterprise Server's REST API is `<host>/api/v3` and
 * its GraphQL endpoint `<host>/api/graphql`, as @octokit/graphql maps them; elsewhere `<base>/graphql`.
 */
export function graphqlBaseUrl(apiUrl: string): string {
  return apiUrl.replace(/\/api\/v3\/?$/, "/api");
}

/** The production request function: @actions/github's Octokit with the run's base URL and a per-request timeout. */
export function octokitRequest(token: string, apiUrl: string | undefined): RequestFn {
  const octokit = github.getOctokit(token, apiUrl ? { baseUrl: apiUrl } : {});
  return async (route, params) => {
    const response = await octokit.request(route, {
      ...params,
      ...(route === "POST /graphql" && apiUrl ? { baseUrl: graphqlBaseUrl(apiUrl) } : {}),
      request: { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) },
    });
    return {
      status: response.status,
      headers: stringHeaders(response.headers),
      data: response.data as unknown,
    };
  };
}
