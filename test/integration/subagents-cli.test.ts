// Subagents through the CLI with scripted turns (the ScriptDriver plays the parent and each subagent):
// background subagents read, stopped under each name, and stopped at the run's end; a cancel reaching
// subagents at work; the cap on subagents working at once. Orders are read from the event stream, never
// from the clock.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { parseReport, type RunReport } from "../../src/report/index.js";
import { MAX_CONCURRENT_SUBAGENTS } from "../../src/runner/agents/subagents.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { startCli } from "../support/cli-process.js";
import { makeWorkspace } from "../support/workspace.js";

interface StreamEvent {
  type: string;
  parent_tool_use_id?: string | null;
  message?: { content?: Array<{ type: string; name?: string; tool_use_id?: string; content?: unknown }> };
}

interface Started {
  exited: Promise<number | null>;
  events: () => StreamEvent[];
  stderr: () => string;
  kill: (signal: NodeJS.Signals) => void;
  out: string;
}

/** Starts `agent-ci run` on a script; stream-json events are parsed as they come. */
function start(script: object, files: Record<string, string> = { "a.txt": "alpha\n" }): Started {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-subagents-cli-"));
  const scriptPath = path.join(dir, "script.json");
  fs.writeFileSync(scriptPath, JSON.stringify(script));
  const out = path.join(dir, "out");
  const workspace = makeWorkspace(files, { git: true });
  const args = ["run", "--workspace", workspace, "--script", scriptPath, "--mode", "bypassPermissions"];
  args.push("--out", out, "--output-format", "stream-json");
  const cli = startCli(args, { ANTHROPIC_API_KEY: "" });
  let buffer = "";
  const events: StreamEvent[] = [];
  cli.child.stdout.on("data", (d: string) => {
    buffer += d;
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    for (const line of lines) if (line.startsWith("{")) events.push(JSON.parse(line) as StreamEvent);
  });
  const exited = cli.done.then((run) => run.code);
  return { exited, events: () => events, stderr: cli.stderr, kill: (s) => cli.child.kill(s), out };
}

/** Resolves once `ready` holds for the events streamed so far (checked as each chunk arrives). */
async function until(run: Started, ready: (events: StreamEvent[]) => boolean): Promise<void> {
  for (;;) {
    if (ready(run.events())) return;
    const exited = await Promise.race([
      run.exited.then(() => true),
      new Promise<false>((resolve) => setImmediate(() => resolve(false))),
    ]);
    if (exited && !ready(run.events())) throw new Error(`the run ended first: ${run.stderr().slice(-2000)}`);
  }
}

async function finished(run: Started): Promise<{ code: number | null; report: RunReport }> {
  const code = await run.exited;
  const report = parseReport(fs.readFileSync(path.join(run.out, "report.json"), "utf8"));
  const left = await new Docker().listContainers({
    all: true,
    filters: { label: [`${LABEL_RUN}=${report.runId}`] },
  });
  expect(left).toEqual([]);
  return { code, report };
}

/** The main loop's tool results, by tool_use id. */
function mainResults(events: StreamEvent[]): Map<string, string> {
  const results = new Map<string, string>();
  for (const e of events)
    if (e.type === "user" && e.parent_tool_use_id === null)
      for (const b of e.message?.content ?? [])
        if (b.type === "tool_result")
          results.set(
            b.tool_use_id ?? "",
            typeof b.content === "string" ? b.content : JSON.stringify(b.content),
          );
  return results;
}

/** Subagents that asked for a tool (their Task call ids), in the order their first request was streamed. */
function working(events: StreamEvent[]): string[] {
  const parents: string[] = [];
  for (const e of events)
    if (e.type === "assistant" && e.parent_tool_use_id && !parents.includes(e.parent_tool_use_id))
      if ((e.message?.content ?? []).some((b) => b.type === "tool_use")) parents.push(e.parent_tool_use_id);
  return parents;
}

const background = (marker: string, description: string) => ({
  name: "Task",
  input: {
    description,
    prompt: `${marker}: work in the background.`,
    subagent_type: "general-purpose",
    run_in_background: true,
  },
});
const idOf = (turn: number, index: number) => ({ $ref: { turn, index, re: "agentId: (\\S+)" } });
/** A command that runs until it is stopped (bounded, so a missing stop fails the test instead of hanging). */
const LINGER = "for i in $(seq 3000); do sleep 0.1; done";

describe("subagents through the CLI", () => {
  it("runs subagents in the background: TaskOutput waits or peeks, TaskStop and KillShell stop them, the run's end stops the rest and records it", async () => {
    const run = start({
      turns: [
        [
          background("BG-READ", "Read a"),
          background("BG-TASKSTOP", "Linger one"),
          background("BG-KILLSHELL", "Linger two"),
          background("BG-LEFT", "Linger three"),
        ],
        [{ name: "TaskOutput", input: { task_id: idOf(0, 0), timeout: 600_000 } }],
        [{ name: "TaskOutput", input: { task_id: idOf(0, 1), block: false } }],
        [
          { name: "TaskStop", input: { task_id: idOf(0, 1) } },
          { name: "KillShell", input: { shell_id: idOf(0, 2) } },
        ],
        [{ name: "BashOutput", input: { bash_id: idOf(0, 1) } }],
      ],
      final: "Done.",
      agents: [
        {
          match: "BG-READ",
          turns: [[{ name: "Read", input: { file_path: "/workspace/a.txt" } }]],
          final: "a.txt says alpha.",
        },
        ...["BG-TASKSTOP", "BG-KILLSHELL", "BG-LEFT"].map((match) => ({
          match,
          turns: [[{ name: "Bash", input: { command: LINGER } }]],
          final: "never",
        })),
      ],
    });
    const { code, report } = await finished(run);
    expect(code, run.stderr().slice(-2000)).toBe(0);
    const tasks = report.toolCalls.filter((c) => c.tool === "Task");
    const ids = tasks.map((t) => /agentId: (\S+)/.exec(t.resultPreview)?.[1] ?? "");
    const results = mainResults(run.events());
    const resultOf = (turn: number, tool: string) =>
      results.get(
        report.toolCalls.find((c) => c.turn === turn && c.tool === tool && !c.parentToolUseId)!.id,
      )!;

    // A blocking read waited for the report; a peek at a working agent says it is not ready.
    const read = resultOf(1, "TaskOutput");
    expect(read).toMatch(/^<retrieval_status>success<\/retrieval_status>/);
    expect(read).toContain(`<task_id>${ids[0]}</task_id>`);
    expect(read).toContain("<task_type>local_agent</task_type>");
    expect(read).toContain("<status>completed</status>");
    expect(read).toContain("  a.txt says alpha.");
    const peek = resultOf(2, "TaskOutput");
    expect(peek).toMatch(/^<retrieval_status>not_ready<\/retrieval_status>/);
    expect(peek).toContain("<status>running</status>");

    // TaskStop answers in 2.1.328's JSON; KillShell in its own words; both agents are stopped.
    expect(JSON.parse(resultOf(3, "TaskStop"))).toEqual({
      message: `Successfully stopped task: ${ids[1]} (Linger one)`,
      task_id: ids[1],
      task_type: "local_agent",
      description: "Linger one",
    });
    expect(resultOf(3, "KillShell")).toBe(
      `Successfully stopped agent: ${ids[2]} (general-purpose: Linger two)`,
    );
    // BashOutput is TaskOutput by its older name: it reads the stopped agent's state.
    expect(resultOf(4, "BashOutput")).toContain("<status>stopped</status>");

    // The record: each agent's ending; the one still working when the run ended was stopped, and said so.
    expect(report.subagents?.map((s) => [s.description, s.background, s.status])).toEqual([
      ["Read a", true, "completed"],
      ["Linger one", true, "stopped"],
      ["Linger two", true, "stopped"],
      ["Linger three", true, "stopped"],
    ]);
    const stopped = report.warnings.filter((w) => w.kind === "subagent_stopped").map((w) => w.message);
    expect(stopped).toEqual([expect.stringContaining(`${ids[3]} (general-purpose: Linger three)`)]);
    const markdown = fs.readFileSync(path.join(run.out, "report.md"), "utf8");
    expect(markdown).toMatch(/\*\*general-purpose\*\* \(Linger three\): stopped/);
    expect(markdown).toContain("was still running when the run ended; it was stopped");
  });

  it("on SIGINT stops the subagents at work (foreground and background), writes the record and leaves no container", async () => {
    const foreground = (marker: string) => ({
      name: "Task",
      input: { description: marker, prompt: `${marker}: linger.`, subagent_type: "general-purpose" },
    });
    const run = start({
      turns: [
        [background("CANCEL-BG", "In the background"), foreground("CANCEL-FG1"), foreground("CANCEL-FG2")],
      ],
      final: "never",
      agents: ["CANCEL-BG", "CANCEL-FG1", "CANCEL-FG2"].map((match) => ({
        match,
        turns: [
          [{ name: "Write", input: { file_path: `/workspace/${match}.txt`, content: "kept\n" } }],
          [{ name: "Bash", input: { command: LINGER } }],
        ],
        final: "never",
      })),
    });
    // Signalled once all three subagents asked for their lingering Bash.
    const lingering = (events: StreamEvent[]) =>
      events.filter(
        (e) =>
          e.type === "assistant" &&
          e.parent_tool_use_id &&
          (e.message?.content ?? []).some((b) => b.type === "tool_use" && b.name === "Bash"),
      ).length === 3;
    await until(run, lingering);
    run.kill("SIGINT");
    const { code, report } = await finished(run);
    expect(code).toBe(130);
    expect(report.exitReason).toBe("cancelled");
    expect(report.subagents?.map((s) => [s.description, s.status])).toEqual([
      ["In the background", "stopped"],
      ["CANCEL-FG1", "cancelled"],
      ["CANCEL-FG2", "cancelled"],
    ]);
    expect(report.warnings.filter((w) => w.kind === "subagent_stopped").map((w) => w.message)).toEqual([
      expect.stringContaining("(general-purpose: In the background) was still running when the run ended"),
    ]);
    // Their Bash calls were cut short and recorded; what they wrote before is in the patch.
    const bash = report.toolCalls.filter((c) => c.tool === "Bash" && c.parentToolUseId);
    expect(bash).toHaveLength(3);
    expect(bash.every((c) => c.isError)).toBe(true);
    expect(report.patch.files.map((f) => f.path).sort()).toEqual([
      "CANCEL-BG.txt",
      "CANCEL-FG1.txt",
      "CANCEL-FG2.txt",
    ]);
  });

  it(`lets at most ${MAX_CONCURRENT_SUBAGENTS} subagents work at once: the next Task call of the turn waits for a free slot`, async () => {
    const count = MAX_CONCURRENT_SUBAGENTS + 1;
    // Each subagent marks that it started, then waits until as many as the cap have: the cap's worth finish
    // together; an agent beyond the cap may only start after one of them has.
    const wait = `mktemp /workspace/.started-XXXXXX >/dev/null; for i in $(seq 1200); do [ $(find /workspace -maxdepth 1 -name '.started-*' | wc -l) -ge ${MAX_CONCURRENT_SUBAGENTS} ] && exit 0; sleep 0.1; done; exit 1`;
    const run = start({
      turns: [
        Array.from({ length: count }, (_, i) => ({
          name: "Task",
          input: { description: `Agent ${i}`, prompt: `CAP: agent ${i}.`, subagent_type: "general-purpose" },
        })),
      ],
      final: "Done.",
      agents: [{ match: "CAP", turns: [[{ name: "Bash", input: { command: wait } }]], final: "ok" }],
    });
    const { code, report } = await finished(run);
    expect(code, run.stderr().slice(-2000)).toBe(0);
    const events = run.events();
    const firstResult = events.findIndex(
      (e) =>
        e.type === "user" &&
        e.parent_tool_use_id &&
        (e.message?.content ?? []).some((b) => b.type === "tool_result"),
    );
    // Before any subagent's command returned, exactly the cap's worth had asked for one; all of them ran.
    expect(working(events.slice(0, firstResult))).toHaveLength(MAX_CONCURRENT_SUBAGENTS);
    expect(working(events)).toHaveLength(count);
    expect(report.subagents?.map((s) => s.status)).toEqual(Array(count).fill("completed"));
    expect(report.toolCalls.filter((c) => c.tool === "Bash").every((c) => !c.isError)).toBe(true);
  });
});
