// RELIABILITY G (GitHub API and Action faults). The Action's own tests run it against the local fake GitHub
// REST API (test/support/fake-github.ts) with these faults injected; this file maps each row to them, and its
// one test checks that every named test still exists. The report generator reads the mapping and takes each
// row's result from those tests.
import { describe } from "vitest";
import { rowTester, type Row } from "./rows.js";

const COMMENT = "test/action/comment.test.ts";
const API = "test/action/github-api.test.ts";
const E2E = "test/action/run-e2e.test.ts";

const ROWS = [
  {
    id: "G1",
    what: "403 Resource not accessible by integration",
    kind: "fault",
    covered: [
      { file: COMMENT, test: "fails soft on 403 integration, naming the permission (G1)" },
      {
        file: "test/action/retry.test.ts",
        test: "names the missing permissions: entry on a 403 from the integration (G1)",
      },
    ],
  },
  {
    id: "G2",
    what: "primary and secondary rate limits, with and without retry-after",
    kind: "fault",
    covered: [
      { file: API, test: "waits for the primary rate limit's reset, then succeeds (G2)" },
      { file: API, test: "honours retry-after on a secondary limit, and backs off" },
      { file: API, test: "gives up after a bounded number of attempts" },
    ],
  },
  {
    id: "G3",
    what: "422 body is too long",
    kind: "fault",
    covered: [
      { file: COMMENT, test: "shrinks the body on 422 body too long (G3)" },
      { file: E2E, test: "422 body too long: the comment is shortened and posted" },
    ],
  },
  {
    id: "G4",
    what: "push rejected (protected branch, non-fast-forward, workflow permission)",
    kind: "fault",
    na: "agent-ci never pushes: the patch goes to the artifact and the comment, and applying and pushing it is the workflow's own step (src/action has no push path)",
  },
  {
    id: "G5",
    what: "the base moved during the run",
    kind: "fault",
    covered: [
      {
        file: "test/integration/run.test.ts",
        test: "works on a workspace that is its own git repository, basing the patch on its HEAD",
      },
    ],
  },
  {
    id: "G6",
    what: "5xx or timeout on POST comment: no duplicate",
    kind: "fault",
    covered: [
      { file: COMMENT, test: "does not duplicate the comment when a create lands but answers 502 (G6)" },
      { file: E2E, test: "5xx then success on the create: one comment" },
    ],
  },
  {
    id: "G7",
    what: "pull_request_target or workflow_run with a fork head",
    kind: "fault",
    covered: [
      { file: E2E, test: "refuses pull_request_target from a fork by default (G7)" },
      { file: "test/unit/action/triggers.test.ts", test: "pull_request_target from a fork" },
      { file: "test/unit/action/triggers.test.ts", test: "workflow_run from a fork" },
    ],
  },
  {
    id: "G8",
    what: "a commenter without write access, or a bot",
    kind: "fault",
    covered: [
      { file: E2E, test: "skips an actor without write access, with the reason" },
      {
        file: "test/action/permission.test.ts",
        test: "allows write and maintain, refuses read, triage and strangers, with the reason",
      },
    ],
  },
  {
    id: "G9",
    what: "the token expires during a long run",
    kind: "fault",
    covered: [
      { file: COMMENT, test: "fails soft on 401" },
      { file: E2E, test: "fails the step when the token is rejected at the permission check (fail closed)" },
    ],
  },
  {
    id: "G10",
    what: "GHES or a custom GITHUB_API_URL",
    kind: "fault",
    covered: [
      { file: API, test: "talks to GITHUB_API_URL with the token in the Authorization header only" },
      { file: API, test: "src/ never names api.github.com" },
    ],
  },
] as const satisfies readonly Row[];

const { checkTable } = rowTester(ROWS);

describe("G: GitHub API and Action faults (mapped to test/action)", () => {
  checkTable();
});
