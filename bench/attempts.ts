// Attempts (`--attempts N`, docs/attempts.md): what N costs on this machine. The same scripted task (the
// buggy-calc example's fix, verified with `npm test` in a fresh sandbox) as one attempt and as four attempts at
// once (`--attempts 4 --parallel 4`), alternately, each through the agent-ci command as a user runs it. Wall
// time from the spawn to the exit; peak memory sampled every SAMPLE_MS, apart for the two places it lives:
// the agent-ci process tree on the host (the command and every process it started, resident memory) and its
// containers (the agents' and verify's), as `docker stats` counts a container: its cgroup's usage less the
// inactive file cache, the tmpfs /workspace included.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDockerClient } from "../src/sandbox/engine/docker-client.js";
import { LABEL_PID } from "../src/sandbox/engine/engine.js";
import { CLI_NODE, summarize, type Row } from "./stats.js";

const REPS = 3;
const ATTEMPTS = 4;
const SAMPLE_MS = 100;
const SECTION = `Attempts: ${ATTEMPTS} at once (agent-ci column) next to one (native column), scripted fix with --verify`;

/** Resident memory of `root` and all its descendants, in bytes (Linux /proc). */
function treeRss(root: number): number {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      // The fields after the command's closing parenthesis: state, ppid, …; rss (pages) is the 24th field.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ppid = Number(fields[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), pid]);
      rss.set(pid, Number(fields[21]) * 4096);
    } catch {
      // The process ended while the table was read.
    }
  }
  let total = 0;
  const queue = [root];
  for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
    total += rss.get(pid) ?? 0;
    queue.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** A container's memory as `docker stats` counts it, from its cgroup (v1 or v2); undefined when not readable. */
function containerMemory(id: string): number | undefined {
  const places = [
    {
      dir: `/sys/fs/cgroup/memory/docker/${id}`,
      usage: "memory.usage_in_bytes",
      inactive: "total_inactive_file",
    },
    {
      dir: `/sys/fs/cgroup/system.slice/docker-${id}.scope`,
      usage: "memory.current",
      inactive: "inactive_file",
    },
    { dir: `/sys/fs/cgroup/docker/${id}`, usage: "memory.current", inactive: "inactive_file" },
  ];
  for (const place of places) {
    try {
      const usage = Number(fs.readFileSync(path.join(place.dir, place.usage), "utf8"));
      const stat = fs.readFileSync(path.join(place.dir, "memory.stat"), "utf8");
      const inactive = Number(new RegExp(`^${place.inactive} (\\d+)$`, "m").exec(stat)?.[1] ?? 0);
      return usage - inactive;
    } catch {
      // Not this layout.
    }
  }
  return undefined;
}

interface Sampled {
  wallMs: number;
  code: number | null;
  stderr: string;
  peakTreeBytes: number;
  /** Undefined when no container's cgroup could be read (a remote engine, another layout). */
  peakContainerBytes: number | undefined;
}

/** Runs the command to its end, sampling its process tree's and its containers' memory. */
async function sampledRun(bin: string, args: readonly string[], cwd: string): Promise<Sampled> {
  const docker = createDockerClient();
  const t0 = performance.now();
  const child = spawn(CLI_NODE, [bin, ...args], { cwd, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  let peakTreeBytes = 0;
  let peakContainerBytes: number | undefined;
  let running = true;
  const sampler = (async () => {
    while (running) {
      const pid = child.pid;
      if (pid !== undefined) {
        peakTreeBytes = Math.max(peakTreeBytes, treeRss(pid));
        const containers = await docker
          .listContainers({ filters: { label: [`${LABEL_PID}=${pid}`] } })
          .catch(() => []);
        const each = containers.map((c) => containerMemory(c.Id)).filter((m) => m !== undefined);
        if (each.length)
          peakContainerBytes = Math.max(
            peakContainerBytes ?? 0,
            each.reduce((a, b) => a + b, 0),
          );
      }
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    }
  })();
  const code = await closed;
  const wallMs = performance.now() - t0;
  running = false;
  await sampler;
  return { wallMs, code, stderr, peakTreeBytes, peakContainerBytes };
}

export async function benchAttempts(repoRoot: string, log: (line: string) => void): Promise<Row[]> {
  const bin = path.join(repoRoot, "bin/agent-ci.js");
  const example = path.join(repoRoot, "examples/buggy-calc");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-bench-attempts-"));
  const run = (attempts: number, i: number) =>
    sampledRun(
      bin,
      [
        "run",
        "--workspace",
        example,
        "--script",
        path.join(example, "fix.script.json"),
        "--mode",
        "acceptEdits",
        "--allow",
        "Bash(npm test:*)",
        "--verify",
        "npm test",
        "--attempts",
        String(attempts),
        "--parallel",
        String(attempts),
        "--out",
        path.join(dir, `out-${attempts}-${i}`),
        "--quiet",
      ],
      example,
    );
  const one: Sampled[] = [];
  const four: Sampled[] = [];
  try {
    log(`attempts: the buggy-calc fix with --verify as 1 attempt and as ${ATTEMPTS} at once, × ${REPS}`);
    for (let i = 0; i < REPS; i++) {
      one.push(await run(1, i));
      four.push(await run(ATTEMPTS, i));
      log(
        `attempts: round ${i + 1}: one ${((one.at(-1)?.wallMs ?? 0) / 1000).toFixed(1)} s, ${ATTEMPTS} at once ${((four.at(-1)?.wallMs ?? 0) / 1000).toFixed(1)} s`,
      );
    }
    for (const r of [...one, ...four])
      if (r.code !== 0) throw new Error(`an attempts run exited ${r.code}: ${r.stderr.slice(-2000)}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const mib = (bytes: number) => bytes / 2 ** 20;
  const containers = (runs: readonly Sampled[]) =>
    runs.every((r) => r.peakContainerBytes !== undefined)
      ? summarize(runs.map((r) => mib(r.peakContainerBytes ?? 0)))
      : null;
  return [
    {
      section: SECTION,
      measurement: `wall time, spawn to exit: \`--attempts ${ATTEMPTS} --parallel ${ATTEMPTS}\` vs one attempt`,
      unit: "ms",
      agentCi: summarize(four.map((r) => r.wallMs)),
      native: summarize(one.map((r) => r.wallMs)),
      note: `${os.availableParallelism()} CPUs here`,
    },
    {
      section: SECTION,
      measurement: "peak memory of the agent-ci process tree on the host (resident)",
      unit: "MiB",
      agentCi: summarize(four.map((r) => mib(r.peakTreeBytes))),
      native: summarize(one.map((r) => mib(r.peakTreeBytes))),
    },
    {
      section: SECTION,
      measurement:
        "peak memory of its containers together (as `docker stats` counts it, tmpfs /workspace included)",
      unit: "MiB",
      agentCi: containers(four),
      native: containers(one),
      note: `sampled every ${SAMPLE_MS} ms`,
    },
  ];
}
