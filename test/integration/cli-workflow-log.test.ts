// `agent-ci run` in a workflow step (GITHUB_ACTIONS=true), its stdout and stderr read as one step's log by the
// runner's own rules (test/support/runner-log.ts): a scripted model whose text, tool inputs and tool outputs
// are full of workflow commands (`::stop-commands::x` first, add-mask, error, set-output, indented and
// `\r`-separated ones, the older `##[…]` form, megabytes without a line end), printed as stream-json events
// with JSON progress, and as text progress with the closing summary. Every command the runner finds must be
// agent-ci's own, and every secret the run was given masked before the model's first word shows.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { calcWorkspace } from "../support/action-harness.js";
import { runCliLog } from "../support/cli-process.js";
import {
  expectMasked,
  FORGED,
  foreignCommands,
  forgedLines,
  forgedText,
  readRunnerLog,
  runnerLines,
} from "../support/runner-log.js";

const MEGABYTES = 2 * 1024 * 1024;

/** The scripted model: the forged lines in its text, its tool inputs and what the tools print. */
function hostileScript(): string {
  const text = forgedText();
  // The Bash tool refuses a command with zero-width characters before it runs: those lines are left out there.
  const visible = forgedLines()
    .filter((line) => !/[\u00ad\u200b]/.test(line))
    .join("\n");
  const big = `##[warning]${FORGED} ${"x".repeat(MEGABYTES)} ::error::${FORGED}`;
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-script-")), "script.json");
  fs.writeFileSync(
    file,
    JSON.stringify({
      turns: [
        {
          text,
          tools: [
            { name: "Bash", input: { command: `cat <<'EOF'\n${visible}\nEOF`, description: text } },
            { name: "Glob", input: { pattern: text } },
            { name: "Read", input: { file_path: `/workspace/missing\r${forgedLines().join("\r")}` } },
          ],
        },
        {
          text: big,
          tools: [
            { name: "Bash", input: { command: `: '${big}'`, description: big } },
            {
              name: "Bash",
              input: { command: `printf '\\n::error::'; head -c ${MEGABYTES} /dev/zero | tr '\\0' x` },
            },
          ],
        },
      ],
      final: `${text}${big}`,
    }),
  );
  return file;
}

/** Values shaped like the credentials a workflow step holds, made for this run. */
function stepSecrets() {
  return {
    ANTHROPIC_API_KEY: ["sk", "ant", "api03", randomBytes(24).toString("base64url")].join("-"),
    GITHUB_TOKEN: ["ghs", randomBytes(18).toString("hex")].join("_"),
    GH_TOKEN: ["gho", randomBytes(18).toString("hex")].join("_"),
    ACTIONS_RUNTIME_TOKEN: randomBytes(24).toString("base64url"),
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: randomBytes(24).toString("hex"),
  };
}

describe("agent-ci run's log in a workflow step, as the runner reads it", () => {
  for (const [what, format] of [
    ["stream-json events and JSON progress", ["--output-format", "stream-json", "--progress", "json"]],
    ["text progress and the closing summary", ["--output-format", "text"]],
  ] as const) {
    it(`B11 ${what}: the model's workflow commands are shown inert, every secret is masked first`, async () => {
      const secrets = stepSecrets();
      const out = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-out-"));
      const run = await runCliLog(
        [
          "run",
          "--workspace",
          calcWorkspace(),
          "--script",
          hostileScript(),
          "--mode",
          "bypassPermissions",
          "--out",
          out,
          ...format,
        ],
        { ...secrets, GITHUB_ACTIONS: "true" },
      );
      expect(run.code, run.log.slice(-2000)).toBe(0);
      const given = Object.values(secrets);
      const log = readRunnerLog(run.log);
      expect(log.stops).toEqual([]);
      expect(foreignCommands(log, given)).toEqual([]);
      expectMasked(log, given, []);
      const setOutput = `::set-output name=${FORGED}::${FORGED}`;
      if (format[1] === "text") {
        // What the model wrote is there to read, a line that would have been a command with a `\`.
        expect(log.shown.some((line) => line.raw.includes(`\\${setOutput}`))).toBe(true);
      } else {
        // Every JSON line is still JSON, with the model's text as it wrote it.
        const json = runnerLines(run.log).filter((line) => line.startsWith("{"));
        const values = json.map((line) => JSON.stringify(JSON.parse(line)));
        expect(values.some((value) => value.includes(JSON.stringify(setOutput).slice(1, -1)))).toBe(true);
      }
    }, 240_000);
  }
});
