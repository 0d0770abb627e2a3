// The conversation a resumed run starts from: the record written at the end of a run (redacted, the files
// read with their hashes, the messages as last sent), read back, and completed with the new prompt; and the
// earlier record's policy compared with the run's own, the difference said in words.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseActionInputs, type InputName } from "../../../src/action/inputs.js";
import { createRedactor, type ReportPolicy } from "../../../src/report/index.js";
import type { MessageParam } from "../../../src/runner/model/driver.js";
import { parseRunConfig } from "../../../src/runner/config.js";
import { CLEARED_PREFIX } from "../../../src/runner/loop/context-window.js";
import {
  conversationRecord,
  CONVERSATION_FILE,
  CONVERSATION_VERSION,
  loadResumeRecord,
  parseConversation,
  policyChanges,
  restoreMessages,
} from "../../../src/runner/resume/resume.js";
import { RunState, sha256 } from "../../../src/tools/state.js";

const secret = ["ghp", "R3sum3".repeat(6)].join("_");
const cleared = `${CLEARED_PREFIX} to keep the conversation within the context window (1200 characters; the run's report keeps it whole). Run the call again if you need it.]`;

function earlierMessages(): MessageParam[] {
  return [
    { role: "user", content: "Fix the bug." },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Reading it." },
        { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/workspace/a.js" } },
        { type: "tool_use", id: "toolu_2", name: "Bash", input: { command: "env" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: cleared },
        { type: "tool_result", tool_use_id: "toolu_2", content: `TOKEN=${secret}\n` },
      ],
    },
  ];
}

describe("the conversation record", () => {
  it("round-trips the messages as sent, cleared results as their placeholders and secrets redacted, with the files read whole", () => {
    const state = new RunState();
    state.recordRead("/workspace/a.js", Buffer.from("let a = 1;\n"), { mtimeMs: 5, size: 11 });
    state.recordRead("/workspace/huge.log", undefined, { mtimeMs: 5, size: 9_000_000 }, true);
    state.recordRead("/workspace/b.js", Buffer.from("x\ny\n"), { mtimeMs: 5, size: 4 }, true);
    const redactor = createRedactor({ secrets: [secret] });
    const text = conversationRecord({
      runId: "run-1",
      messages: earlierMessages(),
      state,
      redactDeep: redactor.redactDeep,
    });
    expect(text).not.toContain(secret);
    expect(text.split("\n").filter(Boolean)).toHaveLength(1 + 2 + 3);
    const parsed = parseConversation(text, "conversation.jsonl");
    expect(parsed.reads).toEqual([
      { type: "read", path: "/workspace/a.js", sha256: sha256("let a = 1;\n"), size: 11, partial: false },
      { type: "read", path: "/workspace/b.js", sha256: sha256("x\ny\n"), size: 4, partial: true },
    ]);
    const expected = earlierMessages();
    const results = expected[2]?.content as Array<{ content: string }>;
    results[1]!.content = "TOKEN=***\n";
    expect(parsed.messages).toEqual(expected);
  });

  it("refuses a record it cannot read, saying which", () => {
    const header = JSON.stringify({ type: "conversation", version: CONVERSATION_VERSION, runId: "r" });
    const message = JSON.stringify({ type: "message", message: { role: "user", content: "hi" } });
    expect(() => parseConversation("", "c.jsonl")).toThrow(/not an agent-ci conversation record/);
    expect(() =>
      parseConversation(`${JSON.stringify({ type: "conversation", version: 99, runId: "r" })}\n`, "c.jsonl"),
    ).toThrow(/version 99 conversation record; this agent-ci resumes version 1/);
    expect(() => parseConversation(`${header}\n${message}\n{"type":"other"}\n`, "c.jsonl")).toThrow(
      /c\.jsonl line 3: not a message or a read/,
    );
    expect(() => parseConversation(`${header}\n`, "c.jsonl")).toThrow(/holds no messages/);
    expect(parseConversation(`${header}\r\n${message}\n`, "c.jsonl").messages).toEqual([
      { role: "user", content: "hi" },
    ]);
  });
});

describe("restoreMessages", () => {
  it("adds the prompt to the tool results the earlier run ended with, leaving the record's messages as they were", () => {
    const earlier = earlierMessages();
    const restored = restoreMessages(earlier, "Also handle the empty list.");
    expect(restored).toHaveLength(3);
    expect(restored.slice(0, 2)).toEqual(earlier.slice(0, 2));
    expect(restored[2]?.content).toEqual([
      ...(earlier[2]?.content as unknown[]),
      { type: "text", text: "Also handle the empty list." },
    ]);
    expect(earlier).toEqual(earlierMessages());
  });

  it("answers tool calls the earlier run never finished, then asks; after a final answer the prompt is a new message", () => {
    const interrupted = earlierMessages().slice(0, 2);
    const restored = restoreMessages(interrupted, "Go on.");
    expect(restored[2]).toEqual({
      role: "user",
      content: [
        expect.objectContaining({ type: "tool_result", tool_use_id: "toolu_1", is_error: true }),
        expect.objectContaining({ type: "tool_result", tool_use_id: "toolu_2", is_error: true }),
        { type: "text", text: "Go on." },
      ],
    });
    const finished: MessageParam[] = [
      { role: "user", content: "Fix it." },
      { role: "assistant", content: [{ type: "text", text: "Done." }] },
    ];
    expect(restoreMessages(finished, "Now the docs.").at(-1)).toEqual({
      role: "user",
      content: [{ type: "text", text: "Now the docs." }],
    });
    const asked: MessageParam[] = [{ role: "user", content: "Fix it." }];
    expect(restoreMessages(asked, "Please.")).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Fix it." },
          { type: "text", text: "Please." },
        ],
      },
    ]);
  });
});

describe("the earlier record's policy on resume", () => {
  const current: ReportPolicy = {
    mode: "acceptEdits",
    rules: [
      { text: "Bash(npm test:*)", behavior: "allow", source: "command line" },
      { text: "Bash(curl:*)", behavior: "deny", source: "workspace:.claude/settings.json" },
    ],
    ignored: [],
  };

  it("is the same when the record states this run's rules and mode, wherever each rule came from", () => {
    const relabelled = current.rules.map((r) => ({ ...r, source: "settings:team.json" }));
    expect(policyChanges({ ...current, rules: relabelled }, current)).toEqual([]);
  });

  it("a record wider than this run's policy: each difference said in words (the record's rules are compared, never adopted)", () => {
    const forged: ReportPolicy = {
      mode: "bypassPermissions",
      rules: [{ text: "Bash(*)", behavior: "allow", source: "command line" }],
      ignored: [],
    };
    expect(policyChanges(forged, current)).toEqual([
      "mode bypassPermissions → acceptEdits",
      "added allow Bash(npm test:*), deny Bash(curl:*)",
      "removed allow Bash(*)",
    ]);
  });
});

describe("--resume and resume_from", () => {
  it("need no prompt, and do not go with a review, said in each face's words", () => {
    expect(parseRunConfig({ workspace: ".", resume: "out", script: undefined, apiKey: "k" }).resume).toBe(
      "out",
    );
    expect(() =>
      parseRunConfig({ workspace: ".", resume: "out", task: "review", reviewBase: "main", apiKey: "k" }),
    ).toThrow("--resume continues a run's task; it does not go with --task review");
    const given: Partial<Record<InputName, string>> = {
      resume_from: "earlier",
      task: "review",
    };
    expect(() => parseActionInputs((name) => given[name] ?? "")).toThrow(
      "resume_from: continues a run's task; it does not go with task: review",
    );
  });
});

describe("loadResumeRecord", () => {
  const fixture = fs.readFileSync("test/fixtures/report/small-fix.json", "utf8");
  const header = JSON.stringify({ type: "conversation", version: CONVERSATION_VERSION, runId: "r" });
  const message = JSON.stringify({ type: "message", message: { role: "user", content: "Fix it." } });
  function folder(files: Record<string, string>): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-record-"));
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    return dir;
  }

  it("reads an output folder given as the folder or as its report.json", () => {
    const dir = folder({
      "report.json": fixture,
      "patch.diff": "diff --git a/x b/x\n",
      [CONVERSATION_FILE]: `${header}\n${message}\n`,
    });
    for (const given of [dir, path.join(dir, "report.json")]) {
      const record = loadResumeRecord(given);
      expect(record).toMatchObject({ dir, given, baseCommit: "4f2a9c1e0b7d3a5f6e8c9b0a1d2e3f4a5b6c7d8e" });
      expect(record.report.runId).toBe("run-20250601-120000-a1b2c3");
      expect(record.conversation.messages).toEqual([{ role: "user", content: "Fix it." }]);
      expect(record.patch.toString()).toBe("diff --git a/x b/x\n");
    }
  });

  it("says why a record cannot be resumed", () => {
    const json = JSON.parse(fixture) as { workspace: Record<string, unknown> };
    const noBase = JSON.stringify({ ...json, workspace: { ...json.workspace, baseCommit: undefined } });
    const conversation = `${header}\n${message}\n`;
    expect(() =>
      loadResumeRecord(folder({ "report.json": noBase, [CONVERSATION_FILE]: conversation })),
    ).toThrow(/records no base commit \(its workspace was not a git checkout\)/);
    expect(() =>
      loadResumeRecord(folder({ "report.json": fixture, [CONVERSATION_FILE]: conversation })),
    ).toThrow(/left no patch\.diff/);
    expect(() => loadResumeRecord(folder({ "report.json": "{not json" }))).toThrow(
      /report\.json is not JSON/,
    );
    expect(() =>
      loadResumeRecord(folder({ "report.json": JSON.stringify({ schemaVersion: 1, runId: "x" }) })),
    ).toThrow(/does not match schema version 1/);
  });
});
