// WebFetch's own behaviour against a real HTTPS server on loopback, with the run's services built as run.ts
// builds them (the egress decision, the CA, the ledger) and a resolver standing in for DNS where a test needs
// a name to resolve somewhere: the policy's refusals (RELIABILITY W1), hostile servers bounded (W2), secrets
// in the URL (W3), odd answers (W4), the cache, and the reader's request.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EgressConnection } from "../../src/report/schema.js";
import { createRedactor } from "../../src/report/index.js";
import type { SideCallRequest } from "../../src/runner/model/driver.js";
import { egressOptions } from "../../src/sandbox/egress/allowlist.js";
import { fixtureBytes } from "../../scripts/reference-fixtures.mjs";
import { FakeSandbox } from "../support/fake-sandbox.js";
import { RunState } from "../../src/tools/state.js";
import {
  networkDecision,
  refusalFor,
  trustedCas,
  type WebNetwork,
  type WebServices,
} from "../../src/tools/web-services.js";
import { createWebFetchTool } from "../../src/tools/web-fetch.js";
import { startWebServer, type WebServer } from "../support/web-server.js";

let server: WebServer;
beforeAll(async () => {
  server = await startWebServer({
    "/page": { body: "<html><head><title>T</title></head><body><h1>Hello</h1><p>World</p></body></html>" },
    "/plain.txt": { content_type: "text/plain; charset=utf-8", body: "plain text\n" },
    "/redirect-same": { status: 302, headers: { location: "/plain.txt" } },
    "/redirect-other": { status: 302, headers: { location: "$WEB2/page" } },
    "/empty": { body: "" },
    "/image.png": { content_type: "image/png", body: { png: { rgb: [0, 0, 255] } } },
  });
});
afterAll(async () => {
  await server?.close();
});

/** The names resolve as DNS would answer them here; web.test is also mapped for the allowlist runs. */
const DNS: Record<string, string> = {
  "web.test": "127.0.0.1",
  "other.test": "127.0.0.1",
  "private.test": "127.0.0.1",
  "meta.test": "169.254.169.254",
  "www.web.test": "169.254.169.254",
  "link.test": "169.254.10.1",
};

function services(setting: WebNetwork, overrides: Partial<WebServices> = {}) {
  const ledger: EgressConnection[] = [];
  const side: SideCallRequest[] = [];
  const redactor = createRedactor({ secrets: [] });
  const web: WebServices = {
    decide: networkDecision(setting, async (host: string) => {
      const address = DNS[host];
      if (!address) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
      return [{ address, family: 4 }];
    }),
    refusal: refusalFor(setting),
    ca: trustedCas(fs.readFileSync(server.caFile, "utf8")),
    ledger: (e) => ledger.push(e),
    redact: redactor.redact,
    smallFastModel: "claude-haiku-5-5",
    searchModel: "claude-sonnet-5-5",
    cache: new Map(),
    now: Date.now,
    async sideCall(_id, request) {
      side.push(request);
      return {
        content: [{ type: "text", text: "READER ANSWER", citations: null }],
        usage: { inputTokens: 10, outputTokens: 2, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
        webSearchRequests: 0,
        model: request.model,
      };
    },
    ...overrides,
  };
  return { web, ledger, side, tool: createWebFetchTool(web) };
}

const allowlist = (...names: string[]): WebNetwork => ({
  network: "allowlist",
  egress: egressOptions(["web.test", ...names], ["web.test"]),
});

async function fetchWith(
  tool: ReturnType<typeof services>["tool"],
  url: string,
  prompt = "What is here?",
  offset?: number,
  call: { sandbox?: FakeSandbox; toolUseId?: string } = {},
) {
  const ctx = {
    sandbox: call.sandbox ?? new FakeSandbox(),
    state: new RunState(),
    toolUseId: call.toolUseId ?? "toolu_web",
    signal: new AbortController().signal,
  };
  return tool.call({ url, prompt, ...(offset === undefined ? {} : { offset }) }, ctx);
}

describe("WebFetch under the network policy (W1)", () => {
  it("fetches an allowed page, upgrading http, and the reader gets the Markdown and the prompt", async () => {
    const { tool, side, ledger } = services(allowlist());
    const result = await fetchWith(tool, `http://web.test:${server.port}/page`);
    expect(result).toMatchObject({ output: "READER ANSWER", metadata: { web: { status: 200 } } });
    expect(result.isError).toBeUndefined();
    expect(side[0]?.model).toBe("claude-haiku-5-5");
    const text = JSON.stringify(side[0]?.messages);
    expect(text).toContain(
      "Web page content:\\n---\\nT\\n\\nHello\\n=====\\n\\nWorld\\n---\\n\\nWhat is here?",
    );
    expect(ledger).toEqual([
      expect.objectContaining({
        host: "web.test",
        port: server.port,
        kind: "fetch",
        decision: "allowed",
        address: "127.0.0.1",
        status: 200,
        caller: "toolu_web",
        url: `https://web.test:${server.port}/page`,
      }),
    ]);
    expect(ledger[0]?.bytesDown).toBeGreaterThan(0);
  });

  it("refuses a host outside the allowlist, an IP literal, the metadata address, and a private address without opt-in", async () => {
    const { tool, ledger } = services(allowlist("private.test", "meta.test"));
    const outside = await fetchWith(tool, `${server.origin("other.test")}/page`);
    expect(outside).toMatchObject({ isError: true });
    expect(outside.output).toBe(
      `agent-ci's network policy refused other.test:${server.port}: not on the allowlist; allowed: web.test, private.test, meta.test`,
    );
    const literal = await fetchWith(tool, `https://127.0.0.1:${server.port}/page`);
    expect(literal.output).toMatch(/refused 127\.0\.0\.1:\d+: an IP address, not a name/);
    const metadataLiteral = await fetchWith(tool, "http://169.254.169.254/latest/meta-data/");
    expect(metadataLiteral.output).toMatch(/refused 169\.254\.169\.254:443: an IP address, not a name/);
    const metadataName = await fetchWith(tool, `${server.origin("meta.test")}/page`);
    expect(metadataName.output).toMatch(
      /resolves to the cloud metadata address 169\.254\.169\.254, which is never reachable/,
    );
    const privateName = await fetchWith(tool, `${server.origin("private.test")}/page`);
    expect(privateName.output).toMatch(
      /resolves to the non-public address 127\.0\.0\.1 .*opt the host in with --allow-private-host/,
    );
    expect(ledger.map((e) => [e.host, e.decision])).toEqual([
      ["other.test", "denied"],
      ["127.0.0.1", "denied"],
      ["169.254.169.254", "denied"],
      ["meta.test", "denied"],
      ["private.test", "denied"],
    ]);
    expect(server.seen.filter((s) => !s.startsWith("web.test"))).toEqual([]);
  });

  it("keeps the metadata address refused even for a name opted in as private", async () => {
    const { tool } = services({ network: "allowlist", egress: egressOptions(["meta.test"], ["meta.test"]) });
    const result = await fetchWith(tool, `${server.origin("meta.test")}/page`);
    expect(result.output).toMatch(/cloud metadata address/);
  });

  it("under --network on, any public name is allowed but private addresses are still refused", async () => {
    const { tool } = services({ network: "on" });
    const result = await fetchWith(tool, `${server.origin("other.test")}/page`);
    expect(result.output).toMatch(
      /non-public address 127\.0\.0\.1.*allowed: any public host \(--network on\)/,
    );
  });

  it("refuses a link-local address, localhost, and a name that leads to the metadata address after a followed redirect", async () => {
    const { tool, ledger } = services({
      network: "allowlist",
      egress: egressOptions(["web.test", "www.web.test", "link.test"], ["web.test", "www.web.test"]),
    });
    const linkLocal = await fetchWith(
      tool,
      `${server.origin("web.test").replace("web.test", "link.test")}/page`,
    );
    expect(linkLocal).toMatchObject({ isError: true });
    expect(linkLocal.output).toMatch(/refused link\.test:\d+: .*non-public address 169\.254\.10\.1/);
    const v6 = await fetchWith(tool, "https://[fe80::1]/page");
    expect(v6.output).toMatch(/refused \[fe80::1\]:443: an IP address, not a name/);
    const local = await tool.validateInput?.({ url: "https://localhost/x", prompt: "p" }, {} as never);
    expect(local).toMatchObject({ isError: true, output: expect.stringMatching(/does not fetch localhost/) });
    // web.test redirects to www.web.test (the same site, so followed); that name resolves to the metadata
    // address, and the second hop is decided by itself: refused, even though the name was opted in.
    const before = server.seen.length;
    const redirected = await fetchWith(tool, `${server.origin("web.test")}/redirect-www`);
    expect(redirected).toMatchObject({ isError: true });
    expect(redirected.output).toMatch(
      /^https:\/\/web\.test:\d+\/redirect-www redirected to https:\/\/www\.web\.test:\d+\/page, and agent-ci's network policy refused www\.web\.test:\d+: resolves to the cloud metadata address 169\.254\.169\.254, which is never reachable/,
    );
    expect(server.seen.slice(before)).toEqual(["web.test /redirect-www"]);
    expect(ledger.map((e) => [e.host, e.decision])).toEqual([
      ["link.test", "denied"],
      ["[fe80::1]", "denied"],
      ["web.test", "allowed"],
      ["www.web.test", "denied"],
    ]);
  });

  it("refuses hostnames without a dot and URLs it cannot use before any request", async () => {
    const { tool } = services(allowlist());
    for (const url of ["https://localhost/x", "not a url", "ftp://web.test/x", "https://user:pw@web.test/x"])
      expect((await tool.validateInput?.({ url, prompt: "p" }, {} as never))?.isError).toBe(true);
  });
});

describe("WebFetch's answers (redirects, errors, odd bodies: W2, W4)", () => {
  const opted = (): WebNetwork => ({
    network: "allowlist",
    egress: egressOptions(["web.test", "other.test"], ["web.test", "other.test"]),
  });

  it("follows a same-host redirect, and returns a cross-host one without following it", async () => {
    const { tool } = services(opted());
    expect((await fetchWith(tool, `${server.origin("web.test")}/redirect-same`)).output).toBe(
      "READER ANSWER",
    );
    const before = server.seen.length;
    const cross = await fetchWith(tool, `${server.origin("web.test")}/redirect-other`, "Q?");
    expect(cross.isError).toBeUndefined();
    expect(cross.output)
      .toBe(`REDIRECT DETECTED: The URL redirects to a location that was not fetched automatically.

    Original URL: ${server.origin("web.test")}/redirect-other
    Redirect URL (from the server's Location header — server-supplied, not verified): ${server.origin("other.test")}/page
    Status: 302 Found

    To complete your request, I need to fetch content from the redirected URL. Please use WebFetch again with these parameters:
    - url: "${server.origin("other.test")}/page"
    - prompt: "Q?"`);
    expect(server.seen.slice(before)).toEqual(["web.test /redirect-other"]);
  });

  it("bounds a redirect loop, a gzip bomb, an endless body and a trickling server", async () => {
    const limits = { maxBytes: 1024 * 1024, timeoutMs: 2_000, maxRedirects: 5 };
    const { tool, side } = services(opted(), { limits });
    const loop = await fetchWith(tool, `${server.origin("web.test")}/loop`);
    expect(loop).toMatchObject({ isError: true, output: expect.stringMatching(/more than 5 redirects/) });
    for (const route of ["/gzip-bomb", "/endless"]) {
      const big = await fetchWith(tool, `${server.origin("web.test")}${route}`);
      expect(big.output).toMatch(
        /^READER ANSWER\n\n\[WebFetch note: this page's text is \d+ characters long/,
      );
      expect((big.metadata?.web as { bytes: number }).bytes).toBe(limits.maxBytes);
    }
    expect(JSON.stringify(side.at(-1)?.messages)).toContain("[Content truncated due to length...]");
    const trickle = await fetchWith(tool, `${server.origin("web.test")}/trickle`);
    expect(trickle).toMatchObject({
      isError: true,
      output: expect.stringMatching(/no complete answer within 2 s/),
    });
  });

  it("answers an HTTP error as a message, a binary body as an error, an empty or 204 body as a page; bad UTF-8 is read", async () => {
    const { tool, side } = services(opted());
    const notFound = await fetchWith(tool, `${server.origin("web.test")}/missing`);
    expect(notFound.isError).toBeUndefined();
    expect(notFound.output).toMatch(
      /^The server returned HTTP 404 Not Found\.\n\nThe response body was not retrieved\./,
    );
    expect((await fetchWith(tool, `${server.origin("web.test")}/server-error`)).output).toMatch(
      /^The server returned HTTP 500 Internal Server Error\./,
    );
    expect((await fetchWith(tool, `${server.origin("web.test")}/binary`)).isError).toBe(true);
    for (const route of ["/empty", "/no-content"]) {
      const read = side.length;
      expect((await fetchWith(tool, `${server.origin("web.test")}${route}`)).output).toBe("READER ANSWER");
      expect(JSON.stringify(side[read]?.messages)).toContain("Web page content:\\n---\\n\\n---");
    }
    const before = side.length;
    expect((await fetchWith(tool, `${server.origin("web.test")}/latin1-bad-utf8`)).output).toBe(
      "READER ANSWER",
    );
    expect(JSON.stringify(side[before]?.messages)).toContain("a\uFFFD\uFFFDb");
  });

  it("answers the same URL from the 15-minute cache, and fetches again after it", async () => {
    let now = 1_000_000;
    const { tool, ledger } = services(opted(), { now: () => now });
    await fetchWith(tool, `${server.origin("web.test")}/plain.txt`);
    const cached = await fetchWith(tool, `${server.origin("web.test")}/plain.txt`);
    expect(cached.metadata?.web).toMatchObject({ fromCache: true });
    expect(ledger).toHaveLength(1);
    now += 15 * 60_000 + 1;
    await fetchWith(tool, `${server.origin("web.test")}/plain.txt`);
    expect(ledger).toHaveLength(2);
  });

  it("saves an image's bytes where the agent can Read them and says where after the answer; from the cache, the same file", async () => {
    const { tool, side, ledger } = services(opted());
    const sandbox = new FakeSandbox();
    const url = `${server.origin("web.test")}/image.png`;
    const file = "/tmp/agent-ci-outputs/webfetch-toolu_img.png";
    const note = `\n\n[Binary content (image/png, 72 bytes) also saved to ${file}]`;
    const first = await fetchWith(tool, url, "What colour?", undefined, { sandbox, toolUseId: "toolu_img" });
    expect(first.output).toBe(`READER ANSWER${note}`);
    expect(sandbox.files.get(file)?.data).toEqual(fixtureBytes({ png: { rgb: [0, 0, 255] } }));
    // The reader is shown the picture itself.
    expect(JSON.stringify(side[0]?.messages)).toContain('"media_type":"image/png"');
    const again = await fetchWith(tool, url, "What shape?", undefined, { toolUseId: "toolu_again" });
    expect(again.output).toBe(`READER ANSWER${note}`);
    expect(ledger).toHaveLength(1);
  });

  it("returns the page text itself when there is no reader (a script without a side entry)", async () => {
    const { tool } = services(opted(), { sideCall: async () => undefined });
    expect((await fetchWith(tool, `${server.origin("web.test")}/plain.txt`)).output).toBe("plain text\n");
  });
});

describe("secrets in the URL (W3)", () => {
  it("are *** in the ledger and the record's facts", async () => {
    const secret = ["ghp", "WebFetchSecret0123456789abcdefghijklmn"].join("_");
    const { tool, ledger } = services(allowlist());
    const result = await fetchWith(tool, `${server.origin("web.test")}/plain.txt?token=${secret}`);
    expect(JSON.stringify(ledger)).not.toContain(secret);
    expect(JSON.stringify(result.metadata)).not.toContain(secret);
    expect(ledger[0]?.url).toContain("token=***");
  });
});
