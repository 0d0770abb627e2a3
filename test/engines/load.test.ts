// Load: N = 8 scripted runs through runAgent at once on one host, in one agent-ci process, 50 tool calls
// each (Read, Grep, Glob, Edit, Bash). Every run has its own small workspace with a unique marker.
// Checked: all complete; no cross-run interference (each run's tool results and patch carry its own
// marker only, and Glob/Grep for the other runs' markers find nothing); no container left with the run
// label; the process's memory stays bounded (RSS sampled every 50 ms). No timing assertions: the
// figures are recorded in test-results/load.json and printed.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { makeWorkspace } from "../support/workspace.js";
import { labelled, runScripted, type ScriptCall, type ScriptedRun, scriptFile } from "./support.js";

const N = Number(process.env.AGENT_CI_LOAD_N ?? 8);
const ROUNDS = 10; // 5 calls a round
const MIB = 1024 ** 2;
const RSS_BOUND = 1024 * MIB;

interface Plan {
  id: string;
  marker: string;
  workspace: string;
  script: string;
}

function plan(id: string, others: string[]): Plan {
  const marker = `MARKER_${id}`;
  const slots = Array.from({ length: ROUNDS }, (_, r) => `// slot ${r}`).join("\n");
  const workspace = makeWorkspace(
    {
      [`marker-${id}.txt`]: `${marker}\n`,
      "README.md": `# workspace of ${marker}\n`,
      "src/app.js": `// app of ${marker}\nexport const id = "${id}";\n${slots}\n`,
      "src/util.js": "export const add = (a, b) => a + b;\n",
      "notes/a.txt": "plain notes\n",
    },
    { git: true },
  );
  // A pattern that matches every other run's marker without containing one literally.
  const foreign = `MARKER_(${others.join("|")})`;
  const turns: ScriptCall[][] = [];
  for (let r = 0; r < ROUNDS; r++) {
    turns.push([
      r % 2 === 0
        ? { name: "Glob", input: { pattern: "**/marker-*.txt" } }
        : { name: "Read", input: { file_path: `/workspace/marker-${id}.txt` } },
      { name: "Read", input: { file_path: "/workspace/src/app.js" } },
      r % 3 === 0
        ? { name: "Grep", input: { pattern: foreign, output_mode: "files_with_matches" } }
        : { name: "Grep", input: { pattern: "MARKER_", output_mode: "content", "-n": true } },
    ]);
    turns.push([
      {
        name: "Edit",
        input: {
          file_path: "/workspace/src/app.js",
          old_string: `// slot ${r}\n`,
          new_string: `// slot ${r} done by ${marker}\n`,
        },
      },
    ]);
    turns.push([
      {
        name: "Bash",
        input: { command: `echo "${marker} round ${r}" >> log.txt && grep -c MARKER_ log.txt && ls` },
      },
    ]);
  }
  return { id, marker, workspace, script: scriptFile(turns, `done: ${marker}`) };
}

/** Every tool_result's text in a run's events.jsonl (what the model would have seen, in full). */
function toolResults(events: string): string[] {
  const texts: string[] = [];
  for (const line of events.split("\n")) {
    if (!line.trim()) continue;
    const event = JSON.parse(line) as {
      type: string;
      message?: { content?: Array<{ type: string; content?: unknown }> };
    };
    if (event.type !== "user") continue;
    for (const block of event.message?.content ?? []) {
      if (block.type !== "tool_result") continue;
      const c = block.content;
      texts.push(typeof c === "string" ? c : JSON.stringify(c));
    }
  }
  return texts;
}

const markersIn = (s: string) => new Set(s.match(/MARKER_[0-9a-f]{8}/g) ?? []);

describe(`load: ${N} concurrent scripted runs of ${ROUNDS * 5} calls`, () => {
  it("all complete, none sees another's workspace, no container is left, memory stays bounded", async () => {
    const docker = new Docker();
    const ids = Array.from({ length: N }, () => crypto.randomBytes(4).toString("hex"));
    const plans = ids.map((id) =>
      plan(
        id,
        ids.filter((o) => o !== id),
      ),
    );

    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    let heapPeak = process.memoryUsage().heapUsed;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      rssPeak = Math.max(rssPeak, m.rss);
      heapPeak = Math.max(heapPeak, m.heapUsed);
    }, 50);
    const started = performance.now();
    let runs: ScriptedRun[];
    try {
      runs = await Promise.all(
        plans.map((p) => runScripted({ workspace: p.workspace, script: p.script, maxTurns: ROUNDS * 3 + 5 })),
      );
    } finally {
      clearInterval(sampler);
    }
    const wallMs = performance.now() - started;
    const rssAfter = process.memoryUsage().rss;

    const figures = {
      n: N,
      callsPerRun: ROUNDS * 5,
      completed: runs.filter((r) => r.outcome.exitReason === "completed").length,
      calls: runs.reduce((sum, r) => sum + (r.report?.toolCalls.length ?? 0), 0),
      wallSeconds: Math.round(wallMs / 100) / 10,
      callsPerSecond:
        Math.round(
          (runs.reduce((sum, r) => sum + (r.report?.toolCalls.length ?? 0), 0) / wallMs) * 1000 * 10,
        ) / 10,
      rssBeforeMiB: Math.round(rssBefore / MIB),
      rssPeakMiB: Math.round(rssPeak / MIB),
      rssAfterMiB: Math.round(rssAfter / MIB),
      heapPeakMiB: Math.round(heapPeak / MIB),
      engine: process.env.DOCKER_HOST ?? "default socket",
      at: new Date().toISOString(),
    };
    fs.mkdirSync("test-results", { recursive: true });
    fs.writeFileSync(path.join("test-results", "load.json"), JSON.stringify(figures, null, 2) + "\n");
    console.log(`load figures: ${JSON.stringify(figures)}`);

    for (const [i, run] of runs.entries()) {
      const p = plans[i]!;
      const label = `run ${i} (${p.marker}, ${run.outcome.runId})`;
      expect(run.outcome.exitReason, `${label}: ${run.outcome.error ?? ""}\n${run.logs.join("\n")}`).toBe(
        "completed",
      );
      const calls = run.report?.toolCalls ?? [];
      expect(calls, label).toHaveLength(ROUNDS * 5);
      expect(
        calls.filter((c) => c.isError).map((c) => `${c.tool}: ${c.resultPreview}`),
        label,
      ).toEqual([]);
      // Tool results: this run's marker only, and a search for the others' markers finds nothing.
      const results = toolResults(run.events);
      expect(results, label).toHaveLength(ROUNDS * 5);
      expect([...markersIn(results.join("\n"))], label).toEqual([p.marker]);
      const foreignGreps = calls.filter(
        (c) => c.tool === "Grep" && String((c.input as { pattern: string }).pattern).includes("("),
      );
      expect(foreignGreps.length, label).toBeGreaterThan(0);
      for (const c of foreignGreps) expect(c.resultPreview, label).toBe("No files found");
      for (const c of calls.filter((c) => c.tool === "Glob"))
        expect(c.resultPreview.trim(), label).toMatch(new RegExp(`^(/workspace/)?marker-${p.id}\\.txt$`));
      // The patch: every edit and the log, with this run's marker only.
      expect([...markersIn(run.patch)], label).toEqual([p.marker]);
      expect(run.patch.split(p.marker).length - 1, label).toBeGreaterThanOrEqual(2 * ROUNDS);
      expect(run.report?.patch.files.map((f) => f.path).sort(), label).toEqual(["log.txt", "src/app.js"]);
    }
    for (const run of runs) expect(await labelled(docker, run.outcome.runId)).toEqual([]);
    expect((await labelled(docker)).filter((c) => c.Labels["agent-ci.pid"] === String(process.pid))).toEqual(
      [],
    );
    expect(rssPeak).toBeLessThan(RSS_BOUND);
  }, 900_000);
});
