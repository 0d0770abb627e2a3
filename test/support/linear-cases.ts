// Every text path agent-ci runs over output it does not control, each as a named case over a named input,
// for test/unit/linear-text.test.ts. The test bundles this file and runs each case in a worker thread, which
// it can stop even while a regular expression holds the thread: a path that is quadratic in its input
// never finishes on these sizes, and the test says which one.
import { parentPort, workerData } from "node:worker_threads";
import fs from "node:fs";
import { capText, oneLine, stripControl, summarizeCall } from "../../src/report/format.js";
import { renderHtml } from "../../src/report/html.js";
import { renderMarkdown } from "../../src/report/markdown.js";
import { neutralizeGitHubText } from "../../src/report/github-text.js";
import { WorkflowLog } from "../../src/github/workflow-log.js";
import { gateFindings } from "../../src/publish/gate-findings.js";
import { INI_TOML_MAX_CHARS, YAML_MAX_CHARS } from "../../src/publish/manifests.js";
import { createRedactor } from "../../src/report/redact.js";
import { parseReport, RESULT_PREVIEW_MAX_CHARS, TURN_TEXT_MAX_CHARS } from "../../src/report/schema.js";
import { describeIgnored, parseSettingsFile } from "../../src/policy/index.js";
import { ToolPipeline } from "../../src/runner/loop/pipeline.js";
import { conversationRecord, parseConversation, restoreMessages } from "../../src/runner/resume/resume.js";
import { cleanOutput, renderExec } from "../../src/tools/bash.js";
import { ALL_TOOLS } from "../../src/tools/index.js";
import { RunState } from "../../src/tools/state.js";
import type { ExecResult } from "../../src/sandbox/sandbox.js";
import { credentialFileRule, MAX_STRIPPED_BYTES } from "../../src/sandbox/copy/credential-files.js";
import {
  parseGitConfigList,
  withoutGitCredentials,
  writeGitConfig,
} from "../../src/sandbox/copy/git-config-credentials.js";
import { MaskStream } from "../../src/sandbox/egress/scrub.js";
import { execResult, FakeSandbox } from "./fake-sandbox.js";
import { textSides } from "./patch-sides.js";

export const INPUT_BYTES = 8 * 1024 * 1024;

/** Inputs of INPUT_BYTES each: the shapes that make backtracking or per-line work blow up. */
export const INPUTS: Record<string, () => string> = {
  "no newline": () => {
    // Printable characters in a pseudo-random order (no newline), a 64 KiB block repeated.
    const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 .,;:-_/(){}[]\"'=+*";
    let seed = 7;
    let block = "";
    for (let i = 0; i < 65_536; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      block += alphabet[seed % alphabet.length];
    }
    return block.repeat(INPUT_BYTES / block.length);
  },
  "carriage returns": () => "\r".repeat(INPUT_BYTES),
  "one character": () => "a".repeat(INPUT_BYTES),
  "NUL bytes": () => "\0".repeat(INPUT_BYTES),
  "newlines then text": () => `${"\n".repeat(INPUT_BYTES)}x`,
  "spaces then text": () => `${" ".repeat(INPUT_BYTES)}x`,
  "token-looking": () => `ghp_${"A1b2C3d4".repeat(INPUT_BYTES / 8)}`,
  "repeated token prefixes": () => "sk-ant-ghp_xoxb-AKIAeyJ".repeat(INPUT_BYTES / 23),
  "bearer words": () => "Bearer aaaaaaaaaaaaaaaa ".repeat(INPUT_BYTES / 24),
  "escape sequences": () => "\x1b[\x1b]".repeat(INPUT_BYTES / 4),
  "coloured tokens": () => `ghp_${"A".repeat(30)}\x1b[0m `.repeat(INPUT_BYTES / 40),
  backticks: () => "`a".repeat(INPUT_BYTES / 2),
  // Line starts, blanks, colons and hashes with zero-width characters between them, none a whole command.
  "workflow command marks": () =>
    `${"\r\n \t:".repeat(INPUT_BYTES / 16)}:${"\u00ad".repeat(INPUT_BYTES / 8)}#${"\u200b".repeat(INPUT_BYTES / 8)}#${"##\u200b".repeat(INPUT_BYTES / 12)}`,
};

const printed = (stdout: string): ExecResult => execResult({ stdout: Buffer.from(stdout, "utf8") });

/** One tool call through the whole pipeline (the tool, then stage 6's cut), over an in-memory sandbox. */
async function throughPipeline(
  name: string,
  input: Record<string, unknown>,
  sandbox: FakeSandbox,
): Promise<string> {
  const outputDir = fs.mkdtempSync("/tmp/agent-ci-linear-");
  try {
    const pipeline = new ToolPipeline({
      allTools: ALL_TOOLS,
      enabledTools: ALL_TOOLS,
      sandbox,
      state: new RunState(),
      outputs: { dir: outputDir, redactor },
    });
    const [record] = await pipeline.runTurn(
      0,
      [{ id: "toolu_linear", name, input }],
      new AbortController().signal,
    );
    return JSON.stringify(record?.content ?? "");
  } finally {
    fs.rmSync(outputDir, { recursive: true, force: true });
  }
}

const SECRET = ["k3y", "linear", "case", "value"].join("-");
const redactor = createRedactor({ secrets: [SECRET] });

function bigReport(text: string) {
  const fixture = JSON.parse(
    fs.readFileSync(new URL("../fixtures/report/small-fix.json", import.meta.url), "utf8"),
  ) as Record<string, unknown> & {
    toolCalls: Array<Record<string, unknown>>;
    turns: Array<Record<string, unknown>>;
  };
  const first = fixture.toolCalls[0]!;
  // Previews and turn texts are capped before a report is built (the schema holds them to that); inputs,
  // titles and error messages are not.
  fixture.toolCalls[0] = {
    ...first,
    tool: "Bash",
    title: text,
    input: { command: text },
    resultPreview: capText(text, RESULT_PREVIEW_MAX_CHARS),
  };
  fixture.turns[0] = { ...fixture.turns[0], text: capText(text, TURN_TEXT_MAX_CHARS) };
  fixture.error = { kind: "Error", message: text };
  return parseReport(redactor.redactDeep(fixture));
}

/** Each case takes the input and returns something derived from the whole output (so nothing is skipped). */
export const CASES: Record<string, (text: string) => Promise<number> | number> = {
  "Bash output clean-up": (text) => cleanOutput(Buffer.from(text, "utf8")).length,
  "Bash result rendering": (text) => renderExec(printed(text), 1000).text.length,
  "Bash call through the pipeline": async (text) => {
    const sandbox = new FakeSandbox();
    sandbox.execHandler = () => printed(text);
    return (await throughPipeline("Bash", { command: "cat big" }, sandbox)).length;
  },
  redactor: (text) => redactor.redact(text).length,
  "redactor, by lines": (text) => redactor.redactLines(text.split("\n")).length,
  "ANSI strip": (text) => stripControl(text).length,
  "one-line summary": (text) => summarizeCall("Bash", { command: text }).length + oneLine(text).length,
  "report preview": (text) => capText(redactor.redact(text), RESULT_PREVIEW_MAX_CHARS).length,
  "Read line cutting": async (text) => {
    const sandbox = new FakeSandbox({ "big.txt": text });
    return (await throughPipeline("Read", { file_path: "/workspace/big.txt" }, sandbox)).length;
  },
  "Grep line cutting": async (text) => {
    const sandbox = new FakeSandbox();
    sandbox.execHandler = () => printed(`./big.txt:1:${text}\n`);
    return (await throughPipeline("Grep", { pattern: "a", output_mode: "content" }, sandbox)).length;
  },
  "conversation record, written, read back and resumed": (text) => {
    const record = conversationRecord({
      runId: "r",
      messages: [
        { role: "user", content: text },
        { role: "assistant", content: [{ type: "text", text }] },
      ],
      state: new RunState(),
      redactDeep: redactor.redactDeep,
    });
    return restoreMessages(parseConversation(record, "conversation.jsonl").messages, text).length;
  },
  "Markdown rendering": (text) => renderMarkdown(bigReport(text)).length,
  "text published to GitHub": (text) => neutralizeGitHubText(text, { host: "github.com" }).length,
  "publish gate's findings": async (text) => {
    const lines = text.split("\n");
    const patch = `diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join("\n")}\n`;
    return (await gateFindings(bigReport("x"), patch, { maxBinaryBytes: 1024, sides: textSides(text) }))
      .length;
  },
  "settings file keys, one key and a key per line": (text) => {
    const source = { kind: "settings-file", label: "settings:big.json", trusted: true } as const;
    const perLine = Object.fromEntries(text.split("\n", 100_000).map((line, i) => [line, i]));
    const input = parseSettingsFile({ [text]: 1, permissions: { [text]: 1, ...perLine } }, source);
    return describeIgnored(input.unusedKeys?.[0] ?? { source: "", reason: "" }).length;
  },
  // Each settings file the gate reads as its tool does (manifests.ts), the text on the patch's new side: all of
  // it, and as much of it as the gate parses (the rest is over the size limit, a finding unread).
  ...Object.fromEntries(
    [".npmrc", ".yarnrc", ".yarnrc.yml", "pnpm-workspace.yaml", "pyproject.toml", "Cargo.toml"].map(
      (name) => [
        `publish gate's reading of ${name}`,
        async (text: string) => {
          const patch = `diff --git a/${name} b/${name}\n--- a/${name}\n+++ b/${name}\n@@ -0,0 +1 @@\n+x\n`;
          const limit = /\.ya?ml$/.test(name) ? YAML_MAX_CHARS : INI_TOML_MAX_CHARS;
          let found = 0;
          for (const side of [text, text.slice(0, limit)])
            found += (
              await gateFindings(bigReport("x"), patch, { maxBinaryBytes: 1024, sides: textSides(side) })
            ).length;
          return found;
        },
      ],
    ),
  ),
  "text and JSON lines for a runner's log": (text) => {
    let printed = 0;
    const log = new WorkflowLog({ write: (chunk) => (printed += chunk.length), runner: true });
    log.text(text);
    log.json(JSON.stringify({ text }));
    return printed;
  },
  "credential files copied without their credentials, in files of the largest size read": (text) => {
    let size = 0;
    for (let at = 0; at < text.length; at += MAX_STRIPPED_BYTES) {
      const file = Buffer.from(text.slice(at, at + MAX_STRIPPED_BYTES), "latin1");
      for (const name of [".npmrc", ".pypirc", "pip.conf", ".yarnrc.yml", ".docker/config.json"]) {
        const rule = credentialFileRule(name);
        if (rule && "strip" in rule) size += rule.strip(file)?.content.length ?? 0;
      }
    }
    return size;
  },
  "git config without its credentials, from git's listing": (text) => {
    const clean = withoutGitCredentials(parseGitConfigList(text));
    return writeGitConfig(clean.entries).length + clean.removed.length;
  },
  "an injected host's answer, masked by the egress proxy": async (text) => {
    // Near misses of every input's shape: a run of one character, then another.
    const patterns = [SECRET, `${"a".repeat(63)}b`, `${"\r".repeat(63)}x`, `Bearer ${"a".repeat(40)}`];
    const mask = new MaskStream(
      patterns.map((p) => Buffer.from(p, "latin1")),
      () => {},
    );
    let size = 0;
    mask.on("data", (chunk: Buffer) => (size += chunk.length));
    const done = new Promise((resolve) => mask.on("end", resolve));
    const body = Buffer.from(text, "latin1");
    for (let at = 0; at < body.length; at += 16_384) mask.write(body.subarray(at, at + 16_384));
    mask.end();
    await done;
    return size;
  },
  "HTML rendering": (text) =>
    renderHtml(bigReport(text), {
      patchText: `diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+${text}\n`,
      redactor,
    }).length,
};

if (parentPort && workerData) {
  const { caseName } = workerData as { caseName: string };
  const port = parentPort;
  void (async () => {
    for (const [inputName, make] of Object.entries(INPUTS)) {
      port.postMessage({ inputName, started: true });
      try {
        const size = await CASES[caseName]!(make());
        port.postMessage({ inputName, ok: true, size });
      } catch (error) {
        port.postMessage({
          inputName,
          ok: false,
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        });
      }
    }
    port.postMessage({ done: true });
  })();
}
