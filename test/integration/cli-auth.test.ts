// Signing in from the command line with ANTHROPIC_AUTH_TOKEN (a gateway's bearer token) and ANTHROPIC_BASE_URL:
// the built CLI (dist/cli.js) runs a turn against the fake Messages API, which accepts only that token as
// `Authorization: Bearer`, as the real API checks a credential. No API key is set; the token is in no output.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseReport, secretVariants } from "../../src/report/index.js";
import { fake, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.js";
import { makeWorkspace } from "../support/workspace.js";
import { runCli } from "../support/cli-process.js";
import { tempOut } from "../support/run-io.js";

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("the CLI's sign-in", () => {
  it("sends ANTHROPIC_AUTH_TOKEN as a bearer token to ANTHROPIC_BASE_URL, with no API key set", async () => {
    const token = ["gw", randomBytes(24).toString("hex")].join("-");
    const api = await startFakeAnthropic({ apiKey: token, turns: [fake.text("Nothing to change.")] });
    servers.push(api);
    const workspace = makeWorkspace({ "README.md": "hello\n" }, { git: true });
    const out = tempOut();

    const run = await runCli(["run", "--workspace", workspace, "--prompt", "Look around", "--out", out], {
      ANTHROPIC_API_KEY: "",
      CLAUDE_CODE_OAUTH_TOKEN: "",
      ANTHROPIC_AUTH_TOKEN: token,
      ANTHROPIC_BASE_URL: api.url,
    });

    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(api.messagesRequests()).toHaveLength(1);
    // The pre-flight check and the turn, each signed with the token only.
    expect(api.requests.length).toBeGreaterThanOrEqual(2);
    for (const request of api.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${token}`);
      expect(request.headers["x-api-key"]).toBeUndefined();
    }
    expect(run.stderr).toContain("signing in with ANTHROPIC_AUTH_TOKEN");
    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    expect(report.exitReason).toBe("completed");
    const written = fs
      .readdirSync(out)
      .map((f) => path.join(out, f))
      .filter((f) => fs.statSync(f).isFile())
      .map((f) => fs.readFileSync(f, "utf8"));
    const everything = [...written, run.stdout, run.stderr].join("\n");
    for (const form of secretVariants(token)) expect(everything.includes(form)).toBe(false);
  });
});
