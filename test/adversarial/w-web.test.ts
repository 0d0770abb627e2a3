// RELIABILITY W (the web). WebFetch's hostile cases run against a real HTTPS server on loopback
// (test/support/web-server.ts) in test/integration/web-fetch-tool.test.ts, with the run's own network
// decision, and in whole runs on the engine in test/integration/web-run.test.ts; this file maps each row to
// those tests, and its one test checks that every named test still exists. The report generator reads the
// mapping and takes each row's result from those tests.
import { describe } from "vitest";
import { rowTester, type Row } from "./rows.js";

const FETCH = "test/integration/web-fetch-tool.test.ts";
const RUN = "test/integration/web-run.test.ts";

const ROWS = [
  {
    id: "W1",
    what: "an IP literal, localhost, a private or link-local address, 169.254.169.254, a name resolving there (after a redirect too)",
    covered: [
      {
        file: FETCH,
        test: "refuses a host outside the allowlist, an IP literal, the metadata address, and a private address without opt-in",
      },
      { file: FETCH, test: "keeps the metadata address refused even for a name opted in as private" },
      {
        file: FETCH,
        test: "under --network on, any public name is allowed but private addresses are still refused",
      },
      {
        file: FETCH,
        test: "refuses a link-local address, localhost, and a name that leads to the metadata address after a followed redirect",
      },
      {
        file: RUN,
        test: "refuses with --network none (the tool is off), and a host the allowlist lacks, each with why",
      },
    ],
  },
  {
    id: "W2",
    what: "a redirect loop, a cross-host redirect, a 10 GB page, a gzip bomb, a server trickling a byte at a time",
    covered: [
      {
        file: FETCH,
        test: "follows a same-host redirect, and returns a cross-host one without following it",
      },
      { file: FETCH, test: "bounds a redirect loop, a gzip bomb, an endless body and a trickling server" },
    ],
  },
  {
    id: "W3",
    what: "a secret in the URL's query or in the page",
    covered: [
      { file: FETCH, test: "are *** in the ledger and the record's facts" },
      { file: RUN, test: "writes a secret planted in the URL or shown by the page as *** in every output" },
      {
        file: FETCH,
        test: "fetches an allowed page, upgrading http, and the reader gets the Markdown and the prompt",
      },
    ],
  },
  {
    id: "W4",
    what: "invalid UTF-8, a binary type, an empty body, a 204, a 5xx",
    covered: [
      {
        file: FETCH,
        test: "answers an HTTP error as a message, a binary body as an error, an empty or 204 body as a page; bad UTF-8 is read",
      },
    ],
  },
] as const satisfies readonly Row[];

const { checkTable } = rowTester(ROWS);

describe("W: the web (mapped to WebFetch's tests)", () => {
  checkTable();
});
