// The tool pipeline with an in-memory sandbox and fake tools: results in call order, concurrency-safe calls
// in parallel batches (overlap measured with deferred promises, never the clock), every stage that stops a
// call and what it leaves untouched, truncation with the whole output kept, and one tool_result per id.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import {
  ToolPipeline,
  type HookOutcome,
  type PermissionDecision,
  type PermissionGate,
  type PermissionRequest,
  type PipelineOptions,
  type ToolCallRecord,
  type ToolCallRequest,
  type ToolHooks,
} from "../../src/runner/loop/pipeline.js";
import { createRedactor } from "../../src/report/redact.js";
import { EngineError, OUTPUTS_DIR, SandboxFsError, SandboxGoneError } from "../../src/sandbox/sandbox.js";
import { defineTool, toolError } from "../../src/tools/define-tool.js";
import { RunState } from "../../src/tools/state.js";
import type { AnyTool } from "../../src/tools/types.js";
import { FakeSandbox } from "../support/fake-sandbox.js";

// ---- deferred calls: a tool call that waits until the test lets it go ----

class Deferreds {
  readonly started: string[] = [];
  active = 0;
  maxActive = 0;
  private readonly waiting = new Map<string, () => void>();

  async enter(id: string): Promise<void> {
    this.started.push(id);
    this.active += 1;
    this.maxActive = Math.max(this.maxActive, this.active);
    await new Promise<void>((resolve) => this.waiting.set(id, resolve));
    this.active -= 1;
  }

  /** The calls waiting now, in the order they started. */
  get waitingIds(): string[] {
    return this.started.filter((id) => this.waiting.has(id));
  }

  release(id: string): void {
    const resolve = this.waiting.get(id);
    if (!resolve) throw new Error(`${id} is not waiting`);
    this.waiting.delete(id);
    resolve();
  }
}

/** Lets every pending promise chain run (the fake sandbox answers in microtasks; nothing here uses timers). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

// ---- fake tools ----

interface World {
  deferreds: Deferreds;
  trace: string[];
}

function fakeTools(world: World) {
  const { deferreds, trace } = world;
  const waitSchema = z.strictObject({ id: z.string() });
  const SafeWait = defineTool<{ id: string }>({
    name: "SafeWait",
    description: "waits, concurrency-safe",
    inputSchema: waitSchema,
    maxResultSizeChars: 1000,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    async call(input) {
      await deferreds.enter(input.id);
      return { output: `done ${input.id}` };
    },
  });
  const UnsafeWait = defineTool<{ id: string }>({
    name: "UnsafeWait",
    description: "waits, not concurrency-safe",
    inputSchema: waitSchema,
    maxResultSizeChars: 1000,
    async call(input) {
      await deferreds.enter(input.id);
      return { output: `done ${input.id}` };
    },
  });
  const MaybeSafe = defineTool<{ id: string; safe: boolean }>({
    name: "MaybeSafe",
    description: "concurrency-safe when its input says so",
    inputSchema: z.strictObject({ id: z.string(), safe: z.boolean() }),
    maxResultSizeChars: 1000,
    isConcurrencySafe: (input) => input.safe,
    async call(input) {
      await deferreds.enter(input.id);
      return { output: `done ${input.id}` };
    },
  });

  const echoSchema = z.strictObject({
    text: z.string(),
    path: z.string().optional(),
    count: z.number().int().optional(),
  });
  type EchoInput = z.infer<typeof echoSchema>;
  const echo = (name: string, readOnly: boolean) =>
    defineTool<EchoInput>({
      name,
      description: `${name}: echoes text`,
      inputSchema: echoSchema,
      maxResultSizeChars: 1000,
      isReadOnly: () => readOnly,
      isConcurrencySafe: () => readOnly,
      targetPath: (input) => input.path,
      async validateInput(input) {
        trace.push("validate");
        return input.text === "invalid"
          ? toolError("invalid_input", "text must not be 'invalid'; say something else")
          : undefined;
      },
      async call(input) {
        trace.push("call");
        return { output: `${name}: ${input.text}`, title: `echoed ${input.text}`, metadata: { exitCode: 0 } };
      },
    });

  const Throws = defineTool<{ kind: string }>({
    name: "Throws",
    description: "throws",
    inputSchema: z.strictObject({ kind: z.enum(["error", "fs", "gone", "engine"]) }),
    maxResultSizeChars: 1000,
    isConcurrencySafe: () => true,
    async call(input) {
      trace.push("call");
      if (input.kind === "fs")
        throw new SandboxFsError("EACCES", "EACCES: permission denied, open '/workspace/x'", "/workspace/x");
      if (input.kind === "gone") throw new SandboxGoneError("the container is not running");
      if (input.kind === "engine") throw new EngineError("the engine stopped answering");
      throw new Error("boom");
    },
  });

  const Big = defineTool<{ size: number; blocks?: boolean }>({
    name: "Big",
    description: "returns a lot",
    inputSchema: z.strictObject({ size: z.number().int(), blocks: z.boolean().optional() }),
    maxResultSizeChars: 1000,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    async call(input) {
      const half = Math.floor(input.size / 2);
      const text = "H".repeat(half) + "T".repeat(input.size - half);
      if (input.blocks) return { output: [{ type: "text", text }] };
      return { output: text };
    },
  });

  return {
    SafeWait,
    UnsafeWait,
    MaybeSafe,
    Echo: echo("Echo", true),
    Writer: echo("Writer", false),
    Throws,
    Big,
  };
}

// ---- a pipeline to test ----

class RecordingGate implements PermissionGate {
  readonly requests: PermissionRequest[] = [];
  constructor(
    private readonly trace: string[],
    private readonly deny: (request: PermissionRequest) => string | undefined = () => undefined,
  ) {}
  decide(request: PermissionRequest): PermissionDecision {
    this.trace.push("permission");
    this.requests.push(request);
    const reason = this.deny(request);
    if (reason)
      return { behavior: "deny", reason, rule: { text: "Echo(secret)", source: "test" }, decidedBy: "rule" };
    return { behavior: "allow", reason: "allowed by test", decidedBy: "mode" };
  }
}

function recordingHooks(trace: string[]): ToolHooks {
  return {
    async pre(_tool, input): Promise<HookOutcome> {
      trace.push("pre");
      if (input.text === "block")
        return { blocked: true, reason: "PreToolUse:Echo hook error: [guard]: no blocking words" };
      if (input.text === "hook-error")
        return {
          blocked: false,
          error: "pre hook crashed (exit 2)",
          runs: [
            {
              event: "PreToolUse",
              command: "crash",
              source: "test",
              outcome: "error",
              exitCode: null,
              signal: "SIGKILL",
              durationMs: 5,
              reason: "crashed",
            },
          ],
        };
      return { blocked: false };
    },
    async post(_tool, input): Promise<HookOutcome> {
      trace.push("post");
      if (input.text === "post-object") return { blocked: true, reason: "run the linter next" };
      return { blocked: false };
    },
  };
}

function setup(
  options: {
    enabled?: (tools: ReturnType<typeof fakeTools>) => AnyTool[];
    outputDir?: string;
    deny?: (r: PermissionRequest) => string | undefined;
  } = {},
) {
  const world: World = { deferreds: new Deferreds(), trace: [] };
  const tools = fakeTools(world);
  const all: AnyTool[] = Object.values(tools);
  const sandbox = new FakeSandbox(
    { "a.txt": "a\n", "src/real.ts": "x\n" },
    { "/workspace/link-out": "/etc", "/workspace/src/link-in": "real.ts", "/workspace/up": ".." },
  );
  const gate = new RecordingGate(world.trace, options.deny);
  const state = new RunState();
  const pipelineOptions: PipelineOptions = {
    allTools: all,
    enabledTools: options.enabled ? options.enabled(tools) : all,
    sandbox,
    state,
    gate,
    hooks: recordingHooks(world.trace),
    outputs: options.outputDir ? { dir: options.outputDir, redactor: createRedactor() } : undefined,
    disabledReason: "plan mode: files cannot be changed",
  };
  const pipeline = new ToolPipeline(pipelineOptions);
  let seq = 0;
  const requests = (calls: Array<[string, unknown] | ToolCallRequest>): ToolCallRequest[] =>
    calls.map((c) => (Array.isArray(c) ? { id: `toolu_${++seq}`, name: c[0], input: c[1] } : c));
  const run = (calls: Array<[string, unknown] | ToolCallRequest>, signal = new AbortController().signal) =>
    pipeline.runTurn(0, requests(calls), signal);
  return { world, tools, sandbox, gate, state, pipeline, run, requests };
}

/**
 * Runs a turn, letting go of every waiting call each time the pipeline can make no more progress. Each
 * wave is the set of calls that were running at the same time.
 */
async function waves(
  t: ReturnType<typeof setup>,
  calls: Array<[string, unknown]>,
): Promise<{ waves: string[][]; records: ToolCallRecord[] }> {
  let done = false;
  const turn = t.run(calls).finally(() => (done = true));
  const seen: string[][] = [];
  for (;;) {
    await settle();
    if (done) break;
    const wave = t.world.deferreds.waitingIds;
    if (!wave.length) throw new Error("the turn is stuck: no call is waiting and the turn has not ended");
    seen.push(wave);
    wave.forEach((id) => t.world.deferreds.release(id));
  }
  return { waves: seen, records: await turn };
}

const S = (id: string): [string, unknown] => ["SafeWait", { id }];
const U = (id: string): [string, unknown] => ["UnsafeWait", { id }];
const M = (id: string, safe: boolean): [string, unknown] => ["MaybeSafe", { id, safe }];

describe("ToolPipeline: concurrency and order", () => {
  it.each([
    {
      name: "concurrency-safe calls run together",
      calls: [S("a"), S("b"), S("c")],
      expected: [["a", "b", "c"]],
    },
    {
      name: "unsafe calls run one at a time",
      calls: [U("a"), U("b"), U("c")],
      expected: [["a"], ["b"], ["c"]],
    },
    {
      name: "a mixed turn runs in batches split by each unsafe call",
      calls: [S("a"), S("b"), U("c"), S("d"), S("e"), U("f"), S("g")],
      expected: [["a", "b"], ["c"], ["d", "e"], ["f"], ["g"]],
    },
    {
      name: "safety is decided per input",
      calls: [M("a", true), M("b", true), M("c", false), M("d", true)],
      expected: [["a", "b"], ["c"], ["d"]],
    },
    {
      name: "an unknown tool does not split a safe batch",
      calls: [S("a"), ["Nope", {}], S("b")],
      expected: [["a", "b"]],
    },
    {
      name: "a call whose input fails to parse runs alone",
      calls: [S("a"), ["SafeWait", { id: 1 }], S("b")],
      expected: [["a"], ["b"]],
    },
  ] as Array<{ name: string; calls: Array<[string, unknown]>; expected: string[][] }>)(
    "$name",
    async ({ calls, expected }) => {
      const t = setup();
      const { waves: seen, records } = await waves(t, calls);
      expect(seen).toEqual(expected);
      expect(t.world.deferreds.maxActive).toBe(Math.max(...expected.map((w) => w.length)));
      expect(records.map((r) => r.index)).toEqual(calls.map((_, i) => i));
      expect(records.map((r) => r.tool)).toEqual(calls.map(([name]) => name));
    },
  );

  it("returns results in call order when later calls of a parallel batch finish first", async () => {
    const t = setup();
    const turn = t.run([S("a"), S("b"), S("c")]);
    await settle();
    expect(t.world.deferreds.waitingIds).toEqual(["a", "b", "c"]);
    for (const id of ["c", "b", "a"]) {
      t.world.deferreds.release(id);
      await settle();
    }
    const records = await turn;
    expect(records.map((r) => r.content)).toEqual(["done a", "done b", "done c"]);
  });

  it("answers an empty turn with no results", async () => {
    expect(await setup().run([])).toEqual([]);
  });

  it("gives exactly one tool_result per tool_use id, in order, is_error only on errors", async () => {
    const t = setup();
    const records = await t.run([
      ["Echo", { text: "one" }],
      ["Nope", {}],
      ["Throws", { kind: "error" }],
      ["Echo", { text: 5 }],
      ["Writer", { text: "two" }],
    ]);
    const results = ToolPipeline.toolResults(records);
    expect(results.map((r) => r.tool_use_id)).toEqual(records.map((r) => r.id));
    expect(new Set(results.map((r) => r.tool_use_id)).size).toBe(5);
    expect(results.map((r) => r.type)).toEqual(Array(5).fill("tool_result"));
    expect(results.map((r) => r.is_error)).toEqual([undefined, true, true, true, undefined]);
    expect(results[0]).toEqual({ type: "tool_result", tool_use_id: records[0]!.id, content: "Echo: one" });
    expect(results.every((r, i) => r.content === records[i]!.content)).toBe(true);
  });
});

describe("ToolPipeline: each stage that stops a call", () => {
  type Row = {
    name: string;
    call: ToolCallRequest | [string, unknown];
    stage: ToolCallRecord["stage"];
    kind: string;
    text: string | RegExp;
    trace: string[];
    /** Sandbox operations allowed before the stop (the gate's in-container resolve). */
    ops?: string[];
  };
  const rows: Row[] = [
    {
      name: "unknown tool",
      call: ["NoSuchTool", { x: 1 }],
      stage: "enabled",
      kind: "unknown_tool",
      text: "<tool_use_error>Error: No such tool available: NoSuchTool</tool_use_error>",
      trace: [],
    },
    {
      name: "a tool disabled in this run",
      call: ["Writer", { text: "x" }],
      stage: "enabled",
      kind: "disabled_tool",
      text: /^<tool_use_error>Error: Writer is not available in this run \(plan mode: files cannot be changed\)\. Available tools: .*Echo/,
      trace: [],
    },
    {
      name: "a missing field",
      call: ["Echo", {}],
      stage: "parse",
      kind: "invalid_input",
      text: /^<tool_use_error>InputValidationError: Echo failed due to the following issues:\n.*expected string, received undefined\n\s*→ at text\nRewrite the input/,
      trace: [],
    },
    {
      name: "a wrong type",
      call: ["Echo", { text: 42 }],
      stage: "parse",
      kind: "invalid_input",
      text: /expected string, received number\n\s*→ at text/,
      trace: [],
    },
    {
      name: "an extra key",
      call: ["Echo", { text: "x", extra: true }],
      stage: "parse",
      kind: "invalid_input",
      text: /Unrecognized key: "extra"/,
      trace: [],
    },
    {
      name: "input that is not an object",
      call: ["Echo", "just a string"],
      stage: "parse",
      kind: "invalid_input",
      text: /expected object/,
      trace: [],
    },
    {
      name: "an input error from the driver (bad JSON)",
      call: {
        id: "toolu_json",
        name: "Echo",
        input: {},
        inputError: "Unexpected token } in JSON at position 12",
      },
      stage: "parse",
      kind: "invalid_input",
      text: "<tool_use_error>InputValidationError: the input was not a JSON object (Unexpected token } in JSON at position 12). Call Echo again with a JSON object as its input.</tool_use_error>",
      trace: [],
    },
    {
      name: "the tool's validateInput",
      call: ["Echo", { text: "invalid" }],
      stage: "validate",
      kind: "invalid_input",
      text: "<tool_use_error>text must not be 'invalid'; say something else</tool_use_error>",
      trace: ["validate"],
    },
    {
      name: "the workspace gate, lexically (before the tool's own checks, touching nothing)",
      call: ["Echo", { text: "invalid", path: "../etc/passwd" }],
      stage: "validate",
      kind: "outside_workspace",
      text: "<tool_use_error>Path ../etc/passwd resolves to /etc/passwd, outside /workspace. Only files under /workspace can be accessed.</tool_use_error>",
      trace: [],
    },
    {
      name: "the workspace gate, through a symlink resolved in the sandbox",
      call: ["Echo", { text: "x", path: "link-out/passwd" }],
      stage: "validate",
      kind: "outside_workspace",
      text: /^<tool_use_error>Path link-out\/passwd resolves outside \/workspace through a symlink\. Only files under \/workspace can be accessed\./,
      trace: [],
      ops: ["resolvePath"],
    },
    {
      name: "the workspace gate for a writer in the outputs folder",
      call: ["Writer", { text: "x", path: `${OUTPUTS_DIR}/planted.txt` }],
      stage: "validate",
      kind: "outside_workspace",
      text: /outside \/workspace/,
      trace: [],
    },
    {
      name: "a permission deny (the reason reaches the model)",
      call: ["Echo", { text: "secret" }],
      stage: "permission",
      kind: "permission_denied",
      text: "<tool_use_error>Permission denied: Echo(secret) is denied by a deny rule in .agent-ci.json; do something else</tool_use_error>",
      trace: ["validate", "permission"],
    },
    {
      name: "a PreToolUse hook block",
      call: ["Echo", { text: "block" }],
      stage: "hook",
      kind: "hook_blocked",
      // Claude Code's words, unwrapped (test/fixtures/reference/claude-code-hooks/hooks-pre-block-exit2.json).
      text: "PreToolUse:Echo hook error: [guard]: no blocking words",
      trace: ["validate", "permission", "pre"],
    },
  ];

  it.each(rows)("$name → stopped at $stage", async (row) => {
    const enabled = row.name.includes("disabled")
      ? (t: ReturnType<typeof fakeTools>) => [t.Echo, t.SafeWait]
      : undefined;
    const t = setup({
      enabled,
      deny: (r) =>
        r.input.text === "secret"
          ? "Echo(secret) is denied by a deny rule in .agent-ci.json; do something else"
          : undefined,
    });
    const [record] = await t.run([row.call]);
    expect(record!.stage).toBe(row.stage);
    expect(record!.isError).toBe(true);
    expect(record!.errorKind).toBe(row.kind);
    if (typeof row.text === "string") expect(record!.content).toBe(row.text);
    else expect(record!.content).toMatch(row.text);
    expect(t.world.trace).toEqual(row.trace);
    expect(t.sandbox.ops.map((o) => o.op)).toEqual(row.ops ?? []);
    expect(record!.truncated).toBe(false);
  });

  it("records the permission decision, and gives the gate canonical paths, read-only flag and cwd", async () => {
    const t = setup({ deny: (r) => (r.input.text === "secret" ? "denied by rule" : undefined) });
    const [allowed, denied] = await t.run([
      ["Writer", { text: "ok", path: "src/link-in" }],
      ["Echo", { text: "secret", path: "/workspace/a.txt" }],
    ]);
    expect(t.gate.requests[0]).toEqual({
      tool: "Writer",
      input: { text: "ok", path: "src/link-in" },
      readOnly: false,
      paths: ["/workspace/src/real.ts"],
      cwd: "/workspace",
    });
    expect(t.gate.requests[1]).toMatchObject({ tool: "Echo", readOnly: true, paths: ["/workspace/a.txt"] });
    expect(allowed!.decision).toMatchObject({ behavior: "allow" });
    expect(denied!.decision).toMatchObject({
      behavior: "deny",
      reason: "denied by rule",
      rule: { text: "Echo(secret)" },
    });
    expect(denied!).toMatchObject({ paths: ["/workspace/a.txt"], cwd: "/workspace", readOnly: true });
  });

  it("lets a read-only tool into the outputs folder", async () => {
    const t = setup();
    const [record] = await t.run([["Echo", { text: "x", path: `${OUTPUTS_DIR}/toolu_1.txt` }]]);
    expect(record!.isError).toBe(false);
  });

  it("keeps the call's result and sends a PostToolUse hook's objection as text after it", async () => {
    const t = setup();
    const [record] = await t.run([["Echo", { text: "post-object" }]]);
    expect(record!.stage).toBe("call");
    expect(record!.isError).toBe(false);
    expect(record!.content).toBe("Echo: post-object");
    expect(record!.followUp).toEqual([{ type: "text", text: "run the linter next" }]);
    expect(t.world.trace).toEqual(["validate", "permission", "pre", "call", "post"]);
  });

  it("reports a hook that failed without blocking, and runs the call", async () => {
    const t = setup();
    const [record] = await t.run([["Echo", { text: "hook-error" }]]);
    expect(record!.isError).toBe(false);
    expect(record!.hookErrors).toEqual(["pre hook crashed (exit 2)"]);
    expect(record!.hooks).toEqual([
      expect.objectContaining({ event: "PreToolUse", command: "crash", outcome: "error" }),
    ]);
    expect(t.world.trace).toEqual(["validate", "permission", "pre", "call", "post"]);
  });

  it("fills the record of a successful call for the report", async () => {
    const t = setup();
    const [record] = await t.run([["Echo", { text: "hi" }]]);
    expect(record).toMatchObject({
      turn: 0,
      index: 0,
      tool: "Echo",
      input: { text: "hi" },
      stage: "call",
      isError: false,
      content: "Echo: hi",
      readOnly: true,
      cwd: "/workspace",
      paths: [],
      resultChars: 8,
      title: "echoed hi",
      exitCode: 0,
      truncated: false,
    });
    expect(record!.durationMs).toBeGreaterThanOrEqual(0);
  });

  it.each([
    ["error", "internal error in Throws: boom"],
    ["fs", "EACCES: permission denied, open '/workspace/x'"],
  ])("turns a tool that throws (%s) into an is_error result, and the turn goes on", async (kind, message) => {
    const t = setup();
    const records = await t.run([
      ["Throws", { kind }],
      ["Echo", { text: "after" }],
    ]);
    expect(records[0]).toMatchObject({
      stage: "call",
      isError: true,
      errorKind: "sandbox_error",
      content: message,
    });
    expect(records[1]).toMatchObject({ isError: false, content: "Echo: after" });
  });

  it.each([
    ["gone", SandboxGoneError],
    ["engine", EngineError],
  ] as const)("rethrows an infrastructure fault (%s): it ends the run", async (kind, type) => {
    const t = setup();
    await expect(t.run([["Throws", { kind }]])).rejects.toBeInstanceOf(type);
    await expect(
      t.run([
        ["Echo", { text: "a" }],
        ["Throws", { kind }],
        ["Echo", { text: "b" }],
      ]),
    ).rejects.toBeInstanceOf(type);
  });

  it("rethrows a tool's failure once the run is cancelled", async () => {
    const t = setup();
    const controller = new AbortController();
    controller.abort(new Error("cancelled"));
    await expect(t.run([["Throws", { kind: "error" }]], controller.signal)).rejects.toThrow("boom");
  });
});

describe("ToolPipeline: results over maxResultSizeChars", () => {
  it("keeps head and tail with a notice, and saves the whole to the sandbox and the host output folder", async () => {
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-pipeline-"));
    const t = setup({ outputDir });
    const [record] = await t.run([{ id: "toolu_big", name: "Big", input: { size: 5000 } }]);
    const content = record!.content as string;
    const saved = `${OUTPUTS_DIR}/toolu_big.txt`;
    expect(record!.truncated).toBe(true);
    expect(record!.fullOutputPath).toBe(saved);
    expect(record!.resultChars).toBe(5000);
    expect(content.length).toBe(1000);
    expect(content).toMatch(
      /^H+\n\n\.\.\. \[output truncated: 5000 characters in all, 1000 shown\. The full output is saved at \/tmp\/agent-ci-outputs\/toolu_big\.txt; Read it with offset and limit, or Grep it\] \.\.\.\n\nT+$/,
    );
    const full = "H".repeat(2500) + "T".repeat(2500);
    expect(t.sandbox.text(saved)).toBe(full);
    expect(fs.readFileSync(path.join(outputDir, "tool-outputs", "toolu_big.txt"), "utf8")).toBe(full);
  });

  it("leaves a result at the limit alone, and content blocks uncut", async () => {
    const t = setup();
    const [exact, blocks] = await t.run([
      ["Big", { size: 1000 }],
      ["Big", { size: 5000, blocks: true }],
    ]);
    expect(exact!.truncated).toBe(false);
    expect((exact!.content as string).length).toBe(1000);
    expect(blocks!.truncated).toBe(false);
    expect(t.sandbox.ops.filter((o) => o.op === "writeFile")).toEqual([]);
  });

  it("keeps a saved output inside the outputs folder whatever the tool_use id holds", async () => {
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-pipeline-"));
    const t = setup({ outputDir });
    const [record] = await t.run([{ id: "../../etc/evil id", name: "Big", input: { size: 3000 } }]);
    expect(record!.fullOutputPath).toBe(`${OUTPUTS_DIR}/.._.._etc_evil_id.txt`);
    expect(fs.readdirSync(path.join(outputDir, "tool-outputs"))).toEqual([".._.._etc_evil_id.txt"]);
  });

  it("does not cut error results of stages before the call", async () => {
    const t = setup();
    const [record] = await t.run([["Echo", { text: "x".repeat(5000), extra: 1 }]]);
    expect(record!.stage).toBe("parse");
    expect(record!.truncated).toBe(false);
  });
});
