/**
 * A fake GitHub REST API for the Action's tests, on 127.0.0.1 (point GITHUB_API_URL at `fake.url`). The real
 * Octokit from @actions/github talks to it over HTTP, so routes, headers, pagination and errors are
 * exercised as against api.github.com.
 *
 * State: issues (with their labels, added and removed through the API) and pull requests (with diffs and commits), comments (created / updated by the Action, or seeded),
 * collaborator permissions, users, file contents by ref (and a ref's tree), the repository's default branch, and pull requests
 * opened, listed (by head) and edited through the API, as `agent-ci publish` does. Pull request reviews: created
 * with their inline comments in one call (a comment on a line the PR's `diff` does not show on that side is
 * refused with 422 "Line could not be resolved", as GitHub does), listed, their body edited (PUT), their comments
 * listed and deleted one by one; a submitted review itself cannot be deleted. Every request is recorded (method, path,
 * query, headers, raw body) so tests can assert what the Action did and did not send.
 *
 * Who the token is (`identity`) is answered as GitHub answers it for that kind of token: GraphQL's `viewer`
 * gives its login whatever the kind; REST's `GET /user` gives a user token its user and refuses a bot's
 * installation token (GITHUB_TOKEN, a GitHub App's) with 403 "Resource not accessible by integration". What
 * the token writes (comments, reviews, pull requests) carries that login as `user`, and, for a bot, the app it
 * was written through as `performed_via_github_app`.
 *
 * Faults are injected per route (`inject`), consumed in order: 401, 403 rate limit (primary with
 * `x-ratelimit-reset`, or secondary with or without `retry-after`), 403 "Resource not accessible by
 * integration", 404, 422 (e.g. body too long), 5xx, and "apply then fail" (the write happens, the answer is
 * a 502: the case a naive retry turns into a duplicate comment). Like the real API, a comment body over
 * 65536 characters is refused with 422 without any injection.
 *
 * GraphQL (POST /graphql): the mutation createCommitOnBranch, checked against GitHub's schema and applied to the
 * bare repositories named in `repositories` (fake-github-graphql.ts); each is recorded in `graphql.mutations`.
 */
import { fakeGraphQL, type FakeGraphQL } from "./fake-github-graphql.js";
import { listenOnLoopback } from "./loopback.js";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

export const COMMENT_BODY_MAX = 65_536;

export interface FakeUser {
  login: string;
  type?: "User" | "Bot";
}

export interface FakeIssue {
  number: number;
  title: string;
  body: string;
  user: FakeUser;
  pull_request?: boolean;
  /** For the issue list's filters (GET /repos/{owner}/{repo}/issues). */
  labels?: string[];
  milestone?: number;
  assignees?: string[];
  state?: "open" | "closed";
}

/** A workflow run, as GET /repos/{owner}/{repo}/actions/runs/{run_id} answers it. */
export interface FakeWorkflowRun {
  id: number;
  event: string;
  head_branch: string;
  /** owner/name (default the fake's repository). */
  repository?: string;
}

export interface FakePull {
  number: number;
  title: string;
  body: string;
  user: FakeUser;
  head: { ref: string; sha: string; repo: string };
  base: { ref: string; sha: string; repo: string };
  diff: string;
  state?: "open" | "closed";
  /** Its commits, oldest first, as GET /pulls/{n}/commits lists them (default none). */
  commits?: Array<{ sha: string; message: string; author?: string }>;
}

export interface FakeComment {
  id: number;
  issue_number: number;
  body: string;
  user: FakeUser;
}

export interface FakeReviewComment {
  id: number;
  review_id: number;
  path: string;
  line: number;
  start_line?: number;
  side: string;
  body: string;
  /** The diff hunk the comment sits on (default: a one-line hunk at `line`). */
  diff_hunk?: string;
  /** Who wrote it (default: the review's author). */
  user?: FakeUser;
}

export interface FakeReview {
  id: number;
  pull_number: number;
  body: string;
  event: string;
  commit_id: string;
  user: FakeUser;
  comments: FakeReviewComment[];
}

/** Head-side (RIGHT) line ranges per file of a unified diff, read independently of agent-ci's parser. */
function rightSideLines(diff: string): Map<string, Array<[number, number]>> {
  const files = new Map<string, Array<[number, number]>>();
  let current: Array<[number, number]> | undefined;
  for (const line of diff.split("\n")) {
    if (line.startsWith("+++ ")) {
      const name = line.slice(4).trim();
      current = name === "/dev/null" ? undefined : [];
      if (current) files.set(name.replace(/^b\//, ""), current);
      continue;
    }
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (hunk && current) {
      const start = Number(hunk[1]);
      const count = hunk[2] === undefined ? 1 : Number(hunk[2]);
      if (count > 0) current.push([start, start + count - 1]);
    }
  }
  return files;
}

export interface RecordedGitHubRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  status: number;
  /** When it arrived (Date.now()). */
  at: number;
}

export interface FaultResponse {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface Fault {
  method?: string;
  /** Matched against the path (no query). */
  path: RegExp;
  /** How many requests it answers (default 1). */
  times?: number;
  response: FaultResponse;
  /** Apply the request first (e.g. create the comment), then answer with the fault. */
  applyFirst?: boolean;
}

export const faults = {
  unauthorized: (): FaultResponse => ({
    status: 401,
    body: { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" },
  }),
  primaryRateLimit: (resetEpochSeconds: number): FaultResponse => ({
    status: 403,
    headers: {
      "x-ratelimit-limit": "1000",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(resetEpochSeconds),
    },
    body: { message: "API rate limit exceeded for installation ID 1." },
  }),
  secondaryRateLimit: (retryAfterSeconds?: number): FaultResponse => ({
    status: 403,
    headers: retryAfterSeconds === undefined ? {} : { "retry-after": String(retryAfterSeconds) },
    body: {
      message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    },
  }),
  integration: (): FaultResponse => ({
    status: 403,
    body: {
      message: "Resource not accessible by integration",
      documentation_url: "https://docs.github.com/rest/issues/comments",
    },
  }),
  notFound: (): FaultResponse => ({ status: 404, body: { message: "Not Found" } }),
  tooLong: (): FaultResponse => ({
    status: 422,
    body: {
      message: "Validation Failed",
      errors: [
        {
          resource: "IssueComment",
          code: "unprocessable",
          field: "data",
          message: "Body is too long (maximum is 65536 characters)",
        },
      ],
    },
  }),
  serverError: (status = 502): FaultResponse => ({ status, body: { message: "Server Error" } }),
};

export interface FakeGitHubOptions {
  owner?: string;
  repo?: string;
  token?: string;
  issues?: FakeIssue[];
  pulls?: FakePull[];
  comments?: FakeComment[];
  /** login → permission (admin, maintain, write, triage, read, none). Unknown logins answer 404. */
  permissions?: Record<string, string>;
  users?: FakeUser[];
  /** ref → path → content. */
  contents?: Record<string, Record<string, string>>;
  /** What GET /repos/{owner}/{repo} answers as default_branch (default "main"). */
  defaultBranch?: string;
  /** Who the token is (default GITHUB_TOKEN's `github-actions[bot]`); a `User` is a personal access token. */
  identity?: FakeUser;
  /** Reviews already submitted (a pull_request_review event's review, with its inline comments). */
  reviews?: FakeReview[];
  /** owner/name → a bare repository createCommitOnBranch writes its commits to. */
  repositories?: Record<string, string>;
  /** Workflow runs by id (more may be added to `runs` later). */
  runs?: FakeWorkflowRun[];
}

export interface FakeGitHub {
  url: string;
  requests: RecordedGitHubRequest[];
  comments: FakeComment[];
  /** Pull requests, seeded and opened through the API, by number. */
  pulls: Map<number, FakePull>;
  /** Pull request reviews, in the order they were submitted, each with its remaining inline comments. */
  reviews: FakeReview[];
  /** GraphQL: every createCommitOnBranch asked for (`mutations`), and a hook that runs before one applies. */
  graphql: FakeGraphQL;
  inject(fault: Fault): void;
  /** Workflow runs GET /actions/runs/{id} knows. */
  runs: Map<number, FakeWorkflowRun>;
  /** Issues by number (seeded). */
  issues: Map<number, FakeIssue>;
  /** Requests that change something: other than GETs and GraphQL queries. */
  writes(): RecordedGitHubRequest[];
  close(): Promise<void>;
}

const BOT: FakeUser = { login: "github-actions[bot]", type: "Bot" };

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "x-ratelimit-remaining": "4999",
    ...headers,
  });
  res.end(JSON.stringify(body));
}

/** GraphQL's `{ viewer { login } }`, the one query agent-ci asks (who the token is): a read, not a write. */
function isViewerQuery(body: string | undefined): boolean {
  const { query } = JSON.parse(body || "{}") as { query?: string };
  return /^\s*(?:query\s*)?\{\s*viewer\s*\{\s*login\s*\}\s*\}\s*$/.test(query ?? "");
}

export async function startFakeGitHub(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
  const owner = options.owner ?? "acme";
  const repo = options.repo ?? "widgets";
  const token = options.token;
  const issues = new Map((options.issues ?? []).map((i) => [i.number, i]));
  const pulls = new Map((options.pulls ?? []).map((p) => [p.number, p]));
  const comments: FakeComment[] = [...(options.comments ?? [])];
  const runs = new Map((options.runs ?? []).map((r) => [r.id, r]));
  const permissions = options.permissions ?? {};
  const users = new Map((options.users ?? []).map((u) => [u.login, u]));
  const contents = options.contents ?? {};
  const pending: Array<Fault & { left: number }> = [];
  const requests: RecordedGitHubRequest[] = [];
  let nextCommentId = 1000 + comments.length;
  const reviews: FakeReview[] = [...(options.reviews ?? [])];
  let nextReviewId = 5000;
  const identity: FakeUser = options.identity ?? BOT;
  const userJson = (u: FakeUser) => ({ login: u.login, type: u.type ?? "User" });
  const appJson = (u: FakeUser) =>
    u.type === "Bot"
      ? { slug: u.login.replace(/\[bot\]$/, ""), name: u.login.replace(/\[bot\]$/, "") }
      : null;
  const reviewJson = (r: FakeReview) => ({
    id: r.id,
    body: r.body,
    state: r.event === "COMMENT" ? "COMMENTED" : r.event,
    commit_id: r.commit_id,
    user: r.user,
    html_url: `https://github.example/${owner}/${repo}/pull/${r.pull_number}#pullrequestreview-${r.id}`,
  });
  /** An inline comment as GET /pulls/{n}/reviews/{id}/comments lists it (GitHub's fields, in its order). */
  const reviewCommentJson = (r: FakeReview, c: FakeReviewComment) => {
    const author = c.user ?? r.user;
    const url = `https://github.example/${owner}/${repo}/pull/${r.pull_number}#discussion_r${c.id}`;
    return {
      url: `${baseUrl}/repos/${owner}/${repo}/pulls/comments/${c.id}`,
      pull_request_review_id: r.id,
      id: c.id,
      node_id: `PRRC_${c.id}`,
      diff_hunk: c.diff_hunk ?? `@@ -${c.line},1 +${c.line},1 @@`,
      path: c.path,
      commit_id: r.commit_id,
      original_commit_id: r.commit_id,
      user: { ...userJson(author), id: 1, site_admin: false },
      body: c.body,
      created_at: "2026-05-02T10:30:00Z",
      updated_at: "2026-05-02T10:30:00Z",
      html_url: url,
      pull_request_url: `${baseUrl}/repos/${owner}/${repo}/pulls/${r.pull_number}`,
      author_association: author.type === "Bot" ? "NONE" : "MEMBER",
      start_line: c.start_line ?? null,
      original_start_line: c.start_line ?? null,
      start_side: c.start_line === undefined ? null : c.side,
      line: c.line,
      original_line: c.line,
      side: c.side,
      subject_type: "line",
    };
  };
  let baseUrl = "";
  const graphql = fakeGraphQL({
    repositories: options.repositories ?? {},
    serverUrl: "https://github.example",
  });

  const commentJson = (c: FakeComment) => ({
    id: c.id,
    body: c.body,
    user: userJson(c.user),
    performed_via_github_app: appJson(c.user),
    html_url: `https://github.example/${owner}/${repo}/issues/${c.issue_number}#issuecomment-${c.id}`,
    issue_url: `${baseUrl}/repos/${owner}/${repo}/issues/${c.issue_number}`,
  });
  const repoJson = (full: string) => ({
    full_name: full,
    name: full.split("/")[1],
    owner: { login: full.split("/")[0] },
  });
  const pullJson = (p: FakePull) => ({
    number: p.number,
    title: p.title,
    body: p.body,
    user: p.user,
    html_url: `https://github.example/${owner}/${repo}/pull/${p.number}`,
    state: p.state ?? "open",
    head: { ref: p.head.ref, sha: p.head.sha, repo: repoJson(p.head.repo) },
    base: { ref: p.base.ref, sha: p.base.sha, repo: repoJson(p.base.repo) },
  });

  /** Answers one request from the fake's state (404 for anything it does not know). */
  function route(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: URLSearchParams,
    body: string,
  ): void {
    const m = (re: RegExp) => re.exec(path);
    const prefix = `^/repos/${owner}/${repo}`;
    const method = req.method ?? "GET";
    let match: RegExpExecArray | null;

    if (method === "POST" && path === "/graphql") {
      if (isViewerQuery(body)) return json(res, 200, { data: { viewer: { login: identity.login } } });
      const answer = graphql.answer(body);
      return json(res, answer.status, answer.json);
    }
    if (method === "GET" && (match = m(new RegExp(`${prefix}/collaborators/([^/]+)/permission$`)))) {
      const login = decodeURIComponent(match[1] ?? "");
      const permission = permissions[login];
      if (permission === undefined) return json(res, 404, { message: `${login} is not a user` });
      const apiPermission =
        permission === "maintain" ? "write" : permission === "triage" ? "read" : permission;
      return json(res, 200, { permission: apiPermission, role_name: permission, user: { login } });
    }
    if (method === "GET" && path === "/user") {
      if (identity.type === "Bot") return json(res, 403, faults.integration().body);
      return json(res, 200, userJson(identity));
    }
    if (method === "GET" && (match = m(/^\/users\/([^/]+)$/))) {
      const user = users.get(decodeURIComponent(match[1] ?? ""));
      return user ? json(res, 200, user) : json(res, 404, { message: "Not Found" });
    }
    if ((match = m(new RegExp(`${prefix}/issues/(\\d+)/comments$`)))) {
      const number = Number(match[1]);
      if (!issues.has(number) && !pulls.has(number)) return json(res, 404, { message: "Not Found" });
      if (method === "GET") {
        const perPage = Math.min(100, Number(query.get("per_page") ?? 30));
        const page = Math.max(1, Number(query.get("page") ?? 1));
        const all = comments.filter((c) => c.issue_number === number);
        return json(res, 200, all.slice((page - 1) * perPage, page * perPage).map(commentJson));
      }
      if (method === "POST") {
        const parsed = JSON.parse(body || "{}") as { body?: string };
        if (typeof parsed.body !== "string")
          return json(res, 422, { message: "Invalid request: body is required" });
        if (parsed.body.length > COMMENT_BODY_MAX) return json(res, 422, faults.tooLong().body);
        const created: FakeComment = {
          id: nextCommentId++,
          issue_number: number,
          body: parsed.body,
          user: identity,
        };
        comments.push(created);
        return json(res, 201, commentJson(created));
      }
    }
    if ((match = m(new RegExp(`${prefix}/issues/(\\d+)/labels(?:/([^/]+))?$`)))) {
      // An issue's labels: listed, added (a name the repository lacks is created, as GitHub does), one removed
      // (404 "Label does not exist" when the issue does not carry it). Each answers the issue's labels after.
      const issue = issues.get(Number(match[1]));
      if (!issue) return json(res, 404, { message: "Not Found" });
      const labelsJson = () =>
        (issue.labels ?? []).map((name) => ({
          id: 1,
          node_id: "LA_1",
          url: `${baseUrl}/repos/${owner}/${repo}/labels/${encodeURIComponent(name)}`,
          name,
          color: "ededed",
          default: false,
          description: null,
        }));
      const one = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
      if (method === "GET" && one === undefined) return json(res, 200, labelsJson());
      if (method === "POST" && one === undefined) {
        const parsed = JSON.parse(body || "{}") as { labels?: unknown };
        if (!Array.isArray(parsed.labels) || !parsed.labels.every((l) => typeof l === "string"))
          return json(res, 422, { message: "Invalid request: labels must be an array of strings" });
        issue.labels = [...new Set([...(issue.labels ?? []), ...(parsed.labels as string[])])];
        return json(res, 200, labelsJson());
      }
      if (method === "DELETE" && one !== undefined) {
        if (!issue.labels?.includes(one)) return json(res, 404, { message: "Label does not exist" });
        issue.labels = issue.labels.filter((l) => l !== one);
        return json(res, 200, labelsJson());
      }
    }
    if ((match = m(new RegExp(`${prefix}/issues/comments/(\\d+)$`)))) {
      const comment = comments.find((c) => c.id === Number(match?.[1]));
      if (!comment) return json(res, 404, { message: "Not Found" });
      if (method === "PATCH") {
        const parsed = JSON.parse(body || "{}") as { body?: string };
        if (typeof parsed.body !== "string")
          return json(res, 422, { message: "Invalid request: body is required" });
        if (parsed.body.length > COMMENT_BODY_MAX) return json(res, 422, faults.tooLong().body);
        comment.body = parsed.body;
        return json(res, 200, commentJson(comment));
      }
      if (method === "GET") return json(res, 200, commentJson(comment));
    }
    if (method === "GET" && m(new RegExp(`${prefix}/issues$`))) {
      // Open issues and pull requests, oldest first, filtered as GitHub filters them (labels: all of them).
      const labels = (query.get("labels") ?? "").split(",").filter(Boolean);
      const state = query.get("state") ?? "open";
      const milestone = query.get("milestone");
      const assignee = query.get("assignee");
      const perPage = Math.min(100, Number(query.get("per_page") ?? 30));
      const page = Math.max(1, Number(query.get("page") ?? 1));
      const found = [...issues.values()]
        .filter(
          (i) =>
            (state === "all" || (i.state ?? "open") === state) &&
            labels.every((l) => i.labels?.includes(l)) &&
            (!milestone || String(i.milestone) === milestone) &&
            (!assignee || i.assignees?.includes(assignee)),
        )
        .sort((a, b) => a.number - b.number);
      return json(
        res,
        200,
        found.slice((page - 1) * perPage, page * perPage).map((i) => ({
          ...i,
          labels: (i.labels ?? []).map((name) => ({ name })),
          pull_request: i.pull_request ? { url: "x" } : undefined,
        })),
      );
    }
    if (method === "GET" && (match = m(new RegExp(`${prefix}/actions/runs/(\\d+)$`)))) {
      const run = runs.get(Number(match[1]));
      if (!run) return json(res, 404, { message: "Not Found" });
      return json(res, 200, {
        id: run.id,
        event: run.event,
        head_branch: run.head_branch,
        repository: { full_name: run.repository ?? `${owner}/${repo}` },
      });
    }
    if (method === "GET" && (match = m(new RegExp(`${prefix}/issues/(\\d+)$`)))) {
      const issue = issues.get(Number(match[1]));
      if (!issue) return json(res, 404, { message: "Not Found" });
      return json(res, 200, { ...issue, pull_request: issue.pull_request ? { url: "x" } : undefined });
    }
    if (method === "GET" && m(new RegExp(`${prefix}$`)))
      return json(res, 200, {
        full_name: `${owner}/${repo}`,
        name: repo,
        owner: { login: owner },
        default_branch: options.defaultBranch ?? "main",
      });
    if (method === "GET" && m(new RegExp(`${prefix}/pulls$`))) {
      const head = query.get("head");
      const state = query.get("state") ?? "open";
      const found = [...pulls.values()].filter(
        (p) =>
          (state === "all" || (p.state ?? "open") === state) &&
          (!head || head === `${p.head.repo.split("/")[0]}:${p.head.ref}`),
      );
      return json(res, 200, found.map(pullJson));
    }
    if (method === "POST" && m(new RegExp(`${prefix}/pulls$`))) {
      const parsed = JSON.parse(body || "{}") as {
        title?: string;
        head?: string;
        base?: string;
        body?: string;
      };
      if (!parsed.title || !parsed.head || !parsed.base)
        return json(res, 422, {
          message: "Validation Failed",
          errors: [{ message: "title, head and base are required" }],
        });
      const headRef = parsed.head.includes(":") ? (parsed.head.split(":")[1] ?? "") : parsed.head;
      if ([...pulls.values()].some((p) => (p.state ?? "open") === "open" && p.head.ref === headRef))
        return json(res, 422, {
          message: "Validation Failed",
          errors: [{ message: `A pull request already exists for ${owner}:${headRef}.` }],
        });
      const number = Math.max(0, ...issues.keys(), ...pulls.keys()) + 1;
      const created: FakePull = {
        number,
        title: parsed.title,
        body: parsed.body ?? "",
        user: identity,
        head: { ref: headRef, sha: "", repo: `${owner}/${repo}` },
        base: { ref: parsed.base, sha: "", repo: `${owner}/${repo}` },
        diff: "",
      };
      pulls.set(number, created);
      return json(res, 201, pullJson(created));
    }
    if (method === "PATCH" && (match = m(new RegExp(`${prefix}/pulls/(\\d+)$`)))) {
      const pull = pulls.get(Number(match[1]));
      if (!pull) return json(res, 404, { message: "Not Found" });
      const parsed = JSON.parse(body || "{}") as { title?: string; body?: string };
      if (parsed.title !== undefined) pull.title = parsed.title;
      if (parsed.body !== undefined) pull.body = parsed.body;
      return json(res, 200, pullJson(pull));
    }
    if (method === "GET" && (match = m(new RegExp(`${prefix}/pulls/(\\d+)$`)))) {
      const pull = pulls.get(Number(match[1]));
      if (!pull) return json(res, 404, { message: "Not Found" });
      if (String(req.headers.accept ?? "").includes("diff")) {
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
        res.end(pull.diff);
        return;
      }
      return json(res, 200, pullJson(pull));
    }
    if (method === "GET" && (match = m(new RegExp(`${prefix}/pulls/(\\d+)/commits$`)))) {
      const pull = pulls.get(Number(match[1]));
      if (!pull) return json(res, 404, { message: "Not Found" });
      const perPage = Math.min(100, Number(query.get("per_page") ?? 30));
      const page = Math.max(1, Number(query.get("page") ?? 1));
      const commits = (pull.commits ?? []).map((c) => ({
        sha: c.sha,
        commit: { message: c.message, author: { name: c.author ?? "someone", email: "a@example.com" } },
        author: c.author ? { login: c.author, type: "User" } : null,
      }));
      return json(res, 200, commits.slice((page - 1) * perPage, page * perPage));
    }
    if ((match = m(new RegExp(`${prefix}/pulls/(\\d+)/reviews$`)))) {
      const pull = pulls.get(Number(match[1]));
      if (!pull) return json(res, 404, { message: "Not Found" });
      if (method === "GET") {
        const perPage = Math.min(100, Number(query.get("per_page") ?? 30));
        const page = Math.max(1, Number(query.get("page") ?? 1));
        const all = reviews.filter((r) => r.pull_number === pull.number);
        return json(res, 200, all.slice((page - 1) * perPage, page * perPage).map(reviewJson));
      }
      if (method === "POST") {
        const parsed = JSON.parse(body || "{}") as {
          body?: string;
          event?: string;
          commit_id?: string;
          comments?: Array<{
            path?: string;
            line?: number;
            start_line?: number;
            side?: string;
            start_side?: string;
            body?: string;
          }>;
        };
        const inline = parsed.comments ?? [];
        if (parsed.event === "COMMENT" && !parsed.body && !inline.length)
          return json(res, 422, {
            message: "Unprocessable Entity",
            errors: ["Body is required for a COMMENT review"],
          });
        if ((parsed.body ?? "").length > COMMENT_BODY_MAX) return json(res, 422, faults.tooLong().body);
        const lines = rightSideLines(pull.diff);
        for (const c of inline) {
          const ranges = lines.get(c.path ?? "");
          const inHunk = (n: number | undefined) =>
            ranges?.find(([a, b]) => n !== undefined && a <= n && n <= b);
          const hunk = inHunk(c.line);
          const startOk =
            c.start_line === undefined || (c.start_line < (c.line ?? 0) && inHunk(c.start_line) === hunk);
          if (!c.body || c.side !== "RIGHT" || !hunk || !startOk)
            return json(res, 422, {
              message: "Unprocessable Entity",
              errors: ["Line could not be resolved"],
            });
        }
        const id = nextReviewId++;
        const created: FakeReview = {
          id,
          pull_number: pull.number,
          body: parsed.body ?? "",
          event: parsed.event ?? "PENDING",
          commit_id: parsed.commit_id ?? pull.head.sha,
          user: identity,
          comments: inline.map((c) => ({
            id: nextCommentId++,
            review_id: id,
            path: c.path ?? "",
            line: c.line ?? 0,
            start_line: c.start_line,
            side: c.side ?? "RIGHT",
            body: c.body ?? "",
          })),
        };
        reviews.push(created);
        return json(res, 200, reviewJson(created));
      }
    }
    if ((match = m(new RegExp(`${prefix}/pulls/(\\d+)/reviews/(\\d+)(/comments)?$`)))) {
      const review = reviews.find((r) => r.pull_number === Number(match?.[1]) && r.id === Number(match?.[2]));
      if (!review) return json(res, 404, { message: "Not Found" });
      if (match[3] && method === "GET") {
        const perPage = Math.min(100, Number(query.get("per_page") ?? 30));
        const page = Math.max(1, Number(query.get("page") ?? 1));
        const listed = review.comments.slice((page - 1) * perPage, page * perPage);
        return json(
          res,
          200,
          listed.map((c) => reviewCommentJson(review, c)),
        );
      }
      if (!match[3] && method === "PUT") {
        const parsed = JSON.parse(body || "{}") as { body?: string };
        if (typeof parsed.body !== "string")
          return json(res, 422, { message: "Invalid request: body is required" });
        review.body = parsed.body;
        return json(res, 200, reviewJson(review));
      }
      if (!match[3] && method === "DELETE")
        return json(res, 422, {
          message: "Unprocessable Entity",
          errors: ["Can not delete a non-pending pull request review"],
        });
    }
    if (method === "DELETE" && (match = m(new RegExp(`${prefix}/pulls/comments/(\\d+)$`)))) {
      const id = Number(match[1]);
      const review = reviews.find((r) => r.comments.some((c) => c.id === id));
      if (!review) return json(res, 404, { message: "Not Found" });
      review.comments = review.comments.filter((c) => c.id !== id);
      res.writeHead(204);
      res.end();
      return;
    }
    if (method === "GET" && (match = m(new RegExp(`${prefix}/git/trees/([^/]+)$`)))) {
      // A commit's whole tree (recursive=1): its files as blobs.
      const files = contents[decodeURIComponent(match[1] ?? "")];
      if (!files) return json(res, 404, { message: "Not Found" });
      const tree = Object.keys(files).map((p) => ({ path: p, type: "blob", mode: "100644" }));
      return json(res, 200, { sha: match[1], truncated: false, tree });
    }
    if (method === "GET" && (match = m(new RegExp(`${prefix}/contents/(.+)$`)))) {
      const file = decodeURIComponent(match[1] ?? "");
      const ref = query.get("ref") ?? "HEAD";
      const text = contents[ref]?.[file];
      if (text === undefined) {
        // A folder: the entries one level below it, as the contents API lists them.
        const below = Object.keys(contents[ref] ?? {}).filter((p) => p.startsWith(`${file}/`));
        if (!below.length) return json(res, 404, { message: "Not Found" });
        const names = new Map<string, "file" | "dir">();
        for (const p of below) {
          const [name = "", ...rest] = p.slice(file.length + 1).split("/");
          names.set(name, rest.length ? "dir" : "file");
        }
        return json(
          res,
          200,
          [...names].map(([name, type]) => ({ type, name, path: `${file}/${name}` })),
        );
      }
      return json(res, 200, {
        type: "file",
        encoding: "base64",
        path: file,
        content: Buffer.from(text).toString("base64"),
      });
    }
    return json(res, 404, { message: `Not Found (fake GitHub has no route for ${method} ${path})` });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const path = url.pathname.replace(/\/+$/, "") || "/";
      const body = Buffer.concat(chunks).toString("utf8");
      const record: RecordedGitHubRequest = {
        method: req.method ?? "GET",
        path,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
        status: 0,
        at: Date.now(),
      };
      requests.push(record);
      const originalWriteHead = res.writeHead.bind(res);
      res.writeHead = ((status: number, ...rest: unknown[]) => {
        record.status = status;
        return (originalWriteHead as (s: number, ...r: unknown[]) => ServerResponse)(status, ...rest);
      }) as typeof res.writeHead;

      const auth = String(req.headers.authorization ?? "");
      if (
        token !== undefined &&
        auth !== `token ${token}` &&
        auth !== `Bearer ${token}` &&
        auth !== `bearer ${token}`
      ) {
        return json(res, 401, faults.unauthorized().body);
      }
      const fault = pending.find(
        (f) => f.left > 0 && (!f.method || f.method === req.method) && f.path.test(path),
      );
      if (fault) {
        fault.left -= 1;
        if (fault.applyFirst) {
          const sink = { writeHead: () => sink, end: () => sink } as unknown as ServerResponse;
          route(req, sink, path, url.searchParams, body);
        }
        return json(
          res,
          fault.response.status,
          fault.response.body ?? { message: `HTTP ${fault.response.status}` },
          fault.response.headers ?? {},
        );
      }
      route(req, res, path, url.searchParams, body);
    });
  });
  const { url, close } = await listenOnLoopback(server);
  baseUrl = url;
  return {
    url: baseUrl,
    requests,
    comments,
    pulls,
    reviews,
    graphql,
    runs,
    issues,
    inject: (fault) => pending.push({ ...fault, left: fault.times ?? 1 }),
    writes: () =>
      requests.filter((r) => r.method !== "GET" && !(r.path === "/graphql" && isViewerQuery(r.body))),
    close,
  };
}

/**
 * Pull request #34 of the event fixtures (test/fixtures/events): octocat's "Speed up multiply()" from
 * fast-multiply into main of acme/widgets, as the fake's issue and pull entries.
 */
export function fixturePullRequest(options: { base: string; head?: string; body?: string; diff?: string }): {
  issue: FakeIssue;
  pull: FakePull;
} {
  const title = "Speed up multiply()";
  const user = { login: "octocat" };
  return {
    issue: { number: 34, title, body: "b", user, pull_request: true },
    pull: {
      number: 34,
      title,
      body: options.body ?? "Uses a table.",
      user,
      head: { ref: "fast-multiply", sha: options.head ?? "1".repeat(40), repo: "acme/widgets" },
      base: { ref: "main", sha: options.base, repo: "acme/widgets" },
      diff: options.diff ?? "diff --git a/src/calc.js b/src/calc.js\n",
    },
  };
}
