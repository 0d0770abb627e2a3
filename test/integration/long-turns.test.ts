// A long model turn through the CLI as users run it (the bundle in dist/), against the fake Messages API: the
// answer streams part of its text, then holds the stream open until the test has seen the CLI's line for it
// (at the product's interval, 30 s: this test waits for that line, then lets the answer finish). The line names
// the turn, the seconds waited and the output tokens streamed so far; the run then ends as usual.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { TURN_TICK_MS } from "../../src/runner/loop/turn-ticker.js";
import { startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.js";
import { startCli } from "../support/cli-process.js";
import { tempOut } from "../support/run-io.js";
import { until } from "../support/until.js";
import { makeWorkspace } from "../support/workspace.js";

const FAKE_KEY = ["sk", "ant", "api03", "longTurnsCli0123456789abcdefABCDEFghijklmnop"].join("-");
const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("a long model turn through the CLI", () => {
  it(
    "prints a line after 30 s with the turn, the seconds waited and the output tokens so far, and goes on when the answer comes",
    async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      // 400 characters streamed before the hold: about 100 output tokens (message_start reported 1).
      const api = await startFakeAnthropic({
        apiKey: FAKE_KEY,
        turns: [
          {
            content: [{ type: "text", text: "x".repeat(800) }],
            chunkSize: 100,
            usage: { output_tokens: 210 },
            hold: { afterDeltas: 4, until: held },
          },
        ],
      });
      servers.push(api);
      const out = tempOut();
      const cli = startCli(
        [
          "run",
          "--workspace",
          makeWorkspace({ "README.md": "hello\n" }),
          "--prompt",
          "Look around",
          "--out",
          out,
        ],
        { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: api.url },
      );
      const line = /^model: turn 0 still under way after (\d+) s, ~100 output tokens so far$/m;
      try {
        const seen = await until(
          "the long turn's line",
          () =>
            line.exec(cli.stderr()) ?? (cli.child.exitCode !== null ? new Error(cli.stderr()) : undefined),
          TURN_TICK_MS + 60_000,
        );
        if (seen instanceof Error) throw seen;
        expect(Number(seen[1])).toBe(TURN_TICK_MS / 1000);
      } finally {
        release();
      }
      const run = await cli.done;
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      expect(run.stderr.match(new RegExp(line.source, "gm"))).toHaveLength(1);
      const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
      expect(report.exitReason).toBe("completed");
      expect(report.turns[0]?.usage.outputTokens).toBe(210);
    },
    TURN_TICK_MS + 120_000,
  );
});
