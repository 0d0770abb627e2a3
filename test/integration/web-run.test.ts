// WebFetch and WebSearch in whole runs on the real engine, loopback only: a local HTTPS server under a test
// name (its CA passed with --ca-cert, the name mapped with --allow-private-host), the real SDK against the
// fake Messages API for the main loop and the side calls. The record: the ledger names the WebFetch call,
// the side call's cost is in the total, a secret planted in the URL is *** everywhere.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { WEB_SEARCH_USD } from "../../src/runner/model/pricing.js";
import { runAgent } from "../../src/runner/run.js";
import {
  fake,
  startFakeAnthropic,
  type FakeAnthropic,
  type MessagesBody,
} from "../support/fake-anthropic.js";
import { startWebServer, type WebServer } from "../support/web-server.js";
import { makeWorkspace } from "../support/workspace.js";
import { quietIo, tempOut } from "../support/run-io.js";

const API_KEY = ["sk-ant-api03", "webRunTestKey0123456789abcdefABCDEFGHIJK"].join("-");
const SIDE_MODEL = "claude-haiku-5-5";
/** A token a page shows (a leaked credential in a gist, say): assembled at run time. */
const PAGE_SECRET = ["ghp", "PlantedInThePage0123456789abcdefghijkl"].join("_");
let web: WebServer;
const apis: FakeAnthropic[] = [];
beforeAll(async () => {
  web = await startWebServer({
    "/page": { body: "<html><body><h1>Release notes</h1><p>Version 2 removed foo().</p></body></html>" },
    "/leaky.txt": { content_type: "text/plain", body: `deploy with GITHUB_TOKEN=${PAGE_SECRET}\n` },
  });
});
afterAll(async () => {
  await web?.close();
});
afterEach(async () => {
  await Promise.all(apis.splice(0).map((a) => a.close()));
});

const isSide = (body: MessagesBody) =>
  body.model === SIDE_MODEL ||
  (body.tools ?? []).some((t) => "type" in t && t.type === "web_search_20250305");

/** The main loop's turns in order; side calls answered by `side`. */
async function fakeApi(
  main: ReturnType<typeof fake.text>[],
  side: (body: MessagesBody) => ReturnType<typeof fake.text>,
) {
  let next = 0;
  const api = await startFakeAnthropic({
    apiKey: API_KEY,
    handler: (request) => (isSide(request.body) ? side(request.body) : (main[next++] ?? fake.text("Done."))),
  });
  apis.push(api);
  return api;
}

async function run(input: Partial<RunConfigInput>) {
  const lines: string[] = [];
  const logs: string[] = [];
  const config = parseRunConfig({
    workspace: makeWorkspace({ "README.md": "hi\n" }),
    out: tempOut(),
    outputFormat: "stream-json",
    ...input,
  } as RunConfigInput);
  const outcome = await runAgent(
    config,
    quietIo({ stdout: (l) => lines.push(l), stderr: (l) => logs.push(l) }),
  );
  const results = lines
    .map((l) => JSON.parse(l) as { type: string; message?: { content: unknown } })
    .filter((e) => e.type === "user")
    .flatMap((e) => e.message?.content as Array<{ type: string; content: unknown; is_error?: boolean }>)
    .filter((b) => b.type === "tool_result");
  return {
    outcome,
    lines,
    logs,
    results,
    report: parseReport(fs.readFileSync(outcome.reportPath ?? "", "utf8")),
  };
}

const webNetwork = () => ({
  network: "allowlist" as const,
  allowDomain: ["web.test"],
  allowPrivateHost: ["web.test=127.0.0.1"],
  caCert: web.caFile,
});

describe("WebFetch in a run", () => {
  it("fetches an allowed page, answered by the small model; the ledger names the call; its cost is in the total", async () => {
    const api = await fakeApi(
      [
        fake.toolUse(
          "WebFetch",
          { url: `${web.origin("web.test")}/page`, prompt: "What changed in version 2?" },
          { id: "toolu_fetch" },
        ),
      ],
      () => fake.text("foo() was removed.", { usage: { input_tokens: 1000, output_tokens: 10 } }),
    );
    const { outcome, results, report } = await run({
      ...webNetwork(),
      apiKey: API_KEY,
      baseURL: api.url,
      prompt: "Check the release notes",
      mode: "default",
      allow: ["WebFetch(domain:web.test)"],
    });
    expect(outcome.exitReason, outcome.error).toBe("completed");
    expect(results[0]).toMatchObject({ content: "foo() was removed." });
    expect(results[0]?.is_error).toBeUndefined();
    const sideRequest = api.messagesRequests().find((r) => r.body.model === SIDE_MODEL)?.body;
    expect(sideRequest?.tools).toBeUndefined();
    expect(JSON.stringify(sideRequest?.messages)).toContain(
      "Web page content:\\n---\\nRelease notes\\n=============\\n\\nVersion 2 removed foo().\\n---\\n\\nWhat changed in version 2?",
    );
    expect(report.sideCalls).toEqual([
      expect.objectContaining({
        callId: "toolu_fetch",
        purpose: "fetch",
        model: SIDE_MODEL,
        costUsd: expect.any(Number),
      }),
    ]);
    const side = report.sideCalls?.[0]?.costUsd ?? 0;
    expect(side).toBeGreaterThan(0);
    expect(report.costUsd).toBeGreaterThan(side);
    expect(report.egress?.connections.filter((c) => c.kind === "fetch")).toEqual([
      expect.objectContaining({ host: "web.test", decision: "allowed", caller: "toolu_fetch", status: 200 }),
    ]);
    expect(report.toolCalls[0]?.web).toMatchObject({ status: 200, url: `${web.origin("web.test")}/page` });
  });

  it("denies WebFetch without a domain rule in default mode, and names the rule it needs", async () => {
    const before = web.seen.length;
    const api = await fakeApi(
      [fake.toolUse("WebFetch", { url: `${web.origin("web.test")}/page`, prompt: "Q" })],
      () => fake.text("x"),
    );
    const { results, report } = await run({
      ...webNetwork(),
      apiKey: API_KEY,
      baseURL: api.url,
      prompt: "p",
      mode: "default",
    });
    expect(results[0]).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/WebFetch is not allowed in default mode/),
    });
    expect(report.denials[0]?.narrowestAllowRule).toBe("WebFetch(domain:web.test)");
    expect(web.seen.length).toBe(before);
  });

  it("refuses with --network none (the tool is off), and a host the allowlist lacks, each with why", async () => {
    const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-script-")), "s.json");
    fs.writeFileSync(
      script,
      JSON.stringify({
        turns: [[{ name: "WebFetch", input: { url: `${web.origin("other.test")}/page`, prompt: "Q" } }]],
      }),
    );
    const offline = await run({ script, mode: "bypassPermissions" });
    expect(offline.results[0]).toMatchObject({
      is_error: true,
      content: expect.stringMatching(
        /WebFetch is not available in this run \(--network none: the run has no network/,
      ),
    });
    const outside = await run({ ...webNetwork(), script, mode: "bypassPermissions" });
    expect(outside.results[0]).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/refused other\.test:\d+: not on the allowlist; allowed: web\.test/),
    });
    expect(outside.report.egress?.connections).toContainEqual(
      expect.objectContaining({
        host: "other.test",
        kind: "fetch",
        decision: "denied",
        caller: "toolu_script_0_0",
      }),
    );
  });

  it("writes a secret planted in the URL or shown by the page as *** in every output", async () => {
    const secret = ["ghp", "PlantedInTheUrl0123456789abcdefghijklmn"].join("_");
    const url = `${web.origin("web.test")}/leaky.txt?token=${secret}`;
    // The reader quotes what it was given: the URL's secret and the page's.
    const api = await fakeApi(
      [fake.toolUse("WebFetch", { url, prompt: "Q" }, { id: "toolu_secret" })],
      (body) =>
        fake.text(
          `echo ${secret}; the page says ${JSON.stringify(body.messages).includes(PAGE_SECRET) ? PAGE_SECRET : "nothing"}`,
        ),
    );
    const { outcome, lines, logs } = await run({
      ...webNetwork(),
      apiKey: API_KEY,
      baseURL: api.url,
      prompt: "p",
      mode: "bypassPermissions",
    });
    expect(outcome.exitReason).toBe("completed");
    expect(web.seen).toContain(`web.test /leaky.txt?token=${secret}`);
    // The page reached the reader as it is; what came back of it is *** wherever it is written.
    expect(
      api
        .messagesRequests()
        .some((r) => r.body.model === SIDE_MODEL && JSON.stringify(r.body).includes(PAGE_SECRET)),
    ).toBe(true);
    const written = fs
      .readdirSync(outcome.outDir)
      .map((f) => path.join(outcome.outDir, f))
      .filter((f) => fs.statSync(f).isFile());
    for (const text of [
      ...written.map((f) => fs.readFileSync(f, "utf8")),
      lines.join("\n"),
      logs.join("\n"),
    ]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(PAGE_SECRET);
    }
    expect(lines.join("\n")).toContain("the page says ***");
    expect(fs.readFileSync(outcome.reportPath ?? "", "utf8")).toContain("token=***");
  });
});

describe("WebSearch in a run", () => {
  const searchAnswer = () => ({
    content: [
      {
        type: "server_tool_use" as const,
        id: "srvtoolu_1",
        name: "web_search",
        input: { query: "agent-ci release" },
      },
      {
        type: "web_search_tool_result" as const,
        tool_use_id: "srvtoolu_1",
        content: [
          {
            type: "web_search_result" as const,
            url: "https://example.com/one",
            title: "Result One",
            encrypted_content: "eA==",
          },
        ],
      },
      { type: "text" as const, text: "One result." },
    ],
    usage: { input_tokens: 500, output_tokens: 20, server_tool_use: { web_search_requests: 1 } },
  });

  it("is offered only with an allow rule, and its results and price go into the record", async () => {
    const without = await fakeApi([fake.text("Done.")], searchAnswer);
    await run({ network: "on", apiKey: API_KEY, baseURL: without.url, prompt: "p", mode: "default" });
    const offered = (api: FakeAnthropic) =>
      (api.messagesRequests()[0]?.body.tools ?? [])
        .map((t) => ("name" in t ? t.name : ""))
        .filter((n) => n.startsWith("Web"));
    expect(offered(without)).toEqual(["WebFetch"]);

    const api = await fakeApi(
      [fake.toolUse("WebSearch", { query: "agent-ci release" }, { id: "toolu_search" })],
      searchAnswer,
    );
    const { results, report } = await run({
      network: "on",
      apiKey: API_KEY,
      baseURL: api.url,
      prompt: "p",
      mode: "default",
      allow: ["WebSearch"],
    });
    expect(offered(api)).toEqual(["WebFetch", "WebSearch"]);
    const sideRequest = api.messagesRequests().find((r) => isSide(r.body))?.body;
    expect(sideRequest?.tools).toEqual([{ type: "web_search_20250305", name: "web_search", max_uses: 8 }]);
    expect(results[0]?.content).toBe(
      'Web search results for query: "agent-ci release"\n\nLinks: [{"title":"Result One","url":"https://example.com/one"}]\n\nOne result.\n\n\nREMINDER: You MUST include the sources above in your response to the user using markdown hyperlinks.',
    );
    expect(report.toolCalls[0]?.web).toEqual({
      queries: ["agent-ci release"],
      results: [{ title: "Result One", url: "https://example.com/one" }],
      searches: 1,
    });
    const side = report.sideCalls?.[0];
    expect(side).toMatchObject({ purpose: "search", webSearches: 1 });
    expect(side?.costUsd).toBeGreaterThan(WEB_SEARCH_USD);
    expect(report.costUsd).toBeGreaterThan(side?.costUsd ?? 0);
  });

  it("is off with --network none even in bypassPermissions", async () => {
    const api = await fakeApi([fake.text("Done.")], searchAnswer);
    await run({ apiKey: API_KEY, baseURL: api.url, prompt: "p", mode: "bypassPermissions" });
    const names = (api.messagesRequests()[0]?.body.tools ?? []).map((t) => ("name" in t ? t.name : ""));
    expect(names.filter((n) => n.startsWith("Web"))).toEqual([]);
  });
});
