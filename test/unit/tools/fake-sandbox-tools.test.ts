// The real Read, Edit and Bash tools through the pipeline over the in-memory sandbox: Edit's quote and
// line-ending handling and Bash's output rendering, with no engine (the integration tests check the same
// against a real container).
import { describe, expect, it } from "vitest";
import {
  allowAll,
  contentText,
  ToolPipeline,
  type ToolCallRecord,
} from "../../../src/runner/loop/pipeline.js";
import type { ExecResult } from "../../../src/sandbox/sandbox.js";
import { ALL_TOOLS } from "../../../src/tools/index.js";
import { RunState } from "../../../src/tools/state.js";
import { FakeSandbox } from "../../support/fake-sandbox.js";

function harness(files: Record<string, string>) {
  const sandbox = new FakeSandbox(files);
  const pipeline = new ToolPipeline({
    allTools: ALL_TOOLS,
    enabledTools: ALL_TOOLS,
    sandbox,
    state: new RunState(),
    gate: allowAll,
  });
  let seq = 0;
  const call = async (name: string, input: unknown): Promise<ToolCallRecord> => {
    const [record] = await pipeline.runTurn(
      0,
      [{ id: `toolu_${++seq}`, name, input }],
      new AbortController().signal,
    );
    return record!;
  };
  const text = (record: ToolCallRecord) => contentText(record.content);
  return { sandbox, call, text };
}

describe("Edit over the fake sandbox", () => {
  it("matches straight quotes against curly ones and keeps the file's curly style", async () => {
    const t = harness({ "curly.txt": "She said “hello” to me.\nIt’s fine.\n" });
    await t.call("Read", { file_path: "/workspace/curly.txt" });
    const first = await t.call("Edit", {
      file_path: "/workspace/curly.txt",
      old_string: 'She said "hello" to me.',
      new_string: 'She said "goodbye" to me.',
    });
    expect(first.isError, t.text(first)).toBeFalsy();
    const second = await t.call("Edit", {
      file_path: "/workspace/curly.txt",
      old_string: "It's fine.",
      new_string: "It's great.",
    });
    expect(second.isError, t.text(second)).toBeFalsy();
    expect(t.sandbox.text("/workspace/curly.txt")).toBe("She said “goodbye” to me.\nIt’s great.\n");
  });

  it("matches an LF old_string in a CRLF file and writes CRLF back, bytes outside the edit untouched", async () => {
    const t = harness({ "crlf.txt": "alpha\r\nbeta\r\ngamma\r\n", "mixed.txt": "one\r\ntwo\nthree\r\n" });
    await t.call("Read", { file_path: "/workspace/crlf.txt" });
    const edit = await t.call("Edit", {
      file_path: "/workspace/crlf.txt",
      old_string: "alpha\nbeta",
      new_string: "alpha\nBETA\nbeta2",
    });
    expect(edit.isError, t.text(edit)).toBeFalsy();
    expect(t.sandbox.text("/workspace/crlf.txt")).toBe("alpha\r\nBETA\r\nbeta2\r\ngamma\r\n");

    await t.call("Read", { file_path: "/workspace/mixed.txt" });
    const mixed = await t.call("Edit", {
      file_path: "/workspace/mixed.txt",
      old_string: "two",
      new_string: "2",
    });
    expect(mixed.isError, t.text(mixed)).toBeFalsy();
    expect(t.sandbox.text("/workspace/mixed.txt")).toBe("one\r\n2\nthree\r\n");
  });
});

describe("Bash output rendering over the fake sandbox", () => {
  const run = async (result: Partial<ExecResult>, input: Record<string, unknown> = {}) => {
    const t = harness({});
    t.sandbox.execHandler = () => result;
    const record = await t.call("Bash", { command: "make", ...input });
    return { record, text: t.text(record) };
  };

  it("drops colour codes and what a carriage return overwrote, escapes NULs, trims the edges", async () => {
    const out = Buffer.from("\n\n\x1b[32mPASS\x1b[0m a.test\nprogress 10%\rprogress 100%\nnul:\0:end  \n\n");
    const { record, text } = await run({ stdout: out });
    expect(record.isError).toBeFalsy();
    expect(text).not.toMatch(/\x1b|\0/);
    expect(text).toContain("PASS a.test\nprogress 100%\nnul:");
    expect(text).not.toContain("progress 10%");
    expect(text.startsWith("PASS")).toBe(true);
    expect(text.endsWith(":end")).toBe(true);
  });

  it("reports a non-zero exit, and says what the capture left out", async () => {
    const head = Buffer.from("first lines\n");
    const { record, text } = await run({
      exitCode: 2,
      stdout: Buffer.concat([head, Buffer.from("last line\n")]),
      stdoutHead: head.length,
      stdoutOmitted: 5_000_000,
    });
    expect(record.isError).toBe(true);
    expect(text).toContain("first lines");
    expect(text).toContain("[5000000 bytes omitted]");
    expect(text).toContain("last line");
    expect(text).toMatch(/exit code 2/i);
  });

  it("says when the command timed out", async () => {
    const { text } = await run({ exitCode: null, signal: "SIGKILL", timedOut: true }, { timeout: 3000 });
    expect(text).toContain("Command timed out after 3s");
  });

  it("stays linear on 8 MB of one line, of carriage returns and of NULs", async () => {
    const mb8 = 8 * 1024 * 1024;
    for (const stdout of [Buffer.alloc(mb8, "x"), Buffer.alloc(mb8, "\r"), Buffer.alloc(mb8, 0)]) {
      const { record } = await run({ stdout });
      expect(record.isError).toBeFalsy();
    }
  }, 60_000);
});
