// The recorded Claude Code cases for the web and skills (test/fixtures/reference/claude-code-agent-tools:
// webfetch-*, websearch-*, skill-*) played through the CLI as check-reference.mjs plays the others: the
// case's files as the workspace, its turns and side answers as the script, its pages from a local HTTPS
// server ($WEB, $WEB2), and each tool_result compared with the recorded one (successful results exactly,
// with the text blocks that follow them; for errors, that they are errors).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli-process.js";
import { startWebServer, type WebRoute, type WebServer } from "../support/web-server.js";
import { asRecorded, referenceDir } from "../support/reference.js";
import { writeFiles } from "../support/workspace.js";

const CASES_DIR = referenceDir("claude-code-agent-tools");
const PLAYED = /^(webfetch|websearch|skill)-/;

interface RecordedResult {
  tool: string;
  is_error: boolean | null;
  content: unknown;
  siblings?: Array<{ type: string; text: string }>;
}
interface ReferenceCase {
  name: string;
  files?: Record<string, string>;
  turns: unknown[];
  side?: unknown[];
  web?: { routes: Record<string, WebRoute> };
  results: RecordedResult[];
}

const cases: ReferenceCase[] = fs.existsSync(CASES_DIR)
  ? fs
      .readdirSync(CASES_DIR)
      .filter((f) => PLAYED.test(f) && f.endsWith(".json"))
      .sort()
      .map((f) => JSON.parse(fs.readFileSync(path.join(CASES_DIR, f), "utf8")) as ReferenceCase)
  : [];

describe("the reference cases for the web and skills, through the CLI", () => {
  let web: WebServer;
  beforeAll(async () => {
    // Every web case carries the same routes; one server answers them all.
    web = await startWebServer(cases.find((c) => c.web)?.web?.routes ?? {});
  });
  afterAll(async () => {
    await web?.close();
  });

  it("has the cases to play", () => {
    expect(fs.existsSync(CASES_DIR), `${CASES_DIR} is missing`).toBe(true);
    expect(cases.map((c) => c.name)).toEqual(
      expect.arrayContaining(["skill-args", "skill-unknown", "webfetch-html", "websearch-results"]),
    );
  });

  it.each(cases.map((c) => [c.name, c] as const))("%s", { timeout: 180_000 }, async (_name, c) => {
    const placeholders = (text: string) =>
      text.replaceAll("$WEB2", web.origin("other.test")).replaceAll("$WEB", web.origin("web.test"));
    /** A result's JSON in the recording's terms: its paths (`asRecorded`) and the pages' origins. */
    const back = (content: unknown, id: string) =>
      asRecorded(content, id)
        .replaceAll(web.origin("other.test"), "$WEB2")
        .replaceAll(web.origin("web.test"), "$WEB");
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-reference-"));
    const workspace = path.join(tmp, "ws");
    fs.mkdirSync(workspace);
    writeFiles(workspace, c.files ?? {});
    const script = path.join(tmp, "script.json");
    fs.writeFileSync(
      script,
      placeholders(JSON.stringify({ turns: c.turns, side: c.side ?? [] })).replaceAll("$WS", "/workspace"),
    );
    const args = [
      "run",
      "--script",
      script,
      "--workspace",
      workspace,
      "--mode",
      "bypassPermissions",
      "--out",
      path.join(tmp, "out"),
      "--output-format",
      "stream-json",
    ];
    if (c.web)
      args.push(
        "--network",
        "allowlist",
        "--allow-domain",
        "web.test",
        "--allow-domain",
        "other.test",
        "--allow-private-host",
        "web.test=127.0.0.1",
        "--allow-private-host",
        "other.test=127.0.0.1",
        "--ca-cert",
        web.caFile,
      );
    if (c.files) args.push("--trust-workspace-settings");
    const r = await runCli(args, { ANTHROPIC_API_KEY: "" });
    expect(r.code, r.stderr).toBe(0);
    const messages = r.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { type: string; message?: { content: Array<Record<string, unknown>> } })
      .filter((e) => e.type === "user")
      .map((e) => e.message?.content ?? []);
    const got = messages.flatMap((content) =>
      content
        .map((block, i) => ({ block, after: content.slice(i + 1).filter((b) => b.type === "text") }))
        .filter(({ block }) => block.type === "tool_result"),
    );
    expect(got).toHaveLength(c.results.length);
    c.results.forEach((want, i) => {
      const { block, after } = got[i]!;
      expect(Boolean(block.is_error), `${want.tool} is_error`).toBe(Boolean(want.is_error));
      if (want.is_error) return;
      const id = String(block.tool_use_id);
      expect(back(block.content, id)).toBe(JSON.stringify(want.content));
      if (want.siblings) expect(back(after, id)).toBe(JSON.stringify(want.siblings));
    });
  });
});
